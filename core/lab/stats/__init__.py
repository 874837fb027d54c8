"""The statistics both the experiment and the study use: pure functions of numbers (intervals, verdicts,
summaries, simulated studies), importing nothing of the lab above them."""

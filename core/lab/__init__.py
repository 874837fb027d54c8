"""The Fault lab: bearing-fault classifiers with and without positional encoding, compared honestly.

From the bottom up: vibration data and DataSpec; models, training, scores and probes; statistics (stats/);
runs (Stage, events, one training run, stages side by side, backends); the study; the evaluations; the
experiment (plan, results, CLI); jobs, reopening saved files, figures and the list of shipped studies on top.
"""

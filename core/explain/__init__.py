"""The explainer: positional encodings, attention and similarity as numbers the explainer pages draw. It never
imports the lab."""

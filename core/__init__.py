"""PE Lab's pure computation: numpy, torch, pandas and scipy only, never streamlit. Two products, one tree:

    core/explain/   the explainer: encodings, attention, similarity, extrapolation, the order demo, their figures
    core/lab/       the Fault lab: data, models, training, runs, statistics, evaluations, experiment, study
    core/limits.py, core/safe_text.py, core/fingerprint.py, core/plotting.py   shared by both, import nothing above

Layers point down (tools/import_graph.py checks it): the explainer never imports the lab. `core/experiment.py`
and `core/study/` are thin entry modules for `python -m core.experiment` and `python -m core.study`.
"""

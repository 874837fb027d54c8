"""`python -m core.study`: the study from the command line (core.lab.study.cli).

A thin entry package, kept so that every command this lab ever printed (and stored in a study JSON) still runs.
"""

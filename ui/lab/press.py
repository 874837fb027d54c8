"""The Fault lab's press: what "Train and compare" asks (the short answer's question, B against B-noPE, or why it
asks another) in one line, and, while it trains, the interim result of the seeds it has finished, marked as such
until the verdict replaces it."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from core.lab import jobs
from core.lab.experiment.plan import Plan
from core.lab.report import interim_table, plural
from core.lab.stats.summary import PRIMARY_PAIR
from core.lab.wait import BESIDE_MODEL, describe_wait

QUESTION = "the short answer's question, B against B-noPE (the encoding alone)"


def question_line(models: Sequence[str], beside_wait: float | None = None) -> str:
    """What a press of these models asks, in one line. `beside_wait`: the wait the press would be told with A
    beside B-noPE and B, given when A was left out of the default press for it."""
    missing = [model for model in PRIMARY_PAIR if model not in models]
    if missing:
        against = " It compares each model with A instead." if BESIDE_MODEL in models else ""
        return f"This press does not ask {QUESTION}: add {' and '.join(missing)} under Models to ask it.{against}"
    if BESIDE_MODEL in models:
        return f"This press asks {QUESTION}, with A beside them."
    if beside_wait is None:
        return f"This press asks {QUESTION}."
    return (
        f"This press asks {QUESTION}. A is left out to keep the wait short: with it the wait here would be "
        f"{describe_wait(beside_wait)}. Add it under Models to compare with A too."
    )


def interim_panel(job: jobs.Job, status: jobs.JobStatus) -> None:
    """While an experiment trains: the accuracies of its finished runs, marked "Interim: k of n seeds", once the
    comparison it asks has finished a seed; nothing for a study, or before a seed has finished."""
    plan = job.plan
    if not isinstance(plan, Plan) or status.state != "running":
        return
    table, finished = interim_table(status.runs, plan.models, plan.seeds)
    if not finished:
        return
    with st.container(key="interim"):
        st.markdown(f"**Interim: {finished} of {plural(len(plan.seeds), 'seed')}**, accuracy % on the test windows")
        st.dataframe(table, hide_index=True)
        st.caption(
            "A first look, not a verdict: the verdict, with its interval over every seed, replaces this table when "
            "the press has finished."
        )

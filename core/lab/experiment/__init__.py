"""One experiment: a Plan, its evaluations' stages, `run_plan`, the results JSON and the CLI."""

"""Safe rollouts (issue 22): canary verdicts for model versions, blue/green pairs and pod sets."""

"""Diagnosis: Triton logs and UNAVAILABLE reasons -> findings -> runbook ids."""

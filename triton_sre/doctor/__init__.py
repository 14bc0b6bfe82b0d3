"""`triton-sre doctor`: which inputs triton-sre needs are missing, and the exact fix for each.

checks.py (pure, Triton side; the exporter uses it too), promchecks.py (pure, Prometheus side),
pitfalls.py (pure data: known problems by release), command.py (fetching, rendering, exit codes).
"""

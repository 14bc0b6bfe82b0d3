"""`triton-sre generate`: SLO spec -> recording rules, burn-rate and operational alerts, dashboards.

The spec model is `triton_sre.slo`; this package only renders: rules.py renders Prometheus rule
files, promtests.py renders promtool unit tests for them, dashboards.py (the only module importing
grafanalib) renders the Grafana dashboards, and command.py writes everything deterministically.
"""

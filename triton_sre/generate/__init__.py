"""`triton-sre generate`: SLO spec -> recording rules, burn-rate and operational alerts, dashboards.

The spec model is `triton_sre.slo` and the PromQL library `triton_sre.promql`; this package only
renders. One module per rule family (recording, slo_rules, operational, llm, capacity) and one
`tests_<family>` module of promtool tests each, registered in families.py (FAMILIES); calc.py is the
exact-arithmetic PromQL model the SLO tests are predicted with; rulefile.py the shared rule-file
shape and YAML. Dashboards: panels.py (the panel DSL, the only module importing grafanalib with the
dashboard modules), one `dash_<name>` module per dashboard, registered in dashboards.py. command.py
writes everything deterministically.
"""

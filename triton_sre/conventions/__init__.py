"""Every name other code and documents rely on, defined once, in one module per domain.

- `triton`: names read from Triton (metric families and labels, model states, statistics fields,
  the LLM backends' families).
- `exported`: names triton-sre exports (exporter and bot metrics, their labels and values,
  recording rules, dashboard uids).
- `alerts`: alerts, SLOs, runbook ids, severities, Alertmanager names and annotations.
- `autoscaling`: the scaling signals' rules, the spec's signal names, HPA/KEDA names (issue 21).
- `triton_releases`: which Triton (and LLM backend) release registers which metric family, with its
  type, labels and HELP text (the reference docs/triton-families.md is rendered from it).
- `process`: ports, defaults, environment variables, HTTP paths, exit codes, the stack's images.

Everything is re-exported here, so code imports `from triton_sre import conventions as c` and
writes `c.NAME`. A metric name, label, runbook id or alert name written as a literal anywhere else
is a bug (tests/test_conventions_defined_once.py).
"""

from triton_sre.conventions.alerts import *  # noqa: F403
from triton_sre.conventions.autoscaling import *  # noqa: F403
from triton_sre.conventions.exported import *  # noqa: F403
from triton_sre.conventions.process import *  # noqa: F403
from triton_sre.conventions.triton import *  # noqa: F403
from triton_sre.conventions.triton_releases import *  # noqa: F403

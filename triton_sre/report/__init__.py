"""`triton-sre report`: a cost and capacity report over a time range, from Prometheus.

`prom.py` runs range queries into pandas (the only I/O besides writing files); `figures.py` turns
the frames into one row per model (pure); `recommend.py` derives recommendations with the number
and the threshold behind each (pure); `charts.py` draws PNGs with matplotlib (Agg); `render.py`
writes Markdown, a self-contained HTML page (jinja2, sandboxed and autoescaped) and CSV.
"""

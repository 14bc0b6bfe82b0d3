"""`triton-sre gameday`: named faults against a local stack under traffic, scored end to end."""

"""The sidecar stack: configs rendered from one set of templates for docker-compose (deploy/) and
for `triton-sre stack up` (the same topology from local binaries), and the local Triton launcher
(`local_triton.py`) the stack, the demo and the tests run."""

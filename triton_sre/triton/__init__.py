"""Talking to NVIDIA Triton Inference Server (read-only HTTP, its metrics format).

Running a local Triton is a harness for the stack, the demo and the tests: `triton_sre.stack.local_triton`.
"""

"""Talking to, and running, NVIDIA Triton Inference Server."""

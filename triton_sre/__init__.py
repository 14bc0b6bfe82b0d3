"""triton-sre: the observability and SRE companion for NVIDIA Triton Inference Server."""

__version__ = "0.1.0"

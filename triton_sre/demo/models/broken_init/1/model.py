"""Broken on purpose: initialize() fails because the weights file it needs is missing."""

import os

import numpy as np
import triton_python_backend_utils as pb_utils

WEIGHTS_FILE = "weights.npy"


class TritonPythonModel:
    def initialize(self, args):
        path = os.path.join(args["model_repository"], args["model_version"], WEIGHTS_FILE)
        if not os.path.exists(path):
            raise RuntimeError(f"weights file not found: {path}")
        self.weights = np.load(path)

    def execute(self, requests):
        responses = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "INPUT").as_numpy()
            y = (x * self.weights).astype(np.float32)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUTPUT", y)]))
        return responses

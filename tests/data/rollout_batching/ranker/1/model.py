"""Rollout test model: OUTPUT = INPUT * 2, one 4 ms sleep per execution (a batch costs one)."""

import time

import numpy as np
import triton_python_backend_utils as pb_utils

EXECUTION_S = 0.004


class TritonPythonModel:
    def execute(self, requests):
        time.sleep(EXECUTION_S)
        responses = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "INPUT").as_numpy()
            y = (x.astype(np.float32) * np.float32(2.0)).astype(np.float32)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUTPUT", y)]))
        return responses

"""vector_scale: OUTPUT = 2 * INPUT, with a fixed cost per execution (not per request).

The sleep stands for a kernel launch: it is paid once per batch, so under concurrent load the
dynamic batcher merges requests and nv_inference_count / nv_inference_exec_count rises above 1.
A request with a negative value makes execute() raise: Triton counts a BACKEND failure for every
request of that execution. (An InferenceResponse(error=...) would be counted nowhere.)
"""

import time

import numpy as np
import triton_python_backend_utils as pb_utils

EXECUTION_COST_S = 0.005
SCALE = np.float32(2.0)


class TritonPythonModel:
    def execute(self, requests):
        time.sleep(EXECUTION_COST_S)
        responses = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "INPUT").as_numpy()
            if (x < 0).any():
                raise ValueError("vector_scale: negative input values are not allowed")
            y = (x.astype(np.float32) * SCALE).astype(np.float32)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUTPUT", y)]))
        return responses

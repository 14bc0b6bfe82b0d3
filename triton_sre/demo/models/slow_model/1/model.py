"""slow_model: OUTPUT = INPUT + 1 after 0.1 s per request, on a single unbatched instance.

With one instance and no batching, N concurrent requests are served one at a time, so all but
one of them wait in Triton's queue: nv_inference_queue_duration_us grows with concurrency.
A request with a negative value makes execute() raise: Triton counts a BACKEND failure for every
request of that execution. (An InferenceResponse(error=...) would be counted nowhere.)
"""

import time

import numpy as np
import triton_python_backend_utils as pb_utils

REQUEST_COST_S = 0.1


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            time.sleep(REQUEST_COST_S)
            x = pb_utils.get_input_tensor_by_name(request, "INPUT").as_numpy()
            if (x < 0).any():
                raise ValueError("slow_model: negative input values are not allowed")
            y = (x.astype(np.float32) + np.float32(1.0)).astype(np.float32)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUTPUT", y)]))
        return responses

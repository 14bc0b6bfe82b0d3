"""tail_model: OUTPUT = INPUT after 60 ms, except every 20th request, which takes 600 ms.

The slow request is chosen by a per-instance request counter, not at random, so the tail is the
same in every run: 5 % of requests at ten times the usual latency. The average stays near 87 ms
while p99 sits at 600 ms: a latency SLO (500 ms) judged on averages never sees it.
(triton_sre.demo.TAIL_MODEL_* hold the same numbers for tests.)
A request with a negative value makes execute() raise (a BACKEND failure), like the other models.
"""

import time

import numpy as np
import triton_python_backend_utils as pb_utils

BASE_COST_S = 0.06
TAIL_EVERY = 20
TAIL_FACTOR = 10


class TritonPythonModel:
    def initialize(self, args):
        self.served = 0

    def execute(self, requests):
        responses = []
        for request in requests:
            self.served += 1
            slow = self.served % TAIL_EVERY == 0
            time.sleep(BASE_COST_S * (TAIL_FACTOR if slow else 1))
            x = pb_utils.get_input_tensor_by_name(request, "INPUT").as_numpy()
            if (x < 0).any():
                raise ValueError("tail_model: negative input values are not allowed")
            y = x.astype(np.float32)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUTPUT", y)]))
        return responses

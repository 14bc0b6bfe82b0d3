"""gd_tail: OUTPUT = INPUT after 60 ms; while <model folder>/tail exists, every 20th request of an
instance takes 600 ms instead: p99 above a 500 ms SLO while the average stays near 87 ms."""

import os
import time

import triton_python_backend_utils as pb_utils

TAIL_FILE = "tail"
BASE_COST_S = 0.06
TAIL_EVERY = 20
TAIL_FACTOR = 10


class TritonPythonModel:
    def initialize(self, args):
        self.tail = os.path.join(args["model_repository"], TAIL_FILE)
        self.served = 0

    def execute(self, requests):
        responses = []
        for request in requests:
            self.served += 1
            slow = self.served % TAIL_EVERY == 0 and os.path.exists(self.tail)
            time.sleep(BASE_COST_S * (TAIL_FACTOR if slow else 1))
            x = pb_utils.get_input_tensor_by_name(request, "INPUT").as_numpy()
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUTPUT", x)]))
        return responses

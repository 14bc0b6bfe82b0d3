"""gd_echo: OUTPUT = INPUT. initialize() waits while <model folder>/hold exists (at most 10 min)."""

import os
import time

import triton_python_backend_utils as pb_utils

HOLD_FILE = "hold"
MAX_HOLD_S = 600.0


class TritonPythonModel:
    def initialize(self, args):
        hold = os.path.join(args["model_repository"], HOLD_FILE)
        deadline = time.monotonic() + MAX_HOLD_S
        while os.path.exists(hold) and time.monotonic() < deadline:
            time.sleep(0.2)

    def execute(self, requests):
        return [
            pb_utils.InferenceResponse(
                output_tensors=[
                    pb_utils.Tensor("OUTPUT", pb_utils.get_input_tensor_by_name(r, "INPUT").as_numpy())
                ]
            )
            for r in requests
        ]

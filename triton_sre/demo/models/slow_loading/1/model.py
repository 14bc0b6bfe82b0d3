"""slow_loading: OUTPUT = INPUT, after a deliberate 1.5 s in initialize().

Stands for a model whose weights take time to load. Kept short so the shared test server still
starts fast; triton_sre.demo.SLOW_LOADING_SECONDS must match LOAD_DELAY_S.
"""

import time

import triton_python_backend_utils as pb_utils

LOAD_DELAY_S = 1.5


class TritonPythonModel:
    def initialize(self, args):
        time.sleep(LOAD_DELAY_S)

    def execute(self, requests):
        return [
            pb_utils.InferenceResponse(
                output_tensors=[
                    pb_utils.Tensor("OUTPUT", pb_utils.get_input_tensor_by_name(r, "INPUT").as_numpy())
                ]
            )
            for r in requests
        ]

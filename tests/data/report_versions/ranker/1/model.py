"""Report test model: OUTPUT = INPUT * 2 after a per-version delay per execution (not per request:
a batch of four takes as long as one), read from the model config's `delay_ms_v<version>` (the
version is the name of the folder this file is in; the other version's file is a symlink).

A request with a negative input makes `execute` raise: Triton fails every request of that batch
(BACKEND) and still counts the execution.
"""

import json
import os
import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        version = os.path.basename(os.path.dirname(os.path.abspath(__file__)))
        self.delay_s = float(config["parameters"][f"delay_ms_v{version}"]["string_value"]) / 1000.0

    def execute(self, requests):
        time.sleep(self.delay_s)
        inputs = [pb_utils.get_input_tensor_by_name(r, "INPUT").as_numpy() for r in requests]
        if any((x < 0).any() for x in inputs):
            raise pb_utils.TritonModelException("negative input")
        return [
            pb_utils.InferenceResponse(
                output_tensors=[pb_utils.Tensor("OUTPUT", (x * np.float32(2.0)).astype(np.float32))]
            )
            for x in inputs
        ]

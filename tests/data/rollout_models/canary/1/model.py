"""Rollout test model: OUTPUT = INPUT * 2 after a per-version delay read from the model config.

The config's parameter `delay_ms_v<version>` sets the delay of each version (the version is the
name of the folder this file is in), so one file serves every version directory (the others are
symlinks) and a test decides which version is slow.
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
        key = f"delay_ms_v{version}"
        self.delay_s = float(config["parameters"][key]["string_value"]) / 1000.0

    def execute(self, requests):
        responses = []
        for request in requests:
            time.sleep(self.delay_s)
            x = pb_utils.get_input_tensor_by_name(request, "INPUT").as_numpy()
            y = (x.astype(np.float32) * np.float32(2.0)).astype(np.float32)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUTPUT", y)]))
        return responses

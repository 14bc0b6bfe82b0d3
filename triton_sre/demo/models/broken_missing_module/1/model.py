"""Broken on purpose: imports a dependency that is not installed (a missing pip package)."""

import numpy as np
import triton_python_backend_utils as pb_utils
import triton_sre_demo_missing_dependency  # noqa: F401 - does not exist, on purpose


class TritonPythonModel:
    def execute(self, requests):
        return [
            pb_utils.InferenceResponse(
                output_tensors=[pb_utils.Tensor("OUTPUT", np.zeros(4, dtype=np.float32))]
            )
            for _ in requests
        ]

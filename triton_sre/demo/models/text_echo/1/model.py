"""text_echo: OUTPUT = upper-cased INPUT (TYPE_STRING, i.e. BYTES on the wire).

A request with an empty string makes execute() raise: Triton counts a BACKEND failure for every
request of that execution. (An InferenceResponse(error=...) would be counted nowhere.)
"""

import numpy as np
import triton_python_backend_utils as pb_utils


def _upper(value):
    raw = value if isinstance(value, bytes) else str(value).encode("utf-8")
    return raw.decode("utf-8", errors="replace").upper().encode("utf-8")


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            text = pb_utils.get_input_tensor_by_name(request, "INPUT").as_numpy()
            if any(len(v) == 0 for v in text.reshape(-1)):
                raise ValueError("text_echo: empty strings are not allowed")
            out = np.array([_upper(v) for v in text.reshape(-1)], dtype=np.object_).reshape(text.shape)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUTPUT", out)]))
        return responses

"""Mistakes a user can make in a model's configuration or repository layout, swept from the schema.

Each class comes from a field or rule of ``model_config.proto`` (triton-inference-server/common) or of
core's ``model_config_utils.cc`` / ``model_repository_manager.cc`` / ``ensemble_utils.cc`` that is not
yet in ``corpus.BROKEN``/``STUCK`` or ``test_diagnosis_realtriton.INVENTORY_CLASSES``. The runbook of
each was written from the injected fault before the diagnosis was run (diag27).
"""

# ruff: noqa: E501 - model configs are test data

from __future__ import annotations

from corpus import OK_PY, auto_complete_model, config_pbtxt

from triton_sre import conventions as c

Files = dict[str, str]

RAISE_IN_EXECUTE = """import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        raise RuntimeError('boom in execute')
"""
WARMUP = """model_warmup [ { name: "w" batch_size: 1 inputs { key: "INPUT" value: { data_type: TYPE_FP32 dims: [ 4 ] zero_data: true } } } ]
"""


def _py(name: str, *, model: str = OK_PY, **kw: object) -> Files:
    return {"config.pbtxt": config_pbtxt(name, **kw), "1/model.py": model}  # type: ignore[arg-type]


def _ens(name: str, body: str, mbs: int = 0) -> Files:
    return {
        "config.pbtxt": f'name: "{name}"\nplatform: "ensemble"\nmax_batch_size: {mbs}\n' + body,
        "1/.keep": "",
    }


ENS_IO = """input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]
"""


def _step(model: str, in_key: str = "INPUT", in_val: str = "IN", out_key: str = "OUTPUT", out_val: str = "OUT") -> str:
    return (
        f'step [ {{ model_name: "{model}" model_version: -1 input_map {{ key: "{in_key}" value: "{in_val}" }}'
        f' output_map {{ key: "{out_key}" value: "{out_val}" }} }} ]'
    )


# Labelled before the server ran; these loaded on 2.51 (what 2.51 makes of them: no config, a misnamed one or
# none naming a backend, auto-completed from model.py; backend beside platform, backend wins; count -1 and
# secondary devices on KIND_CPU accepted; an ensemble batching 8 over a step that does not batch accepted; in
# the second round a response cache with no cache configured, max_candidate_sequences 0, two inputs of one
# name and KIND_MODEL for a Python model).
LOADS = None

# model directory -> (files, the runbook its load failure must be diagnosed as; None = it loads)
SCHEMA_FAULTS: dict[str, tuple[Files, str | None]] = {
    "ok_model": (_py("ok_model"), None),
    # --- config.pbtxt text that does not parse as ModelConfig
    "mbs_string": (_py("mbs_string", mbs='"eight"'), c.RUNBOOK_CONFIG_PARSE_ERROR),
    "dims_string": (_py("dims_string", dims='"4"'), c.RUNBOOK_CONFIG_PARSE_ERROR),
    "bool_word": (
        _py("bool_word", mbs=4, extra="dynamic_batching { preserve_ordering: maybe }\n"),
        c.RUNBOOK_CONFIG_PARSE_ERROR,
    ),
    "oneof_twice": (
        _py("oneof_twice", mbs=4, extra="dynamic_batching { }\nsequence_batching { }\n"),
        c.RUNBOOK_CONFIG_PARSE_ERROR,
    ),
    "json_config": (
        {"config.pbtxt": '{"name": "json_config", "backend": "python"}\n', "1/model.py": OK_PY},
        c.RUNBOOK_CONFIG_PARSE_ERROR,
    ),
    # --- files missing, misnamed or in the wrong place
    "no_config": ({"1/model.py": OK_PY}, LOADS),
    "config_misnamed": ({"config.pbtx": config_pbtxt("config_misnamed"), "1/model.py": OK_PY}, LOADS),
    "no_backend": (
        {"config.pbtxt": config_pbtxt("no_backend", backend=""), "1/model.py": OK_PY},
        LOADS,
    ),
    "model_py_dir": ({"config.pbtxt": config_pbtxt("model_py_dir"), "1/model.py/.keep": ""}, c.RUNBOOK_MODEL_FILE_INVALID),
    # --- backend or platform names
    # Labelled backend-not-found before the run; 2.51 says "unexpected platform type 'pytorch'": the PyTorch
    # backend's name given as a platform, the page of which is backend-platform-mismatch.
    "platform_short": (
        {"config.pbtxt": config_pbtxt("platform_short", backend='platform: "pytorch"'), "1/model.pt": ""},
        c.RUNBOOK_BACKEND_PLATFORM_MISMATCH,
    ),
    "platform_and_backend": (
        {
            "config.pbtxt": config_pbtxt("platform_and_backend", backend='backend: "python"\nplatform: "onnxruntime_onnx"'),
            "1/model.py": OK_PY,
        },
        LOADS,
    ),
    # --- version policy
    "vp_latest_zero": (
        _py("vp_latest_zero", extra="version_policy: { latest: { num_versions: 0 } }\n"),
        c.RUNBOOK_VERSION_DIR_INVALID,
    ),
    "vp_specific_negative": (
        _py("vp_specific_negative", extra="version_policy: { specific: { versions: [ -1 ] } }\n"),
        c.RUNBOOK_VERSION_DIR_INVALID,
    ),
    # --- instance groups
    "ig_count_negative": (
        _py("ig_count_negative", extra="instance_group [ { count: -1 kind: KIND_CPU } ]\n"),
        LOADS,
    ),
    "ig_gpu_id": (
        _py("ig_gpu_id", extra="instance_group [ { count: 1 kind: KIND_GPU gpus: [ 7 ] } ]\n"),
        c.RUNBOOK_INSTANCE_GROUP_INVALID,
    ),
    "ig_secondary": (
        _py(
            "ig_secondary",
            extra="instance_group [ { count: 1 kind: KIND_CPU secondary_devices [ { kind: KIND_NVDLA device_id: 0 } ] } ]\n",
        ),
        LOADS,
    ),
    # --- dynamic and sequence batching
    "db_preferred_zero": (
        _py("db_preferred_zero", mbs=8, extra="dynamic_batching { preferred_batch_size: [ 0 ] }\n"),
        c.RUNBOOK_BATCHING_CONFIG_INVALID,
    ),
    "db_priority_default": (
        _py("db_priority_default", mbs=8, extra="dynamic_batching { priority_levels: 2 default_priority_level: 5 }\n"),
        c.RUNBOOK_BATCHING_CONFIG_INVALID,
    ),
    "db_priority_policy": (
        _py(
            "db_priority_policy",
            mbs=8,
            extra="dynamic_batching { priority_levels: 2 default_priority_level: 1 priority_queue_policy [ { key: 9 value: { max_queue_size: 4 } } ] }\n",
        ),
        c.RUNBOOK_BATCHING_CONFIG_INVALID,
    ),
    "seq_control_no_values": (
        _py(
            "seq_control_no_values",
            mbs=8,
            extra='sequence_batching { control_input [ { name: "START" control [ { kind: CONTROL_SEQUENCE_START } ] } ] }\n',
        ),
        c.RUNBOOK_BATCHING_CONFIG_INVALID,
    ),
    # --- inputs and outputs
    "dims_missing": (
        {
            "config.pbtxt": 'name: "dims_missing"\nbackend: "python"\nmax_batch_size: 0\ninput [ { name: "INPUT" data_type: TYPE_FP32 } ]\noutput [ { name: "OUTPUT" data_type: TYPE_FP32 dims: [ 4 ] } ]\n',
            "1/model.py": OK_PY,
        },
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
    ),
    # Labelled datatype-mismatch before the run; 2.51 says "must specify 'data_type'", its words for a field
    # left out, which the inventory (core-io-no-data-type) reads as the config's own fault.
    "dtype_invalid": (_py("dtype_invalid", dt="TYPE_INVALID"), c.RUNBOOK_CONFIG_PARSE_ERROR),
    "reshape_size": (
        {
            "config.pbtxt": config_pbtxt("reshape_size").replace("dims: [ 4 ] }", "dims: [ 4 ] reshape: { shape: [ 2, 3 ] } }", 1),
            "1/model.py": OK_PY,
        },
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
    ),
    "output_dims_mismatch": (
        _py(
            "output_dims_mismatch",
            model=auto_complete_model(
                "        auto_complete_model_config.add_output("
                "{'name': 'OUTPUT', 'data_type': 'TYPE_FP32', 'dims': [8]})\n"
            ),
        ),
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
    ),
    # --- warmup
    "warmup_input_name": (
        _py("warmup_input_name", extra=WARMUP.replace('key: "INPUT"', 'key: "NOT_AN_INPUT"')),
        c.RUNBOOK_TENSOR_NAME_MISMATCH,
    ),
    "warmup_data_file": (
        _py("warmup_data_file", extra=WARMUP.replace("zero_data: true", 'input_data_file: "missing.bin"')),
        c.RUNBOOK_MODEL_FILE_MISSING,
    ),
    # --- Python model code
    "py_no_class": (_py("py_no_class", model="import triton_python_backend_utils as pb_utils\n"), c.RUNBOOK_PYTHON_MODEL_ERROR),
    "py_init_signature": (
        _py("py_init_signature", model=OK_PY + "\n    def initialize(self):\n        pass\n"),
        c.RUNBOOK_PYTHON_MODEL_ERROR,
    ),
    # Labelled python-module-missing before the run; "cannot import name 'x' from 'pkg'" is a module that
    # imported without the name, which the rules read as another release of it (hand_rules.MISSING_SUBMODULE).
    "py_import_name": (
        _py("py_import_name", model="from json import not_a_name_xyz\n" + OK_PY),
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
    ),
    "py_auto_complete_raises": (
        _py("py_auto_complete_raises", model=auto_complete_model("        raise ValueError('bad auto-complete')\n")),
        c.RUNBOOK_PYTHON_MODEL_ERROR,
    ),
    # --- ensembles
    "ens_tensor_missing": (_ens("ens_tensor_missing", ENS_IO + f"ensemble_scheduling {{ {_step('ok_model', in_key='NOT_AN_INPUT')} }}\n"), c.RUNBOOK_ENSEMBLE_DEPENDENCY),
    "ens_output_unwritten": (_ens("ens_output_unwritten", ENS_IO + f"ensemble_scheduling {{ {_step('ok_model', out_val='OTHER')} }}\n"), c.RUNBOOK_ENSEMBLE_DEPENDENCY),
    "ens_input_unused": (
        _ens(
            "ens_input_unused",
            ENS_IO.replace("input [ {", 'input [ { name: "IN2" data_type: TYPE_FP32 dims: [ 4 ] }, {')
            + f"ensemble_scheduling {{ {_step('ok_model')} }}\n",
        ),
        c.RUNBOOK_ENSEMBLE_DEPENDENCY,
    ),
    "ens_no_scheduling": (_ens("ens_no_scheduling", ENS_IO), c.RUNBOOK_ENSEMBLE_DEPENDENCY),
    "ens_batch_exceeds": (
        _ens("ens_batch_exceeds", ENS_IO + f"ensemble_scheduling {{ {_step('ok_model')} }}\n", mbs=8),
        LOADS,
    ),
    "ens_dtype": (
        _ens("ens_dtype", ENS_IO.replace("TYPE_FP32", "TYPE_INT32", 1) + f"ensemble_scheduling {{ {_step('ok_model')} }}\n"),
        c.RUNBOOK_DATATYPE_MISMATCH,
    ),
    # --- second round (labelled before its run like the first)
    "ens_warmup": (
        _ens("ens_warmup", ENS_IO + f"ensemble_scheduling {{ {_step('ok_model')} }}\n" + WARMUP.replace('"INPUT"', '"IN"')),
        c.RUNBOOK_ENSEMBLE_DEPENDENCY,
    ),
    "vd_leading_zero": ({"config.pbtxt": config_pbtxt("vd_leading_zero"), "01/model.py": OK_PY}, c.RUNBOOK_VERSION_DIR_INVALID),
    "dims_zero": (_py("dims_zero", dims="0"), c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH),
    # Labelled model-file-missing before the run; python-module-missing's page covers a packed environment
    # (EXECUTION_ENV_PATH) that is missing, which is what "Failed to get the canonical path" says.
    "env_missing": (
        _py("env_missing", extra='parameters: { key: "EXECUTION_ENV_PATH" value: { string_value: "$$TRITON_MODEL_DIRECTORY/env.tar.gz" } }\n'),
        c.RUNBOOK_PYTHON_MODULE_MISSING,
    ),
    "label_missing": (
        {
            "config.pbtxt": config_pbtxt("label_missing").replace(
                'name: "OUTPUT" data_type: TYPE_FP32 dims: [ 4 ] }', 'name: "OUTPUT" data_type: TYPE_FP32 dims: [ 4 ] label_filename: "labels.txt" }'
            ),
            "1/model.py": OK_PY,
        },
        c.RUNBOOK_MODEL_FILE_MISSING,
    ),
    "cache_no_config": (_py("cache_no_config", extra="response_cache { enable: true }\n"), LOADS),
    "seq_oldest_zero": (
        _py("seq_oldest_zero", mbs=4, extra="sequence_batching { oldest { max_candidate_sequences: 0 } }\n"),
        LOADS,
    ),
    "io_dup_name": (
        {
            "config.pbtxt": config_pbtxt("io_dup_name").replace(
                "input [ {", 'input [ { name: "INPUT" data_type: TYPE_FP32 dims: [ 4 ] }, {'
            ),
            "1/model.py": OK_PY,
        },
        LOADS,
    ),
    "ig_kind_model": (_py("ig_kind_model", extra="instance_group [ { count: 1 kind: KIND_MODEL } ]\n"), LOADS),
    "ens_cycle_a": (_ens("ens_cycle_a", ENS_IO + "ensemble_scheduling { " + _step("ens_cycle_b", in_key="IN", out_key="OUT") + " }\n"), c.RUNBOOK_ENSEMBLE_DEPENDENCY),
    "ens_cycle_b": (_ens("ens_cycle_b", ENS_IO + "ensemble_scheduling { " + _step("ens_cycle_a", in_key="IN", out_key="OUT") + " }\n"), c.RUNBOOK_ENSEMBLE_DEPENDENCY),
}

# A Python model whose execute raises while its model_warmup sample runs: the load fails (python-model-error),
# but 2.51 crashed on it (signal 11 right after the stub's error) in 2 of about 18 servers, once with no other
# load request in flight. Out of the live sweep, which must not depend on a server crash;
# schema-warmup-crash.log is one of those crashes, test_diagnosis_diag27 reads the failure without one.
WARMUP_EXECUTE_RAISES = "py_execute_raises"
WARMUP_EXECUTE_RAISES_FILES: Files = _py(WARMUP_EXECUTE_RAISES, model=RAISE_IN_EXECUTE, extra=WARMUP)

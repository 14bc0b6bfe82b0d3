"""Faults no real-Triton sweep had reached (diag29): ensemble steps, BLS, decoupled mismatches, the response
cache, the rate limiter, sequence batching, warmup samples, repository agents, and the server flags of
the cache, rate limiter, load threads, metrics and host policies.

Each runbook was written down from the injected fault before triage ran; where 2.51 did something else the
comment says what, and the label follows the log (a setting 2.51 accepts is a healthy log: no finding).
Sources: core ``src/ensemble_scheduler/ensemble_utils.cc``, ``src/model_config_utils.cc``,
``src/rate_limiter.cc``, ``src/model_repository_manager/model_repository_manager.cc``, server
``src/command_line_parser.cc``, python_backend ``src/python_be.cc``, ``src/pb_stub.cc`` (r24.10 = 2.51).
"""

# ruff: noqa: E501 - model code and configs are test data

from __future__ import annotations

from corpus import OK_PY, config_pbtxt
from runtime_faults import ECHO, _model

from triton_sre import conventions as c

Files = dict[str, str]
Models = dict[str, tuple[Files, str | None]]


def _py(name: str, code: str = OK_PY, **kw: object) -> Files:
    return {"config.pbtxt": config_pbtxt(name, **kw), "1/model.py": code}  # type: ignore[arg-type]


def _ens(name: str, step: str, version: int = -1, in_dims: str = "4") -> Files:
    return {
        "config.pbtxt": (
            f'name: "{name}"\nplatform: "ensemble"\nmax_batch_size: 0\n'
            f'input [ {{ name: "IN" data_type: TYPE_FP32 dims: [ {in_dims} ] }} ]\n'
            'output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'
            f'ensemble_scheduling {{ step [ {{ model_name: "{step}" model_version: {version}'
            ' input_map { key: "INPUT" value: "IN" } output_map { key: "OUTPUT" value: "OUT" } } ] }\n'
        ),
        "1/.keep": "",
    }


WARMUP = 'model_warmup [ { name: "w" batch_size: 1 inputs { key: "INPUT" value: { data_type: TYPE_FP32 dims: [ 4 ] zero_data: true } } } ]\n'
SEQ = 'sequence_batching { control_input [ { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] } ] }\n'


def _bls(target: str) -> str:
    return _model(
        "    def execute(self, requests):\n"
        "        out = []\n"
        "        for r in requests:\n"
        f"            answer = pb_utils.InferenceRequest(model_name='{target}', requested_output_names=['OUTPUT'], inputs=[pb_utils.get_input_tensor_by_name(r, 'INPUT')]).exec()\n"
        "            if answer.has_error():\n"
        "                raise pb_utils.TritonModelException(answer.error().message())\n"
        "            out.append(pb_utils.InferenceResponse([pb_utils.get_output_tensor_by_name(answer, 'OUTPUT')]))\n"
        "        return out\n"
    )


SENDER = _model(
    "    def execute(self, requests):\n        for r in requests:\n"
    "            r.get_response_sender().send(pb_utils.InferenceResponse([pb_utils.Tensor('OUTPUT', np.zeros(4, np.float32))]), flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)\n"
    "        return None\n"
)
DECOUPLED = "model_transaction_policy { decoupled: true }\n"
RATE_LIMITER_FLAGS = ("--rate-limit=execution_count", "--rate-limit-resource=R1:2")

# Loaded first, then every other model in parallel, then the ensembles; the run-time models are then sent a
# request each (RUNTIME). model -> (files, the runbook of its first finding; None = no finding).
MODELS: Models = {
    "ok_model": (_py("ok_model"), None),
    "step": (_py("step", _model(ECHO)), None),
    # --- ensembles
    "ens_step_absent": (_ens("ens_step_absent", "no_such_model"), c.RUNBOOK_ENSEMBLE_DEPENDENCY),
    "ens_step_version": (_ens("ens_step_version", "step", version=5), c.RUNBOOK_ENSEMBLE_STEP_VERSION),
    "ens_step_shape": (_ens("ens_step_shape", "step", in_dims="8"), c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH),
    # --- warmup samples
    "warmup_dims": (_py("warmup_dims", extra=WARMUP.replace("dims: [ 4 ]", "dims: [ 8 ]")), c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH),
    "warmup_dtype": (_py("warmup_dtype", extra=WARMUP.replace("TYPE_FP32", "TYPE_INT32")), c.RUNBOOK_DATATYPE_MISMATCH),
    # --- sequence batching
    "seq_oldest_preferred": (
        _py("seq_oldest_preferred", mbs=4, extra="sequence_batching { oldest { max_candidate_sequences: 4 preferred_batch_size: [ 16 ] } }\n"),
        c.RUNBOOK_BATCHING_CONFIG_INVALID,
    ),
    # Labelled batching-config-invalid before the run; 2.51 loads a control input that names no control.
    "seq_control_no_kind": (
        _py("seq_control_no_kind", mbs=4, extra='sequence_batching { control_input [ { name: "START" } ] }\n'),
        None,
    ),
    "seq_control_twice": (
        _py("seq_control_twice", mbs=4, extra=SEQ.replace('control_input [ {', 'control_input [ { name: "START2" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] }, {')),
        c.RUNBOOK_BATCHING_CONFIG_INVALID,
    ),
    # --- repository agents, rate limiter
    "agent_missing": (
        _py("agent_missing", extra='model_repository_agents { agents [ { name: "no_such_agent" } ] }\n'),
        c.RUNBOOK_BACKEND_NOT_FOUND,
    ),
    "rl_resource_over": (
        _py("rl_resource_over", extra='instance_group [ { count: 1 kind: KIND_CPU rate_limiter { resources [ { name: "R1" count: 5 } ] } } ]\n'),
        c.RUNBOOK_INSTANCE_GROUP_INVALID,
    ),
    # --- run time: decoupled mismatches and BLS
    # Both labelled python-model-error before the run. HTTP refuses a decoupled model's request (501) before
    # it reaches the stub, so decoupled_returns' execute never ran: nothing logged. A non-decoupled model that
    # answers by its response sender with the final flag is served by 2.51 (200): a healthy model.
    "decoupled_returns": (_py("decoupled_returns", _model(ECHO), extra=DECOUPLED), None),
    "sender_not_decoupled": (_py("sender_not_decoupled", SENDER), None),
    "bls_absent": (_py("bls_absent", _bls("no_such_model")), c.RUNBOOK_ENSEMBLE_DEPENDENCY),
    "bls_unready": (_py("bls_unready", _bls("warmup_dims")), c.RUNBOOK_ENSEMBLE_DEPENDENCY),
}
RUNTIME = ("decoupled_returns", "sender_not_decoupled", "bls_absent", "bls_unready")
ENSEMBLES = tuple(m for m in MODELS if m.startswith("ens_"))

# Start-up flags, one server each beside ok_model: flag -> (extra flags, runbook; None = accepted, healthy).
FLAGS: dict[str, tuple[tuple[str, ...], str | None]] = {
    # (the pytriton wheel's 2.51 ships no cache library: both are refused for 'libtritoncache_<name>.so')
    "cache-config-size-word": (("--cache-config=local,size=lots",), c.RUNBOOK_SERVER_OPTION_INVALID),
    "cache-config-unknown-cache": (("--cache-config=no_such_cache,size=1048576",), c.RUNBOOK_SERVER_OPTION_INVALID),
    "rate-limit-word": (("--rate-limit=sometimes",), c.RUNBOOK_SERVER_OPTION_INVALID),
    "rate-limit-resource-no-count": (("--rate-limit=execution_count", "--rate-limit-resource=R1"), c.RUNBOOK_SERVER_OPTION_INVALID),
    # Labelled server-option-invalid before the run; 2.51 started and served with each of the next three.
    "model-load-thread-count-zero": (("--model-load-thread-count=0",), None),
    "metrics-config-word": (("--metrics-config=summary_latencies=maybe",), None),
    "metrics-config-no-value": (("--metrics-config=summary_quantiles",), c.RUNBOOK_SERVER_OPTION_INVALID),
    "host-policy-numa-word": (("--host-policy=cpu0,numa-node=abc",), None),
    "host-policy-no-setting": (("--host-policy=cpu0",), c.RUNBOOK_SERVER_OPTION_INVALID),
}

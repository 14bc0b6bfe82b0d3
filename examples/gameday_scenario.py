"""Roll out a model whose config names a backend this server does not have (onnxruntime).

A user scenario for `triton-sre gameday --scenario-file examples/gameday_scenario.py`: a Python
file with `inject(ctx)`, `restore(ctx)` and `expect`. `ctx` is triton_sre.gameday.context.Context:
the stack under test (`ctx.stack`), its model repository, model control (`ctx.add_model`,
`ctx.load`, `ctx.unload`, `ctx.states`), traffic (`ctx.traffic`, `ctx.stop_traffic`) and
`ctx.state`, a dict for notes between inject and restore. The first docstring line is what
`--list` and the scorecard say the scenario injects; NAME defaults to the file's stem.
"""

NAME = "wrong-backend"
MODEL = "gd_wrong_backend"


def _set_backend(ctx, backend):
    config = ctx.model_dir(MODEL) / "config.pbtxt"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace(ctx.state.get("backend", 'backend: "python"'), backend), encoding="utf-8")
    ctx.state["backend"] = backend


def inject(ctx):
    ctx.add_model(MODEL)  # a copy of the gameday's echo model (Python backend)
    _set_backend(ctx, 'backend: "onnxruntime"')
    ctx.load(MODEL)  # answers 400: the model is UNAVAILABLE


def restore(ctx):
    _set_backend(ctx, 'backend: "python"')  # the runbook's fix: the backend the model was built for
    ctx.load(MODEL)


expect = {
    "alert": "TritonModelUnavailable",
    "labels": {"model": MODEL},
    "runbook": "backend-not-found",
    "ready": [MODEL],
}

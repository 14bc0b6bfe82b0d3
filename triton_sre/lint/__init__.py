"""`triton-sre lint`: a static check of a Triton model repository before Triton starts.

`repository.py` reads the repository into a `Repository` (the only I/O besides `pydeps.py`'s
interpreter probe); each check module is a pure function ``check(repo, options) -> [Issue]``;
`runner.py` runs them all and turns issues into diagnosis `Finding`s; `command.py` is the CLI.
"""

"""Pure: a line that two processes wrote into, split back into each one's line.

Triton's logger writes a message and its line end in two writes (`std::cerr << msg << std::endl`). The
server and its Python backend stubs are separate processes sharing one stream, so a stub's whole message
can land between the server's message and its line end (and the other way round): the server's
``E... failed to load 'a' ...`` line then goes on with ``I... pb_stub.cc:298]  Failed to initialize Python
stub ...`` for model ``b``, and reading the line as one event gives ``a`` the cause of ``b``. A log header
of another process inside a line starts that process's line there. A header of the same process is left
alone: one process's logger writes a line whole (a message may quote another log line). So is a header
inside the message's text: after a blank (``Invalid argument: I1129 ... pb_stub.cc:325] ...``, an error
that quotes the stub's line), or, for a quoted message (24.06+), anywhere but right after its closing quote.
"""

from __future__ import annotations

import re

__all__ = ["split_glued"]

_HEADER = re.compile(
    r"(?:[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +"  # glog
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)? [IWEF] )"  # --log-format ISO8601
    r"(\d+) [^\s\]:]+:\d+\] "
)


def split_glued(raw: str) -> list[str]:
    """``raw`` as the lines of each process that wrote into it (one line when only one did)."""
    if raw.count("] ") < 2:  # a header ends with "] ": two of them before any regex runs
        return [raw]
    first = _HEADER.search(raw)
    if first is None:
        return [raw]
    pid = first.group(1)
    quoted = raw.startswith('"', first.end())
    cuts = [
        m.start()
        for m in _HEADER.finditer(raw, first.end())
        if m.group(1) != pid and (raw[m.start() - 1] == '"' if quoted else not raw[m.start() - 1].isspace())
    ]
    if not cuts:
        return [raw]
    return [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]

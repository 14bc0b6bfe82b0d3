"""A line two processes wrote into is read as each one's line (diagnosis/glued.py)."""

from __future__ import annotations

from triton_sre.diagnosis.glued import split_glued

CORE_E = "E1129 17:06:20.263944 10866 model_lifecycle.cc:642] \"failed to load 'a' version 1: Internal: x\""
STUB_I = "I1129 17:06:20.249209 10889 pb_stub.cc:298]  Failed to initialize Python stub: ValueError: y"
CORE_ISO = "2026-11-29T17:08:03Z E 14710 model_lifecycle.cc:642] \"failed to load 'a' version 1: x\""


def test_another_process_message_before_the_line_end_is_its_own_line() -> None:
    assert split_glued(CORE_E + STUB_I) == [CORE_E, STUB_I]
    assert split_glued(CORE_ISO + STUB_I) == [CORE_ISO, STUB_I]
    # unquoted (before 24.06, or the stub's own): cut where the header touches the message's last word
    unquoted = CORE_E.replace('"', "")
    assert split_glued(unquoted + STUB_I) == [unquoted, STUB_I]
    assert split_glued(STUB_I + CORE_E) == [STUB_I, CORE_E]


def test_one_process_line_and_quoted_headers_stay_whole() -> None:
    same = CORE_E + CORE_E.replace("E1129", "I1129")  # one process writes a line whole
    assert split_glued(same) == [same]
    quoting = f'E1203 10:00:00.000000 1 model_lifecycle.cc:654] "failed to load: Invalid argument: {STUB_I}"'
    assert split_glued(quoting) == [quoting]  # inside the quotes: the message quotes the stub's line
    after_blank = f"{CORE_E.replace(chr(34), '')}: {STUB_I}"
    assert split_glued(after_blank) == [after_blank]
    assert split_glued("] ] no header at all") == ["] ] no header at all"]

"""The direct block-YAML writer (generate/yaml_text.py, issue 28 item 7) writes the same bytes as
PyYAML's dumper with render_yaml's settings, for every document it accepts: random documents of
tricky strings (indicators, quotes, edge spaces, strings that read back as numbers or booleans,
literal blocks, lines folded past the width), ints, floats, bools and None."""

from __future__ import annotations

import io
import random
import tracemalloc
from typing import Any

import pytest
import yaml

from triton_sre.generate.rulefile import YamlListWriter, _Dumper, render_yaml, yaml_pieces
from triton_sre.generate.yaml_text import WIDTH, Slow, block_yaml

_PIECES = [
    "a", "model-1", "x y", ": ", ":", " #", "#", "'", '"', "- ", "-", "?", "? ", "{", "}", "[", ",",
    "&", "*", "!", "|", ">", "%", "@", "`", "true", "null", "~", "1", "0.5", "1e3", "0x1f", "2026-12-01",
    "---", "...", " ", "  ", "\n", "yes", "on", "=", "<", "+", ".", "1h", "'x'",
]  # fmt: skip


def _text(rng: random.Random) -> str:
    if rng.random() < 0.1:  # long: folded past the width, plain or quoted
        words = [rng.choice(["word", "w'o", "a:b", "x", "  "]) for _ in range(rng.randint(150, 400))]
        return " ".join(words)
    return "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 6)))


def _scalar(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.7:
        return _text(rng)
    if roll < 0.8:
        return rng.choice([0, 7, -3, 10**20])
    if roll < 0.9:
        return rng.choice([0.5, 1.0, 1e17, 1.5e-7, -2.25, 0.1])
    return rng.choice([True, False, None])


def _document(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.35:
        return _scalar(rng)
    if roll < 0.7:
        keys = [rng.choice(["k", "name", "exp_labels", "a b", "x-y", "k.v"]) for _ in range(4)]
        return {k: _document(rng, depth + 1) for k in keys[: rng.randint(0, 4)]}
    return [_document(rng, depth + 1) for _ in range(rng.randint(0, 4))]


def _pyyaml(document: Any) -> str:
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, width=WIDTH, allow_unicode=True)


def test_random_documents_are_written_as_pyyaml_writes_them() -> None:
    rng = random.Random(28)
    written = 0
    for _ in range(3000):
        document = {"root": _document(rng), "items": [_document(rng)]}
        try:
            text = block_yaml(document)
        except Slow:
            continue
        assert text == _pyyaml(document), document
        written += 1
    assert written > 1000  # most documents take the fast path: the comparison is not vacuous


@pytest.mark.parametrize(
    "value",
    [
        "rate(x[5m])\n  / on (model) y",
        "a\n\nb\n",
        "x" * 200 + " " + "y " * 500,
        "it's " * 300,
        "14.5",
        "",
        "-1",
        "a: b",
        "a #b",
        1.0e17,
    ],
)
def test_each_style_matches_pyyaml(value: Any) -> None:
    for document in ({"k": value}, {"k": [value, {"n": value}]}, [{"deep": {"er": value}}]):
        assert block_yaml(document) == _pyyaml(document)


@pytest.mark.parametrize("value", ["tab\there", "é", " \n", "a\n\n", "\nlead", float("nan"), ("t",)])
def test_what_it_cannot_write_goes_to_pyyaml(value: Any) -> None:
    with pytest.raises(Slow):
        block_yaml({"k": value})


@pytest.mark.parametrize("under_spec", [False, True], ids=["groups", "spec.groups"])
def test_a_long_top_level_list_is_not_held_as_millions_of_small_pieces(under_spec: bool) -> None:
    """Every scalar, key and indent of the document was a piece of one list joined at the end: at
    10,000 SLOs those pieces held more memory than the text they make. Each item of a top-level
    list is now joined as it is written (also under the PrometheusRule's `spec:`), so the peak is
    a few times the text, not ~10x."""
    items = [{"name": f"group {i}", "rules": [{"record": f"r:{j}", "expr": "x"} for j in range(30)]}
             for i in range(300)]  # fmt: skip
    document: dict[str, Any] = {"spec": {"groups": items}} if under_spec else {"groups": items}
    expected = yaml.dump(document, Dumper=_Dumper, sort_keys=False, width=WIDTH, allow_unicode=True)
    block_yaml(document)  # the writer's caches (keys, plain words) filled outside the measurement
    tracemalloc.start()
    try:
        text = block_yaml(document)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert text == expected
    assert peak < 3 * len(text), (peak, len(text))


def test_pieces_and_items_join_to_what_render_yaml_writes() -> None:
    """`generate` writes a document in pieces (an item of a list near the top each), a piece PyYAML
    must write dumped alone in its parent keys: joined, the pieces are render_yaml's bytes, also when
    render_yaml gave the whole document to PyYAML."""
    rng = random.Random(35)
    slow = ended = 0
    for _ in range(1500):
        items = [_document(rng) for _ in range(rng.randint(0, 3))]
        document = {"root": _document(rng), "spec": {"groups": [_document(rng)], "n": 1}, "tests": items}
        expected = render_yaml(document, "s.yaml")
        assert "".join(yaml_pieces(document, "s.yaml")) == expected, document
        out = _Kept()
        listed = YamlListWriter(
            out, "s.yaml", {k: v for k, v in document.items() if k != "tests"}, ("tests",)
        )
        for item in items:
            listed.add(item)
        listed.close()
        assert out.text == expected, document
        # a list two keys down, as deploy/'s PrometheusRule's spec.groups is written
        nested = {"root": document["root"], "spec": {"groups": items}}
        out = _Kept()
        listed = YamlListWriter(out, "s.yaml", {"root": document["root"]}, ("spec", "groups"))
        for item in items:
            listed.add(item)
        listed.close()
        assert out.text == render_yaml(nested, "s.yaml"), nested
        ended += expected.endswith("\n...\n")  # libyaml's end marker, after a `|+` literal anywhere
        try:
            block_yaml(document)
        except Slow:
            slow += 1
    assert 300 < slow < 1200 and ended > 10, (slow, ended)  # every kind of document was compared


class _Kept(io.StringIO):
    def close(self) -> None:
        self.text = self.getvalue()
        super().close()

"""Benchmark: decoding one range answer's series into numpy arrays, the report's reading cost per sample.

`report` decodes each series of a range answer with `json`'s `raw_decode` and converts its
``[[time, "value"], ...]`` with `triton_sre.promcore.series_points` (`numpy.array` of the nested lists, every
item through `float()`). This measures that path against ways of doing the same work in bulk with what
the package already depends on (stdlib, numpy), on `--series` series of `--points` points in the shape
Prometheus writes (compact JSON, timestamps as integers, values as strings), with values either short
(the fleet stand-in's counters, multiples of 0.5) or long (17 significant digits, a gauge's ratio).

Each variant is timed by the process' CPU clock (best of `--repeat`), in ns per sample, and its arrays
are compared bit for bit with the current path's ("same" column; "n/a" for variants that only do part
of the work). None of the variants validates the text as the JSON path does: they bound what any
faster exact decoder built from these parts can gain.

    python bench/bench_range_decode.py [--series 2000] [--points 450] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from itertools import chain
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from triton_sre.promcore import series_points

_DECODER = json.JSONDecoder()
_NUMBERS = json.JSONDecoder(parse_int=float)  # "-0" as float() reads it
Arrays = tuple[np.ndarray, np.ndarray]


def texts(series: int, points: int, long: bool, seed: int = 1) -> list[str]:
    """One compact JSON series object per series, as Prometheus writes them."""
    rng = random.Random(seed)
    out = []
    for s in range(series):
        if long:
            values = [repr(rng.random() * 10 ** rng.randint(-5, 9)) for _ in range(points)]
        else:
            values = [f"{(s + k) * 0.5:g}" for k in range(points)]
        body = [[1_764_000_000 + 2 * k, v] for k, v in enumerate(values)]
        out.append(
            json.dumps({"metric": {"model": f"m{s}", "le": "500"}, "values": body}, separators=(",", ":"))
        )
    return out


def current(text: str) -> Arrays:
    points = series_points(_DECODER.raw_decode(text)[0])
    assert points is not None
    return np.ascontiguousarray(points[:, 0]), np.ascontiguousarray(points[:, 1])


def decode_only(text: str) -> None:
    _DECODER.raw_decode(text)


def flat_float(text: str) -> Arrays:
    values = _DECODER.raw_decode(text)[0]["values"]
    flat = list(chain.from_iterable(values))
    both = np.fromiter(map(float, flat), dtype=np.float64, count=len(flat))
    return both[0::2].copy(), both[1::2].copy()


def checked_flat_float(text: str) -> Arrays | None:
    """`flat_float` with the checks `series_points` needs to be exact (every point a list of two, no NaN:
    a NaN may have been a null): tried as `series_points`' body, not kept."""
    values = _DECODER.raw_decode(text)[0]["values"]
    if set(map(list.__len__, values)) - {2}:
        return None
    flat = list(chain.from_iterable(values))
    both = np.fromiter(map(float, flat), dtype=np.float64, count=len(flat))
    if np.isnan(both).any():
        return None
    return both[0::2].copy(), both[1::2].copy()


def _values_text(text: str) -> str:
    return text[text.index('"values":') + 9 : -1]


def unquoted_json(text: str) -> Arrays:
    both = np.array(_NUMBERS.decode(_values_text(text).replace('"', "")), dtype=np.float64)
    return both[:, 0].copy(), both[:, 1].copy()


def loadtxt(text: str) -> Arrays:
    lines = _values_text(text)[2:-2].replace('"', "").split("],[")
    both = np.loadtxt(lines, delimiter=",", dtype=np.float64, ndmin=2)
    return both[:, 0].copy(), both[:, 1].copy()


def fromstring(text: str) -> Arrays:
    both = np.fromstring(_values_text(text)[2:-2].replace('"', "").replace("],[", ","), sep=",")
    return both[0::2].copy(), both[1::2].copy()


def _best(run: Callable[[], object], repeat: int) -> float:
    """Least CPU seconds of `repeat` runs."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def _same(got: list[Arrays | None], reference: list[Arrays]) -> str:
    return str(
        all(
            g is not None and g[0].tobytes() == r[0].tobytes() and g[1].tobytes() == r[1].tobytes()
            for g, r in zip(got, reference, strict=True)
        )
    ).lower()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=2000)
    parser.add_argument("--points", type=int, default=450)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    variants: dict[str, Callable[[str], Arrays | None]] = {
        "current: raw_decode + promcore.series_points (numpy.array of the lists)": current,
        "raw_decode alone (no conversion)": decode_only,
        "raw_decode + flat map(float) + numpy.fromiter": flat_float,
        "the same with series_points' checks (lengths, NaN)": checked_flat_float,
        "quotes removed, numbers parsed by json": unquoted_json,
        "numpy.loadtxt of the text as CSV lines": loadtxt,
        "numpy.fromstring(sep=',') of the text": fromstring,
    }
    print("| values | variant | ns per sample | same arrays |")
    print("| --- | --- | --- | --- |")
    for long in (False, True):
        answer = texts(args.series, args.points, long)
        samples = args.series * args.points
        reference = [current(t) for t in answer]
        strings = [s for t in answer for _, s in _DECODER.raw_decode(t)[0]["values"]]
        for name, variant in variants.items():
            seconds = _best(lambda v=variant, a=answer: [v(text) for text in a], args.repeat)
            same = "n/a" if variant is decode_only else _same([variant(t) for t in answer], reference)
            print(f"| {'long' if long else 'short'} | {name} | {seconds / samples * 1e9:,.0f} | {same} |")
        # the floor of any float()-based path: only float() of each value string, already decoded
        seconds = _best(
            lambda s=strings: np.fromiter(map(float, s), dtype=np.float64, count=len(s)), args.repeat
        )
        print(
            f"| {'long' if long else 'short'} | float() of the value strings alone "
            f"| {seconds / samples * 1e9:,.0f} | n/a |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

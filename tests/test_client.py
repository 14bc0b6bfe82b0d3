"""The Triton client's statistics decoding, on the real server's answer and on odd shapes."""

from __future__ import annotations

import json

import pytest
import requests

from triton_sre import conventions as c
from triton_sre.triton.client import FetchError, TritonClient, iter_model_stats


def test_entries_decoded_one_by_one_equal_the_whole_document(triton):
    text = requests.get(f"{triton.http_url}/v2/models/stats", timeout=10).text
    assert list(iter_model_stats(text)) == json.loads(text)["model_stats"]
    client = TritonClient(triton.http_url, triton.metrics_url)
    assert {e["name"] for e in client.all_stats()} >= {"vector_scale", "slow_model", "text_echo"}


@pytest.mark.parametrize(
    "text",
    [
        '{"model_stats": []}',
        ' { "model_stats" : [ {"name": "a"} , {"name": "b"} ] } ',
        '{"other": 1, "model_stats": [{"name": "a"}, {"name": "b"}]}',  # another key first
    ],
)
def test_shapes(text):
    assert list(iter_model_stats(text)) == json.loads(text)["model_stats"]


@pytest.mark.parametrize(
    "text",
    [
        '{"model_stats": [{"name": "a"}, {"na',
        '{"model_stats": [{"name": "a"} {"name": "b"}]}',
        "<html>",
        "[]",
    ],
)
def test_malformed_statistics_raise_a_parse_fault(text):
    with pytest.raises(FetchError) as err:
        list(iter_model_stats(text))
    assert (err.value.target, err.value.kind) == (c.TARGET_STATS, c.FAULT_PARSE)

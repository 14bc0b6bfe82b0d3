"""Redaction hides secrets, not ordinary words (the over-redaction review).

Every credential the other redaction tests hide is in `SECRETS` and must stay hidden; `WORDS` are
lines from Triton, TensorRT-LLM, tokenizers, configs and our own messages that looked like keys or
Slack tokens and lost their text (`eos_token: </s>`, a model named `first_token` or
`xoxb-llama-classifier`, a backtrace's `???:0`). A missed secret is worse than a hidden word: a
`*_token` whose value has a secret's shape is hidden whatever its name.
"""

from __future__ import annotations

import pytest

from triton_sre.redact import REDACTED, redact

HEX = "9f86d081884c7d659a2feaa0c55ad015"  # a uuid4().hex's shape: the other tests' fake tokens
PW = "Sq7Lw2pZ9x-recognisable"

# (text, the secret in it): the former true positives of test_security_redaction,
# test_log_redaction, test_fault_probes_round5, test_json_errors and test_redaction_paths, then
# credentials the review found missed.
SECRETS = [
    (f"invalid_auth for token xoxb-123456789012-123456789012-{PW}", PW),
    (f"user token xoxp-1234-5678-{PW} refused", PW),
    (f"app token xapp-1-A0123-{PW}", PW),
    (f"Authorization: {PW}", PW),
    (f"{{'Content-Type': 'application/json', 'Authorization': '{PW}'}}", PW),
    (f'{{"Authorization": "token {PW}"}}', PW),
    (f'{{"password": "{PW}"}}', PW),
    (f"{{'api_key': '{PW}'}}", PW),
    (f'token="{PW}"', PW),
    (f"X-Api-Key: {PW}", PW),
    (f"SLACK_BOT_TOKEN={PW}", PW),
    (f"TRITON_SRE_BOT_TOKEN={PW}", PW),
    (f"client_secret: {PW}", PW),
    (f"signing-secret={PW}", PW),
    (f"tritonserver --token={PW}", PW),
    (f"--password={PW}", PW),
    (f"vllm serve m --api-key={PW}", PW),
    (f"--hf-token={PW}", PW),
    (f"-secret={PW}", PW),
    ("POST /alertmanager?token=s3cr3t-token-value HTTP/1.1", "s3cr3t-token-value"),
    ("'GET /x?a=1&token=s3cr3t-token-value HTTP/1.1'", "s3cr3t-token-value"),
    ("cannot reach http://admin:s3cr3t-token-value@triton:8000/v2", "s3cr3t-token-value"),
    ("Authorization: Bearer s3cr3t-token-value", "s3cr3t-token-value"),
    ("header token=s3cr3t-token-value", "s3cr3t-token-value"),
    ("token: s3cr3t", "s3cr3t"),
    ("X-Auth-Token: s3cr3t", "s3cr3t"),
    ("password=s3cr3t", "s3cr3t"),
    ("dir/token=s3cr3t", "s3cr3t"),
    ("api_key:  s3cr3t", "s3cr3t"),
    ("password=hunter2hunter2", "hunter2"),
    ("Authorization: Bearer hunter2hunter2", "hunter2"),
    ("http://u:hunter2@h:1/x", "hunter2"),
    ("boom, token=hunter2", "hunter2"),
    (f"http://admin:pw-{HEX}@127.0.0.1:9/x", HEX),
    (f"slack token xoxb-{HEX} rejected", HEX),  # the tests' SLACK_TOKEN: no digit groups
    (f"Authorization: Bearer am-{HEX}", HEX),
    (f"/alertmanager?token=am-{HEX}", HEX),
    (f"signing secret: sig-{HEX}", HEX),
    # missed before, or what the precision must not lose
    ("xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy in the header", "pdFZKVeTuE8sk7oOcBrzbqgy"),
    ("refresh with xoxe-1-My0xLTMxNjU2NTk5OTI1LTEyMw", "My0xLTMxNjU2NTk5OTI1LTEyMw"),
    ("aws_access_key_id=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("s3 client for ASIAY34FZKBOKMUTVV7A refused", "ASIAY34FZKBOKMUTVV7A"),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
    ("secret_key: hunter2", "hunter2"),
    ("HF_TOKEN=hf_abcdefghijklmnopqrstu", "hf_abcdef"),
    ("MY_SERVICE_TOKEN=hunter2", "hunter2"),  # an environment variable's name: a credential
    ("refresh_token: hunter2", "hunter2"),
    ("id_token=eyJhbGciOiJIUzI1NiJ9.e30.abc", "eyJhbGci"),
    (f"first_token: {HEX}", HEX),  # any `*_token` with a secret's shape
    (f"eos_token={PW}", PW),
    # a secret's shape is its length and its letters and digits, whatever else it holds: a Telegram
    # bot's token has a colon, a password punctuation (the old redaction hid both)
    ("telegram_token=123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", "AAHdqTcvCH1vGWJxf"),
    ("ci_token=s3cr3t!passw0rd#1", "passw0rd"),
    ("password: <hunter2", "hunter2"),  # an angle bracket never closed is no placeholder
    ("password: letmein", "letmein"),  # a bare name hides any value, a word too
    # Slack text is escaped before its redaction: an entity is part of the value
    ("password=&lt;s3cr3t&amp;more", "s3cr3t"),
    ("client_secret: a&amp;b&gt;hunter2", "hunter2"),
    # each pattern runs on lines holding its words, whatever their case
    ("PASSWORD=hunter2", "hunter2"),
    ("authorization: BEARER hunter2hunter2", "hunter2"),
    ("proxy said: BASIC aHVudGVyMjpodW50ZXIy", "aHVudGVyMj"),
    ("X-API-KEY: hunter2", "hunter2"),
]

# Secrets only a query string's redaction hides (Slack text keeps query strings).
QUERY_SECRETS = [
    ("url=https://hooks.example.com/services?key=s3cr3t-token-value\nnext", "s3cr3t-token-value"),
    ("GET /hook?sig=00ff9a&state=s3cr3t-token-value HTTP/1.1", "s3cr3t-token-value"),
    ("http://h/x??key=s3cr3t-token-value", "s3cr3t-token-value"),
]

# Lines that only look like credentials: kept whole.
WORDS = [
    # a model named first_token, in rollout's answer and a Slack alert's title
    "first_token: fewer than two versions served requests in the last 10m and no declared "
    "blue/green pair names it: nothing to compare.",
    "first_token: canary error ratio 0.031 above 0.01",
    # tokenizers' special tokens in a Triton / Python backend log
    "I1205 12:00:01.000 1 pb_stub.cc:366] tokenizer loaded: eos_token: </s>, pad_token: <unk>",
    "bos_token: <s>",
    "eos_token=<|endoftext|>",
    "special tokens: {'pad_token': '<pad>', 'eos_token': '</s>'}",
    "kwargs: hf_token=None, trust_remote_code=False",
    "use_auth_token: false",
    # kubectl describe of a pod whose key comes from a Kubernetes secret
    "      NGC_API_KEY:  <set to the key 'api-key' in secret 'ngc-credentials'>  Optional: false",
    "      DB_PASSWORD:  <set to the key 'password' in secret 'db-credentials'>  Optional: false",
    # configs: keys that are not credentials
    "primary_key: id",
    "cache_key: 3f2a9c1d",
    "next_page_token: 2",
    # TensorRT-LLM's backend and its config.pbtxt parameters
    "[TensorRT-LLM][INFO] Set eos_token_id: 2",
    "[TensorRT-LLM][WARNING] enable_kv_cache_reuse is not specified, will be set to false",
    "[TensorRT-LLM][WARNING] kv_cache_free_gpu_mem_fraction is not specified, will use default "
    "value of 0.85 or max_tokens_in_paged_kv_cache",
    "[TensorRT-LLM][INFO] max_tokens_in_paged_kv_cache: 4096",
    'parameters: { key: "decoupled_mode" value: { string_value: "true" } }',
    'parameters: { key: "tokenizer_dir" value: { string_value: "/models/llama/tokenizer" } }',
    "tokenizer_dir: /models/llama-2-7b-hf",
    # a model whose name starts like a Slack token
    "model xoxb-llama-classifier is UNAVAILABLE",
    "xoxp-summarizer: p99 0.41 s",
    # a backtrace's unknown frames, a generated answer's question mark before an escaped newline
    " 0 0x00000000000143c0 __funlockfile()  ???:0",
    '{"text_output":"What is Triton Inference Server?\\n\\nTriton Inference Server is"}',
    # kept before this change too
    "/run/secrets/slack_token: cannot read",
    "output_token: 0.05",
    "max_tokens=100",
    "xoxb- is how a bot token starts",
    # the same words in Slack's escaping
    "tokenizer loaded: eos_token: &lt;/s&gt;, pad_token: &lt;unk&gt;",
    "      NGC_API_KEY:  &lt;set to the key 'api-key' in secret 'ngc-credentials'&gt;  Optional: false",
]


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_every_credential_stays_hidden(text: str, secret: str) -> None:
    for queries in (True, False):
        clean = redact(text, queries=queries)
        assert secret not in clean, clean
        assert REDACTED in clean, clean


@pytest.mark.parametrize(("text", "secret"), QUERY_SECRETS)
def test_query_strings_stay_hidden(text: str, secret: str) -> None:
    clean = redact(text)
    assert secret not in clean and "?" + REDACTED in clean, clean


@pytest.mark.parametrize("text", WORDS)
def test_ordinary_words_are_kept(text: str) -> None:
    for queries in (True, False):
        assert redact(text, queries=queries) == text


def test_the_tables_cover_both_sides_of_each_rule() -> None:
    """The same name on both sides: the value decides, not the name alone."""
    names = ("first_token", "eos_token", "password", "xoxb-", "?")
    for name in names:
        assert any(name in text for text, _ in SECRETS + QUERY_SECRETS), name
        assert any(name in text for text in WORDS), name

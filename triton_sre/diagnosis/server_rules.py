"""Pure data: tritonserver refusing to start, in its own words and its libraries': a port another process
holds (PORT_RULES: Triton's main.cc/http/grpc wording by release, gRPC core, Docker's port allocator, the
scheduler's NodePorts plugin) and a start-up setting it refuses (OPTION_RULES: the parser's ``Bad option:``
and reason, glibc's unknown flag, the response cache, tracing, the SageMaker / Vertex AI front ends'
variables). `hand_rules.py` places them, ports first, just before stack_rules.STACK_RULES.
"""

from __future__ import annotations

import re
from typing import Final

from triton_sre import conventions as c
from triton_sre.diagnosis.dropped import HEADER_PATTERN_REFUSED
from triton_sre.diagnosis.lineshape import PARSER_REFUSAL
from triton_sre.diagnosis.stack_rules import CauseRule, rx

TRITON_BIND_REFUSAL: Final = r"\b(?:Socket|Port) '[^'\n]*' already in use"
"""Triton's own words for a bind that failed (also echoes.py's, which tells an echo from a cause)."""

__all__ = ["OPTION_RULES", "PORT_RULES", "TRITON_BIND_REFUSAL"]


# The server cannot listen on its port: another process (a second Triton, a leftover container, a
# sidecar) holds it. Triton exits: it starts no endpoint it cannot bind.
PORT_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_SERVER_PORT_IN_USE,
        rx(
            # server src/main.cc "failed to start GRPC|HTTP|Metrics|Sagemaker|Vertex AI service: <err>"
            # (r20.09 on) quoting src/http_server.cc / src/grpc/grpc_server.cc: "Port '<addr>' already
            # in use " (r22.04, PR #4071), "Socket '<addr>:<port>' already in use " (r22.05 on, PR #4136,
            # to r26.09); the whole line is asserted by qa/L0_lifecycle/test.sh.
            TRITON_BIND_REFUSAL,
            # gRPC core's own line before it (chttp2_server.cc "No address added out of total N
            # resolved" around tcp_server's bind error), the Linux EADDRINUSE strerror as gRPC, Go's
            # net package ("listen tcp :8001: bind: address already in use"), Python's OSError and
            # Docker's userland proxy print it, and Windows' WSAEADDRINUSE (10048) text.
            r"\bAddress already in use\b",
            r"\[Errno 98\]|\bEADDRINUSE\b|\bWSAEADDRINUSE\b",
            # Dynamo's HTTP frontend (a Rust service) panicking on its listen address.
            r"\bcould not bind to address: \S+:\d+",
            r"Only one usage of each socket address",
            # moby libnetwork portallocator: another container publishes the host port.
            r"Bind for \S+ failed: port is already allocated",
            # kube-scheduler NodePorts plugin (ErrReason, v1.18 on): a hostPort no node has free; a
            # pod that also lacks GPUs somewhere stays pod-unschedulable.
            r"\d+/\d+ nodes are available: (?![^\n]{0,1000}Insufficient)[^\n]{0,1000}didn't have free ports"
            r" for the requested pod ports",
        ),
        "server src/main.cc, src/http_server.cc, src/grpc/grpc_server.cc, qa/L0_lifecycle/test.sh; "
        "grpc chttp2_server.cc; moby libnetwork portallocator; kubernetes "
        "pkg/scheduler/framework/plugins/nodeports",
    ),
    CauseRule(
        c.RUNBOOK_SERVER_PORT_IN_USE,
        # core src/model_repository_manager.cc (r20.xx to r26.xx) refuses a load or unload when the
        # server's model control mode is not EXPLICIT ("explicit model load / unload is not allowed if
        # polling is enabled", UNAVAILABLE). When the same log started its server in EXPLICIT mode
        # (``--model-control-mode=explicit``, the options table's MODE_EXPLICIT, or Model Analyzer's
        # local launch, which always sets it: model_analyzer/entrypoint.py "Starting a local Triton
        # Server"), the request reached ANOTHER server that holds the ports. Without that evidence the
        # refusal is a setting no page covers (the fallback, with its text).
        re.compile(
            r"^(?=[\s\S]*?explicit model load / unload is not allowed if polling is enabled)[\s\S]*?"
            r"(?:Starting a local Triton Server|model[-_]control[-_]mode[=\s|]+(?:MODE_)?explicit)",
            re.I,
        ),
        "core src/model_repository_manager.cc; model_analyzer entrypoint.py (local launch, explicit mode)",
    ),
)


# tritonserver refuses a start-up setting and exits before it serves (or, with --exit-on-error=false, serves
# without its models): a flag or its value, the response cache, tracing, a front end's environment. A port
# another process holds stays server-port-in-use (PORT_RULES, before these); a model's load failure stays
# its model's page; "failed to load all models" is a consequence, not a setting.
OPTION_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_SERVER_OPTION_INVALID,
        rx(
            # server src/main.cc: after the usage (r23.09 on), src/command_line_parser.cc's
            # 'Bad option: "--<flag>".' (a --trace-config setting: '"--trace-config [triton,|opentelemetry,]
            # <setting>"', r23.09 on; an OTel variable: '"OTEL_BSP_<SETTING>"', r24.02 on) and its reason on
            # the next line; BuildTritonServerOptions' 'Failed to build Triton option:' (r23.04 on).
            PARSER_REFUSAL.pattern,
            r'\bBad option: "(?:--[\w-]+|OTEL_\w+)[^"\n]*"',  # as quoted without its full stop
            # glibc getopt_long, the parser's own getopt on Windows: an unknown flag, a flag without value.
            r"\btritonserver: (?:unrecognized option|option '[^'\n]+' (?:requires an|doesn't allow an)"
            r" argument)",
            # The parser's reasons (printed before the usage in r19.05-r23.08, after it since):
            r"\binvalid value for (?:bool|trace level|trace mode) option: ",
            r"\binvalid argument for --[\w-]+",
            r"\b(?:Provided option value is out of bound|Invalid option value)\. Got ",
            r"--[\w-]+ option format is\b|\bNo (?:backend|cache) specified\. --[\w-]+ option format",
            r"\bCannot parse pair option due to incorrect number of inputs\b",
            # (`Unexpected argument:`, two flags that exclude each other, `--load-model` outside explicit
            # mode and CheckPortCollision's `The server cannot listen to ...` are PARSER_REFUSAL's own)
            r"\bError: (?:--[\w-]+ must be greater than 0|empty argument for --[\w-]+)",
            # A launcher's own two flags that exclude each other (Dynamo's workers: "--override-engine-args
            # and --trtllm.* dynamic flags are mutually exclusive"; CPython argparse: "argument --x: not
            # allowed with argument --y"): the command line the server was started with.
            r"\B--[\w.*-]+ and --[\w.*-]+ (?:[\w-]+ )?(?:flags|options|arguments) are mutually exclusive\b",
            r"\bargument --[\w-]+(?:/-\w)?: not allowed with argument --[\w-]+",
            # A server's own command line refused by its parser: CPython argparse ("vllm: error: unrecognized
            # arguments: --enable-metrics", ArgumentParser.error's "%(prog)s: error: %(message)s") and Go's
            # spf13/pflag ("unknown flag: --lora-modules", "unknown shorthand flag: 'x' in -x").
            r"(?m:^\S+: error: unrecognized arguments: -)",
            r"(?m:^(?:Error: )?unknown (?:shorthand )?flag: ['\"]?-)",
            # Up to r23.07 (2.36) the parser's ParseOption<int|int64_t|uint64_t|double> was a bare
            # std::stoi/stoll/stoull/stod: a word where a number goes escapes it, and libstdc++'s terminate
            # handler prints the std::invalid_argument whose what() is the conversion's own name, before the
            # server's first line (server#6173, r23.10, catches it as "Invalid option value. Got <value>").
            # Only invalid_argument: the Python stub's bare std::stoi of the numbers its backend hands it
            # (pb_stub.cc, before python_backend#188) can only overflow, std::out_of_range, a backend bug.
            r"\bterminate called after throwing an instance of 'std::invalid_argument'\s+"
            r"what\(\):[ \t]+sto(?:i|l|ll|ul|ull|f|d|ld)[ \t]*(?:\n|$)",
            # --grpc-restricted-protocol / --http-restricted-api (ParseRestrictedFeatureOption, r23.11 on).
            r"\bunknown restricted (?:api|protocol) '",
            r"\b(?:api|protocol) '[^'\n]*' can not be specified in multiple config groups",
            # core src/tritonserver.cc TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit (r23.01 on).
            r"\bexpects device ID >= 0, got -?\d|\bexpects limit fraction to be in range \[0\.0, 1\.0\]",
            # main.cc "failed to configure tracing" (r20.01 on) around src/tracer.cc's "Attempting to set
            # invalid trace setting :<reason>" (r22.02 on).
            r"\bfailed to configure tracing\b|\bAttempting to set invalid trace setting\b",
            # gRPC's SSL credentials refused (--grpc-use-ssl, --grpc-server-cert/-key, --grpc-root-cert):
            # server src/grpc/grpc_server.cc (r22.05 on) reads the files without a word when they are
            # missing or empty, then gRPC core refuses them (tsi ssl_transport_security.cc "Invalid cert
            # chain file." / "Invalid private key.", ssl_security_connector.cc "Handshaker factory creation
            # failed with TSI_<code>.", chttp2_server.cc "Unable to create secure server with credentials of
            # type Ssl") and BuildAndStart binds nothing, which grpc_server.cc words "Socket '<addr>' already
            # in use " whatever the cause (r22.05 to r26.09): the port is free, the certificates are not.
            r"\bUnable to create secure server with credentials of type Ssl\b",
            r"\bHandshaker factory creation failed with TSI_\w+",
            r"\bInvalid (?:cert chain file|private key|root certs?)\b",
            # --grpc-address naming an address the host does not have: gRPC core's bind fails with
            # EADDRNOTAVAIL under its "No address added out of total N resolved" (chttp2_server.cc), then
            # grpc_server.cc words it "already in use" as above (Triton 2.51 measured). HTTP and metrics
            # (libevhtp, r20.xx on) print no reason of their own: a port in use is all their log can say.
            r"\bNo address added out of total \d+ resolved[^\n]*\bCannot assign requested address\b",
            # The response cache: core src/server.cc / src/cache_manager.cc (r23.03 on) and the caches'
            # own Initialize (local_cache src/local_cache.cc, redis_cache src/redis_cache.cc, r23.06 on,
            # quoting redis-plus-plus's "failed to connect to Redis (<host>:<port>): <strerror>").
            r"\bunable to find '(?:lib)?tritoncache_\w+\.(?:so|dll)' for cache\b",
            r"\bfound multiple cache configurations, but only a single cache\b",
            r"\bFailed to initialize (?:cache implementation|RedisCache\b|LocalCache\b)",
            r"\bfailed to connect to Redis \(",
            # The SageMaker and Vertex AI front ends: main.cc "failed to start Sagemaker|Vertex AI service:
            # <err>" (r20.09 / r21.11 on) without a bind failure; src/vertex_ai_server.cc's route
            # variables and default model (r21.11 on); docker/sagemaker/serve's checks of SAGEMAKER_*
            # variables (r21.06 on; the inference type r25.03 on).
            r"\bfailed to start (?:Sagemaker|Vertex AI) service: (?![^\n]*already in use)",
            # A default model the repository does not hold ("Expect the default model '<m>' is loaded",
            # "Directory with provided SAGEMAKER_TRITON_DEFAULT_MODEL_NAME <m> does not exist") is left to
            # the model pages: a named model with no folder is model-file-missing's miss one level up.
            r"\b(?:API_PREDICT_ROUTE|AIP_HEALTH_ROUTE) is not defined for Vertex AI endpoint",
            r"\bExpect the model repository contains only a single model if default model is not specified",
            r"\bERROR: Invalid SAGEMAKER_TRITON_INFERENCE_TYPE\b",
            r"\bERROR: More than 1 model directory found in model repository\b",
            # re2 refusing --http-header-forward-pattern (dropped.py): served without it, a warning.
            HEADER_PATTERN_REFUSED.pattern,
        ),
        "server src/main.cc, src/command_line_parser.cc, src/tracer.cc, src/vertex_ai_server.cc, "
        "docker/sagemaker/serve; core src/tritonserver.cc, src/server.cc, src/cache_manager.cc; "
        "local_cache src/local_cache.cc; redis_cache src/redis_cache.cc; glibc getopt",
    ),
)

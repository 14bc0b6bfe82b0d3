"""Pure data: the host's and storage's own wording where a model's load fails.

An unfinished template (``${var}`` left in a config), shared memory on ``/dev/shm``, the host's
resources (disk, memory, file descriptors, the OOM killer), a cloud repository's access and a file
the server may not read: the operating system's and the cloud SDKs' messages, whichever layer
prints them. One `CauseRule` each, in the order `hand_rules.HAND_RULES` puts them first (they are
specific wording that would otherwise read as the layer's generic failure).
"""

from __future__ import annotations

import re
from typing import Final

from triton_sre import conventions as c
from triton_sre.diagnosis.stack_rules import CauseRule
from triton_sre.diagnosis.stack_rules import rx as _rx

__all__ = ["HOST_RULES", "SHM_CONTEXT"]

_ENOSPC = r"(?:\[Errno 28\]|\bNo space left on device\b|\bENOSPC\b)"
SHM_CONTEXT = r"(?:/dev/shm\b|\bmultiprocessing[/.]|\bSemLock\b|\bsem_open\b)"
"""Where CPython's multiprocessing and the Python stub keep their semaphores and regions (/dev/shm)."""

HOST_RULES: Final[tuple[CauseRule, ...]] = (
    # Unresolved template placeholders (${triton_backend}) are an unfinished config, whatever
    # message they surface in; not a shell's job report echoing its script's command ("<script>: line
    # 275: 31499 Killed   cmd ${VAR}", bash's jobs.c), where the variables are the script's own, nor a
    # command line's flag value (`mpirun ... tritonserver --model-repository=${WORKSPACE}/models`): the
    # shell expands those before the program runs.
    CauseRule(
        c.RUNBOOK_CONFIG_PARSE_ERROR,
        re.compile(
            r"^(?!.*\bline \d+: +\d+ +[A-Z][\w ()]*? {2,})"
            r"(?![^\n]*\s--?[A-Za-z][\w-]*[= ][\"']?[^\s\"']*\$\{)[^\n]*\$\{\s*[A-Za-z_][\w.]*\s*\}",
            re.M,
        ),
    ),
    CauseRule(
        c.RUNBOOK_SHM_TOO_SMALL,
        _rx(
            r"Unable to initialize shared memory key",
            # The region itself could not be created (shm_open/ftruncate on /dev/shm refused): the
            # Triton client's shm users and deployment guides word it as a region.
            r"\b(?:unable to|failed to|cannot|could not) create (?:the )?shared memory region\b",
            r"\bshared memory region creation failed\b",
            r"run out of shared memory",
            r"Failed to increase the shared memory pool",
            # The Python stub's own start reporting ENOSPC bare (strerror, no Python OSError and no path):
            # the stub and the server talk through a region on /dev/shm, the device that is full.
            r"\bPython stub(?: for auto-complete)?: No space left on device\b",
            r"shared[ -]memory.{0,80}(No space left on device|too small|insufficient)",
            r"\bBus error\b",
            # NCCL's shared-memory transport (src/misc/shmutils.cc: "Error: failed to extend %s to %ld bytes",
            # "Error while creating shared memory segment %s (size %ld)"): the ranks' segment on /dev/shm.
            r"\bfailed to extend /dev/shm/\S+ to \d+ bytes\b",
            r"\bError while creating shared memory segment /dev/shm/",
            # Ray's object store (python/ray/_private/services.py) falling back to /tmp because /dev/shm is
            # small (Docker's 64 MB): vLLM's tensor-parallel workers and NCCL need it; at WARNING it stays a
            # warning.
            r"\bThe object store is using /tmp instead of /dev/shm because /dev/shm has only \d+ bytes"
            r" available\b",
            r"shm-default-byte-size.{0,40}(exceed|too large|larger)",
            # ENOSPC where the full device is /dev/shm: CPython's multiprocessing (SemLock ->
            # sem_open, queues, pools) keeps its semaphores there; the frames are the context.
            rf"{_ENOSPC}[\s\S]{{0,2000}}?{SHM_CONTEXT}",
            rf"{SHM_CONTEXT}[\s\S]{{0,2000}}?{_ENOSPC}",
            # coreutils df's row for /dev/shm (Filesystem Size Used Avail Use% Mounted on) 95 % full or
            # more: the stubs' regions and multiprocessing's semaphores cannot grow (Docker's 64M default).
            r"(?m:^\S+\s+[\d.]+[KMGT]?\s+[\d.]+[KMGT]?\s+[\d.]+[KMGT]?\s+(?:100|9[5-9])%\s+/dev/shm\s*$)",
        ),
        # (the frames are the evidence: ENOSPC names no device, a multiprocessing frame says it is /dev/shm)
        reads_frames=True,
    ),
    CauseRule(
        c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
        _rx(
            # glibc strerror() wording, as Python's OSError prints it ("[Errno N] <strerror>") and
            # as C++ code quotes it: ENOSPC 28, ENOMEM 12, EMFILE 24, ENFILE 23.
            # (not a pulled layer the disk cannot hold: the image pull's page, stack_rules.py)
            rf"\A(?![\s\S]*\b(?:failed to (?:register|extract|apply) layer|ApplyLayer)\b)[\s\S]*?{_ENOSPC}",
            # (not glibc's dynamic loader: "cannot allocate memory in static TLS block" is a library
            # that dlopen cannot place, see backend_rules.py)
            r"\[Errno 12\]|\bCannot allocate memory\b(?! in static TLS block)",
            r"\[Errno 2[34]\]|\bToo many open files\b",
            # The kernel's OOM killer (dmesg), the shell reporting SIGKILL, Kubernetes' reason.
            r"Out of memory: Kill(ed)? process",
            r"\boom[-_]kill(er)?\b",
            r"\bOOMKilled\b",
            r"(?m:^\s*Killed\s*$)",
            # A launcher's report of a shard killed by SIGKILL (text-generation-launcher: "Shard process was
            # signaled to shutdown with signal 9"), and PyTorch's host allocator (c10/core/impl/alloc_cpu.cpp:
            # "DefaultCPUAllocator: not enough memory: you tried to allocate N bytes", "... can't allocate
            # memory: ..."), and bash's job report of a child killed by SIGKILL ("webui.sh: line 255: 34389
            # Killed  python3 ...", jobs.c), which the page's Meaning names: the OOM killer's kill as the
            # parent shell saw it. (A script's own kill -9 reads the same: heldout23's cmssw-37767, labelled
            # the fallback, where the wrapper killed a server that did not come up in time.)
            r"\bsignaled to shutdown with signal 9\b",
            r"\bline \d+: +\d+ Killed\b",
            r"\bDefaultCPUAllocator: (?:not enough memory|can't allocate memory)\b",
            r"exit(ed)? (with )?(code|status) 137\b",
            # kubectl describe ("Exit Code:    137"), a pod's status ("exitCode: 137"; -o json's
            # "exitCode": 137, and compact JSON's "exitCode":137 as jq -c or a collector writes it).
            r"\bexit ?code\"?:?\s*137\b",
        ),
    ),
    CauseRule(
        c.RUNBOOK_CLOUD_REPOSITORY_ACCESS,
        _rx(
            r"Unable to create (S3|GCS|Azure)[\w ]*client",
            r"Could not get MetaData for (bucket|object)",
            r"Server failed to authenticate the request",
            r"Unable to get blob property",
            r"Failed to (check|get|list|read|download)[^\n]{0,40}(as|gs|s3)://",
            r"\b(InvalidAccessKeyId|SignatureDoesNotMatch|NoSuchBucket|ExpiredToken|AccessDenied)\b",
            # the S3 client's TLS layer (the AWS SDK's s2n, aws-c-io) that could not start
            r"\bs2n_init\(\) failed\b",
            # huggingface_hub's GatedRepoError ("Access to model <repo> is restricted. You must have access
            # to it and be authenticated to access it. Please log in."; "... is restricted and you are not
            # in the authorized list").
            r"\bAccess to model \S+ is restricted\b",
            r"(s3|gs|as)://\S+[^\n]{0,80}(credential|forbidden|unauthori[sz]ed|\b40[13]\b|denied|anonymous)",
            r"does not have storage\.objects\.(get|list) access",
            # An as:// repository whose account endpoint cannot be reached (no network, a wrong account
            # name, a proxy): core's Azure file system (src/filesystem/implementations/as.h, r23.xx on,
            # azure-storage-blobs-cpp) lets the SDK's exception escape, and tritonserver aborts on
            # "terminate called after throwing an instance of 'Azure::Core::Http::TransportException'"
            # with what() "Fail to get a new connection for: https://<account>.blob.core.windows.net.
            # <curl's reason>" (azure-core src/http/curl/curl.cpp; Triton 2.51 measured).
            r"Fail to get a new connection for: https?://[\w.-]+\.blob\.core\.windows\.net\b",
            # The AWS SDK's curl client (aws-sdk-cpp CurlHttpClient.cpp, "curlCode: <n>, <curl's reason>")
            # under s3:// and MinIO: the endpoint was not reached (6 a name, 7 a connection, 28 a timeout,
            # 60 a certificate the SDK does not trust).
            r"\bcurlCode: \d+, ",
            r"instance of 'Azure::(?:Core::Http::TransportException|Storage::StorageException)'",
            # rclone, the storage initializer of Seldon Core / KServe's model-initializer containers
            # (cmd/cmd.go "Failed to create file system for %q: %v"): a cloud remote it cannot set up,
            # e.g. fs/config's "didn't find section in config file" when the remote's credentials
            # (the rclone secret's RCLONE_CONFIG_* environment) never reached the container.
            r"Failed to create file system for \\?\"?(s3|gs|gcs|azureblob|as|swift|b2|minio)\b[\w-]*:",
        ),
    ),
    CauseRule(
        c.RUNBOOK_PERMISSION_DENIED,
        _rx(
            # Not the NGC entrypoint's own `find: '/usr/lib/ssl/private': Permission denied` (printed
            # by every image started as a non-root user, e.g. under KServe): noise, not a model's file.
            r"(?m:^(?![^\n]*\bfind: '/)[^\n]*Permission denied)",
            r"\bEACCES\b",
            r"Operation not permitted",
            r"\[Errno 13\]",
        ),
    ),
)

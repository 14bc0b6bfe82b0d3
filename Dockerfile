# triton-sre: the exporter sidecar and the incident bot (`triton-sre export`, `triton-sre bot`).
# Built by docker-compose.yml; for Kubernetes push it and reference it in deploy/k8s/.
FROM python:3.11.10-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
COPY pyproject.toml README.md ./
COPY triton_sre ./triton_sre
COPY runbooks ./runbooks
# The runbooks symlink (triton_sre/diagnosis/runbooks -> ../../runbooks) is resolved by the build.
RUN pip install --no-compile . && rm -rf /src

# Non-root: a fixed uid so volume ownership and Kubernetes' runAsNonRoot work.
RUN useradd --system --uid 10001 --home-dir /var/lib/triton-sre --create-home triton-sre
USER 10001
WORKDIR /var/lib/triton-sre

EXPOSE 8003 8004
ENTRYPOINT ["triton-sre"]
CMD ["export"]

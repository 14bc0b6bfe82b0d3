# triton-sre images, two targets from one file (issue 15: each image installs what it runs):
#   exporter  `triton-sre export` (also `triage`): the base install, no pandas/matplotlib/grafanalib/
#             slack-sdk/jinja2.  docker build --target exporter -t triton-sre-exporter:0.1.0 .
#   bot       `triton-sre bot`: the base install + the [bot] extra.
#             docker build --target bot -t triton-sre-bot:0.1.0 .
# Built by docker-compose.yml; for Kubernetes push the exporter image and reference it in deploy/k8s/.
FROM python:3.11.10-slim-bookworm AS base

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
COPY pyproject.toml README.md ./
COPY triton_sre ./triton_sre
COPY slos.yaml ./
COPY runbooks ./runbooks
# Non-root: a fixed uid so volume ownership and Kubernetes' runAsNonRoot work.
RUN useradd --system --uid 10001 --home-dir /var/lib/triton-sre --create-home triton-sre

FROM base AS exporter
# The symlinks in triton_sre/data/ (-> ../../slos.yaml, ../../runbooks) are resolved by the build.
RUN pip install --no-compile . && rm -rf /src
USER 10001
WORKDIR /var/lib/triton-sre
EXPOSE 8003
ENTRYPOINT ["triton-sre"]
CMD ["export"]

FROM base AS bot
RUN pip install --no-compile '.[bot]' && rm -rf /src
USER 10001
WORKDIR /var/lib/triton-sre
EXPOSE 8004
ENTRYPOINT ["triton-sre"]
CMD ["bot"]

"""The stack's files: docker-compose.yml validates and mounts only files that exist, the configs
rendered for the local stack pass promtool and amtool, deploy/ is what the templates render, and
the compose Triton image is the release of the server the tests run."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jinja2
import pytest
import requests
import yaml

from triton_sre import conventions as c
from triton_sre.generate.families import rule_files
from triton_sre.slo import Spec, default_spec
from triton_sre.stack import render
from triton_sre.stack.components import Component, process_start_time, save_state
from triton_sre.stack.local import Stack, StackError, StackOptions, up
from triton_sre.stack.local_triton import LocalTriton

REPO = Path(__file__).resolve().parents[1]
COMPOSE = REPO / "docker-compose.yml"
SECRETS = REPO / "deploy" / "secrets"


def _compose() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return doc


def _need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} is not installed: run scripts/setup.sh (Debian's package provides it)")
    return path


def _user_files(compose: dict[str, Any]) -> set[Path]:
    """Files the user creates (secrets, env files): never committed, each has a committed .example."""
    files = {REPO / s["file"] for s in compose.get("secrets", {}).values()}
    for service in compose["services"].values():
        files |= {REPO / f for f in service.get("env_file", [])}
    return files


def test_docker_compose_config_validates(tmp_path: Path) -> None:
    exe = _need("docker-compose")
    compose = _compose()
    names = (
        "docker-compose.yml",
        ".env",
        "Dockerfile",
        "deploy",
        "alerts",
        "dashboards",
        "triton_sre",
        "slos.yaml",
    )
    for name in names:
        src = REPO / name
        dst = tmp_path / name
        if src.is_dir():
            shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dst)
    for user_file in _user_files(compose):  # what the README tells the user to create
        rel = user_file.relative_to(REPO)
        shutil.copy2(REPO / f"{rel}.example", tmp_path / rel)
    for profile in ("cpu", "gpu"):
        result = subprocess.run(
            [exe, "config", "-q"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin", "COMPOSE_PROFILES": profile},
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
    resolved = subprocess.run(
        [exe, "config"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    services = yaml.safe_load(resolved.stdout)["services"]
    assert services["triton"]["image"] == c.TRITON_IMAGE
    assert set(services) >= {"triton", "exporter", "prometheus", "alertmanager", "grafana", "bot"}


def test_every_file_the_compose_file_mounts_exists() -> None:
    compose = _compose()
    mounts: list[str] = []
    for name, service in compose["services"].items():
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if source.startswith((".", "/")):
                mounts.append(source)
        if "build" in service:
            build = service["build"] if isinstance(service["build"], dict) else {"context": service["build"]}
            dockerfile = REPO / build["context"] / "Dockerfile"
            assert dockerfile.is_file(), name
            if "target" in build:  # a stage of that Dockerfile
                assert re.search(rf"^FROM .+ AS {build['target']}$", dockerfile.read_text(), re.M), name
    assert mounts, "the compose file mounts nothing?"
    for source in mounts:
        assert (REPO / source).exists(), f"docker-compose.yml mounts {source}, which does not exist"
    assert (REPO / "triton_sre" / "demo" / "models").is_dir()
    # secrets and env files are the user's: an example is committed, the real file is git-ignored
    for user_file in _user_files(compose):
        assert Path(f"{user_file}.example").is_file(), user_file
        ignored = subprocess.run(["git", "check-ignore", "-q", str(user_file)], cwd=REPO)
        assert ignored.returncode == 0, f"{user_file} is not git-ignored"


def test_the_compose_bot_reads_the_spec_the_rules_came_from() -> None:
    """The bot's cluster label and rollout settings come from the slos.yaml alerts/ was generated from."""
    bot = _compose()["services"]["bot"]
    given = [arg.split("=", 1)[1] for arg in bot["command"] if arg.startswith("--slo-file=")]
    assert len(given) == 1, bot["command"]
    assert f"./slos.yaml:{given[0]}:ro" in bot["volumes"]


def test_compose_pins_every_image_and_keeps_secrets_out_of_configs() -> None:
    compose = _compose()
    for name, service in compose["services"].items():
        image = service.get("image", "")
        assert ":" in image and not image.endswith(":latest"), f"{name}: unpinned image {image!r}"
        assert "healthcheck" in service and service.get("restart") == "unless-stopped", name
    assert compose["services"]["triton"]["image"] == c.TRITON_IMAGE
    ports = {name: service.get("ports", []) for name, service in compose["services"].items()}
    for name, port in (
        ("triton", c.TRITON_HTTP_PORT),
        ("triton", c.TRITON_METRICS_PORT),
        ("exporter", c.EXPORTER_PORT),
        ("prometheus", c.PROMETHEUS_PORT),
        ("alertmanager", c.ALERTMANAGER_PORT),
        ("grafana", c.GRAFANA_PORT),
        ("bot", c.BOT_PORT),
    ):
        assert f"{port}:{port}" in ports[name], f"{name} does not publish {port} (conventions)"
    assert {"prometheus-data", "bot-outbox"} <= set(compose["volumes"])
    assert compose["services"]["grafana"]["environment"]["GF_AUTH_ANONYMOUS_ENABLED"] == "false"
    assert "bot_token" in compose["services"]["alertmanager"]["secrets"]
    assert "bot_token" in compose["services"]["bot"]["secrets"]
    am = yaml.safe_load((REPO / "deploy" / render.ALERTMANAGER_FILE).read_text())
    auth = am["receivers"][0]["webhook_configs"][0]["http_config"]["authorization"]
    assert auth == {"type": "Bearer", "credentials_file": render.COMPOSE_BOT_TOKEN_FILE}


def test_triton_release_matches_the_server_the_tests_run(triton: LocalTriton) -> None:
    version = requests.get(f"{triton.http_url}/v2", timeout=5).json()["version"]
    major_minor = ".".join(version.split(".")[:2])
    # TRITON_IMAGE is built from TRITON_TESTED_VERSION (conventions/process.py): the image the stack pins is
    # the release of the server the tests just ran.
    assert major_minor == c.TRITON_TESTED_VERSION


def test_deploy_directory_is_what_the_templates_render() -> None:
    for rel, content in render.deploy_files(default_spec()).items():
        assert (REPO / rel).read_text() == content, f"{rel} is stale: run triton-sre generate"


def _local_configs(tmp_path: Path) -> dict[str, Path]:
    opts = StackOptions(model_repository=tmp_path, workdir=tmp_path / "stack", port_base=20000, interval=1)
    return Stack(opts, lambda _: None).render()


def test_local_prometheus_config_passes_promtool(tmp_path: Path) -> None:
    files = _local_configs(tmp_path)
    result = subprocess.run(
        [_need("promtool"), "check", "config", str(files["prometheus"])], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(rule_files(default_spec()))} rule files found" in result.stdout + result.stderr
    config = yaml.safe_load(files["prometheus"].read_text())
    jobs = {s["job_name"]: s["static_configs"][0]["targets"] for s in config["scrape_configs"]}
    assert jobs[c.DEFAULT_TRITON_JOB] == ["127.0.0.1:20002"]
    assert jobs[c.DEFAULT_EXPORTER_JOB] == ["127.0.0.1:20003"]
    assert config["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"] == ["127.0.0.1:20005"]


def test_local_alertmanager_config_passes_amtool(tmp_path: Path) -> None:
    files = _local_configs(tmp_path)
    result = subprocess.run(
        [_need("amtool"), "check-config", str(files["alertmanager"])], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    config = yaml.safe_load(files["alertmanager"].read_text())
    hook = config["receivers"][0]["webhook_configs"][0]
    assert hook["url"] == f"http://127.0.0.1:20006{c.PATH_BOT_ALERTMANAGER}"
    token_file = Path(hook["http_config"]["authorization"]["credentials_file"])
    assert token_file == files["token"] and len(token_file.read_text().strip()) == 64
    assert token_file.stat().st_mode & 0o077 == 0, "the bot token must not be readable by others"
    assert token_file.read_text().strip() not in files["alertmanager"].read_text()
    assert config["route"]["group_by"] == ["alertname", "model"]
    severities = {r["matchers"][0]: r["repeat_interval"] for r in config["route"]["routes"]}
    assert set(severities) == {f'severity="{c.SEVERITY_PAGE}"', f'severity="{c.SEVERITY_TICKET}"'}


def test_compose_configs_pass_promtool_and_amtool(tmp_path: Path) -> None:
    prom = tmp_path / "prometheus.yml"
    prom.write_text((REPO / "deploy" / render.PROMETHEUS_FILE).read_text())
    result = subprocess.run([_need("promtool"), "check", "config", str(prom)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    am = REPO / "deploy" / render.ALERTMANAGER_FILE
    result = subprocess.run([_need("amtool"), "check-config", str(am)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_values_are_quoted_so_no_value_breaks_the_yaml() -> None:
    hostile = 'evil"\n  - job_name: injected\n# {{ x }}'
    spec = Spec(slos=(), triton_job=hostile, exporter_job="ok")
    topology = render.Topology(
        triton_target='t:1"]',
        exporter_target="e:2",
        prometheus_target="p:3",
        alertmanager_target="a:4",
        prometheus_url="http://p:3",
        bot_webhook_url="http://b:5/alertmanager",
        bot_token_file="/run/secrets/x'y",
        rule_files=("/r/a b.yaml",),
        dashboards_path="/d",
    )
    files = render.render_configs(spec, topology)
    prom = yaml.safe_load(files[render.PROMETHEUS_FILE])
    assert [s["job_name"] for s in prom["scrape_configs"]][:2] == [hostile, "ok"]
    assert prom["scrape_configs"][0]["static_configs"][0]["targets"] == ['t:1"]']
    am = yaml.safe_load(files[render.ALERTMANAGER_FILE])
    assert am["receivers"][0]["webhook_configs"][0]["http_config"]["authorization"]["credentials_file"] == (
        "/run/secrets/x'y"
    )


def test_templates_refuse_undefined_values() -> None:
    env = render._env()
    with pytest.raises(jinja2.UndefinedError):
        env.get_template("prometheus.yml.j2").render({})


def test_k8s_example_probes_and_prometheus_operator_objects() -> None:
    docs = {rel: list(yaml.safe_load_all((REPO / "deploy" / rel).read_text())) for rel in (
        render.K8S_DEPLOYMENT_FILE, render.K8S_PODMONITOR_FILE, render.K8S_PROMETHEUSRULE_FILE)}  # fmt: skip
    pod = docs[render.K8S_DEPLOYMENT_FILE][0]["spec"]["template"]["spec"]
    triton, sidecar = pod["containers"]
    assert triton["image"] == c.TRITON_IMAGE
    assert triton["startupProbe"]["httpGet"]["path"] == "/v2/health/ready"
    assert triton["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready"
    assert triton["livenessProbe"]["httpGet"]["path"] == "/v2/health/live"
    budget = triton["startupProbe"]["periodSeconds"] * triton["startupProbe"]["failureThreshold"]
    assert budget == 120  # the figure the comment derives from the measured load time
    assert sidecar["readinessProbe"]["httpGet"]["path"] == c.PATH_READYZ
    assert sidecar["livenessProbe"]["httpGet"]["path"] == c.PATH_HEALTHZ
    assert sidecar["securityContext"]["runAsNonRoot"] is True
    monitor = docs[render.K8S_PODMONITOR_FILE][0]
    assert monitor["kind"] == "PodMonitor"
    jobs = [e["relabelings"][0]["replacement"] for e in monitor["spec"]["podMetricsEndpoints"]]
    assert jobs == [c.DEFAULT_TRITON_JOB, c.DEFAULT_EXPORTER_JOB]
    rule = docs[render.K8S_PROMETHEUSRULE_FILE][0]
    assert rule["kind"] == "PrometheusRule"
    committed = [
        g for f in sorted((REPO / "alerts").glob("*.yaml")) for g in yaml.safe_load(f.read_text())["groups"]
    ]
    assert sorted(g["name"] for g in rule["spec"]["groups"]) == sorted(g["name"] for g in committed)
    alerts = {r["alert"] for g in rule["spec"]["groups"] for r in g["rules"] if "alert" in r}
    assert c.ALERT_MODEL_UNAVAILABLE in alerts and c.ALERT_SLO_ERROR_BUDGET_BURN in alerts


def test_a_cluster_label_keeps_clusters_apart_in_alertmanager(tmp_path: Path) -> None:
    """With slos.yaml `cluster_label` the rules keep the cluster (issue 24); Alertmanager must too: a
    group per cluster, and a page in one cluster never inhibits another cluster's ticket."""
    import dataclasses

    plain = yaml.safe_load(
        render.render_configs(default_spec(), render.compose_topology())[render.ALERTMANAGER_FILE]
    )
    spec = dataclasses.replace(default_spec(), cluster_label="region")
    text = render.render_configs(spec, render.compose_topology())[render.ALERTMANAGER_FILE]
    config = yaml.safe_load(text)
    assert config["route"]["group_by"] == [*plain["route"]["group_by"], "region"]
    assert config["inhibit_rules"][0]["equal"] == [*plain["inhibit_rules"][0]["equal"], "region"]
    assert "region" not in plain["route"]["group_by"] + plain["inhibit_rules"][0]["equal"]
    assert {c.LABEL_ALERTNAME, c.LABEL_MODEL} <= set(plain["route"]["group_by"])
    am = tmp_path / "alertmanager.yml"
    am.write_text(text)
    result = subprocess.run([_need("amtool"), "check-config", str(am)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_with_a_cluster_label_the_prometheus_config_says_to_name_the_cluster() -> None:
    """The fleet journey copied deploy/prometheus/prometheus.yml generated with cluster_label: nothing
    in it said that each cluster's Prometheus must carry the label as an external label, without
    which the global store merges the clusters (docs/scaling.md). It now says so, as a comment: a
    placeholder value would merge every cluster that kept it."""
    import dataclasses

    spec = dataclasses.replace(default_spec(), cluster_label="region")
    text = render.render_configs(spec, render.compose_topology())[render.PROMETHEUS_FILE]
    plain = render.render_configs(default_spec(), render.compose_topology())[render.PROMETHEUS_FILE]
    assert "external_labels" not in plain
    assert re.search(r"^  # external_labels:\n  #   region: ", text, re.M), text
    assert yaml.safe_load(text) == yaml.safe_load(plain)  # a comment: the configuration is the same


def test_up_on_a_running_stack_names_the_down_command_of_its_workdir(tmp_path: Path) -> None:
    """`stack up --workdir DIR` on a running stack said "run `triton-sre stack down` first", which stops
    the default workdir's stack, not DIR's (docs34). This process stands in for a live component."""
    workdir = tmp_path / "my stack"
    workdir.mkdir()
    me = Component("exporter", os.getpid(), process_start_time(os.getpid()), "http://127.0.0.1:1", "log", [])
    save_state(workdir, [me], {"workdir": str(workdir)})
    with pytest.raises(StackError) as refused:
        up(StackOptions(model_repository=tmp_path, workdir=workdir), lambda _: None)
    command = re.search(r"run `([^`]+)` first", str(refused.value))
    assert command, str(refused.value)
    assert shlex.split(command.group(1)) == ["triton-sre", "stack", "down", "--workdir", str(workdir)]

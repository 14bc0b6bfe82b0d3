"""Fault probes, round five (branch `probes5`, 2026-12-05): the environment, output that cannot be
written, deeply nested YAML and hostile runbook front matter (docs/failure-behaviour.md, "Fault
probes, round five")."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
import yaml
from fake_prometheus import serve
from test_fault_probes import ROOT, assert_clean_error
from test_report_answers import healthy

from triton_sre import conventions as c
from triton_sre.checks import ConfigError
from triton_sre.config import load_config
from triton_sre.files import write_atomic, write_files
from triton_sre.inputs import MAX_YAML_DEPTH, load_yaml
from triton_sre.mplconfig import use_writable_config_dir
from triton_sre.prom import Prometheus
from triton_sre.redact import REDACTED, redact


def run_env(
    args: list[str],
    cwd: Path,
    file_limit: int | None = None,
    *,
    preexec: Callable[[], object] | None = None,
    prefix: Sequence[str] = (),
    **env: str,
) -> tuple[int, str, str]:
    """The CLI in a child process with `env` on top of this one's environment; with `file_limit`,
    its writes past that many bytes fail (`_small_files_only`); `preexec` runs in the child before
    it starts, `prefix` is the command that runs it (`setpriv …`)."""
    full = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    full.pop(c.ENV_CONFIG, None)
    if file_limit is not None:
        preexec = lambda: _small_files_only(file_limit)  # noqa: E731
    proc = subprocess.run(
        [*prefix, sys.executable, "-m", "triton_sre.cli", *args],
        capture_output=True,
        env=full,
        cwd=cwd,
        timeout=120,
        preexec_fn=preexec,
    )
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")


def a_log(tmp_path: Path) -> Path:
    log = tmp_path / "triton.log"
    log.write_text("I1204 12:00:00.000 1 server.cc:1] Started\n", encoding="utf-8")
    return log


@pytest.mark.parametrize("value", ["garbage", "5", "verbose"])
def test_a_log_level_from_the_environment_that_is_no_level_is_a_usage_error(
    tmp_path: Path, value: str
) -> None:
    """`TRITON_SRE_LOG_LEVEL=garbage` was argparse's default, never checked against the choices:
    logging.basicConfig raised `ValueError: Unknown level: 'GARBAGE'`, a traceback, exit 1."""
    code, out, err = run_env(["triage", str(a_log(tmp_path))], tmp_path, **{c.ENV_LOG_LEVEL: value})
    assert code == c.EXIT_USAGE and "Traceback" not in err, err
    message = err.strip().splitlines()[-1]  # argparse's own form, as for a bad --log-level
    assert message.startswith("triton-sre: error: "), err
    for needle in (f"${c.ENV_LOG_LEVEL}", repr(value), "debug, info"):
        assert needle in message, err
    assert out == ""


@pytest.mark.parametrize("value", ["DEBUG", " warning ", ""])
def test_a_log_level_from_the_environment_in_any_case_or_blank_is_taken(tmp_path: Path, value: str) -> None:
    code, out, err = run_env(["triage", str(a_log(tmp_path))], tmp_path, **{c.ENV_LOG_LEVEL: value})
    assert code == c.EXIT_OK, err
    assert "Traceback" not in err and out.strip()


# -- deeply nested YAML ---------------------------------------------------------------------------
def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    "document", [f"scrape: {nested(100_000)}\n", "scrape: " + "{a: " * 50_000 + "1" + "}" * 50_000 + "\n"]
)
def test_a_spec_nested_thousands_deep_is_refused_by_name(tmp_path: Path, document: str) -> None:
    """PyYAML composes recursively: a 200 kB spec of `[[[...]]]` was `internal error:
    RecursionError: maximum recursion depth exceeded` (generate, lint, report, doctor, stack up)."""
    spec = tmp_path / "slos.yaml"
    spec.write_text(document, encoding="utf-8")
    code, _, err = run_env(["generate", "--spec", str(spec), "--out", str(tmp_path / "out")], tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, f"nested more than {MAX_YAML_DEPTH} levels deep", "line 1")
    assert "internal error" not in err and not (tmp_path / "out").exists()


def test_yaml_nested_to_the_bound_still_loads() -> None:
    assert load_yaml("a: " + nested(MAX_YAML_DEPTH - 1)) == {"a": eval(nested(MAX_YAML_DEPTH - 1))}
    with pytest.raises(yaml.YAMLError, match="nested more than"):
        load_yaml("a: " + nested(MAX_YAML_DEPTH))


def test_a_config_file_nested_thousands_deep_is_a_configuration_error(tmp_path: Path) -> None:
    config = tmp_path / "exporter.yaml"
    config.write_text(f"exporter: {nested(100_000)}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="nested more than"):
        load_config(str(config))


def test_prometheus_answering_a_config_nested_too_deep_has_no_scrape_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Prometheus' /api/v1/status/config text was loaded by yaml.safe_load: a (hostile or broken)
    answer nested 100,000 deep was a RecursionError out of `report`; now it is no interval read."""
    prom = Prometheus("http://127.0.0.1:9")
    monkeypatch.setattr(prom, "_get", lambda path, params: {"yaml": f"global: {nested(100_000)}"})
    assert prom.scrape_interval("triton") is None
    monkeypatch.setattr(prom, "_get", lambda path, params: {"yaml": "global: {scrape_interval: 7s}"})
    assert prom.scrape_interval("triton") == 7


# -- runbook front matter (triage and lint --runbooks) --------------------------------------------
LAUGHS = "".join(
    f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True)
)


def runbooks_with(tmp_path: Path, front: str) -> Path:
    """A copy of the shipped runbooks whose first page carries `front` in its front matter."""
    folder = tmp_path / "runbooks"
    shutil.copytree(ROOT / "runbooks", folder)
    page = sorted(folder.glob("*.md"))[0]
    lines = page.read_text(encoding="utf-8").splitlines(keepends=True)
    page.write_text(lines[0] + front + "".join(lines[1:]), encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("front", "says"),
    [
        (
            'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + LAUGHS + "x: *i\n",
            "line 3, column 8: YAML aliases",
        ),
        (f"x: {nested(50_000)}\n", "line 2, column 67: the document is nested more than"),
    ],
    ids=["billion-laughs", "nested"],
)
def test_hostile_runbook_front_matter_is_refused_fast(tmp_path: Path, front: str, says: str) -> None:
    """Front matter was read by yaml.safe_load: a billion-laughs page in `--runbooks` held triage
    past 60 s at 2 GB and growing (the catalog walks the values); a page nested 50,000 deep was
    `internal error: RecursionError`. Now `inputs.load_yaml`, as the spec and the config files,
    with the page's own line numbers."""
    folder = runbooks_with(tmp_path, front)
    started = time.monotonic()
    code, out, err = run_env(["triage", "--runbooks", str(folder), str(a_log(tmp_path))], tmp_path)
    assert time.monotonic() - started < 30
    assert_clean_error(code, err, c.EXIT_USAGE, "runbook catalog", "front matter", says)
    assert out == ""


# -- output that cannot be written ----------------------------------------------------------------
def _small_files_only(limit: int = 64 * 1024) -> None:
    """In the child: writes past `limit` bytes fail with EFBIG, as they would on a full disk."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_generate_on_a_disk_that_fills_names_the_file_and_leaves_no_temp_file(tmp_path: Path) -> None:
    """On a full disk (a 200 kB tmpfs) `generate` said `cannot write (standard output): No space
    left on device` and left `.triton-slo-rules.test.yaml.krp6c44i`, a half-written temp file,
    in the output folder."""
    out = tmp_path / "out"
    argv = ["generate", "--spec", str(ROOT / "slos.yaml"), "--out", str(out)]
    code, _, err = run_env(argv, tmp_path, file_limit=64 * 1024)
    assert_clean_error(code, err, c.EXIT_USAGE, f"cannot write: {out}/", "File too large")
    assert "standard output" not in err
    assert [p.name for p in out.rglob(".*")] == []  # no temp file left behind
    assert all(p.stat().st_size <= 64 * 1024 for p in out.rglob("*") if p.is_file())


@pytest.fixture
def healthy_prometheus() -> Iterator[str]:
    """A Prometheus stand-in whose answers make a one-model report (test_report_answers)."""
    httpd = serve(healthy)
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_report_on_a_disk_that_fills_keeps_the_previous_report_whole(
    healthy_prometheus: str, tmp_path: Path
) -> None:
    """`report` wrote report.html with write_text: on a full disk (a 60 kB tmpfs) it left an
    8,192-byte report.html, cut mid-page, over the previous complete one, and said `cannot write
    to OUT`. Now each file is written through a temp file and a rename."""
    url, out = healthy_prometheus, tmp_path / "out"
    argv = ["report", "--prometheus-url", url, "--start", "1000", "--end", "1060", "--step", "10"]
    argv += ["--out", str(out), "--format", "html"]
    code, _, err = run_env(argv, tmp_path)
    assert code == c.EXIT_OK, err
    before = (out / "report.html").read_bytes()
    assert len(before) > 16 * 1024 and before.rstrip().endswith(b"</html>")
    code, _, err = run_env(argv, tmp_path, file_limit=16 * 1024)
    assert_clean_error(code, err, c.EXIT_USAGE, f"cannot write to {out / 'report.html'}: File too large")
    assert (out / "report.html").read_bytes() == before
    assert [p.name for p in out.rglob(".*")] == []


def test_a_file_written_through_a_rename_keeps_the_permissions_a_write_in_place_gives(tmp_path: Path) -> None:
    """report's files were written in place (`write_text`): a new one got the umask's permissions, a
    replaced one kept its own. Through `write_atomic` every one became 0644: a report written under
    `umask 077` was readable by every user of the host. generate's files stay 0644 as before."""
    old = os.umask(0o077)
    try:
        write_atomic(tmp_path / "new.html", "<html></html>")
        kept = tmp_path / "kept.csv"
        kept.write_text("a\n")
        kept.chmod(0o640)
        write_atomic(kept, b"b\n")
        write_files({"rules.yaml": "groups: []\n"}, tmp_path)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.html").stat().st_mode) == 0o600
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640 and kept.read_bytes() == b"b\n"
    assert stat.S_IMODE((tmp_path / "rules.yaml").stat().st_mode) == 0o644


def test_a_write_that_fails_names_the_file_not_its_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The error of a temp file that cannot be made (a folder the user cannot write) or renamed (over
    a folder) named the temp file, `OUT/.report.html.k2j3h4l5`, which no longer exists: `report` said
    `cannot write to OUT/.report.html.k2j3h4l5: Is a directory`."""
    (tmp_path / "report.html").mkdir()
    with pytest.raises(IsADirectoryError) as err:
        write_atomic(tmp_path / "report.html", "<html></html>")
    assert err.value.filename == str(tmp_path / "report.html")
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]

    def refused(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(tmp_path / ".models.csv.k2j3h4l5"))

    monkeypatch.setattr(tempfile, "mkstemp", refused)  # the tests run as root: no folder refuses it
    with pytest.raises(PermissionError) as denied:
        write_atomic(tmp_path / "models.csv", "a\n")
    assert denied.value.filename == str(tmp_path / "models.csv")


# -- the environment ------------------------------------------------------------------------------
@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_terminal_that_cannot_show_a_character_gets_its_escape(tmp_path: Path, encoding: str) -> None:
    """`PYTHONIOENCODING=ascii` (or a Latin-1 terminal) and a log line with `é—`: `triage` ended in
    `internal error: UnicodeEncodeError: 'ascii' codec can't encode character '\\u2014'`, exit 2,
    nothing of its findings shown."""
    log = tmp_path / "triton.log"
    log.write_text(
        "E1204 12:00:00.000 1 model_lifecycle.cc:1] failed to load model 'mé' version 1: "
        "Invalid argument: bad — really\n",
        encoding="utf-8",
    )
    code, out, err = run_env(["triage", str(log)], tmp_path, PYTHONIOENCODING=encoding)
    assert code == c.EXIT_FAILURE, err  # a failure found
    assert "Traceback" not in err and "internal error" not in err, err
    assert "\\u2014 really" in out
    if encoding == "ascii":
        assert "'m\\xe9'" in out


# -- redaction of file names ----------------------------------------------------------------------
def test_a_file_named_like_a_secret_keeps_the_message_after_it(tmp_path: Path) -> None:
    """`token: <value>` is redacted as a key; a path ending in `/token` (Kubernetes mounts secrets
    as such files) took the message's next word for the value: `--token-file /run/secrets/token:
    <redacted> read: a directory, ...`; `/etc/passwd: <redacted> folder not found`."""
    secret = tmp_path / "secrets" / "token"
    secret.mkdir(parents=True)
    code, _, err = run_env(
        ["bot", "--token-file", str(secret)], tmp_path, **{c.ENV_SLACK_BOT_TOKEN: "xoxb-1"}
    )
    assert_clean_error(code, err, c.EXIT_USAGE, f"{secret}: cannot read: a directory, not a regular file")
    assert REDACTED not in err
    assert redact("runbook catalog: /etc/passwd: runbook folder not found").endswith(
        "runbook folder not found"
    )


@pytest.mark.parametrize(
    "text",
    ["token: s3cr3t", "X-Auth-Token: s3cr3t", "password=s3cr3t", "dir/token=s3cr3t", "api_key:  s3cr3t"],
)
def test_keys_that_are_not_file_names_are_still_redacted(text: str) -> None:
    assert "s3cr3t" not in redact(text) and REDACTED in redact(text)


# -- YAML 1.1 surprises ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (
            ("period: 30d", "period: on"),
            "period: expected a duration like 500ms, 30s, 5m, 1h or 30d, got True (a boolean",
        ),
        (("models: all ", "models: no  "), "got False (a boolean: YAML reads an unquoted yes/no/on/off"),
        (
            ("triton_job: triton ", "triton_job: yes    "),
            "scrape.triton_job: expected a non-empty string, got True (a boolean",
        ),
        (
            ("- name: availability", "- name: 2024-01-01"),
            "got 2024-01-01 (a date: YAML reads an unquoted YYYY-MM-DD",
        ),
    ],
    ids=["period-on", "models-no", "job-yes", "name-date"],
)
def test_a_word_yaml_turned_into_a_boolean_or_a_date_is_named_as_such(
    tmp_path: Path, edit: tuple[str, str], says: str
) -> None:
    """`period: on` said `expected a duration ..., got True`, `name: 2024-01-01` said `got
    datetime.date(2024, 1, 1)`: the spec never says True or datetime.date."""
    text = (ROOT / "slos.yaml").read_text(encoding="utf-8")
    assert edit[0] in text
    spec = tmp_path / "slos.yaml"
    spec.write_text(text.replace(edit[0], edit[1], 1), encoding="utf-8")
    code, _, err = run_env(["generate", "--spec", str(spec), "--out", str(tmp_path / "out")], tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, says)
    assert "datetime.date" not in err


def test_report_with_a_home_it_cannot_write_is_quiet(healthy_prometheus: str, tmp_path: Path) -> None:
    """With a HOME that cannot be written (a read-only root filesystem; here a file), every `report`
    printed matplotlib's `mkdir -p failed for path ...` and `Matplotlib created a temporary cache
    directory ...` WARNING lines, and rebuilt its font list (`generated new fontManager`) each run."""
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.write_text("a file, not a folder\n")
    tmp.mkdir()
    argv = [
        "report",
        "--prometheus-url",
        healthy_prometheus,
        "--start",
        "1000",
        "--end",
        "1060",
        "--step",
        "10",
    ]
    env = {"HOME": str(home), "TMPDIR": str(tmp), "MPLCONFIGDIR": "", "XDG_CONFIG_HOME": ""}
    errs = []
    for run_number in (1, 2):
        code, _, err = run_env([*argv, "--out", str(tmp_path / f"out{run_number}")], tmp_path, **env)
        assert code == c.EXIT_OK, err
        assert (tmp_path / f"out{run_number}" / "report.md").is_file()
        errs.append(err)
    assert "WARNING matplotlib" not in errs[0] and "Matplotlib created" not in errs[0], errs[0]
    assert "matplotlib" not in errs[1], errs[1]  # the font list was kept from the first run
    assert (tmp / f"triton-sre-matplotlib-{os.getuid()}").is_dir()


def test_a_writable_matplotlib_folder_or_a_set_variable_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("MPLCONFIGDIR", raising=False)
    use_writable_config_dir()
    assert "MPLCONFIGDIR" not in os.environ and (tmp_path / "config" / "matplotlib").is_dir()
    assert (tmp_path / "cache" / "matplotlib").is_dir()
    monkeypatch.setenv("MPLCONFIGDIR", "/somewhere")
    monkeypatch.setenv("XDG_CONFIG_HOME", "/proc/no")
    use_writable_config_dir()
    assert os.environ["MPLCONFIGDIR"] == "/somewhere"


def test_a_font_cache_folder_that_cannot_be_written_gets_the_private_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """matplotlib's font cache is under `$XDG_CACHE_HOME/matplotlib` (else `~/.cache/matplotlib`), not
    its configuration folder: a writable `$XDG_CONFIG_HOME` with a HOME that cannot be written (a
    read-only root file system with `XDG_CONFIG_HOME=/tmp/...`) left matplotlib warning and rebuilding
    its font list on every run."""
    home = tmp_path / "home"
    home.write_text("a file, not a folder\n")  # the probes run as root: a file refuses what bits cannot
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("MPLCONFIGDIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    use_writable_config_dir()
    assert os.environ.get("MPLCONFIGDIR") == str(tmp_path / f"triton-sre-matplotlib-{os.getuid()}")

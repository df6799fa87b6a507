"""scripts/launch.py: the production server's command line, the secret key, the environment."""

from __future__ import annotations

import importlib.util
import stat
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("launch", ROOT / "scripts" / "launch.py")
launch = importlib.util.module_from_spec(spec)
spec.loader.exec_module(launch)


def option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_granian_wsgi_one_worker_per_core_and_one_blocking_thread_by_default(monkeypatch):
    monkeypatch.delenv("WEB_WORKERS", raising=False)
    monkeypatch.delenv("WEB_THREADS", raising=False)
    monkeypatch.setattr(launch.os, "cpu_count", lambda: 3)
    argv = launch.server_argv(8123)
    assert argv[:3] == [sys.executable, "-m", "granian"]
    assert argv[-1] == "retwis_site.wsgi:application"
    assert option(argv, "--interface") == "wsgi"
    assert option(argv, "--working-dir") == str(ROOT)
    assert (option(argv, "--host"), option(argv, "--port")) == ("127.0.0.1", "8123")
    assert option(argv, "--workers") == "3"
    assert option(argv, "--blocking-threads") == "1"
    assert option(argv, "--runtime-threads") == "1"
    assert option(argv, "--runtime-mode") == "st"
    assert option(argv, "--log-level") == "warning"
    assert int(option(argv, "--workers-kill-timeout")) < 30  # inside the launcher's stop()
    assert "--respawn-failed-workers" in argv  # a killed worker is replaced
    assert float(option(argv, "--respawn-interval")) <= 1
    assert "--no-access-log" in argv
    assert "--access-log" not in argv


def test_web_workers_and_threads_override_and_access_log_is_opt_in(monkeypatch):
    monkeypatch.setenv("WEB_WORKERS", "5")
    monkeypatch.setenv("WEB_THREADS", "2")
    argv = launch.server_argv(8000, access_log=True)
    assert (option(argv, "--workers"), option(argv, "--blocking-threads")) == ("5", "2")
    assert "--access-log" in argv
    assert "--no-access-log" not in argv


def test_the_installed_granian_parses_the_command_line(monkeypatch):
    """Granian's own CLI parser takes every option and value (parsing only: nothing starts)."""
    from granian.cli import cli

    monkeypatch.setenv("WEB_WORKERS", "2")
    monkeypatch.delenv("WEB_THREADS", raising=False)
    for access_log in (False, True):
        argv = launch.server_argv(8123, access_log=access_log)
        params = cli.make_context("granian", argv[3:]).params
        assert params["app"] == "retwis_site.wsgi:application"
        assert params["interface"] == "wsgi"
        assert (params["host"], params["port"]) == ("127.0.0.1", 8123)
        assert (params["workers"], params["blocking_threads"]) == (2, 1)
        assert (params["runtime_threads"], params["runtime_mode"]) == (1, "st")
        assert params["working_dir"] == ROOT
        assert params["log_access_enabled"] is access_log


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5"])
def test_junk_worker_counts_are_refused(monkeypatch, value):
    monkeypatch.setenv("WEB_WORKERS", value)
    with pytest.raises(SystemExit, match="WEB_WORKERS"):
        launch.server_argv(8000)


def test_the_secret_key_is_made_once_private_and_kept(monkeypatch, tmp_path):
    path = tmp_path / "var" / "secret_key"
    monkeypatch.setattr(launch, "SECRET_KEY_FILE", path)
    monkeypatch.setattr(launch, "ROOT", tmp_path)
    key = launch.secret_key()
    assert len(key) >= 60
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert launch.secret_key() == key
    path.chmod(0o644)
    assert launch.secret_key() == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_production_env_has_debug_off_and_local_hosts(monkeypatch, tmp_path):
    monkeypatch.setattr(launch, "SECRET_KEY_FILE", tmp_path / "secret_key")
    monkeypatch.setattr(launch, "ROOT", tmp_path)
    for name in ("SECRET_KEY", "ALLOWED_HOSTS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DEBUG", "true")
    env = launch.site_env(dev=False)
    assert env["DEBUG"] == "false"
    assert env["ALLOWED_HOSTS"] == "127.0.0.1,localhost"
    assert env["SECRET_KEY"] == (tmp_path / "secret_key").read_text().strip()
    monkeypatch.setenv("SECRET_KEY", "from-the-environment")
    assert launch.site_env(dev=True)["SECRET_KEY"] == "from-the-environment"

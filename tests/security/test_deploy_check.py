"""``manage.py check --deploy`` is clean under the production configuration of
``deploy/production.env``; the zero-config LAN default still starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION_ENV = ROOT / "deploy" / "production.env"
OURS = {
    "SECRET_KEY",
    "DEBUG",
    "ALLOWED_HOSTS",
    "CSRF_TRUSTED_ORIGINS",
    "PUBLIC_URL",
    "BEHIND_TLS_PROXY",
    "SECURE_COOKIES",
    "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "JOIN_LINK_MAX_AGE",
    "DJANGO_SETTINGS_MODULE",
}


def _env_file(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            values[name.strip()] = value.strip()
    return values


def _check(extra: dict[str, str], tmp_path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in OURS}
    env.update(DATA_DIR=str(tmp_path), **extra)
    return subprocess.run(
        [sys.executable, "manage.py", "check", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_production_configuration_passes_check_deploy(tmp_path):
    values = _env_file(PRODUCTION_ENV)
    assert values["SECURE_SSL_REDIRECT"] == "True" and values["DEBUG"] == "False"
    done = _check(values, tmp_path, "--deploy", "--fail-level", "WARNING")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues (0 silenced)." in done.stdout
    assert "WARNING" not in done.stderr


def test_every_production_variable_is_documented_in_env_example():
    documented = _env_file(ROOT / ".env.example")
    assert set(_env_file(PRODUCTION_ENV)) <= set(documented)


def test_the_lan_default_starts_and_only_lacks_https(tmp_path):
    """With nothing set: a clean ``check``; ``--deploy`` names only what plain
    HTTP on a LAN cannot have (HSTS, HTTPS redirect, secure cookies)."""
    done = _check({}, tmp_path)
    assert done.returncode == 0 and "no issues" in done.stdout, done.stderr
    deploy = _check({}, tmp_path, "--deploy")
    found = {word.strip(":") for word in deploy.stderr.split() if word.startswith("(security.")}
    assert found == {"(security.W004)", "(security.W008)", "(security.W012)", "(security.W016)"}

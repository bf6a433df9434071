"""``deploy/serve``, the workers' command in docker-compose and the Docker image:
Uvicorn by default, Daphne on request, each answering ``/healthz``."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from bench.servers import server_command

ROOT = Path(__file__).resolve().parents[2]
SERVE = ROOT / "deploy" / "serve"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve(server: str | None, port: int, tmp_path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        PORT=str(port),
        DATA_DIR=str(tmp_path),
        SECRET_KEY="deploy-serve-test-only-0123456789-0123456789-0123456789",
        ALLOWED_HOSTS="localhost",
    )
    env.pop("ASGI_SERVER", None)
    if server:
        env["ASGI_SERVER"] = server
    return subprocess.Popen(
        [str(SERVE)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )


def _healthz(port: int, proc: subprocess.Popen) -> int:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stdout.read().decode(errors="replace")
        try:
            with urllib.request.urlopen(f"http://localhost:{port}/healthz", timeout=3) as r:
                return r.status
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"nothing answered /healthz on port {port}")


@pytest.mark.slow
@pytest.mark.workers
@pytest.mark.parametrize(("server", "process"), [(None, "uvicorn"), ("daphne", "daphne")])
def test_serve_starts_uvicorn_by_default_and_daphne_on_request(server, process, tmp_path):
    port = _free_port()
    proc = _serve(server, port, tmp_path)
    try:
        assert _healthz(port, proc) == 200
        with open(f"/proc/{proc.pid}/cmdline", "rb") as fh:
            assert f"/{process}\0".encode() in fh.read()  # exec'd: the script is the server
    finally:
        proc.terminate()
        proc.wait(30)


def test_serve_refuses_an_unknown_server(tmp_path):
    proc = _serve("hypercorn", _free_port(), tmp_path)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert b"ASGI_SERVER is uvicorn or daphne, not 'hypercorn'" in out


def test_the_deployed_uvicorn_has_the_benchs_websocket_limits():
    """The bench measures the worker that docker-compose runs."""
    script = SERVE.read_text()
    bench = server_command("uvicorn", "app", 1)
    flags = ("--backlog", "--lifespan", "--loop", "--http", "--ws", "--ws-max-size")
    flags += ("--ws-per-message-deflate", "--ws-ping-interval", "--ws-ping-timeout")
    for flag in flags:
        assert f"{flag} {bench[bench.index(flag) + 1]}" in script, flag

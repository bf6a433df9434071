"""Daphne worker processes on loopback, sharing the test database and Redis.

Each worker is ``python -m daphne --fd N narrator.asgi:application`` run from
the repository root, serving on a socket this process bound on loopback (see
``tests.ports``), with the test run's ``DATABASE_URL`` (the pytest test
database on PostgreSQL), ``REDIS_URL`` and a ``REDIS_PREFIX`` unique to the
test, and the test process's ``SECRET_KEY`` (so a session cookie made here logs
in there). Ports come from ``WORKER_PORTS`` (the range this repository's tests
may use on a shared machine).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote

from django.conf import settings

from tests.ports import listening_socket

ROOT = Path(__file__).resolve().parents[2]
WORKER_PORTS = range(
    int(os.getenv("WORKER_PORT_MIN", "8300")), int(os.getenv("WORKER_PORT_MAX", "8399")) + 1
)
# Seconds for a worker to answer /healthz: a bound on a hang, generous because two
# workers importing Django side by side on a loaded 2-core machine take a while.
READY_TIMEOUT = 120.0


def database_url() -> str:
    """The test database (``settings.DATABASES['default']`` at test time) as a URL."""
    db = settings.DATABASES["default"]
    auth = quote(db.get("USER") or "", safe="")
    if db.get("PASSWORD"):
        auth += ":" + quote(db["PASSWORD"], safe="")
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{auth}@{host}:{port}/{db['NAME']}"


class Worker:
    """One Daphne process; ``start()`` waits until ``/healthz`` answers 200."""

    def __init__(self, name: str, env: dict[str, str], log_dir: Path):
        self.name = name
        self.env = env
        self.log_path = log_dir / f"{name}.log"
        self.port: int | None = None
        self.process: subprocess.Popen | None = None
        self.started_in: float | None = None  # seconds from spawn to ready

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_base(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def start(self, port: int | None = None) -> Worker:
        """Spawn the process and wait until it is ready."""
        return self.spawn(port).wait_ready()

    def spawn(self, port: int | None = None) -> Worker:
        """Spawn the process on ``port`` (a free one of WORKER_PORTS if None),
        on a socket bound here and handed to Daphne (``tests.ports``)."""
        ports = WORKER_PORTS if port is None else range(port, port + 1)
        sock = listening_socket(ports)
        self.port = sock.getsockname()[1]
        self._began = time.monotonic()
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child keeps it open
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "daphne", "--fd", str(sock.fileno())]
                + ["narrator.asgi:application"],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                pass_fds=(sock.fileno(),),
            )
        finally:
            log.close()
            sock.close()  # Daphne holds its own copy
        return self

    def wait_ready(self) -> Worker:
        """Poll ``/healthz`` until it answers 200 (RuntimeError after READY_TIMEOUT)."""
        began = self._began
        deadline = began + READY_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited: {self.log_path.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(self.base + "/healthz", timeout=5) as response:
                    if response.status == 200:
                        self.started_in = time.monotonic() - began
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{self.name} not ready in {READY_TIMEOUT}s: {self.log_path}")

    def kill(self) -> None:
        """SIGKILL: no cleanup, no goodbye to the sockets or the database."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


def worker_env(prefix: str) -> dict[str, str]:
    """The environment of a worker process sharing this test run's state."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTEST_", "DJANGO_"))
    }
    env.update(
        DATABASE_URL=database_url(),
        REDIS_URL=os.environ["REDIS_URL"],
        REDIS_PREFIX=prefix,
        SECRET_KEY=settings.SECRET_KEY,
        DJANGO_SETTINGS_MODULE="narrator.settings",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        DEBUG="False",
        DB_CONN_MAX_AGE="0",
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )
    return env

"""A real browser against the real ASGI app.

- ``live``: a Daphne process (HTTP and websockets) on 127.0.0.1, serving a fresh
  file SQLite database holding ``tests.factories.evening()``: one per test;
  ``live.checkstate()`` runs ``manage.py checkstate`` on that database.
- ``browser`` (tests/conftest.py): Debian's chromium driven by Playwright.
- ``phone`` / ``tablet``: new browser contexts, 360×740 touch or 1024×768.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.ports import listening_socket

PORTS = range(8100, 8200)  # this helper's loopback ports
ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 30  # seconds for Daphne to answer /healthz
PHONE = {
    "viewport": {"width": 360, "height": 740},
    "is_mobile": True,
    "has_touch": True,
    "device_scale_factor": 1,
}
TABLET = {"viewport": {"width": 1024, "height": 768}, "has_touch": True}


def _env(db: Path, data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DJANGO_SETTINGS_MODULE")}
    env.update(
        DJANGO_SETTINGS_MODULE="tests.browser.live_settings",
        DATABASE_URL=f"sqlite:///{db}",
        DATA_DIR=str(data_dir),
        SECRET_KEY="browser-tests-only-" + "x" * 40,
        DEBUG="False",
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )
    return env


@pytest.fixture(scope="session")
def migrated_db(tmp_path_factory) -> Path:
    """A migrated, empty SQLite file; each test serves a copy of it."""
    root = tmp_path_factory.mktemp("browser-db")
    db = root / "template.sqlite3"
    subprocess.run(
        [sys.executable, "-m", "tests.browser.live_server", "migrate"],
        cwd=ROOT,
        env=_env(db, root),
        check=True,
        timeout=120,
    )
    return db


@dataclass
class Live:
    """One running server: its address, the evening's ids, its database file."""

    url: str
    db: Path
    ids: dict = field(default_factory=dict)

    def __call__(self, path: str) -> str:
        return self.url + path

    def checkstate(self) -> subprocess.CompletedProcess:
        """``manage.py checkstate`` run on this server's database, as an
        operator runs it: status 0 and "consistent" when nothing is wrong,
        else status 1 and one line per inconsistency on stdout."""
        return subprocess.run(
            [sys.executable, "manage.py", "checkstate"],
            cwd=ROOT,
            env=_env(self.db, self.db.parent),
            capture_output=True,
            text=True,
            timeout=60,
        )


class _Server:
    """A Daphne process starting on a copy of the migrated database in ``root``."""

    def __init__(self, migrated_db: Path, root: Path):
        self.root = root
        self.db = root / "live.sqlite3"
        shutil.copy(migrated_db, self.db)
        sock = listening_socket(PORTS, start=os.getpid() % len(PORTS))
        self.port = sock.getsockname()[1]
        self.log = (root / "daphne.log").open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.browser.live_server", "serve", str(sock.fileno())],
            cwd=ROOT,
            env=_env(self.db, root),
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            pass_fds=(sock.fileno(),),
        )
        sock.close()  # Daphne holds its own copy

    def _died(self, what: str) -> RuntimeError:
        return RuntimeError(f"{what}: " + (self.root / "daphne.log").read_text())

    def ready(self) -> Live:
        """Wait until the server answers /healthz; RuntimeError if it dies or hangs."""
        line = self.proc.stdout.readline()
        if not line:
            raise self._died("the live server died")
        server = Live(url=f"http://127.0.0.1:{self.port}", db=self.db, ids=json.loads(line))
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                with urllib.request.urlopen(server("/healthz"), timeout=2) as response:
                    if response.status == 200:
                        return server
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise self._died("Daphne did not start") from None
                time.sleep(0.1)  # polling a starting process; nothing to wait on

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


@pytest.fixture(scope="session")
def _servers(migrated_db, tmp_path_factory):
    """Hands out fresh servers, starting the next one while a test runs."""
    spare: list[_Server] = []

    def take() -> _Server:
        server = spare.pop() if spare else _Server(migrated_db, tmp_path_factory.mktemp("live"))
        spare.append(_Server(migrated_db, tmp_path_factory.mktemp("live")))
        return server

    yield take
    for server in spare:
        server.stop()


@pytest.fixture
def live(_servers):
    """Daphne serving the real ``narrator.asgi:application`` on a fresh evening."""
    server = _servers()
    try:
        yield server.ready()
    finally:
        server.stop()


def _contexts(browser, options: dict):
    """A page factory over new contexts with ``options``; closes them afterwards."""
    contexts = []

    def make():
        context = browser.new_context(**options)
        context.set_default_timeout(10_000)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def phone(browser):
    """A phone-sized, touch context factory: ``phone()`` gives a new page."""
    yield from _contexts(browser, PHONE)


@pytest.fixture
def tablet(browser):
    """A tablet-sized touch context factory for the narrator's dashboard."""
    yield from _contexts(browser, TABLET)

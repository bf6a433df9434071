"""Everything the bench starts and stops: a throwaway database, a private Redis,
workers on loopback (Daphne, Uvicorn or Granian), and their CPU time and
memory from ``/proc``.

Nothing here touches the user's database or the shared Redis: SQLite lives in
a temporary directory, PostgreSQL databases are named ``narrator_bench_*`` and
dropped afterwards, Redis is our own ``redis-server`` without persistence.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
SECRET_KEY = "bench-only-secret-key-never-used-for-real-data-0123456789"


def wait_for_port(port: int, timeout: float = 30.0, proc: subprocess.Popen | None = None) -> None:
    """Return once 127.0.0.1:``port`` accepts TCP; RuntimeError after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process {proc.args!r} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


@dataclass
class ProcStat:
    """CPU seconds (user + system) and resident memory (kB) of one process."""

    cpu: float
    rss_kb: int


def proc_stat(pid: int) -> ProcStat:
    """Read ``/proc/PID/stat`` (utime + stime) and ``/proc/PID/statm`` (resident)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    # After the ")" of comm: state is field 3, utime 14 and stime 15 (1-based).
    cpu = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    with open(f"/proc/{pid}/statm") as fh:
        rss_pages = int(fh.read().split()[1])
    return ProcStat(cpu=cpu, rss_kb=rss_pages * PAGE_KB)


class Database:
    """A throwaway bench database: a SQLite file in ``workdir`` or a new
    PostgreSQL database ``narrator_bench_<pid>_<n>`` on the server of ``pg_url``."""

    counter = 0

    def __init__(self, kind: str, workdir: Path, pg_url: str) -> None:
        self.kind = kind
        Database.counter += 1
        if kind == "sqlite":
            self.url = f"sqlite:///{workdir / f'bench-{Database.counter}.sqlite3'}"
            self.name = None
        elif kind == "postgres":
            self.name = f"narrator_bench_{os.getpid()}_{Database.counter}"
            parts = urlsplit(pg_url)
            self.admin_url = urlunsplit(parts._replace(path="/postgres"))
            self.url = urlunsplit(parts._replace(path=f"/{self.name}"))
            self._admin(f'CREATE DATABASE "{self.name}"')
        else:
            raise ValueError(f"unknown database kind {kind!r}")

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql)

    def drop(self) -> None:
        if self.name:
            self._admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


def _most_files() -> None:
    """In the Redis child: open files up to the hard limit, since Redis caps its
    clients at that limit and several workers' pools connect at once."""
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class Redis:
    """Our own ``redis-server`` on loopback, no persistence, stopped by ``stop()``."""

    def __init__(self, port: int, workdir: Path) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.proc = subprocess.Popen(
            [
                exe,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--maxclients",
                "10000",
                "--dir",
                str(workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            preexec_fn=_most_files,
        )
        wait_for_port(port, proc=self.proc)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


SERVERS = ("daphne", "uvicorn", "granian")
# A storm of 1,500 reconnects overflows a default listen backlog (Twisted's 50,
# Uvicorn's 2048 is enough, Granian's 1024 is not); every server gets Daphne's.
BACKLOG = 4096
# Websocket limits: a client's message up to 64 KiB (the consumers refuse more
# than WS_MAX_MESSAGE_BYTES anyway), a keepalive ping after 20 s idle that closes
# the socket without a pong in 30 s (Daphne's defaults; Narrator's own heartbeat
# runs every 10 s), no compression (Daphne offers none; Uvicorn would deflate
# every frame). Daphne's limit is `make run`'s (``evening.daphne_options``:
# settings.WS_MAX_FRAME_BYTES, 1 MiB): Autobahn applies it to the messages it
# sends too, and a dashboard of 400 characters is over 64 KiB.
WS_MAX_MESSAGE = 65536
WS_PING_INTERVAL, WS_PING_TIMEOUT = 20, 30


def server_command(server: str, app: str, port: int) -> list[str]:
    """The command line of one worker: ``server`` serving ``app`` on 127.0.0.1:``port``.

    Granian has no websocket message limit, no server pings and no compression:
    the consumers' own limit and heartbeat stand in for the first two. Its
    ``asginl`` interface sends no lifespan scope, which Channels' router refuses.
    """
    if server == "daphne":
        from characters.management.commands.evening import daphne_options

        endpoint = f"tcp:port={port}:interface=127.0.0.1:backlog={BACKLOG}"
        return [
            *("-m", "daphne", "-e", endpoint, "-v", "0"),
            *("--ping-interval", str(WS_PING_INTERVAL), "--ping-timeout", str(WS_PING_TIMEOUT)),
            *daphne_options(),
            app,
        ]
    if server == "uvicorn":
        return [
            *("-m", "uvicorn", "--host", "127.0.0.1", "--port", str(port)),
            *("--backlog", str(BACKLOG), "--lifespan", "off"),
            *("--loop", "uvloop", "--http", "httptools", "--ws", "websockets-sansio"),
            *("--ws-max-size", str(WS_MAX_MESSAGE), "--ws-per-message-deflate", "false"),
            *("--ws-ping-interval", str(WS_PING_INTERVAL)),
            *("--ws-ping-timeout", str(WS_PING_TIMEOUT)),
            *("--log-level", "warning", "--no-access-log"),
            app,
        ]
    if server == "granian":
        return [
            *("-m", "granian", "--interface", "asginl", "--host", "127.0.0.1"),
            *("--port", str(port), "--backlog", str(BACKLOG), "--workers", "1"),
            *("--log-level", "warning", "--no-access-log"),
            app,
        ]
    raise ValueError(f"unknown server {server!r}: one of {', '.join(SERVERS)}")


def children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (Granian serves from a child of its supervisor)."""
    parents: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # the process ended while we looked
            parents.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        kids = parents.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def tree_stat(pid: int) -> ProcStat:
    """:func:`proc_stat` summed over ``pid`` and its descendants."""
    stats = [proc_stat(pid)]
    for child in children(pid):
        with contextlib.suppress(OSError):  # it ended while we looked
            stats.append(proc_stat(child))
    return ProcStat(cpu=sum(s.cpu for s in stats), rss_kb=sum(s.rss_kb for s in stats))


@dataclass
class Workers:
    """``count`` worker processes serving ``app`` on consecutive loopback ports,
    each under ``server`` (one of :data:`SERVERS`)."""

    app: str
    ports: list[int]
    env: dict[str, str]
    logdir: Path
    profile: Path | None = None  # run under cProfile; stop() writes PROFILE/<app>-PORT.pstats
    server: str = "daphne"
    procs: list[subprocess.Popen] = field(default_factory=list)

    def start(self) -> None:
        for port in self.ports:
            command = [sys.executable, *server_command(self.server, self.app, port)]
            if self.profile:
                out = self.profile / f"{self.app.split('.')[0]}-{port}.pstats"
                command[1:2] = ["-m", "cProfile", "-o", str(out), "-m"]
            with open(self._log(port), "w") as log:
                self.procs.append(
                    subprocess.Popen(
                        command,
                        env=self.env,
                        cwd=settings.BASE_DIR,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                    )
                )
        for port, proc in zip(self.ports, self.procs, strict=True):
            wait_for_port(port, proc=proc)

    def _log(self, port: int) -> Path:
        return self.logdir / f"{self.server}-{port}.log"

    def stat(self) -> ProcStat:
        """CPU seconds and resident kB summed over the workers (and their children)."""
        stats = [tree_stat(p.pid) for p in self.procs]
        return ProcStat(cpu=sum(s.cpu for s in stats), rss_kb=sum(s.rss_kb for s in stats))

    def cpu_each(self) -> list[float]:
        """CPU seconds of each worker (with its children), in port order."""
        return [tree_stat(p.pid).cpu for p in self.procs]

    def alive(self) -> bool:
        return all(p.poll() is None for p in self.procs)

    def stop(self) -> None:
        leftovers = [c for p in self.procs for c in children(p.pid)]
        for proc in self.procs:
            # SIGINT lets the server stop cleanly (and cProfile write its file).
            proc.send_signal(signal.SIGINT if self.profile else signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for pid in leftovers:  # a Granian worker its supervisor did not take down
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def log_tail(self, lines: int = 20) -> str:
        out = []
        for port in self.ports:
            text = self._log(port).read_text(errors="replace")
            out += [f"[{port}] {line}" for line in text.splitlines()[-lines:]]
        return "\n".join(out)


def worker_env(database_url: str, redis_url: str | None, workdir: Path) -> dict[str, str]:
    """The environment of a bench worker: deployment settings on bench resources."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "DATA_DIR")
    }
    env.update(
        DJANGO_SETTINGS_MODULE="narrator.settings",
        DATABASE_URL=database_url,
        SECRET_KEY=SECRET_KEY,
        DATA_DIR=str(workdir),
        DB_CONN_MAX_AGE=env.get("DB_CONN_MAX_AGE", "60"),
        LOG_LEVEL="WARNING",
        ALLOWED_HOSTS="*",
        PYTHONPATH=str(settings.BASE_DIR),
    )
    if redis_url:
        env["REDIS_URL"] = redis_url
    return env


def _run(env: dict[str, str], args: list[str], what: str) -> str:
    """Run ``python ARGS`` in the project with ``env``; its stdout.
    RuntimeError (with the end of stderr) if it fails."""
    done = subprocess.run(
        [sys.executable, *args],
        env=env,
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def run_fixtures(env: dict[str, str], *args: str) -> str:
    """Run ``bench.fixtures`` against the bench database; its stdout."""
    return _run(env, ["-m", "bench.fixtures", *args], f"bench fixtures {args[0]}")


def collect_static(env: dict[str, str], workdir: Path) -> None:
    """Collect the static files into the bench's ``DATA_DIR`` (``workdir``),
    as a deployment does (the Dockerfile runs ``collectstatic``): the
    workers' pages need the manifest. Once per ``workdir`` (about 3 s)."""
    if (workdir / "static" / "staticfiles.json").exists():
        return
    static = {**env, "STATIC_ROOT": str(workdir / "static")}
    _run(static, ["manage.py", "collectstatic", "--noinput", "-v0"], "collectstatic")


def make_workdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="narrator-bench-"))

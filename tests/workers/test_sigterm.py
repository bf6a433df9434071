"""A worker told to stop (SIGTERM, as Docker and systemd do) with phones and a
dashboard connected over Redis: it closes their sockets (1012, "service
restart"; 1000 under Daphne), on which the phone's script reconnects, and exits within
seconds, under Daphne (``make run``, the tests' workers) and under Uvicorn
(``deploy/serve``, docker-compose's workers), whether Redis answers or hangs
(stopped with SIGSTOP: each of its commands then waits ``REDIS_SOCKET_TIMEOUT``)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed

from bench.servers import Redis
from tests.ports import listening_socket
from tests.workers.conftest import session_cookie
from tests.workers.phone import socket_to
from tests.workers.procs import ROOT, WORKER_PORTS, Worker, worker_env

pytestmark = [
    pytest.mark.workers,
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.asyncio,
]

#: Seconds a worker may take from SIGTERM to its exit, its sockets open.
EXIT_WITHIN = 10.0
#: The close code its sockets get: 1012 "service restart"; Daphne's Autobahn
#: sends a server's close only with 1000 or 3000-4999, so 1000 there. The
#: phone's script reconnects on both (1006, the connection dropped, is the failure).
CLOSED_WITH = {"daphne": 1000, "uvicorn": 1012}


class ServedWorker(Worker):
    """A worker started by ``deploy/serve`` with ``ASGI_SERVER=server``."""

    def __init__(self, server: str, env: dict[str, str], log_dir: Path):
        super().__init__(server, env, log_dir)
        self.server = server

    def spawn(self, port: int | None = None) -> Worker:
        # deploy/serve binds the port itself: take a free one and let it go.
        sock = listening_socket(WORKER_PORTS)
        self.port = sock.getsockname()[1]
        sock.close()
        env = {
            **self.env,
            "ASGI_SERVER": self.server,
            "PORT": str(self.port),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{self.env.get('PATH', '')}",
        }
        self._began = time.monotonic()
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [str(ROOT / "deploy" / "serve")],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        return self


async def _open(worker: Worker, path: str, cookie: str):
    """A socket on ``worker`` past its first frame (the view)."""
    ws = await socket_to(worker, path, cookie)
    await asyncio.wait_for(ws.recv(), 10)
    return ws


async def _close_code(ws) -> int | None:
    """The code the server closed ``ws`` with (None: no close frame)."""
    try:
        async for _ in ws:
            pass
    except ConnectionClosed:
        pass
    return ws.close_code


@pytest.fixture
def redis_url(request, tmp_path):
    """The worker's Redis: the tests' own (``REDIS_URL``), or for "hung" a
    private redis-server that the test stops (SIGSTOP) before the SIGTERM;
    yields ``(url, server or None)``."""
    if request.param == "answering":
        yield os.environ["REDIS_URL"], None
        return
    sock = listening_socket(range(6400, 6500))
    port = sock.getsockname()[1]
    sock.close()
    server = Redis(port, tmp_path)
    try:
        yield server.url, server
    finally:
        server.proc.send_signal(signal.SIGCONT)
        server.stop()


@pytest.mark.parametrize("redis_url", ["answering", "hung"], indirect=True)
@pytest.mark.parametrize("server", ["daphne", "uvicorn"])
async def test_a_worker_closes_its_sockets_and_exits_soon_after_sigterm(
    game, server, redis_url, tmp_path
):
    url, redis = redis_url
    env = {**worker_env(f"test-sigterm-{os.getpid()}"), "REDIS_URL": url}
    worker = ServedWorker(server, env, tmp_path)
    worker.start()
    sockets = []
    try:
        for character, player in (
            (game["helen"], game["helen_player"]),
            (game["grady"], game["grady_player"]),
        ):
            sockets.append(
                await _open(worker, f"/ws/play/{character.pk}/", await session_cookie(player))
            )
        dashboard = f"/ws/narrate/{game['session'].pk}/"
        sockets.append(await _open(worker, dashboard, await session_cookie(game["narrator"])))
        codes = [asyncio.create_task(_close_code(ws)) for ws in sockets]
        await asyncio.sleep(1)  # the sockets idle: their receives wait on Redis

        if redis is not None:
            redis.proc.send_signal(signal.SIGSTOP)
        began = time.monotonic()
        worker.process.send_signal(signal.SIGTERM)
        exited = await asyncio.to_thread(_wait, worker.process, EXIT_WITHIN)
        print(f"{server}: exited ({exited}) {time.monotonic() - began:.2f} s after SIGTERM")
        assert exited is not None, worker.log_path.read_text()[-3000:]
        assert await asyncio.gather(*codes) == [CLOSED_WITH[server]] * len(sockets)
    finally:
        for ws in sockets:
            await ws.close()
        worker.stop()


def _wait(process: subprocess.Popen, timeout: float) -> int | None:
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        return None

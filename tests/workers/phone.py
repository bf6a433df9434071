"""A phone over real TCP websockets, behaving like ``static/narrator/app.js``.

It gives every action an id and keeps it until the server acknowledges it
(``{"type": "ack"}``) or refuses it (``{"type": "error"}``); when its socket
drops it reconnects (to whichever worker answers) and resends every action not
yet acknowledged, as the browser script does on ``htmx:wsOpen``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import Sequence

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from tests.workers.procs import Worker


def socket_to(worker: Worker, path: str, cookie: str):
    """``websockets.connect`` to ``path`` on ``worker`` as the browser would
    (same-site Origin, the Django session cookie), no keepalive pings; await
    it or use it as an async context manager."""
    return connect(
        worker.ws_base + path,
        origin=worker.base,
        additional_headers={"Cookie": f"sessionid={cookie}"},
        open_timeout=10,
        ping_interval=None,
        max_size=2**22,
    )


class Phone:
    """One websocket client of ``path`` (e.g. ``/ws/play/3/``) logged in by a
    Django session cookie, able to move between ``workers``."""

    def __init__(self, name: str, path: str, cookie: str, workers: Sequence[Worker]):
        self.name = name
        self.path = path
        self.cookie = cookie
        self.workers = list(workers)
        self.pending: dict[str, str] = {}  # id -> JSON body, until acked
        self.sent: dict[str, int] = {}  # id -> times sent (resends included)
        self.replies: dict[str, dict] = {}
        self.views: list[str] = []  # HTML frames, oldest first
        self.worker: Worker | None = None
        self.reconnects = 0
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task | None = None
        self._changed = asyncio.Event()

    async def connect(self, worker: Worker | None = None, timeout: float = 30.0) -> Phone:
        """Open the socket (on ``worker``, else the current one or any that
        answers), wait for the full view, then resend unacknowledged actions."""
        candidates = [worker] if worker else [w for w in [self.worker, *self.workers] if w]
        deadline = time.monotonic() + timeout
        attempt = 0
        while True:
            target = candidates[attempt % len(candidates)]
            attempt += 1
            try:
                ws = await connect(
                    target.ws_base + self.path,
                    origin=target.base,
                    additional_headers={"Cookie": f"sessionid={self.cookie}"},
                    open_timeout=5,
                    ping_interval=None,
                    max_size=2**22,
                )
                first = await asyncio.wait_for(ws.recv(), 10)
                break
            except (OSError, InvalidHandshake, ConnectionClosed, TimeoutError):
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.1)
        assert isinstance(first, str) and not first.startswith("{"), first
        self.views.append(first)
        self.worker, self._ws = target, ws
        self._reader = asyncio.create_task(self._read(ws))
        for msg_id, body in list(self.pending.items()):
            await self._send(msg_id, body)
        return self

    async def _send(self, msg_id: str, body: str) -> None:
        ws = self._ws
        if ws is None:
            return  # sent on the next connect
        self.sent[msg_id] = self.sent.get(msg_id, 0) + 1
        with contextlib.suppress(ConnectionClosed):  # resent after the reconnect
            await ws.send(body)

    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for frame in ws:
                if frame.startswith("{"):
                    data = json.loads(frame)
                    if data.get("type") in ("ack", "error") and data.get("id"):
                        self.pending.pop(data["id"], None)
                        self.replies[data["id"]] = data
                else:
                    self.views.append(frame)
                self._changed.set()
        except ConnectionClosed:
            pass
        finally:
            if self._ws is ws:
                self._ws = None
            self._changed.set()

    @property
    def connected(self) -> bool:
        return self._ws is not None

    async def act(self, timeout: float = 60.0, **message) -> dict:
        """Send an action and return its ack or error, reconnecting (and
        resending) as often as the socket drops meanwhile."""
        msg_id = uuid.uuid4().hex
        body = json.dumps({"id": msg_id, **message})
        self.pending[msg_id] = body
        if self._ws is not None:
            await self._send(msg_id, body)
        deadline = time.monotonic() + timeout
        while msg_id not in self.replies:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name}: no reply to {message} in {timeout}s")
            if self._ws is None:
                self.reconnects += 1
                await self.connect(timeout=deadline - time.monotonic())
                continue
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), 0.5)
        return self.replies[msg_id]

    async def wait_for_view(self, text: str, since: int = 0, timeout: float = 20.0) -> str:
        """The first HTML frame from index ``since`` on that contains ``text``."""
        deadline = time.monotonic() + timeout
        while True:
            for frame in self.views[since:]:
                if text in frame:
                    return frame
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name}: no frame with {text!r} in {timeout}s")
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), 0.2)

    async def close(self) -> None:
        ws, self._ws = self._ws, None
        if ws is not None:
            await ws.close()
        if self._reader is not None:
            self._reader.cancel()

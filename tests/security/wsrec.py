"""Sockets that record every frame they receive (who, when, what) for the
frame audit (``challenges.audit``), plus a snapshot of what the database holds."""

from __future__ import annotations

import asyncio
import json
import time
import uuid

from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from challenges.audit import NARRATOR, Frame
from challenges.models import Challenge, ClientAction, Event, Test, TraitLoss
from characters.models import GameSession
from narrator.asgi import application
from tests.challenges.wsutil import _session_cookie

#: Seconds a socket may take to open, answer or close before the test fails. Only a
#: bound on a hang: the machine may be loaded, and these tests assert what arrives
#: and in which order, never how fast.
WAIT = 60.0


class RecordingCommunicator(WebsocketCommunicator):
    """A WebsocketCommunicator that appends every text frame it receives to
    ``log`` as a ``Frame`` of ``viewer`` (a character id or ``NARRATOR``)."""

    def __init__(self, *args, viewer, log: list[Frame], **kwargs):
        super().__init__(*args, **kwargs)
        self.viewer = viewer
        self.log = log

    async def receive_output(self, timeout=1):
        output = await super().receive_output(timeout)
        if output.get("type") == "websocket.send" and output.get("text") is not None:
            self.log.append(Frame(self.viewer, time.time(), output["text"]))
        return output


async def open_socket(
    path: str, user=None, *, viewer=NARRATOR, log: list[Frame] | None = None, origin=None
) -> tuple[RecordingCommunicator, str]:
    """Connect like ``tests.challenges.wsutil.connect`` but recording; returns the
    socket and its first frame ("closed:CODE" if closed, "refused" if the
    handshake was refused)."""
    headers = [(b"host", b"testserver")]
    headers.append((b"origin", origin or b"http://testserver"))
    if user is not None:
        headers.append((b"cookie", f"sessionid={await _session_cookie(user)}".encode()))
    communicator = RecordingCommunicator(
        application, path, headers=headers, viewer=viewer, log=[] if log is None else log
    )
    connected, _ = await communicator.connect(timeout=WAIT)
    if not connected:
        return communicator, "refused"
    first = await communicator.receive_output(timeout=WAIT)
    if first["type"] == "websocket.close":
        return communicator, f"closed:{first.get('code')}"
    return communicator, first.get("text", "")


@database_sync_to_async
def snapshot() -> dict:
    """Everything a move could change: row counts, versions, stages, time outs."""
    return {
        "challenges": list(Challenge.objects.order_by("pk").values_list("pk", "version", "stage")),
        "tests": Test.objects.count(),
        "events": Event.objects.count(),
        "losses": TraitLoss.objects.count(),
        "client_actions": ClientAction.objects.count(),
        "time_out": list(GameSession.objects.order_by("pk").values_list("pk", "time_out")),
    }


class Seat:
    """A connected socket whose frames are read the moment they arrive (so each
    recorded ``received_at`` is true), with replies matched to actions by id."""

    def __init__(self, communicator: WebsocketCommunicator, viewer, log: list[Frame]):
        self.communicator = communicator
        self.viewer = viewer
        self.log = log
        self.closed: int | None = None
        self.pongs = 0
        self.errors: list[dict] = []
        self._replies: dict[str, asyncio.Future] = {}
        self._pong = asyncio.Event()
        self._task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        while True:
            output = await self.communicator.output_queue.get()
            if output["type"] == "websocket.close":
                self.closed = output.get("code", 1000)
                for future in self._replies.values():
                    future.cancel()
                self._pong.set()
                return
            text = output.get("text")
            if text is None:
                continue
            self.log.append(Frame(self.viewer, time.time(), text))
            if not text.startswith("{"):
                continue
            data = json.loads(text)
            if data.get("type") == "pong":
                self.pongs += 1
                self._pong.set()
            if data.get("type") == "error":
                self.errors.append(data)
            future = self._replies.pop(data.get("id"), None) if data.get("id") else None
            if future is not None and not future.done():
                future.set_result(data)

    async def act(self, action: str, **fields) -> dict:
        """Send an action with a fresh id; its ack or error (``WAIT`` s at most)."""
        msg_id = uuid.uuid4().hex
        future = asyncio.get_running_loop().create_future()
        self._replies[msg_id] = future
        await self.send(json.dumps({"id": msg_id, "action": action, **fields}))
        return await asyncio.wait_for(future, WAIT)

    async def send(self, text: str | None = None, data: bytes | None = None) -> None:
        # send_input, not send_to: an empty frame is a frame too.
        message = {"type": "websocket.receive"}
        message |= {"bytes": data} if data is not None else {"text": text}
        await self.communicator.send_input(message)

    async def ping(self) -> None:
        """A heartbeat and its pong: every frame sent before it has been handled."""
        before = self.pongs
        await self.send('{"action": "ping"}')
        deadline = time.monotonic() + WAIT
        while self.pongs == before and self.closed is None:
            self._pong.clear()
            if self.pongs != before or self.closed is not None:
                break
            try:
                await asyncio.wait_for(self._pong.wait(), 0.1)
            except TimeoutError:
                if (error := self.crash()) is not None:
                    raise AssertionError(f"the consumer crashed: {error!r}") from error
                if time.monotonic() > deadline:
                    raise

    def crash(self) -> BaseException | None:
        """The consumer's unhandled exception, if it died of one."""
        future = self.communicator.future
        if future.done() and not future.cancelled():
            return future.exception()
        return None

    async def leave(self) -> None:
        """Close the socket and wait for the consumer to finish its disconnect
        (``disconnect()``'s 1 s default would cancel it mid-way on a slow machine,
        leaving its database work to finish after the test)."""
        self._task.cancel()
        await self.communicator.disconnect(timeout=WAIT)


async def seat(path: str, user, *, viewer, log: list[Frame]) -> Seat:
    """Open ``path`` as ``user`` and start reading; the first frame (the whole
    view) is recorded like every other."""
    headers = [(b"host", b"testserver"), (b"origin", b"http://testserver")]
    if user is not None:
        headers.append((b"cookie", f"sessionid={await _session_cookie(user)}".encode()))
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await communicator.connect(timeout=WAIT)
    assert connected, path
    return Seat(communicator, viewer, log)


async def settle(log: list[Frame], quiet: float = 0.05) -> None:
    """Wait until no frame has arrived for ``quiet`` seconds."""
    while True:
        last = log[-1].received_at if log else 0.0
        await asyncio.sleep(quiet)
        if (log[-1].received_at if log else 0.0) == last:
            return

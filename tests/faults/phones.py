"""A simulated phone for fault tests: one socket at a time through the real
router, the last view and stamp it received, and its unacknowledged actions,
resent with the same ids after a reconnect, as ``static/narrator/app.js`` does.
"""

from __future__ import annotations

import asyncio
import json

from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from challenges import heartbeat, views
from challenges.consumers import feed
from narrator.asgi import application
from tests.screen import Screen

_cookies: dict[int, str] = {}


@database_sync_to_async
def _session_cookie(user) -> str:
    if user.pk not in _cookies:
        client = Client()
        client.force_login(user)
        _cookies[user.pk] = client.cookies["sessionid"].value
    return _cookies[user.pk]


def split_stamp(frame: str) -> tuple[str | None, str]:
    """``("STAMP", html)`` of a view frame headed by ``<!--v:STAMP-->``."""
    if frame.startswith("<!--v:"):
        end = frame.index("-->")
        return frame[6:end], frame[end + 3 :]
    return None, frame


class Phone:
    """One player's (or narrator's) screen. ``path`` is the socket's URL path."""

    def __init__(self, path: str, user) -> None:
        self.path = path
        self.user = user
        self.socket: WebsocketCommunicator | None = None
        self.stamp: str | None = None
        self.screen = Screen()  # what htmx shows after every view frame so far
        self.pending: dict[str, dict] = {}  # id -> action not yet acknowledged
        self.replies: dict[str, dict] = {}  # id -> last ack or error
        self.frames = 0

    async def connect(self) -> str:
        """Open a socket; returns its first frame (the full view, or ``closed:CODE``)."""
        cookie = await _session_cookie(self.user)
        headers = [
            (b"origin", b"http://testserver"),
            (b"host", b"testserver"),
            (b"cookie", f"sessionid={cookie}".encode()),
        ]
        self.screen = Screen()  # the first frame is the whole view
        self.socket = WebsocketCommunicator(application, self.path, headers=headers)
        connected, _ = await self.socket.connect(timeout=5)
        assert connected
        first = await self.socket.receive_output(timeout=5)
        if first["type"] == "websocket.close":
            return f"closed:{first.get('code')}"
        self._take(first["text"])
        return first["text"]

    async def drop(self) -> None:
        """The network goes: the socket closes with 1006 (abnormal closure)."""
        await self.socket.disconnect(code=1006)
        self.socket = None

    async def reconnect(self) -> str:
        """Reconnect, take the full view, resend every unacknowledged action (same ids)."""
        first = await self.connect()
        for msg_id, message in list(self.pending.items()):
            await self.socket.send_to(text_data=json.dumps({"id": msg_id, **message}))
        return first

    def _take(self, frame: str) -> dict | None:
        self.frames += 1
        if frame.startswith("{"):
            reply = json.loads(frame)
            if reply.get("type") in ("ack", "error"):
                self.pending.pop(reply.get("id"), None)
                self.replies[reply.get("id")] = reply
            return reply
        stamp, html = split_stamp(frame)
        if stamp is not None:
            self.stamp = stamp
        self.screen.apply(html)
        return None

    @property
    def view(self) -> str:
        """What the screen shows now (see ``tests.screen``)."""
        return str(self.screen)

    def take_waiting(self) -> None:
        """Take every frame already delivered, without waiting."""
        while self.socket is not None and not self.socket.output_queue.empty():
            message = self.socket.output_queue.get_nowait()
            if message["type"] == "websocket.send":
                self._take(message["text"])

    async def settle(self, quiet: float = 0.2) -> None:
        """Take frames until ``quiet`` seconds pass without one and no
        dashboard feed of this process still holds rows to send (a tick and
        its flush can outlast ``quiet`` on a loaded machine)."""
        while True:
            while not await self.socket.receive_nothing(timeout=quiet, interval=0.01):
                self._take(await self.socket.receive_from())
            busy = [f for f in list(feed._feeds.values()) if f.busy()]
            if not busy:
                return
            for waiting in busy:
                await waiting.flushed()

    async def send(self, msg_id: str, **message) -> None:
        """Send an action and keep it as unacknowledged until its ack or error."""
        self.pending[msg_id] = message
        if self.socket is not None:
            await self.socket.send_to(text_data=json.dumps({"id": msg_id, **message}))

    async def reply(self, msg_id: str, timeout: float = 10) -> dict:
        """Wait for the ack or error of ``msg_id`` (taking every frame before it)."""
        async with asyncio.timeout(timeout):
            while msg_id not in self.replies:
                self._take(await self.socket.receive_from(timeout=timeout))
        return self.replies.pop(msg_id)

    async def act(self, msg_id: str, **message) -> dict:
        await self.send(msg_id, **message)
        return await self.reply(msg_id)

    async def heartbeat(self) -> dict | None:
        """Ping with the last stamp, as app.js does every 10 s; returns the pong,
        or None when the server answered with a full view."""
        self.take_waiting()  # frames already delivered are not the answer
        await self.socket.send_to(text_data=json.dumps({"action": "ping", "v": self.stamp}))
        return self._take(await self.socket.receive_from(timeout=10))

    async def close(self) -> None:
        if self.socket is not None:
            await self.socket.disconnect()
            self.socket = None


@database_sync_to_async
def current_play_stamp(character, session) -> str:
    """The stamp a fresh render of ``character``'s phone would carry."""
    return heartbeat.digest(heartbeat.play_parts(character.pk, session.pk))


@database_sync_to_async
def current_dashboard_stamp(session) -> str:
    return heartbeat.digest(heartbeat.dashboard_parts(session.pk, views.DASHBOARD_LIMIT))

"""The baseline: a bare Channels consumer served like Narrator, with no database.

A phone (``/ws/bare/play/<pair>/``) joins its pair's group and the session's
group and gets a one-line view; each throw is acknowledged and makes exactly
one ``group_send`` to the pair, which each phone of the pair receives as a
small frame. A dashboard (``/ws/bare/narrate/``) calling Time out makes one
``group_send`` to every phone. Frames carry the same markers as Narrator's
(``id="live"``, ``class="time-out active"``), so the same client measures both.

A fair baseline (issue 14): like Narrator's ``BaseConsumer.dispatch``, the bare
consumers skip Channels' per-message ``aclose_old_connections()`` trip to the
database thread, and they answer the client's heartbeat (``{"action": "ping"}``)
with ``{"type": "pong"}`` as Narrator does when a screen is current.
"""

from __future__ import annotations

import json
import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "narrator.settings")
django.setup()

from channels.consumer import get_handler_name  # noqa: E402
from channels.generic.websocket import AsyncWebsocketConsumer  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import path  # noqa: E402

ALL = "bare.all"
PONG = json.dumps({"type": "pong"})


class BareConsumer(AsyncWebsocketConsumer):
    """What both bare consumers share: no database hop per message, and ``pong``."""

    async def dispatch(self, message: dict) -> None:
        """Channels' dispatch without ``aclose_old_connections()`` (no database
        here; Narrator's ``BaseConsumer.dispatch`` skips it too). Raises
        ValueError for a message type with no handler, as Channels does."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def heartbeat(self, text_data: str) -> dict | None:
        """The parsed action of ``text_data``, or None once a ping got its pong."""
        message = json.loads(text_data)
        if message.get("action") == "ping":
            await self.send(text_data=PONG)
            return None
        return message


class BarePhone(BareConsumer):
    """One phone of a pair: one group send per throw, nothing else."""

    async def connect(self) -> None:
        self.group = f"bare.pair.{self.scope['url_route']['kwargs']['pair']}"
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.channel_layer.group_add(ALL, self.channel_name)
        await self.accept()
        await self.send(text_data='<div id="live" hx-swap-oob="true">bare</div>')

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(self.group, self.channel_name)
        await self.channel_layer.group_discard(ALL, self.channel_name)

    async def receive(self, text_data=None, bytes_data=None) -> None:
        if (message := await self.heartbeat(text_data)) is None:
            return
        await self.channel_layer.group_send(
            self.group, {"type": "bare.thrown", "throw_id": message["id"]}
        )
        await self.send(text_data=json.dumps({"type": "ack", "id": message["id"]}))

    async def bare_thrown(self, event: dict) -> None:
        await self.send(text_data=f'<p class="thrown" data-throw="{event["throw_id"]}"></p>')

    async def bare_time_out(self, event: dict) -> None:
        await self.send(text_data='<div id="time-out" class="time-out active"></div>')


class BareDashboard(BareConsumer):
    """A narrator's dashboard: Time out is one group send to every phone."""

    async def connect(self) -> None:
        await self.accept()
        await self.send(text_data='<div id="live">bare</div>')

    async def receive(self, text_data=None, bytes_data=None) -> None:
        if (message := await self.heartbeat(text_data)) is None:
            return
        await self.channel_layer.group_send(ALL, {"type": "bare.time_out"})
        await self.send(text_data=json.dumps({"type": "ack", "id": message["id"]}))


application = ProtocolTypeRouter(
    {
        "websocket": URLRouter(
            [
                path("ws/bare/play/<int:pair>/", BarePhone.as_asgi()),
                path("ws/bare/narrate/", BareDashboard.as_asgi()),
            ]
        )
    }
)

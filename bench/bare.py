"""The baseline: a bare Channels consumer served like Narrator, with no database.

A phone (``/ws/bare/play/<pair>/``) joins its pair's group and the session's
group and gets a one-line view; each throw is acknowledged and makes exactly
one ``group_send`` to the pair, which each phone of the pair receives as a
small frame. A dashboard (``/ws/bare/narrate/``) calling Time out makes one
``group_send`` to every phone. Frames carry the same markers as Narrator's
(``id="live"``, ``class="time-out active"``), so the same client measures both.
"""

from __future__ import annotations

import json
import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "narrator.settings")
django.setup()

from channels.generic.websocket import AsyncWebsocketConsumer  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import path  # noqa: E402

ALL = "bare.all"


class BarePhone(AsyncWebsocketConsumer):
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
        message = json.loads(text_data)
        await self.channel_layer.group_send(
            self.group, {"type": "bare.thrown", "throw_id": message["id"]}
        )
        await self.send(text_data=json.dumps({"type": "ack", "id": message["id"]}))

    async def bare_thrown(self, event: dict) -> None:
        await self.send(text_data=f'<p class="thrown" data-throw="{event["throw_id"]}"></p>')

    async def bare_time_out(self, event: dict) -> None:
        await self.send(text_data='<div id="time-out" class="time-out active"></div>')


class BareDashboard(AsyncWebsocketConsumer):
    """A narrator's dashboard: Time out is one group send to every phone."""

    async def connect(self) -> None:
        await self.accept()
        await self.send(text_data='<div id="live">bare</div>')

    async def receive(self, text_data=None, bytes_data=None) -> None:
        message = json.loads(text_data)
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

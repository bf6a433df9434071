"""Drive websocket consumers through the real ASGI router, as a browser would."""

from __future__ import annotations

import json
import uuid

from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from narrator.asgi import application


@database_sync_to_async
def _session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


async def connect(path: str, user=None) -> tuple[WebsocketCommunicator, str]:
    """Open a socket at ``path`` logged in as ``user``; returns it and its first frame."""
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
    if user is not None:
        headers.append((b"cookie", f"sessionid={await _session_cookie(user)}".encode()))
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await communicator.connect(timeout=5)
    assert connected
    first = await communicator.receive_output(timeout=5)
    if first["type"] == "websocket.close":
        return communicator, f"closed:{first.get('code')}"
    return communicator, first.get("text", "")


async def drain(communicator: WebsocketCommunicator, quiet: float = 0.3) -> list[str]:
    """Every frame that arrives until ``quiet`` seconds pass with none."""
    frames = []
    # receive_from() with a timeout would cancel the application; this does not.
    while not await communicator.receive_nothing(timeout=quiet, interval=0.01):
        frames.append(await communicator.receive_from())
    return frames


async def act(communicator: WebsocketCommunicator, msg_id: str | None = None, **message):
    """Send an action and wait for its ack or error; returns (reply, frames seen)."""
    msg_id = msg_id or uuid.uuid4().hex
    await communicator.send_to(text_data=json.dumps({"id": msg_id, **message}))
    frames = []
    while True:
        frame = await communicator.receive_from(timeout=5)
        if frame.startswith("{"):
            reply = json.loads(frame)
            if reply.get("id") == msg_id:
                frames += await drain(communicator, 0.2)
                return reply, frames
        frames.append(frame)


async def helen_challenges_grady(
    game,
) -> tuple[WebsocketCommunicator, WebsocketCommunicator, list[str], list[str]]:
    """Helen's and Grady's phones of ``tests.factories.evening()`` connected, and
    Helen challenging Grady (Physical, bid Ferocious). Returns both sockets and
    every frame each phone got so far (first view included, Helen's ack not)."""
    helen, helen_first = await connect(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    grady, grady_first = await connect(f"/ws/play/{game['grady'].pk}/", game["grady_player"])
    reply, seen = await act(
        helen, action="challenge.open", defender=str(game["grady"].pk), bid="physical:Ferocious"
    )
    assert reply["status"] == "ok", reply
    helen_frames = [helen_first, *seen, *await drain(helen)]
    return helen, grady, helen_frames, [grady_first, *await drain(grady)]

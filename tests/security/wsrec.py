"""Sockets that record every frame they receive (who, when, what) for the
frame audit (``challenges.audit``), plus a snapshot of what the database holds."""

from __future__ import annotations

import time

from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from challenges.audit import NARRATOR, Frame
from challenges.models import Challenge, ClientAction, Event, Test, TraitLoss
from characters.models import GameSession
from narrator.asgi import application
from tests.challenges.wsutil import _session_cookie


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
    connected, _ = await communicator.connect(timeout=5)
    if not connected:
        return communicator, "refused"
    first = await communicator.receive_output(timeout=5)
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

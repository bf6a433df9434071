"""Drive websocket consumers through the real ASGI router, as a browser would."""

from __future__ import annotations

import asyncio
import json
import uuid

from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client
from django.urls import reverse
from sesame.utils import get_token

from challenges.models import Challenge
from narrator.asgi import application

#: Seconds a socket may take to open or answer before the test fails: a bound on
#: a hang only (a loaded machine is slow; the tests assert what arrives, not when).
WAIT = 60.0


@database_sync_to_async
def _session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


@database_sync_to_async
def join_cookie(user) -> str:
    """The session cookie of a browser that came in through ``user``'s join link."""
    client = Client()
    response = client.get(reverse("join"), {"token": get_token(user, scope="join")})
    assert response.status_code == 302
    return client.cookies["sessionid"].value


async def connect(path: str, user=None) -> tuple[WebsocketCommunicator, str]:
    """Open a socket at ``path`` logged in as ``user``; returns it and its first frame."""
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
    if user is not None:
        headers.append((b"cookie", f"sessionid={await _session_cookie(user)}".encode()))
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await communicator.connect(timeout=WAIT)
    assert connected
    first = await communicator.receive_output(timeout=WAIT)
    if first["type"] == "websocket.close":
        return communicator, f"closed:{first.get('code')}"
    return communicator, first.get("text", "")


async def drain(communicator: WebsocketCommunicator, quiet: float = 0.3) -> list[str]:
    """Every frame that arrives until ``quiet`` seconds pass with none. Good for
    what must NOT arrive; to wait for a frame that must, use ``expect``."""
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
        frame = await communicator.receive_from(timeout=WAIT)
        if frame.startswith("{"):
            reply = json.loads(frame)
            if reply.get("id") == msg_id:
                frames += await drain(communicator, 0.2)
                return reply, frames
        frames.append(frame)


async def expect(
    communicator: WebsocketCommunicator, *wanted, frames: list[str] = (), timeout: float = WAIT
) -> list[str]:
    """Receive frames until each of ``wanted`` is satisfied by one of them: a
    string (in the frame), a tuple of strings (all in the same frame) or a
    predicate on the frame. ``frames`` (already received) count first. Returns
    ``frames`` plus every frame received. AssertionError naming what is missing
    after ``timeout`` seconds (only a bound on a hang: a broadcast may come late
    on a loaded machine, where a quiet period like ``drain``'s would miss it)."""

    def satisfied(check, frame: str) -> bool:
        if callable(check):
            return check(frame)
        return all(text in frame for text in ((check,) if isinstance(check, str) else check))

    seen = list(frames)
    missing = [c for c in wanted if not any(satisfied(c, f) for f in seen)]
    try:
        async with asyncio.timeout(timeout):
            while missing:
                # receive_from() with a timeout would cancel the application; this does not.
                output = await communicator.output_queue.get()
                assert output["type"] == "websocket.send", output
                frame = output.get("text") or ""
                seen.append(frame)
                missing = [c for c in missing if not satisfied(c, frame)]
    except TimeoutError:
        raise AssertionError(f"never received {missing!r}; got {seen!r}") from None
    return seen


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


def last_stamp(frames: list[str]) -> str:
    """The stamp heading the last view frame of ``frames``."""
    return [f for f in frames if f.startswith("<!--v:")][-1][6:22]


async def act_ok(communicator: WebsocketCommunicator, **message) -> list[str]:
    """``act`` that must be acknowledged "ok"; returns the frames seen."""
    reply, frames = await act(communicator, **message)
    assert reply.get("status") == "ok", reply
    return frames


async def act_refused(communicator: WebsocketCommunicator, **message) -> str:
    """``act`` that must be refused; returns the error's message."""
    reply, _ = await act(communicator, **message)
    assert reply.get("type") == "error", reply
    return reply["message"]


@database_sync_to_async
def newest_challenge(challenger) -> int:
    """The id of ``challenger``'s latest challenge."""
    return (
        Challenge.objects.filter(challenger=challenger)
        .order_by("-id")
        .values_list("id", flat=True)[0]
    )

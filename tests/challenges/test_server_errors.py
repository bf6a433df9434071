"""A move that raises something unexpected (a bug, not a refusal) is answered
with an error frame naming its id, keeps nothing of what it began, and leaves
the socket open (``BaseConsumer.receive``)."""

from __future__ import annotations

import logging

import pytest
from channels.db import database_sync_to_async

from challenges import services
from challenges.consumers import SERVER_ERROR_MESSAGE, PlayConsumer
from challenges.models import Challenge, ClientAction
from tests.challenges.wsutil import WAIT, act, connect, drain
from tests.factories import opposed_challenge

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def _broken_save(*args, **kwargs):
    raise RuntimeError("a bug in the middle of a move")


@database_sync_to_async
def _answered(game) -> Challenge:
    return opposed_challenge(game["session"], game["helen"], game["grady"], bid="Ferocious")


@database_sync_to_async
def _reload(challenge: Challenge) -> tuple[int, int]:
    challenge.refresh_from_db()
    return challenge.version, ClientAction.objects.filter(msg_id="move-1").count()


@pytest.mark.parametrize(
    "action, fields",
    [
        ("challenge.bid", {"bid": "Resilient"}),
        ("challenge.relent", {}),
    ],
)
async def test_a_move_that_raises_is_answered_with_an_error_and_the_socket_stays_open(
    game, monkeypatch, caplog, action, fields
):
    challenge = await _answered(game)
    before, _ = await _reload(challenge)
    grady, _ = await connect(f"/ws/play/{game['grady'].pk}/", game["grady_player"])
    await drain(grady)
    # _save runs inside the move's transaction, after its id was claimed (``_writes._move``).
    monkeypatch.setattr(services._writes, "_save", _broken_save)
    with caplog.at_level(logging.ERROR, logger="challenges.consumers"):
        reply, _ = await act(
            grady, msg_id="move-1", action=action, challenge=challenge.pk, **fields
        )
    assert reply == {"type": "error", "id": "move-1", "message": SERVER_ERROR_MESSAGE}
    assert "a bug in the middle of a move" in caplog.text  # logged with its traceback
    assert "Traceback" in caplog.text
    # Nothing of the move was kept: neither the challenge nor the claimed id.
    assert await _reload(challenge) == (before, 0)

    # The same socket still works, and the same id is not "already done".
    monkeypatch.undo()
    reply, _ = await act(grady, msg_id="move-1", action=action, challenge=challenge.pk, **fields)
    assert reply == {"type": "ack", "id": "move-1", "status": "ok"}
    assert await _reload(challenge) == (before + 1, 1)
    await grady.disconnect()


async def test_a_heartbeat_that_raises_is_answered_and_the_socket_stays_open(game, monkeypatch):
    helen, _ = await connect(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    await drain(helen)

    async def broken_parts(self):
        raise RuntimeError("a bug in the heartbeat")

    monkeypatch.setattr(PlayConsumer, "current_parts", broken_parts)
    await helen.send_json_to({"action": "ping", "v": "stale"})
    reply = await helen.receive_json_from(timeout=WAIT)
    assert reply == {"type": "error", "id": None, "message": SERVER_ERROR_MESSAGE}
    await helen.send_json_to({"action": "sync"})  # needs no current_parts
    assert 'id="live"' in await helen.receive_from(timeout=WAIT)
    await helen.disconnect()

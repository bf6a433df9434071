"""A malformed heartbeat: a ping whose echoed stamp ``v`` is not a short
string gets an error frame from the frame's schema (``challenges.schema``),
on a phone and on a dashboard, and nothing reaches the log as an error (it
once raised inside ``answer_heartbeat``: a traceback per ping)."""

from __future__ import annotations

import json
import logging

import pytest

from tests.challenges.wsutil import WAIT, connect, drain, last_stamp

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

MALFORMED = [{"stamp": "0" * 16}, ["0" * 16], 12345, "0" * 65]


def _socket(game, where: str) -> tuple[str, object]:
    if where == "phone":
        return f"/ws/play/{game['helen'].pk}/", game["helen_player"]
    return f"/ws/narrate/{game['session'].pk}/", game["narrator"]


@pytest.mark.parametrize("where", ["phone", "dashboard"])
async def test_a_ping_echoing_no_stamp_gets_an_error_frame_and_logs_no_error(game, caplog, where):
    socket, first = await connect(*_socket(game, where))
    frames = [first, *await drain(socket)]
    with caplog.at_level(logging.WARNING):
        for echoed in MALFORMED:
            await socket.send_to(text_data=json.dumps({"action": "ping", "v": echoed}))
            reply = json.loads(await socket.receive_from(timeout=WAIT))
            assert reply == {
                "type": "error",
                "id": None,
                "message": "'v' must be the stamp of a view (a short text).",
            }, echoed
        # The socket still answers a well-formed ping.
        await socket.send_to(text_data=json.dumps({"action": "ping", "v": last_stamp(frames)}))
        answer = await socket.receive_from(timeout=WAIT)
        assert '"error"' not in answer
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    await socket.disconnect()

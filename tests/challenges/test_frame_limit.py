"""No frame the server sends is larger than the ASGI server accepts
(``settings.WS_MAX_FRAME_BYTES``): Daphne applies its message limit to the
frames it sends too, so a larger one raised ``PayloadExceededError`` and the
client reconnected into it forever. ``make run`` starts Daphne with that same
limit; a frame above it is replaced by an error frame saying so, and logged."""

from __future__ import annotations

import json
import logging

import pytest

from challenges.consumers.base import FRAME_TOO_LARGE_MESSAGE, frame_bytes
from characters.management.commands.evening import daphne_options
from tests.challenges.wsutil import connect

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def test_a_frame_above_the_limit_is_replaced_by_an_error_saying_so(game, settings, caplog):
    settings.WS_MAX_FRAME_BYTES = 2000  # a dashboard's view is larger
    caplog.set_level(logging.ERROR, logger="challenges.consumers.base")
    socket, first = await connect(f"/ws/narrate/{game['session'].pk}/", game["narrator"])
    answer = json.loads(first)
    assert answer["type"] == "error" and answer["id"] is None
    assert answer["message"].startswith(FRAME_TOO_LARGE_MESSAGE.split("(")[0])
    assert any("frame not sent" in record.getMessage() for record in caplog.records)
    # The socket stays open: a frame under the limit still goes.
    await socket.send_json_to({"action": "ping", "v": "0" * 16})
    assert json.loads(await socket.receive_from(timeout=10))["type"] == "error"
    await socket.disconnect()


async def test_make_runs_daphne_accepts_the_frames_the_consumers_may_send(settings):
    settings.WS_MAX_FRAME_BYTES = 1_048_576
    assert daphne_options() == ["--websocket-max-message-size", "1048576"]


@pytest.mark.parametrize(
    ("text", "limit", "counted"),
    [("a" * 10, 100, 10), ("é" * 30, 100, 60), ("€" * 30, 100, 90), ("x" * 10, 8, 10)],
)
async def test_a_frame_is_measured_in_utf8_bytes_when_it_could_pass_the_limit(
    settings, text, limit, counted
):
    settings.WS_MAX_FRAME_BYTES = limit
    assert frame_bytes(text) == counted

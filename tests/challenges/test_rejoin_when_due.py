"""Issue 14: a socket re-joins its channel-layer groups on a heartbeat only
when it may have lost them: after a failure of the layer seen by this
process (a layer that failed may come back empty), after a join of its own
that failed, or ``REJOIN_SECONDS`` after its last join (a layer emptied with
no error seen here). Re-joining on every heartbeat was half of a ping's CPU
on channels-redis. The outage itself, on both layers, is
``tests/faults/test_layer_outage.py``.
"""

from __future__ import annotations

import pytest
from channels.layers import get_channel_layer

from challenges import realtime
from challenges.consumers import base
from challenges.consumers.base import REJOIN_SECONDS
from tests.challenges.test_phone_frames import _open, _phones

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@pytest.fixture
def joins(monkeypatch):
    """The groups of every join a socket makes, in order."""
    seen: list[tuple[str, ...]] = []
    join = base.join_groups

    async def counted(layer, groups, channel):
        seen.append(tuple(groups))
        return await join(layer, groups, channel)

    monkeypatch.setattr(base, "join_groups", counted)
    return seen


@pytest.fixture
def quiet_clocks(monkeypatch):
    monkeypatch.setattr(base.services.clocks, "tick_wanted", lambda session_id: False)


async def test_pings_join_nothing_until_rejoin_seconds_have_passed(
    game, joins, heartbeat_clock, quiet_clocks
):
    helen, grady = await _phones(game)
    joined = list(joins)
    assert joined  # connecting joins every group
    for _ in range(3):
        for phone in (helen, grady):
            assert await phone.heartbeat() == {"type": "pong"}
    assert joins == joined
    heartbeat_clock.advance(REJOIN_SECONDS)
    assert await helen.heartbeat() == {"type": "pong"}
    assert joins[len(joined) :] == joined[: len(joins) - len(joined)]  # helen's groups again
    again = len(joins)
    assert await helen.heartbeat() == {"type": "pong"}
    assert len(joins) == again
    await helen.close()
    await grady.close()


async def test_a_layer_failure_makes_every_socket_join_again_on_its_next_heartbeat(
    game, joins, heartbeat_clock, quiet_clocks, monkeypatch
):
    """A broadcast fails (the layer is down); the layer comes back empty (no
    groups); each socket's next ping joins again, once, and the next move
    reaches both phones."""
    helen, grady = await _phones(game)
    layer = get_channel_layer()

    async def down(group, message):
        raise ConnectionError("layer down (test)")

    with monkeypatch.context() as patch:
        patch.setattr(layer, "group_send", down)
        await realtime._group_send_each(["session.0"], {"type": "nothing"})
    layer.groups.clear()  # back without its groups (its queues kept: the receives wait on them)
    before = len(joins)
    for phone in (helen, grady):
        await phone.heartbeat()
    assert len(joins) > before
    again = len(joins)
    for phone in (helen, grady):
        await phone.heartbeat()
    assert len(joins) == again  # once per failure, not on every ping
    pk = await _open(helen, game)
    await grady.settle()
    assert f'id="card-{pk}"' in grady.view  # the broadcast reached her: her groups are back
    await helen.close()
    await grady.close()


async def test_a_failed_join_is_tried_again_on_the_next_heartbeat(
    game, joins, heartbeat_clock, quiet_clocks, monkeypatch
):
    helen, grady = await _phones(game)
    failing = []

    async def refuse(layer, groups, channel):
        failing.append(tuple(groups))
        raise ConnectionError("layer down (test)")

    monkeypatch.setattr(base, "join_groups", refuse)
    realtime.layer_failed()
    await helen.heartbeat()
    assert failing  # tried, failed
    tried = len(failing)
    await helen.heartbeat()
    assert len(failing) > tried  # and tried again: its last join failed
    await helen.close()
    await grady.close()

"""Issue 14: a re-join (on connect, and on a heartbeat when due) puts a
socket in its groups in one round trip on channels-redis
(``base.join_groups``), leaving Redis as ``group_add`` does, one call each on
other layers."""

from __future__ import annotations

import pytest
from channels.layers import get_channel_layer
from channels_redis.core import RedisChannelLayer

from challenges.consumers.base import join_batches, join_groups
from narrator.layers import InMemoryChannelLayer

GROUPS = ["character.1", "chronicle.2", "session.3", "user.4"]


def test_other_layers_join_one_group_at_a_time():
    assert join_batches(InMemoryChannelLayer(), GROUPS) == [[group] for group in GROUPS]


def test_redis_joins_a_shard_at_a_time():
    layer = RedisChannelLayer(hosts=["redis://127.0.0.1:1/0", "redis://127.0.0.1:2/0"])
    batches = join_batches(layer, GROUPS)
    assert sorted(group for batch in batches for group in batch) == sorted(GROUPS)
    for batch in batches:
        assert len({layer.consistent_hash(group) for group in batch}) == 1
    assert len({layer.consistent_hash(batch[0]) for batch in batches}) == len(batches)


@pytest.mark.asyncio
async def test_in_memory_join_groups_adds_the_channel_to_each():
    layer = InMemoryChannelLayer()
    channel = await layer.new_channel()
    for batch in join_batches(layer, GROUPS):
        await join_groups(layer, batch, channel)
    for group in GROUPS:
        await layer.group_send(group, {"type": "hello", "group": group})
    assert [(await layer.receive(channel))["group"] for _ in GROUPS] == GROUPS


@pytest.mark.redis
@pytest.mark.asyncio
async def test_redis_join_groups_leaves_what_group_add_leaves_and_delivers():
    layer = get_channel_layer()
    assert isinstance(layer, RedisChannelLayer)
    mine, theirs = await layer.new_channel(), await layer.new_channel()
    for batch in join_batches(layer, GROUPS):
        await join_groups(layer, batch, mine)
    for group in GROUPS:
        await layer.group_add(group, theirs)
    connection = layer.connection(0)
    for group in GROUPS:
        key = layer._group_key(group)
        scores = dict(await connection.zrange(key, 0, -1, withscores=True))
        assert set(scores) == {mine.encode(), theirs.encode()}
        assert abs(scores[mine.encode()] - scores[theirs.encode()]) < 60
        assert 0 < await connection.ttl(key) <= layer.group_expiry
    for group in GROUPS:
        await layer.group_send(group, {"type": "hello", "group": group})
    assert sorted([(await layer.receive(mine))["group"] for _ in GROUPS]) == sorted(GROUPS)
    # Redis forgot its scripts (a restart): the next join loads it again.
    await connection.script_flush()
    await join_groups(layer, ["session.3"], mine)
    await layer.flush()

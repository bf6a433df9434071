"""NPCs in mob scenes through the real router (issue 11 section 4): a narrator
plays an NPC without auto-answer on its phone socket (the NPC's Play button)
through the scene's moves, and an auto-answering NPC's moves reach the
players' phones with the move that made them due."""

from __future__ import annotations

import uuid

import pytest
from channels.db import database_sync_to_async

from challenges import services
from challenges.models import MobScene
from challenges.rules import MobStage
from tests.challenges.test_mob_npcs import table
from tests.challenges.wsutil import act, connect, expect

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@database_sync_to_async
def _table(auto: bool) -> dict:
    t = table(auto=auto)
    services.mob_open(
        session=t["session"],
        characters=[t["ann"], t["bob"], t["eve"]],
        category="physical",
        user=t["narrator"],
        msg_id=uuid.uuid4().hex,
    )
    return t


@database_sync_to_async
def _mob() -> MobScene:
    return MobScene.objects.latest("created_at")


async def _ok(socket, **message) -> list[str]:
    reply, frames = await act(socket, **message)
    assert reply.get("status") == "ok", reply
    return frames


async def test_a_narrator_plays_an_npcs_mob_moves_on_its_phone_socket() -> None:
    t = await _table(auto=False)
    mob = await _mob()
    eve, first = await connect(f"/ws/play/{t['eve'].pk}/", t["narrator"])
    assert "Mob scene" in first and "Choose my target" in first
    ann, _ = await connect(f"/ws/play/{t['ann'].pk}/", t["ann"].player)
    bob, _ = await connect(f"/ws/play/{t['bob'].pk}/", t["bob"].player)
    await _ok(ann, action="mob.choose", mob=mob.pk, target=t["eve"].pk)
    await _ok(bob, action="mob.choose", mob=mob.pk, target=t["eve"].pk)
    await _ok(eve, action="mob.choose", mob=mob.pk, target="")
    await _ok(ann, action="mob.leader", mob=mob.pk, leader=t["bob"].pk)
    await _ok(eve, action="mob.bid", mob=mob.pk, bids=["Eve1", "Eve2"])
    state = (await _mob()).state["targets"][0]
    assert [n for n, _ in state["defender_bids"]] == ["Eve1", "Eve2"]
    for socket in (eve, ann, bob):
        await socket.disconnect()


async def test_an_auto_answering_npcs_mob_moves_reach_the_players_phones() -> None:
    t = await _table(auto=True)
    mob = await _mob()
    ann, _ = await connect(f"/ws/play/{t['ann'].pk}/", t["ann"].player)
    bob, _ = await connect(f"/ws/play/{t['bob'].pk}/", t["bob"].player)
    await _ok(ann, action="mob.choose", mob=mob.pk, target=t["eve"].pk)
    frames = await _ok(bob, action="mob.choose", mob=mob.pk, target=t["eve"].pk)
    # Eve chose nobody in Bob's move: the attackers are asked for their leader.
    await expect(bob, "Pick the leader who tests for you all", frames=frames)
    await expect(ann, "Pick the leader who tests for you all")
    await _ok(ann, action="mob.leader", mob=mob.pk, leader=t["ann"].pk)
    row = await _mob()
    assert row.stage == MobStage.BIDS and row.state["targets"][0]["defender_bid_in"]
    for socket in (ann, bob):
        await socket.disconnect()

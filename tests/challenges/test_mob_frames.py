"""Mob scenes through the real router (issue 11, section 2): a narrator's
dashboard and four phones (three attackers, one defender). Targets stay
hidden until all have chosen; the leader's test is a challenge card; forged
frames and moves during a Time out are refused without a change.
seeds/000 "The Mob Scene"."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from challenges import heartbeat, views
from challenges.models import MobScene, TraitLoss
from challenges.rules import MobStage
from characters.models import Presence
from tests.challenges.test_mob_services import mob_table
from tests.challenges.wsutil import (
    act_ok as _ok,
)
from tests.challenges.wsutil import (
    act_refused as _refused,
)
from tests.challenges.wsutil import (
    connect,
    drain,
    expect,
)
from tests.challenges.wsutil import (
    last_stamp as _last_stamp,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

NAMES = ("ann", "bob", "cid", "dee")


@database_sync_to_async
def _table() -> dict:
    return mob_table()


@database_sync_to_async
def _mob() -> MobScene:
    return MobScene.objects.select_related("challenge").latest("created_at")


@database_sync_to_async
def _lost() -> list[tuple[str, str]]:
    return sorted(TraitLoss.objects.values_list("character__name", "trait__name"))


@database_sync_to_async
def _health(character) -> int:
    return Presence.objects.get(character=character).health


@database_sync_to_async
def _stamps(t: dict, name: str) -> tuple[str, str]:
    """The stamps a phone of ``name`` and the dashboard would get now."""
    phone = heartbeat.play_parts(t[name].pk, t["session"].pk)
    dashboard = heartbeat.dashboard_parts(t["session"].pk, views.DASHBOARD_LIMIT)
    return heartbeat.digest(phone), heartbeat.digest(dashboard)


async def _world():
    t = await _table()
    dash, first = await connect(f"/ws/narrate/{t['session'].pk}/", t["narrator"])
    assert "No mob scene tonight" in first
    phones = {}
    for name in NAMES:
        phones[name], _ = await connect(f"/ws/play/{t[name].pk}/", t[name].player)
    ids = [str(t[name].pk) for name in NAMES]
    await _ok(dash, action="mob.open", characters=ids, category="physical", is_attack="on")
    mob = await _mob()
    return t, dash, phones, mob


async def _close(dash, phones) -> None:
    for socket in (dash, *phones.values()):
        await socket.disconnect()


async def test_three_attackers_and_a_defender_play_a_mob_scene_on_their_phones() -> None:
    t, dash, phones, mob = await _world()
    await expect(phones["ann"], ("Mob scene", "Choose my target"))
    # Ann chooses Dee: nobody else's screen says whom until all have chosen.
    frames = await _ok(phones["ann"], action="mob.choose", mob=mob.pk, target=t["dee"].pk)
    assert any(
        "You chose: <strong><bdi>Dee</bdi>" in f for f in frames + await drain(phones["ann"])
    )
    others = {name: await drain(phones[name]) for name in ("bob", "cid", "dee")}
    assert not any("→" in f for frames in others.values() for f in frames)
    seen = await expect(dash, "1 of 4 have chosen")
    assert not any("→ <bdi>Dee</bdi>" in f for f in seen)
    # The heartbeat's stamps count the scene: a ping now is answered "pong".
    phone_stamp, dash_stamp = await _stamps(t, "bob")
    assert _last_stamp(others["bob"]) == phone_stamp
    assert _last_stamp(seen) == dash_stamp
    await _ok(phones["bob"], action="mob.choose", mob=mob.pk, target=t["dee"].pk)
    await _ok(phones["cid"], action="mob.choose", mob=mob.pk, target=t["dee"].pk)
    await _ok(phones["dee"], action="mob.choose", mob=mob.pk, target="")
    await expect(dash, ("<bdi>Ann</bdi> → <bdi>Dee</bdi>", "Whose move: Ann, Bob, Cid"))
    await _ok(phones["cid"], action="mob.leader", mob=mob.pk, leader=t["bob"].pk)
    seen = {}
    for name in ("ann", "bob", "cid"):
        seen[name] = await _ok(
            phones[name], action="mob.bid", mob=mob.pk, bids=[f"{name.title()}1"]
        )
    message = await _refused(phones["dee"], action="mob.bid", mob=mob.pk, bids=["Dee1"])
    assert "3 Traits" in message
    await _ok(phones["dee"], action="mob.bid", mob=mob.pk, bids=["Dee1", "Dee2", "Dee3"])
    mob = await _mob()
    assert mob.stage == MobStage.TEST and mob.challenge.challenger_id == t["bob"].pk
    await expect(phones["bob"], f'name="challenge" value="{mob.challenge_id}"', frames=seen["bob"])
    await expect(dash, ("The test", "Whose move: Bob, Dee"))
    await _ok(phones["bob"], action="challenge.throw", challenge=mob.challenge_id, throw="paper")
    await expect(dash, ("The test", "Whose move: Dee"))
    frames = await _ok(
        phones["dee"], action="challenge.throw", challenge=mob.challenge_id, throw="scissors"
    )
    # Dee won: each attacker lost his bid; she chooses whom to hurt.
    await expect(phones["dee"], "Hurt <bdi>Ann</bdi>", frames=frames)
    assert await _lost() == [("Ann", "Ann1"), ("Bob", "Bob1"), ("Cid", "Cid1")]
    await _refused(phones["ann"], action="mob.hurt", mob=mob.pk, attacker=t["ann"].pk)
    await _ok(phones["dee"], action="mob.hurt", mob=mob.pk, attacker=t["ann"].pk)
    assert await _health(t["ann"]) == 1 and await _health(t["dee"]) == 0
    await expect(dash, ("Settled", "The defender wins", "wounded: Ann"))
    await _close(dash, phones)


async def test_forged_frames_and_moves_in_a_time_out_change_nothing() -> None:
    t, dash, phones, mob = await _world()
    forged = [
        {"action": "mob.choose", "mob": "x", "target": t["dee"].pk},
        {"action": "mob.choose", "mob": mob.pk, "target": t["dee"].pk, "extra": 1},
        {"action": "mob.bid", "mob": mob.pk, "bids": ["A" * 500]},
        {"action": "mob.open", "characters": [], "category": "physical"},  # a phone may not
        {"action": "mob.close", "mob": mob.pk},  # a phone may not
    ]
    for frame in forged:
        await _refused(phones["ann"], **frame)
    # Another's character: refused.
    await _refused(phones["ann"], action="mob.choose", mob=mob.pk, target=t["ann"].pk)
    assert (await _mob()).state["choices"] == []
    await _ok(dash, action="session.time_out")
    message = await _refused(phones["ann"], action="mob.choose", mob=mob.pk, target=t["dee"].pk)
    assert "Time out" in message
    assert "Time out" in await _refused(dash, action="mob.close", mob=mob.pk)
    assert (await _mob()).state["choices"] == []
    await _ok(dash, action="session.resume")
    await _ok(phones["ann"], action="mob.choose", mob=mob.pk, target=t["dee"].pk)
    await _ok(dash, action="mob.close", mob=mob.pk)
    mob = await _mob()
    assert mob.stage == MobStage.BIDS  # one attacker: her own leader
    assert mob.state["choices"][1:] == [[t[n].pk, None] for n in ("bob", "cid", "dee")]
    await _close(dash, phones)


async def test_the_start_form_lists_who_is_here_after_a_presence_change() -> None:
    t = await _table()
    dash, _ = await connect(f"/ws/narrate/{t['session'].pk}/", t["narrator"])
    frames = await _ok(dash, action="presence.set", character=t["cid"].pk, status="absent")
    seen = await expect(dash, 'hx-swap-oob="innerHTML:#mob-characters"', frames=frames)
    fieldset = next(f for f in seen if "#mob-characters" in f).split("#mob-characters", 1)[1]
    fieldset = fieldset.split("</fieldset>", 1)[0]
    assert "<bdi>Ann</bdi>" in fieldset and "<bdi>Dee</bdi>" in fieldset
    assert "<bdi>Cid</bdi>" not in fieldset
    await dash.disconnect()


async def test_a_participant_whose_bid_is_not_asked_gets_her_section_without_her_sheet(
    monkeypatch,
) -> None:
    """Issue 14: every move of a scene redraws each participant's section;
    her sheet (its queries) is read only for the bid choices, when the scene
    asks for her bid. The section shows the same either way."""
    from challenges.consumers import play

    reads = []
    sheet = play.character_sheet

    def counted(character, session):
        reads.append(character.name)
        return sheet(character, session)

    t, dash, phones, mob = await _world()
    monkeypatch.setattr(play, "character_sheet", counted)
    for name in ("ann", "bob", "cid"):
        await _ok(phones[name], action="mob.choose", mob=mob.pk, target=t["dee"].pk)
    await _ok(phones["dee"], action="mob.choose", mob=mob.pk, target="")
    for name in NAMES:
        await drain(phones[name])
    assert reads == []  # four moves, sixteen sections: no bid asked, no sheet read
    frames = await _ok(phones["cid"], action="mob.leader", mob=mob.pk, leader=t["bob"].pk)
    await expect(phones["cid"], 'name="bids" value="Cid1"', frames=frames)
    assert sorted(set(reads)) == ["Ann", "Bob", "Cid", "Dee"]  # each asked to bid now
    await _close(dash, phones)

"""Issue 13, a Storytelling fight through the real router: a narrator's
dashboard starts a fight of three, the server rolls Initiative (scripted
dice), three phones play one full turn in Initiative order with Defense and
damage on the track, with a Time out in the middle that refuses a move (the
phones are told by the banner alone) and then resumes; forged frames are
refused in words and change nothing. seeds/003 "Combat"."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from challenges import heartbeat, views
from challenges.models import StoryCombat
from challenges.rules import storytelling as rules
from characters.models import Presence
from tests.challenges.wsutil import act_ok as _ok
from tests.challenges.wsutil import act_refused as _refused
from tests.challenges.wsutil import connect, drain, expect
from tests.challenges.wsutil import last_stamp as _last_stamp
from tests.factories import story_fight_evening

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

NAMES = ("ada", "bram", "cleo")


@database_sync_to_async
def _fight() -> StoryCombat:
    return StoryCombat.objects.latest("created_at")


@database_sync_to_async
def _track(t, name: str) -> tuple[int, int, int]:
    p = Presence.objects.get(session=t["session"], character=t[name])
    return (p.track_aggravated, p.track_lethal, p.track_bashing)


@database_sync_to_async
def _stamps(t, name: str) -> tuple[str, str]:
    session = t["session"].pk
    phone = heartbeat.play_parts(t[name].pk, session)
    phone["fight"] = heartbeat.fight_part(session, t[name].pk)
    phone["roll"] = heartbeat.rolls_part(session, t[name].pk)
    dashboard = heartbeat.dashboard_parts(session, views.DASHBOARD_LIMIT)
    dashboard["fight"] = heartbeat.fight_part(session)
    dashboard["roll"] = heartbeat.rolls_part(session)
    return heartbeat.digest(phone), heartbeat.digest(dashboard)


async def test_three_fighters_play_one_turn_with_defense_damage_and_a_time_out(dice) -> None:
    t = await database_sync_to_async(story_fight_evening)()
    dash, first = await connect(f"/ws/narrate/{t['session'].pk}/", t["narrator"])
    assert "No fight tonight" in first
    phones = {}
    for name in NAMES:
        phones[name], _ = await connect(f"/ws/play/{t[name].pk}/", t[f"{name}_player"])
    dice(1, 5, 9)  # Ada 1+3=4, Bram 5+2=7, Cleo 9+1=10
    seen = await _ok(dash, action="fight.start", characters=[str(t[n].pk) for n in NAMES])
    seen = await expect(
        dash, ("Turn 1", "<bdi>Cleo</bdi> is acting", "Initiative: 9 + 1 = 10"), frames=seen
    )
    await expect(phones["cleo"], ("Your turn: take your action", "Attack"))
    await expect(phones["ada"], ("Cleo is acting", "Dodge"))
    # Bram is not acting: his attack is refused in words
    await drain(phones["bram"])
    reply = await _refused(
        phones["bram"],
        action="fight.attack",
        fight=(await _fight()).pk,
        target=t["ada"].pk,
        kind="unarmed",
    )
    assert "not Bram's turn" in reply
    fight = (await _fight()).pk
    # Cleo: 3 + 2 − Bram's Defense 2 = 3 dice: 8, 10, 2 and the 10 again: 9 → 3 lethal
    dice(8, 10, 2, 9)
    await _ok(
        phones["cleo"],
        action="fight.attack",
        fight=fight,
        target=t["bram"].pk,
        kind="unarmed",
        damage_type="lethal",
    )
    assert await _track(t, "bram") == (0, 3, 0)
    await expect(dash, ("XXX···", "<bdi>Bram</bdi> is acting"))
    await expect(phones["bram"], ("Your turn", "XXX···"))
    # Time out: the move is refused and nothing changes; the phones keep their card
    await drain(phones["ada"])
    await _ok(dash, action="session.time_out")
    frames = await expect(phones["ada"], ('id="time-out"',))
    assert not any("fight-phone" in f for f in frames)
    reply = await _refused(phones["bram"], action="fight.dodge", fight=fight)
    assert "time out" in reply.lower()
    await _ok(dash, action="session.resume")
    # Bram (3 of 6 boxes marked: no wound penalty yet) attacks Ada: 2 + 2 − 2 = 2 dice
    dice(9, 3)
    await _ok(
        phones["bram"], action="fight.attack", fight=fight, target=t["ada"].pk, kind="unarmed"
    )
    assert await _track(t, "ada") == (0, 0, 1)
    # Ada dodges instead of acting; the turn is over and turn 2 starts with Cleo
    await _ok(phones["ada"], action="fight.dodge", fight=fight)
    frames = await expect(dash, ("Turn 2", "<bdi>Cleo</bdi> is acting"))
    state = rules.CombatState.from_dict((await _fight()).state)
    assert state.turn == 2 and rules.whose_turn(state) == t["cleo"].pk
    frames += await drain(dash)
    _, dash_stamp = await _stamps(t, "ada")
    assert _last_stamp(frames) == dash_stamp
    for socket in (dash, *phones.values()):
        await socket.disconnect()


@pytest.mark.parametrize(
    ("frame", "words"),
    [
        ({"kind": "unarmed", "target": 999}, "someone else in this fight"),
        ({"kind": "laser", "target": 1}, "'kind'"),
        ({"kind": "unarmed", "target": 1, "weapon": 9}, "'weapon'"),
        ({"kind": "unarmed", "target": 1, "note": "x"}, "not part of this action"),
    ],
)
async def test_forged_attacks_are_refused_in_words(dice, frame, words) -> None:
    t = await database_sync_to_async(story_fight_evening)()
    dash, _ = await connect(f"/ws/narrate/{t['session'].pk}/", t["narrator"])
    phone, _ = await connect(f"/ws/play/{t['cleo'].pk}/", t["cleo_player"])
    dice(1, 9)
    await _ok(dash, action="fight.start", characters=[t["ada"].pk, t["cleo"].pk])
    fight = await _fight()
    reply = await _refused(phone, action="fight.attack", fight=fight.pk, **frame)
    assert words in reply
    assert (await _fight()).version == fight.version
    await dash.disconnect()
    await phone.disconnect()

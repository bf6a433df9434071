"""Issue 12 (s12 gaps) through the real router: inside a bns combat, Rosa's
phone knocks Jack down; Jack's phone and the dashboard show him prone and
his phone's *Stand up* frame stands him up; then Rosa's Pierce the Heart
kills him (a mortal in his Incapacitated track): both phones, the roster row
and the combat say so. seeds/002 "Combat Maneuvers" (Knock Down, Pierce the
Heart)."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from channels.db import database_sync_to_async

from challenges.models import Challenge, Combat
from challenges.rules.bns_combat import CombatState
from characters.models import Presence
from tests.challenges.wsutil import act, connect, expect
from tests.challenges.wsutil import act_ok as _ok
from tests.factories import bns_combat_evening

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@database_sync_to_async
def _latest() -> Challenge:
    return Challenge.objects.latest("id")


@database_sync_to_async
def _combat() -> CombatState:
    return CombatState.from_dict(Combat.objects.latest("created_at").state)


@database_sync_to_async
def _mortal_and_incapacitated(t) -> None:
    t["jack"].creature = "mortal"
    t["jack"].save()
    Presence.objects.filter(character=t["jack"]).update(damage=7)


async def _hit(t, rosa, jack, **frame) -> tuple[list[str], list[str]]:
    """Rosa attacks Jack with ``frame``; Jack answers, both throw (Rosa wins
    outright), Jack accepts the lost test. Returns the frames each phone saw."""
    seen_rosa = await _ok(rosa, action="bns.open", defender=str(t["jack"].pk), **frame)
    challenge = await _latest()
    seen_jack = await expect(jack, "Choose your defence")
    seen_jack += await _ok(jack, action="bns.answer", challenge=str(challenge.pk), defence="dodge")
    seen_rosa += await _ok(rosa, action="bns.throw", challenge=str(challenge.pk), throw="rock")
    seen_jack += await _ok(jack, action="bns.throw", challenge=str(challenge.pk), throw="scissors")
    reply, frames = await act(jack, action="bns.accept", challenge=str(challenge.pk))
    assert reply.get("status") == "ok" or "no lost test" in reply.get("message", ""), reply
    return seen_rosa, [*seen_jack, *frames]


async def _rosa_and_jack():
    """A bns evening, the dashboard and Rosa's and Jack's phones connected,
    and a combat of Rosa (7) and Jack (6) started: Rosa acts. Returns them
    and the combat row, with the frames Rosa's phone saw up to "Your
    initiative"."""
    t = await database_sync_to_async(bns_combat_evening)()
    dash, _ = await connect(f"/ws/narrate/{t['session'].pk}/", t["narrator"])
    rosa, _ = await connect(f"/ws/play/{t['rosa'].pk}/", t["rosa_player"])
    jack, _ = await connect(f"/ws/play/{t['jack'].pk}/", t["jack_player"])
    await _ok(dash, action="combat.start", characters=[str(t["rosa"].pk), str(t["jack"].pk)])
    seen = await expect(rosa, "Your initiative")
    combat = await database_sync_to_async(Combat.objects.latest)("created_at")
    return t, dash, rosa, jack, combat, seen


async def test_a_knock_down_and_a_pierced_heart_show_on_the_phones_and_the_dashboard() -> None:
    t, dash, rosa, jack, combat, _ = await _rosa_and_jack()

    _, seen = await _hit(t, rosa, jack, attack="brawl", maneuvers=["knock_down"])
    await expect(jack, lambda f: "combat-conditions" in f and "(prone)" in f, frames=seen)
    await expect(dash, lambda f: 'class="combat-conditions">prone<' in f)
    await _ok(rosa, action="combat.advance", combat=combat.pk)
    await expect(jack, "Stand up (simple action)")
    await _ok(jack, action="combat.act", combat=combat.pk, kind="simple", what="stand_up")
    assert not (await _combat()).fighter(t["jack"].pk).prone
    await _ok(jack, action="combat.advance", combat=combat.pk)

    await _mortal_and_incapacitated(t)
    seen_rosa, seen_jack = await _hit(
        t, rosa, jack, attack="melee", maneuvers=["pierce_the_heart:focus"]
    )
    await expect(rosa, "Jack is Killed", frames=seen_rosa)
    await expect(jack, "Dead tonight (Pierce the Heart).", "you are Killed", frames=seen_jack)
    await expect(dash, lambda f: "roster-" in f and '"tag fate fate-dead">Dead<' in f)
    state = await _combat()
    assert t["jack"].pk not in [f.fighter_id for f in state.fighters]
    for socket in (dash, rosa, jack):
        await socket.disconnect()


def _chips(frames: list[str]) -> list[list[str]]:
    """The maneuver values of each "Challenge someone" chips part the frames
    drew again (``_bns_maneuvers.html``, out of band)."""
    drawn = []
    for frame in frames:
        part = BeautifulSoup(frame, "html.parser").select_one("#bns-maneuver-choices")
        if part is not None:
            assert part.get("hx-swap-oob") == "true"
            drawn.append([box["value"] for box in part.select("input[name=maneuvers]")])
    return drawn


async def test_her_phone_stops_offering_the_spent_focus_maneuver_without_a_reload() -> None:
    """seeds/002 "Physical Focuses in Combat": once Rosa's Strength focus
    pays a maneuver in her live combat, her phone's "Challenge someone" form
    drops the ":focus" chips at once (the server would refuse them); Jack's
    form is left alone; when the combat ends, they come back."""
    t, dash, rosa, jack, combat, seen = await _rosa_and_jack()
    assert _chips(seen) == []  # nothing spent yet: the form is left alone

    seen = await _ok(
        rosa,
        action="bns.open",
        defender=str(t["jack"].pk),
        attack="brawl",
        maneuvers=["disarm:focus"],
    )
    seen = await expect(rosa, "bns-maneuver-choices", frames=seen)
    (chips,) = _chips(seen)
    assert chips and "disarm" in chips and not [c for c in chips if c.endswith(":focus")]
    assert _chips(await expect(jack, "Choose your defence")) == []
    # A phone (re)connecting now gets the chips with its first view, whatever
    # its page showed.
    again, first = await connect(f"/ws/play/{t['rosa'].pk}/", t["rosa_player"])
    assert _chips([first]) == [chips]
    await again.disconnect()

    seen = await _ok(dash, action="combat.end", combat=combat.pk)
    seen = await expect(rosa, "bns-maneuver-choices")
    assert "grapple:focus" in _chips(seen)[-1]
    for socket in (dash, rosa, jack):
        await socket.disconnect()


async def test_a_grappled_phone_escapes_and_at_once_challenges_in_the_same_round() -> None:
    """seeds/002 Grapple: Rosa's phone grapples Jack; on his initiative his
    phone offers "Escape from Rosa's grapple" (his simple action), Rosa's
    phone answers it as any challenge, and his won escape frees him at once:
    the same round, his phone lets him challenge Rosa (his standard action)."""
    t, dash, rosa, jack, combat, _ = await _rosa_and_jack()
    await _hit(t, rosa, jack, attack="brawl", maneuvers=["grapple"])
    await _ok(rosa, action="combat.advance", combat=combat.pk)
    seen = await expect(jack, "Escape from <bdi>Rosa</bdi>'s grapple: Brawl (6, simple action)")
    assert "Rosa: Social, Mental</bdi>" in seen[-1]  # grappled: no Physical standard action

    await _ok(jack, action="bns.open", defender=str(t["rosa"].pk), attack="brawl", escape=True)
    challenge = await _latest()
    await expect(rosa, ("Grapple escape (Brawl)", "Choose your defence"))
    await _ok(rosa, action="bns.answer", challenge=str(challenge.pk), defence="dodge")
    await _ok(jack, action="bns.throw", challenge=str(challenge.pk), throw="rock")
    await _ok(rosa, action="bns.throw", challenge=str(challenge.pk), throw="scissors")
    reply, _ = await act(rosa, action="bns.accept", challenge=str(challenge.pk))
    assert reply.get("status") == "ok" or "no lost test" in reply.get("message", ""), reply
    freed = ("You may challenge: <bdi>Rosa: Physical", "combat-phone")
    seen = await expect(jack, "Success: you escape the grapple.", freed)
    (drawn,) = [f for f in seen if all(w in f for w in freed)]
    assert "Escape from" not in drawn and "grappled by" not in drawn
    state = await _combat()
    assert state.fighter(t["jack"].pk).grappled_by == ()
    assert state.turn == 1 and not state.fighter(t["jack"].pk).standard_used
    await _ok(jack, action="bns.open", defender=str(t["rosa"].pk), attack="brawl")
    for socket in (dash, rosa, jack):
        await socket.disconnect()

"""Issue 12: an opposed challenge of test pools (ruleset bns, seeds/002)
played through the real router: the attacker's phone opens it, the
defender's phone answers, both throw; the loser of the first test retests
with 1 Willpower; an exceptional success; a maneuver and its effect; damage
filling the wound tracks; a throw during a Time out refused with nothing
changed; forged frames refused; a narrator's void; an auto-answering NPC."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from challenges import services
from challenges.consistency import find_inconsistencies
from challenges.history import history_csv, session_history
from challenges.models import POOLS_KIND, Challenge, ClientAction, Event, Test
from challenges.services import npcs
from characters.models import Character, Chronicle, Presence
from tests.challenges.wsutil import act, connect, drain, expect
from tests.factories import make_rosa, make_user, narrated_chronicle

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def _by_night() -> dict:
    """Rosa (Physical 7, Brawl 3, Willpower 6, Strength focus: attack pool
    10) and Tooth (Physical 9, no Dodge, Willpower 4: defence pool 9), both
    played; Thug, a Stock NPC (Physical 5) who answers by himself."""
    table = narrated_chronicle("By Night")
    chronicle, session = table["chronicle"], table["session"]
    chronicle.ruleset = Chronicle.Ruleset.BNS
    chronicle.save()
    rosa_player, tooth_player = make_user("rosa"), make_user("tooth")
    rosa = make_rosa(chronicle, rosa_player)
    tooth = Character.objects.create(
        chronicle=chronicle,
        name="Tooth",
        player=tooth_player,
        physical_attribute=9,
        social_attribute=2,
        mental_attribute=3,
        willpower=4,
    )
    thug = Character.objects.create(
        chronicle=chronicle,
        name="Thug",
        physical_attribute=5,
        social_attribute=1,
        mental_attribute=1,
        stock_npc=True,
        auto_answer=True,
    )
    for character in (rosa, tooth, thug):
        Presence.objects.create(session=session, character=character)
    return {
        **table,
        "rosa": rosa,
        "rosa_player": rosa_player,
        "tooth": tooth,
        "tooth_player": tooth_player,
        "thug": thug,
    }


@database_sync_to_async
def _latest() -> Challenge:
    return Challenge.objects.latest("id")


@database_sync_to_async
def _reload(challenge: Challenge) -> Challenge:
    return Challenge.objects.get(pk=challenge.pk)


@database_sync_to_async
def _presence(character) -> Presence:
    return Presence.objects.get(character=character)


@database_sync_to_async
def _tests(challenge) -> list[tuple[str, str, str, str, str]]:
    return list(
        Test.objects.filter(challenge=challenge)
        .order_by("number")
        .values_list("challenger_throw", "defender_throw", "winner", "retest", "by")
    )


@database_sync_to_async
def _events(challenge) -> list[tuple[str, dict]]:
    return list(
        Event.objects.filter(challenge=challenge).order_by("id").values_list("kind", "data")
    )


async def _phones(game):
    rosa, _ = await connect(f"/ws/play/{game['rosa'].pk}/", game["rosa_player"])
    tooth, _ = await connect(f"/ws/play/{game['tooth'].pk}/", game["tooth_player"])
    return rosa, tooth


async def _rosa_brawls_tooth(game, rosa, tooth, **extra) -> tuple[Challenge, list[str]]:
    reply, _ = await act(
        rosa, action="bns.open", defender=str(game["tooth"].pk), attack="brawl", **extra
    )
    assert reply["status"] == "ok", reply
    challenge = await _latest()
    seen = await expect(tooth, "Choose your defence")
    reply, frames = await act(
        tooth, action="bns.answer", challenge=str(challenge.pk), defence="dodge"
    )
    assert reply["status"] == "ok", reply
    return challenge, [*seen, *frames]


async def _throw(phone, challenge, throw: str) -> list[str]:
    reply, frames = await act(phone, action="bns.throw", challenge=str(challenge.pk), throw=throw)
    assert reply["status"] == "ok", reply
    return frames


async def test_an_opposed_test_with_a_willpower_retest_end_to_end(bns_game):
    game = bns_game
    rosa, tooth = await _phones(game)
    challenge, tooth_frames = await _rosa_brawls_tooth(game, rosa, tooth)
    assert challenge.kind == POOLS_KIND
    # Both pools shown on both phones once both have chosen.
    await expect(rosa, "Pools: Rosa 10 (Brawl) vs Tooth 9 (Physical + Dodge)")
    await expect(tooth, "Pools: Rosa 10 (Brawl) vs Tooth 9 (Physical + Dodge)", frames=tooth_frames)
    await _throw(rosa, challenge, "rock")
    frames = await _throw(tooth, challenge, "scissors")
    # Tooth lost the first test: only his phone offers the Willpower retest.
    await expect(tooth, "Spend 1 Willpower to retest", frames=frames)
    rosa_frames = await drain(rosa)
    assert not any("Spend 1 Willpower to retest" in f for f in rosa_frames)
    reply, _ = await act(tooth, action="bns.retest", challenge=str(challenge.pk))
    assert reply["status"] == "ok", reply
    assert (await _presence(game["tooth"])).willpower_spent == 1
    await _throw(rosa, challenge, "paper")
    frames = await _throw(tooth, challenge, "scissors")
    await expect(rosa, "Failure: Tooth is not hurt.")
    await expect(tooth, "You win: you are not hurt.", frames=frames)
    done = await _reload(challenge)
    assert (done.stage, done.outcome) == ("resolved", "defender_wins")
    assert await _tests(challenge) == [
        ("rock", "scissors", "challenger", "", ""),
        ("paper", "scissors", "defender", "willpower", "defender"),
    ]
    assert (await _presence(game["tooth"])).damage == 0
    assert (await _presence(game["rosa"])).willpower_spent == 0
    # A second retest is not on offer: the second test is final.
    reply, _ = await act(tooth, action="bns.retest", challenge=str(challenge.pk))
    assert reply["type"] == "error"
    assert (await _presence(game["tooth"])).willpower_spent == 1
    assert await database_sync_to_async(find_inconsistencies)() == []
    # The evening's history lists both tests with both throws and pools, and the Willpower.
    history = await database_sync_to_async(session_history)(game["session"])
    texts = [e.text for e in history.entries]
    for line in (
        "Rosa attacks Tooth (brawl)",
        "Pools: Rosa 10, Tooth 9 (dodge)",
        "Test 1: Rosa rock, Tooth scissors — Rosa wins the test (pools 10 vs 9)",
        "Tooth spends 1 Willpower",
        "Test 2: Rosa paper, Tooth scissors — Tooth wins the test (pools 10 vs 9)",
        "Result: failure",
    ):
        assert line in texts, (line, texts)
    assert "Tooth spends 1 Willpower" in history_csv(history)
    await rosa.disconnect()
    await tooth.disconnect()


async def test_an_exceptional_success_deals_an_extra_damage_into_the_wound_tracks(bns_game):
    game = bns_game
    dashboard, _ = await connect(f"/ws/narrate/{game['session'].pk}/", game["narrator"])
    rosa, tooth = await _phones(game)
    challenge, _ = await _rosa_brawls_tooth(game, rosa, tooth)
    await _throw(rosa, challenge, "rock")
    await _throw(tooth, challenge, "scissors")
    reply, frames = await act(tooth, action="bns.accept", challenge=str(challenge.pk))
    assert reply["status"] == "ok", reply
    await expect(rosa, "Exceptional success: Tooth takes 2 damage.")
    # His phone's sheet shows the boxes filled (Healthy track first).
    await expect(
        tooth,
        "You lose to Rosa&#x27;s exceptional success: you take 2 damage.",
        "Healthy: 2 of 3 boxes filled",
        frames=frames,
    )
    assert (await _presence(game["tooth"])).damage == 2
    resolved = [d for k, d in await _events(challenge) if k == "resolved"]
    assert resolved[0]["result"] == "exceptional" and resolved[0]["damage"] == 2
    # The narrators' row gives the result with both throws; Tooth's roster row his boxes.
    await expect(
        dashboard,
        ("Exceptional success: Tooth takes 2 damage.", 'data-throw="rock"'),
        ("roster-", "Healthy 2/3"),
    )
    await dashboard.disconnect()
    await rosa.disconnect()
    await tooth.disconnect()


async def test_a_maneuver_costs_willpower_lowers_the_pool_and_lands_its_effect(bns_game):
    game = bns_game
    rosa, tooth = await _phones(game)
    challenge, _ = await _rosa_brawls_tooth(
        game, rosa, tooth, maneuvers=["knock_out"], surprise=True, first_round=True
    )
    # Knock Out: 1 Willpower at once, −2 to her pool (10 → 8).
    assert (await _presence(game["rosa"])).willpower_spent == 1
    await expect(rosa, "Pools: Rosa 8 (Brawl, Knock Out −2) vs Tooth 9")
    await _throw(rosa, challenge, "rock")
    await _throw(tooth, challenge, "scissors")
    reply, _ = await act(tooth, action="bns.accept", challenge=str(challenge.pk))
    assert reply["status"] == "ok", reply
    # Not exceptional (her pool is not greater): 1 damage, unconscious 10 minutes.
    await expect(rosa, "Success: Tooth takes 1 damage; Tooth is Unconscious (10 minutes).")
    effects = [d for k, d in await _events(challenge) if k == "effect"]
    assert len(effects) == 1
    assert effects[0]["effect"] == "unconscious" and effects[0]["seconds"] == 600
    assert effects[0]["character"] == game["tooth"].pk
    assert (await _presence(game["tooth"])).damage == 1
    await rosa.disconnect()
    await tooth.disconnect()


async def test_a_throw_after_time_out_is_refused_and_changes_nothing(bns_game):
    game = bns_game
    rosa, tooth = await _phones(game)
    challenge, _ = await _rosa_brawls_tooth(game, rosa, tooth)
    await database_sync_to_async(services.session_time_out)(
        session=game["session"], user=game["narrator"], msg_id="time-out-1"
    )
    before = await _reload(challenge)
    reply, _ = await act(
        rosa, "throw-in-time-out", action="bns.throw", challenge=str(challenge.pk), throw="rock"
    )
    assert reply["type"] == "error" and "Time out" in reply["message"]
    after = await _reload(challenge)
    assert (after.version, after.state) == (before.version, before.state)
    assert await _tests(challenge) == [("", "", "", "", "")]
    assert not await database_sync_to_async(
        ClientAction.objects.filter(msg_id="throw-in-time-out").exists
    )()
    await rosa.disconnect()
    await tooth.disconnect()


async def test_forged_frames_are_refused_and_change_nothing(bns_game):
    game = bns_game
    rosa, tooth = await _phones(game)
    defender = str(game["tooth"].pk)
    for forged, words in (
        ({"defender": defender, "attack": "laser"}, "'attack' must be brawl"),
        ({"defender": defender, "attack": "brawl", "maneuvers": ["disarm"] * 5}, "too long"),
        ({"defender": defender, "attack": "brawl", "bid": "physical:Quick"}, "not part of"),
        ({"defender": defender, "attack": "brawl", "maneuvers": ["teleport"]}, "maneuver"),
    ):
        reply, _ = await act(rosa, action="bns.open", **forged)
        assert reply["type"] == "error", forged
        assert words in reply["message"], (forged, reply)
    assert not await database_sync_to_async(Challenge.objects.exists)()
    # A MET move on a challenge of test pools is refused too.
    challenge, _ = await _rosa_brawls_tooth(game, rosa, tooth)
    before = await _reload(challenge)
    reply, _ = await act(rosa, action="challenge.throw", challenge=str(challenge.pk), throw="rock")
    assert reply["type"] == "error" and "test pools" in reply["message"]
    # The attacker cannot answer for the defender.
    reply, _ = await act(rosa, action="bns.answer", challenge=str(challenge.pk))
    assert reply["type"] == "error"
    assert (await _reload(challenge)).version == before.version
    await rosa.disconnect()
    await tooth.disconnect()


async def test_a_repeated_message_id_is_applied_once(bns_game):
    game = bns_game
    rosa, tooth = await _phones(game)
    challenge, _ = await _rosa_brawls_tooth(game, rosa, tooth)
    await _throw(rosa, challenge, "rock")
    await _throw(tooth, challenge, "scissors")
    reply, _ = await act(tooth, "retest-once", action="bns.retest", challenge=str(challenge.pk))
    assert reply["status"] == "ok"
    reply, _ = await act(tooth, "retest-once", action="bns.retest", challenge=str(challenge.pk))
    assert reply["status"] == "already_done"
    assert (await _presence(game["tooth"])).willpower_spent == 1
    await rosa.disconnect()
    await tooth.disconnect()


async def test_a_character_on_a_break_cannot_be_challenged(bns_game):
    game = bns_game
    await database_sync_to_async(Presence.objects.filter(character=game["tooth"]).update)(
        status=Presence.Status.BREAK
    )
    rosa, _ = await connect(f"/ws/play/{game['rosa'].pk}/", game["rosa_player"])
    reply, _ = await act(rosa, action="bns.open", defender=str(game["tooth"].pk), attack="brawl")
    assert reply["type"] == "error" and "on a break" in reply["message"]
    assert not await database_sync_to_async(Challenge.objects.exists)()
    await rosa.disconnect()


async def test_a_narrator_voids_a_challenge_with_a_reason(bns_game):
    game = bns_game
    rosa, tooth = await _phones(game)
    challenge, _ = await _rosa_brawls_tooth(game, rosa, tooth)
    dashboard, _ = await connect(f"/ws/narrate/{game['session'].pk}/", game["narrator"])
    reply, _ = await act(dashboard, action="bns.void", challenge=str(challenge.pk), reason="")
    assert reply["type"] == "error"
    reply, _ = await act(
        dashboard, action="bns.void", challenge=str(challenge.pk), reason="out of game"
    )
    assert reply["status"] == "ok", reply
    await expect(rosa, "Void: out of game.")
    done = await _reload(challenge)
    assert (done.stage, done.outcome) == ("resolved", "void")
    assert done.rulings[0]["reason"] == "out of game"
    # A player cannot void.
    reply, _ = await act(rosa, action="bns.void", challenge=str(challenge.pk), reason="x")
    assert reply["type"] == "error"
    await dashboard.disconnect()
    await rosa.disconnect()
    await tooth.disconnect()


async def test_an_auto_answering_npc_answers_and_throws_by_itself(bns_game, monkeypatch):
    game = bns_game
    monkeypatch.setattr(npcs, "draw_throw", lambda throws: "scissors")
    rosa, _ = await connect(f"/ws/play/{game['rosa'].pk}/", game["rosa_player"])
    reply, frames = await act(
        rosa, action="bns.open", defender=str(game["thug"].pk), attack="brawl"
    )
    assert reply["status"] == "ok", reply
    challenge = await _latest()
    # Thug answered at once: his best defence, both pools known.
    assert challenge.stage == "throws"
    await expect(rosa, "Pools: Rosa 10 (Brawl) vs Thug 5 (Physical + Dodge)", frames=frames)
    await _throw(rosa, challenge, "rock")
    # Thug threw by himself, lost outright, has no Willpower to retest: over.
    done = await _reload(challenge)
    assert (done.stage, done.outcome) == ("resolved", "challenger_wins")
    assert await _tests(challenge) == [("rock", "scissors", "challenger", "", "")]
    assert (await _presence(game["thug"])).damage == 2
    await rosa.disconnect()


@pytest.fixture
def bns_game(transactional_db) -> dict:
    return _by_night()


async def test_ending_the_session_voids_an_open_challenge_of_test_pools(bns_game):
    game = bns_game
    rosa, tooth = await _phones(game)
    challenge, _ = await _rosa_brawls_tooth(game, rosa, tooth)
    await database_sync_to_async(services.session_end)(
        session=game["session"], user=game["narrator"], msg_id="end-1"
    )
    done = await _reload(challenge)
    assert (done.stage, done.outcome) == ("resolved", "void")
    assert (await _presence(game["tooth"])).damage == 0
    assert await database_sync_to_async(find_inconsistencies)() == []
    await rosa.disconnect()
    await tooth.disconnect()


async def test_an_npc_switched_to_auto_answer_in_a_time_out_answers_at_resume(bns_game):
    game = bns_game
    await database_sync_to_async(Character.objects.filter(pk=game["thug"].pk).update)(
        auto_answer=False
    )
    rosa, _ = await connect(f"/ws/play/{game['rosa'].pk}/", game["rosa_player"])
    reply, _ = await act(rosa, action="bns.open", defender=str(game["thug"].pk), attack="brawl")
    assert reply["status"] == "ok", reply
    challenge = await _latest()
    assert challenge.stage == "response"  # Thug waits: nobody answers for him yet
    session, narrator = game["session"], game["narrator"]
    await database_sync_to_async(services.session_time_out)(
        session=session, user=narrator, msg_id="time-out-2"
    )
    await database_sync_to_async(services.npc_set)(
        session=session,
        character=game["thug"],
        auto_answer=True,
        relents="never",
        user=narrator,
        msg_id="npc-on",
    )
    assert (await _reload(challenge)).stage == "response"  # not during the time out
    await database_sync_to_async(services.session_resume)(
        session=session, user=narrator, msg_id="resume-2"
    )
    answered = await _reload(challenge)
    assert answered.stage == "throws"
    assert answered.state["defence"] == "dodge" and answered.state["defender_pool"] == 5
    await rosa.disconnect()


async def test_a_called_narrator_settles_for_the_attacker_with_a_reason(bns_game):
    game = bns_game
    rosa, tooth = await _phones(game)
    dashboard, _ = await connect(f"/ws/narrate/{game['session'].pk}/", game["narrator"])
    challenge, _ = await _rosa_brawls_tooth(game, rosa, tooth)
    reply, _ = await act(
        tooth,
        action="challenge.call_narrator",
        challenge=str(challenge.pk),
        reason="Was that late?",
    )
    assert reply["status"] == "ok", reply
    await expect(dashboard, ("Narrator called", "Tooth", "Was that late?"))
    reply, _ = await act(
        dashboard,
        action="bns.settle",
        challenge=str(challenge.pk),
        winner="challenger",
        reason="Tooth was in reach",
    )
    assert reply["status"] == "ok", reply
    await expect(rosa, "Success: Tooth takes 1 damage.", "Tooth was in reach")
    done = await _reload(challenge)
    assert done.called_at is None and done.outcome == "challenger_wins"
    assert (await _presence(game["tooth"])).damage == 1  # settled: never exceptional
    for phone in (dashboard, rosa, tooth):
        await phone.disconnect()

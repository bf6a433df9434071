"""NPCs in mob scenes (issue 11 section 4: "statics and mob scenes can include
them") through challenges.services: an auto-answering NPC makes its mob moves
by itself in the transaction of the move that made them due (as defender and
as attacker, its test too), a time out holds them until Resume, and a
narrator plays an NPC without auto-answer from its phone screen like any
other character. seeds/000 "The Mob Scene"; docs/guide.md "Running NPCs"."""

from __future__ import annotations

import uuid

import pytest

from challenges import services
from challenges.models import Event, MobScene, TraitLoss
from challenges.rules import MobOutcome, MobStage, Throw
from characters.models import Presence
from tests.factories import make_character, make_user, narrated_chronicle

pytestmark = pytest.mark.django_db


def mid() -> str:
    return uuid.uuid4().hex


def table(npcs=("Eve",), *, auto=True) -> dict:
    """Players Ann, Bob, Dee and the NPCs ``npcs`` (auto-answer ``auto``),
    each with Physical Traits ``<Name>1`` x2, ``<Name>2``, ``<Name>3``."""
    t = narrated_chronicle()
    for name in ("Ann", "Bob", "Dee", *npcs):
        player = None if name in npcs else make_user(name.lower())
        t[name.lower()] = make_character(
            t["chronicle"],
            name,
            player,
            traits=[(f"{name}1", "physical", 2), (f"{name}2", "physical", 1)]
            + [(f"{name}3", "physical", 1)],
        )
        if player is None and auto:
            t[name.lower()].auto_answer = True
            t[name.lower()].save()
    return t


def by(t: dict, who: str, move, **fields):
    """``move`` made for ``who``: by her player, or by the narrator for an NPC."""
    user = t[who].player or t["narrator"]
    return move(character=t[who], user=user, msg_id=mid(), **fields)


def opened(t: dict, *names: str) -> MobScene:
    return services.mob_open(
        session=t["session"],
        characters=[t[n] for n in names],
        category="physical",
        user=t["narrator"],
        msg_id=mid(),
    )


def scene(mob: MobScene) -> MobScene:
    return MobScene.objects.get(pk=mob.pk)


def health(t: dict, name: str) -> int:
    return Presence.objects.get(session=t["session"], character=t[name]).health


def npc_events(mob: MobScene) -> list[str]:
    """The kinds of the scene's events made with no actor (the NPCs')."""
    return list(
        Event.objects.filter(data__mob=mob.pk, actor=None)
        .order_by("id")
        .values_list("kind", flat=True)
    )


def throws_rock(monkeypatch) -> None:
    monkeypatch.setattr("challenges.services.npcs.draw_throw", lambda options: Throw.ROCK)


@pytest.mark.parametrize(
    ("bob_throws", "outcome", "hurt"),
    [("scissors", MobOutcome.DEFENDER_WINS, "bob"), ("paper", MobOutcome.ATTACKERS_WIN, None)],
)
def test_two_players_attack_an_auto_answering_npc_and_it_settles_without_the_narrator(
    monkeypatch, bob_throws, outcome, hurt
) -> None:
    throws_rock(monkeypatch)
    t = table()
    mob = opened(t, "ann", "bob", "eve")
    by(t, "ann", services.mob_choose, mob_id=mob.pk, target=t["eve"].pk)
    assert scene(mob).stage == MobStage.CHOOSING  # Bob has not chosen: Eve waits
    by(t, "bob", services.mob_choose, mob_id=mob.pk, target=t["eve"].pk)
    # Eve (the last to choose) pointed at nobody in Bob's transaction.
    assert scene(mob).stage == MobStage.LEADER
    assert dict(scene(mob).state["choices"]) == {
        t["ann"].pk: t["eve"].pk,
        t["bob"].pk: t["eve"].pk,
        t["eve"].pk: None,
    }
    by(t, "ann", services.mob_pick_leader, mob_id=mob.pk, leader=t["bob"].pk)
    target = scene(mob).state["targets"][0]
    # Eve bid at once: two Traits (one per attacker, met_classic), its best first.
    assert target["defender_bid_in"] and [n for n, _ in target["defender_bids"]] == [
        "Eve1",
        "Eve1",
    ]
    by(t, "ann", services.mob_bid, mob_id=mob.pk, bids=["Ann1"])
    by(t, "bob", services.mob_bid, mob_id=mob.pk, bids=["Bob1"])
    test = scene(mob).challenge
    assert scene(mob).stage == MobStage.TEST and test is not None
    by(t, "bob", services.challenge_throw, challenge_id=test.pk, throw=bob_throws)
    done = scene(mob)
    assert done.stage == MobStage.SETTLED
    assert done.state["targets"][0]["outcome"] == outcome.value
    if hurt:
        assert done.state["targets"][0]["hurt"] == t[hurt].pk and health(t, hurt) == 1
        # Its choice closed the choosing; its throw settled the target.
        assert npc_events(mob) == [
            *("mob_chose", "mob_revealed", "mob_target", "mob_bid"),
            *("mob_result", "mob_hurt", "mob_settled"),
        ]
        assert sorted(TraitLoss.objects.values_list("trait__name", flat=True)) == ["Ann1", "Bob1"]
    else:
        assert health(t, "eve") == 1
        assert npc_events(mob)[-1] != "mob_hurt"
    # Nobody but the players (and the NPC, with no actor) moved.
    narrated = Event.objects.filter(data__mob=mob.pk, actor=t["narrator"]).values_list("kind")
    assert list(narrated) == [("mob_opened",)]


def test_npc_attackers_chosen_by_a_narrator_lead_bid_and_test_by_themselves(monkeypatch) -> None:
    throws_rock(monkeypatch)
    t = table(("Eve", "Fay"))
    t["fay"].traits.filter(name="Fay2").update(count=3)  # Fay has more: she leads
    mob = opened(t, "ann", "dee", "eve", "fay")
    # A narrator points the NPCs at Dee from their phone screens (before they choose nobody).
    by(t, "eve", services.mob_choose, mob_id=mob.pk, target=t["dee"].pk)
    by(t, "fay", services.mob_choose, mob_id=mob.pk, target=t["dee"].pk)
    by(t, "ann", services.mob_choose, mob_id=mob.pk, target=None)
    by(t, "dee", services.mob_choose, mob_id=mob.pk, target=None)
    state = scene(mob).state
    target = state["targets"][0]
    # No player among the attackers: they named Fay (most Traits) and bid their best.
    assert state["stage"] == MobStage.BIDS and target["leader"] == t["fay"].pk
    assert [b[1] for b in target["bids"]] == ["Eve1", "Fay2"]
    by(t, "dee", services.mob_bid, mob_id=mob.pk, bids=["Dee1", "Dee2"])
    test = scene(mob).challenge
    assert test.challenger_id == t["fay"].pk
    by(t, "dee", services.challenge_throw, challenge_id=test.pk, throw="scissors")
    done = scene(mob)
    assert done.stage == MobStage.SETTLED
    assert done.state["targets"][0]["outcome"] == MobOutcome.ATTACKERS_WIN.value
    assert health(t, "dee") == 1


def test_an_npc_attacker_with_a_player_beside_it_lets_the_player_pick_the_leader(
    monkeypatch,
) -> None:
    throws_rock(monkeypatch)
    t = table()
    mob = opened(t, "ann", "dee", "eve")
    by(t, "eve", services.mob_choose, mob_id=mob.pk, target=t["dee"].pk)
    by(t, "ann", services.mob_choose, mob_id=mob.pk, target=t["dee"].pk)
    by(t, "dee", services.mob_choose, mob_id=mob.pk, target=None)
    assert scene(mob).stage == MobStage.LEADER  # Ann picks, not Eve
    by(t, "ann", services.mob_pick_leader, mob_id=mob.pk, leader=t["eve"].pk)
    assert [b[1] for b in scene(mob).state["targets"][0]["bids"]] == ["Eve1"]
    by(t, "ann", services.mob_bid, mob_id=mob.pk, bids=["Ann2"])
    by(t, "dee", services.mob_bid, mob_id=mob.pk, bids=["Dee1", "Dee1"])
    test = scene(mob).challenge
    by(t, "dee", services.challenge_throw, challenge_id=test.pk, throw="paper")
    done = scene(mob)
    assert done.state["targets"][0]["outcome"] == MobOutcome.DEFENDER_WINS.value
    assert done.stage == MobStage.HURT  # Dee (a player) chooses whom she hurts


def eve_attacked(t: dict) -> MobScene:
    """Ann and Bob point at Eve (no auto-answer yet): the choosing waits on her."""
    mob = opened(t, "ann", "bob", "eve")
    by(t, "ann", services.mob_choose, mob_id=mob.pk, target=t["eve"].pk)
    by(t, "bob", services.mob_choose, mob_id=mob.pk, target=t["eve"].pk)
    return mob


def auto_on(t: dict, relents: str) -> None:
    """A narrator switches Eve's auto-answer on from the dashboard."""
    services.npc_set(
        session=t["session"],
        character=t["eve"],
        auto_answer=True,
        relents=relents,
        user=t["narrator"],
        msg_id=mid(),
    )


def test_a_time_out_holds_the_npcs_mob_move_until_resume() -> None:
    t = table(auto=False)
    mob = eve_attacked(t)
    assert scene(mob).stage == MobStage.CHOOSING  # Eve without auto-answer: it waits
    services.session_time_out(session=t["session"], user=t["narrator"], msg_id=mid())
    auto_on(t, "never")
    assert scene(mob).stage == MobStage.CHOOSING  # held by the time out
    assert npc_events(mob) == []
    services.session_resume(session=t["session"], user=t["narrator"], msg_id=mid())
    assert scene(mob).stage == MobStage.LEADER
    assert npc_events(mob) == ["mob_chose", "mob_revealed", "mob_target"]


def test_switching_auto_answer_on_makes_the_npcs_due_mob_move_at_once() -> None:
    t = table(auto=False)
    mob = eve_attacked(t)
    auto_on(t, "always")
    by(t, "bob", services.mob_pick_leader, mob_id=mob.pk, leader=t["ann"].pk)
    # Relents "always": it gives up its target at once (it loses, no Trait bid).
    done = scene(mob)
    assert done.stage == MobStage.SETTLED
    assert done.state["targets"][0]["outcome"] == MobOutcome.DEFENDER_GAVE_UP.value


def test_a_narrator_plays_an_npc_without_auto_answer_through_every_mob_move() -> None:
    t = table(auto=False)
    mob = eve_attacked(t)
    by(t, "eve", services.mob_choose, mob_id=mob.pk, target=None)  # the narrator, for Eve
    by(t, "ann", services.mob_pick_leader, mob_id=mob.pk, leader=t["ann"].pk)
    by(t, "ann", services.mob_bid, mob_id=mob.pk, bids=["Ann1"])
    by(t, "bob", services.mob_bid, mob_id=mob.pk, bids=["Bob1"])
    assert scene(mob).stage == MobStage.BIDS  # nothing answers for Eve
    by(t, "eve", services.mob_bid, mob_id=mob.pk, bids=["Eve1", "Eve2"])
    test = scene(mob).challenge
    by(t, "ann", services.challenge_throw, challenge_id=test.pk, throw="scissors")
    by(t, "eve", services.challenge_throw, challenge_id=test.pk, throw="rock")
    assert scene(mob).stage == MobStage.HURT
    by(t, "eve", services.mob_hurt, mob_id=mob.pk, attacker=t["bob"].pk)
    assert scene(mob).stage == MobStage.SETTLED and health(t, "bob") == 1
    # Every one of Eve's moves carries the narrator as its actor.
    eve = Event.objects.filter(data__mob=mob.pk, actor=t["narrator"]).values_list("kind", flat=True)
    assert list(eve) == [
        *("mob_opened", "mob_chose", "mob_revealed", "mob_target"),
        *("opened", "mob_bid", "mob_test"),  # its bid opened the test
        *("mob_result", "mob_hurt", "mob_settled"),
    ]
    # A player may not act for the NPC.
    with pytest.raises(services.ActionRefused):
        services.mob_choose(
            mob_id=mob.pk, character=t["eve"], target=None, user=t["ann"].player, msg_id=mid()
        )


def test_npcs_against_an_npc_settle_the_whole_target_in_the_last_players_move(
    monkeypatch,
) -> None:
    """Two NPC attackers on an NPC defender: leader, bids, both throws (at
    once, as two NPCs do) and the result, all in Dee's choosing."""
    draws = iter([Throw.ROCK, Throw.SCISSORS])
    monkeypatch.setattr("challenges.services.npcs.draw_throw", lambda options: next(draws))
    t = table(("Eve", "Fay", "Gil"))
    mob = opened(t, "ann", "dee", "eve", "fay", "gil")
    by(t, "eve", services.mob_choose, mob_id=mob.pk, target=t["gil"].pk)
    by(t, "fay", services.mob_choose, mob_id=mob.pk, target=t["gil"].pk)
    by(t, "ann", services.mob_choose, mob_id=mob.pk, target=None)
    by(t, "dee", services.mob_choose, mob_id=mob.pk, target=None)
    done = scene(mob)
    assert done.stage == MobStage.SETTLED
    target = done.state["targets"][0]
    assert target["leader"] == t["eve"].pk  # equal Traits: the narrator's order
    assert target["outcome"] == MobOutcome.ATTACKERS_WIN.value  # rock beats scissors
    assert health(t, "gil") == 1
    assert done.challenge.is_resolved


def test_a_ruling_in_a_time_out_leaves_the_npcs_next_mob_move_to_resume(monkeypatch) -> None:
    """A narrator settles the test for Eve during a time out: whom she hurts
    waits for Resume, then she hurts the leader."""
    throws_rock(monkeypatch)
    t = table()
    mob = opened(t, "ann", "bob", "eve")
    by(t, "ann", services.mob_choose, mob_id=mob.pk, target=t["eve"].pk)
    by(t, "bob", services.mob_choose, mob_id=mob.pk, target=t["eve"].pk)
    by(t, "ann", services.mob_pick_leader, mob_id=mob.pk, leader=t["ann"].pk)
    by(t, "ann", services.mob_bid, mob_id=mob.pk, bids=["Ann1"])
    by(t, "bob", services.mob_bid, mob_id=mob.pk, bids=["Bob1"])
    test = scene(mob).challenge
    services.session_time_out(session=t["session"], user=t["narrator"], msg_id=mid())
    services.challenge_settle(
        challenge_id=test.pk, winner="defender", reason="ruled", user=t["narrator"], msg_id=mid()
    )
    assert scene(mob).stage == MobStage.HURT  # Eve's choice is held
    assert health(t, "ann") == 0
    services.session_resume(session=t["session"], user=t["narrator"], msg_id=mid())
    done = scene(mob)
    assert done.stage == MobStage.SETTLED and done.state["targets"][0]["hurt"] == t["ann"].pk
    assert health(t, "ann") == 1

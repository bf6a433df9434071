"""The mob moves an auto-answering NPC makes (challenges/rules/npc.py,
``npc_mob_move``; docs/guide.md "Running NPCs"): it points at nobody once
only NPCs are left to choose, names the strongest leader when its group has
no player, bids its best Trait (or what a defender must, else gives up) and
hurts the leader when it wins; a table per stage, and a property: from any
choosing, NPCs alone settle a scene of NPCs without an illegal move."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from challenges.rules import (
    HealthLevel,
    MobOutcome,
    MobScene,
    MobStage,
    Side,
    Throw,
    choose_target,
    mob_bid,
    open_mob,
    pick_leader,
    play_test,
    throw,
)
from challenges.rules.npc import (
    Relents,
    mob_best_bids,
    mob_leader,
    npc_mob_move,
    npc_mob_moves,
    npc_moves,
)
from tests.rules.sheets import PHYSICAL, SOCIAL, character, traits

NOW = 10.0
NEVER = Relents.NEVER


def people(*held, health=None):
    """Characters 1..n, ``held[i]`` the Physical Trait names of character i+1."""
    health = health or {}
    return [
        character(i, f"P{i}", traits(PHYSICAL, *names), health=health.get(i, HealthLevel.HEALTHY))
        for i, names in enumerate(held, start=1)
    ]


def scene(held, ruleset="met_classic", **kw) -> MobScene:
    return open_mob(
        ruleset=ruleset, category=PHYSICAL, participants=people(*held, **kw), now=1.0
    ).scene


def chosen(s: MobScene, choices: dict[int, int | None]) -> MobScene:
    for chooser, target in choices.items():
        s = choose_target(s, chooser=chooser, target=target, now=2.0).scene
    return s


STRONG = ("A*3", "B*2", "C")


# --- choosing -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("npcs", "choices", "due"),
    [
        ({3}, {}, False),  # players 1 and 2 have not chosen: the NPC waits
        ({3}, {1: 3}, False),  # one player still to choose
        ({3}, {1: 3, 2: 3}, True),  # only the NPC is left: it points at nobody
        ({2, 3}, {1: 2}, True),  # only NPCs are left: the first of them chooses
        ({3}, {3: 1}, False),  # a narrator chose for it: nothing left for it
    ],
)
def test_an_npc_chooses_nobody_once_only_npcs_are_left_to_choose(npcs, choices, due) -> None:
    s = chosen(scene([STRONG] * 3), choices)
    step = npc_mob_move(s, dict.fromkeys(npcs, NEVER), now=NOW)
    assert (step is not None) is due
    if step is not None:
        chooser = next(c for c in s.waiting_on if c in npcs)
        assert dict(step.scene.choices).get(chooser, "unset") is None


def test_the_last_npc_choice_closes_the_choosing_and_starts_the_target() -> None:
    s = chosen(scene([STRONG] * 3), {1: 3, 2: 3})
    moves = npc_mob_moves(s, {3: NEVER}, now=NOW)
    # Its choice closes the choosing; it then bids as the defender once the
    # players have picked a leader (not before: they have not).
    assert [m.scene.stage for m in moves] == [MobStage.LEADER]
    assert moves[0].scene.target is not None and moves[0].scene.target.defender == 3


# --- leader ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("held", "npcs", "leader"),
    [
        ([("A",), ("A*3",), ("A*2",)], {1, 2}, 2),  # most copies free leads
        ([("A*2",), ("B", "C"), ("A*2",)], {1, 2}, 1),  # equal: the narrator's order
        ([("A*2",), ("B", "C", "D"), ("A*2",)], {1, 2}, 2),  # copies of every Trait count
        ([("A",), ("A*3",), ("A*2",)], {2}, None),  # a player among them: the players pick
    ],
)
def test_npc_attackers_name_the_strongest_leader_when_no_player_is_among_them(
    held, npcs, leader
) -> None:
    s = chosen(scene(held), {1: 3, 2: 3, 3: None})
    assert s.stage is MobStage.LEADER
    step = npc_mob_move(s, dict.fromkeys(npcs, NEVER), now=NOW)
    if leader is None:
        assert step is None
        assert mob_leader(s) == 2  # what they would name
    else:
        assert step is not None and step.scene.target is not None
        assert step.scene.target.leader == leader and step.scene.stage is MobStage.BIDS


# --- bids -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("names", "need", "bids"),
    [
        (("A*3", "B*2", "C"), 1, ("A",)),
        (("A*3", "B*2", "C"), 3, ("A", "A", "B")),
        (("A", "B", "C"), 2, ("A", "B")),  # equals: sheet order
        (("A",), 2, ("A",)),  # too few: fewer names
    ],
)
def test_mob_best_bids_most_copies_free_first(names, need, bids) -> None:
    assert mob_best_bids(people(names)[0], PHYSICAL, need) == bids


def test_mob_best_bids_skips_other_categories_and_negatives() -> None:
    who = character(1, "P1", (*traits(SOCIAL, "S*5"), *traits(PHYSICAL, "A", negatives=["N"])))
    assert mob_best_bids(who, PHYSICAL, 2) == ("A",)


@pytest.mark.parametrize(
    ("ruleset", "relents", "health", "defender_bids", "gave_up"),
    [
        ("met_classic", NEVER, HealthLevel.HEALTHY, ["A", "A"], False),  # one per attacker
        ("ukm", NEVER, HealthLevel.HEALTHY, ["A"], False),  # as in any challenge
        ("met_classic", Relents.ALWAYS, HealthLevel.HEALTHY, [], True),
        ("met_classic", Relents.WOUNDED, HealthLevel.WOUNDED, [], True),
        ("met_classic", Relents.WOUNDED, HealthLevel.BRUISED, ["A", "A"], False),
    ],
)
def test_an_npc_defender_bids_what_it_must_or_gives_up_as_its_sheet_says(
    ruleset, relents, health, defender_bids, gave_up
) -> None:
    s = chosen(scene([STRONG] * 3, ruleset, health={3: health}), {1: 3, 2: 3, 3: None})
    step = npc_mob_move(s, {3: relents}, now=NOW)  # players 1, 2 have not picked: not yet
    assert step is None
    s = pick_leader(s, by=1, leader=1, now=NOW).scene
    step = npc_mob_move(s, {3: relents}, now=NOW)
    assert step is not None
    target = step.scene.targets[0]
    if gave_up:
        assert target.outcome is MobOutcome.DEFENDER_GAVE_UP
    else:
        assert [n for n, _ in target.defender_bids] == defender_bids
        # The players' bids then open the test.
        s = mob_bid(step.scene, character=1, bids=["A"], now=NOW).scene
        s = mob_bid(s, character=2, bids=["A"], now=NOW).scene
        assert s.stage is MobStage.TEST


def test_an_npc_attacker_bids_its_best_trait_and_waits_for_nobody() -> None:
    s = chosen(scene([("C", "B*2")] * 3), {1: 3, 2: 3, 3: None})
    moves = npc_mob_moves(s, {1: NEVER, 2: NEVER}, now=NOW)
    # leader (1 and 2 equal: the first), then both bids; the player defender's bid is left.
    assert [m.events[0].kind for m in moves] == ["mob_leader", "mob_bid", "mob_bid"]
    target = moves[-1].scene.target
    assert target is not None and [b.trait for b in target.bids] == ["B", "B"]
    assert moves[-1].scene.waiting_on == (3,)


def test_an_npc_attacker_with_no_trait_free_makes_no_bid() -> None:
    s = chosen(scene([(), STRONG, STRONG]), {1: 3, 2: 3, 3: None})
    s = pick_leader(s, by=2, leader=2, now=NOW).scene
    assert npc_mob_move(s, {1: NEVER}, now=NOW) is None


# --- hurt -----------------------------------------------------------------------


def test_an_npc_defender_who_wins_hurts_the_leader() -> None:
    s = chosen(scene([STRONG] * 3), {1: 3, 2: 3, 3: None})
    s = pick_leader(s, by=1, leader=2, now=NOW).scene
    s = mob_bid(s, character=1, bids=["A"], now=NOW).scene
    s = mob_bid(s, character=2, bids=["A"], now=NOW).scene
    step = npc_mob_move(s, {3: NEVER}, now=NOW)  # its bid opens the test
    assert step is not None and step.scene.target is not None
    s = step.scene
    test = s.target.test
    assert test is not None
    state = throw(test, side=Side.CHALLENGER, throw=Throw.SCISSORS, now=NOW).state
    s = play_test(s, throw(state, side=Side.DEFENDER, throw=Throw.ROCK, now=NOW), now=NOW).scene
    assert s.stage is MobStage.HURT
    step = npc_mob_move(s, {3: NEVER}, now=NOW)
    assert step is not None and step.scene.targets[0].hurt == 2
    assert step.scene.stage is MobStage.SETTLED
    assert npc_mob_move(s, {1: NEVER, 2: NEVER}, now=NOW) is None  # not theirs


# --- property -------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    ruleset=st.sampled_from(["met_classic", "ukm"]),
    sizes=st.lists(st.integers(1, 4), min_size=3, max_size=5),
    preset=st.lists(st.one_of(st.none(), st.integers(1, 5)), max_size=5),
    throws=st.lists(st.sampled_from(list(Throw)), max_size=40),
)
def test_npcs_alone_settle_any_scene_of_npcs_with_legal_moves(
    ruleset, sizes, preset, throws
) -> None:
    """A narrator chose some targets for them; the NPCs do the rest (their
    tests by ``npc_moves``, two NPCs throwing at once) and the scene settles,
    unless an attacker has no Trait left to bid (a stall the mob engine has
    for players too)."""
    n = len(sizes)
    s = scene([tuple(f"T{i}x{k}" for k in range(size)) for i, size in enumerate(sizes)], ruleset)
    choices = {i: t for i, t in enumerate(preset[:n], start=1) if t is None or (t <= n and t != i)}
    s = chosen(s, choices)
    npcs = dict.fromkeys(range(1, n + 1), NEVER)
    # Then alternating throws, so that ties end.
    draws = itertools.chain(throws, itertools.cycle([Throw.ROCK, Throw.SCISSORS]))
    for _ in range(50):
        for step in npc_mob_moves(s, npcs, now=NOW):
            s = step.scene
        target = s.target
        if s.stage is not MobStage.TEST or target is None or target.test is None:
            break
        sides = {Side.CHALLENGER: NEVER, Side.DEFENDER: NEVER}
        test = target.test
        for transition in npc_moves(test, sides, choose=lambda options: next(draws), now=NOW):
            s = play_test(s, transition, now=NOW).scene
            if s.stage is not MobStage.TEST:
                break
    if s.stage is MobStage.BIDS:
        # The one stall: an attacker with no Trait free has no move (nor would
        # a player): the narrator ends the scene.
        assert all(mob_best_bids(s.who(c), PHYSICAL, 1) == () for c in s.waiting_on)
        return
    assert s.stage is MobStage.SETTLED
    assert all(t.outcome is not None for t in s.targets)

"""Properties of the Storytelling System's engine, checked with Hypothesis over
random pools, dice, damage and fights: a pool never rolls fewer dice than the
chance die, a dramatic failure only on a chance die, exceptional success
exactly at five successes, damage never beyond the track, the track always
aggravated, then lethal, then bashing from the left; lossless JSON round
trips; a fight gives each fighter at most one action a turn and a refused
move changes nothing."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from challenges.rules import storytelling as story
from challenges.rules.storytelling import (
    Action,
    CombatState,
    DamageType,
    FullTrack,
    HealthTrack,
    RollOutcome,
    RulesError,
    ScriptedDice,
    StorytellingOptions,
    YieldUntil,
)

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FACES = st.integers(1, 10)
# enough faces for any roll below: a pool of at most 25 dice and a few runs of 10s
DICE = st.lists(FACES, min_size=60, max_size=60).map(lambda f: [*f, *([1] * 60)])
RANK = {DamageType.AGGRAVATED: 0, DamageType.LETHAL: 1, DamageType.BASHING: 2, None: 3}


@SETTINGS
@given(st.integers(-20, 25), DICE)
def test_a_pool_never_rolls_fewer_dice_than_the_chance_die(pool, faces):
    result = story.roll(pool, ScriptedDice(faces))
    initial = [d for d in result.dice if d.rerolled_from is None]
    assert len(initial) == max(1, pool)
    assert result.chance is (pool <= 0)


@SETTINGS
@given(
    st.integers(0, 5),
    st.integers(0, 5),
    st.booleans(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0, -1, -2, -3]),
    st.lists(st.integers(-4, 4), max_size=3),
    DICE,
)
def test_a_built_pool_rolls_at_least_one_die(attr, skill, spec, wp, equip, wound, mods, faces):
    pool = story.dice_pool(
        attribute=("Wits", attr),
        skill=("Occult", skill),
        specialty=spec and skill > 0,
        willpower=wp,
        equipment=equip,
        modifiers=[("Narrator", m) for m in mods],
        wound_penalty=wound,
    )
    result = story.roll(pool, ScriptedDice(faces))
    assert result.pool == pool.dice == sum(n for _, n in pool.parts)
    assert len([d for d in result.dice if d.rerolled_from is None]) >= 1


@SETTINGS
@given(st.integers(-5, 12), DICE)
def test_a_dramatic_failure_comes_only_from_a_chance_die(pool, faces):
    result = story.roll(pool, ScriptedDice(faces))
    if result.outcome is RollOutcome.DRAMATIC_FAILURE:
        assert result.chance and result.dice[0].face == 1 and result.successes == 0
    if not result.chance:
        assert not result.dramatic_failure


@SETTINGS
@given(st.integers(-5, 12), DICE)
def test_exceptional_success_is_exactly_five_successes_or_more(pool, faces):
    result = story.roll(pool, ScriptedDice(faces))
    assert result.exceptional is (result.successes >= 5)
    assert (result.outcome is RollOutcome.EXCEPTIONAL_SUCCESS) is (result.successes >= 5)
    assert (result.outcome is RollOutcome.FAILURE) is (
        result.successes == 0 and not result.dramatic_failure
    )


@SETTINGS
@given(st.integers(-5, 12), DICE)
def test_every_ten_and_only_a_ten_is_rolled_again(pool, faces):
    result = story.roll(pool, ScriptedDice(faces))
    sources = [d.rerolled_from for d in result.dice if d.rerolled_from is not None]
    tens = [i for i, d in enumerate(result.dice) if d.face == 10]
    assert sources == tens
    assert story.Roll.from_dict(json.loads(json.dumps(result.to_dict()))) == result


DAMAGE = st.lists(
    st.tuples(st.integers(0, 6), st.sampled_from(list(DamageType))), min_size=1, max_size=12
)


@SETTINGS
@given(st.integers(1, 12), DAMAGE, st.sampled_from(list(FullTrack)))
def test_damage_never_goes_beyond_the_track_and_keeps_its_order(size, hits, full_track):
    options = StorytellingOptions(full_track=full_track)
    track = HealthTrack(size)
    for points, kind in hits:
        before = track
        done = story.take_damage(track, points, kind, options)
        track = done.track
        assert track.marked <= track.size == size
        assert done.marked + done.upgraded + done.unmarked == points
        ranks = [RANK[b] for b in track.boxes]
        assert ranks == sorted(ranks)  # aggravated ≤ lethal ≤ bashing ≤ empty, from the left
        assert track.aggravated >= before.aggravated  # damage never heals a wound
        assert track.aggravated + track.lethal >= before.aggravated + before.lethal
        assert track.wound_penalty in (0, -1, -2, -3)
        assert HealthTrack.from_dict(json.loads(json.dumps(track.to_dict()))) == track


@SETTINGS
@given(st.integers(1, 10), DAMAGE, st.floats(0, 30 * 24 * 3600))
def test_healing_only_removes_wounds_from_the_right(size, hits, elapsed):
    track = HealthTrack(size)
    for points, kind in hits:
        track = story.take_damage(track, points, kind).track
    healed = story.heal(track, elapsed)
    assert healed.track.boxes[: healed.track.marked] == track.boxes[: healed.track.marked]
    assert len(healed.healed) == track.marked - healed.track.marked
    assert healed.seconds_used <= elapsed
    assert (healed.next_in is None) is (healed.track.marked == 0)


FIGHTERS = [
    story.Fighter(1, "Alice", initiative_modifier=5, defense=2, speed=10),
    story.Fighter(2, "Bea", initiative_modifier=3, defense=3, speed=9),
    story.Fighter(3, "Cal", initiative_modifier=4, defense=1, speed=8),
]
MOVES = st.lists(
    st.tuples(
        st.sampled_from(["act", "attack", "dodge", "later", "next", "end_turn"]),
        st.sampled_from([1, 2, 3]),
        st.sampled_from([1, 2, 3]),
    ),
    max_size=40,
)


def _move(state: CombatState, move: str, who: int, target: int) -> story.CombatTransition:
    if move == "act":
        return story.act(state, fighter_id=who, action=Action.OTHER)
    if move == "attack":
        return story.act(state, fighter_id=who, action=Action.ATTACK, target_id=target)
    if move == "dodge":
        return story.dodge(state, fighter_id=who)
    if move in ("later", "next"):
        until = YieldUntil.LATER if move == "later" else YieldUntil.NEXT_TURN
        return story.yield_action(state, fighter_id=who, until=until)
    return story.end_turn(state)


@SETTINGS
@given(st.lists(FACES, min_size=3, max_size=3), MOVES)
def test_a_fight_gives_each_fighter_one_action_a_turn(faces, moves):
    state = story.start_combat(fighters=FIGHTERS, dice=ScriptedDice(faces)).state
    actions: dict[tuple[int, int], int] = {}
    for move, who, target in moves:
        before = state.to_dict()
        legal = story.legal_moves(state, who)
        try:
            state, _ = _move(state, move, who, target)
        except RulesError:
            assert state.to_dict() == before  # a refused move changes nothing
            if move == "act":
                assert not legal.act
            if move == "dodge":
                assert not legal.dodge
            continue
        if move in ("act", "attack", "dodge"):
            turn = json.loads(json.dumps(before))["turn"]
            actions[(turn, who)] = actions.get((turn, who), 0) + 1
            assert actions[(turn, who)] == 1
        assert set(state.acted) <= set(state.order)
        assert all(n >= 1 for _, n in state.attacks)
        assert CombatState.from_dict(json.loads(json.dumps(state.to_dict()))) == state

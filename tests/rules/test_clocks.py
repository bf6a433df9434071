"""Health clocks (seeds/000 "Health", "Battle Scars", "Healing", "Aggravated
Wounds"; seeds/004 "Trait Categories"): table tests with injected instants,
Time out pauses, medical aid, a restart (recomputing from stored instants),
battle scars, and hypothesis properties of the Mortally Wounded clock."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from challenges.rules import HealthLevel
from challenges.rules.clocks import (
    GAROU_HEAL_SECONDS,
    MORTAL_TRAIT_SECONDS,
    PERMANENT_INJURIES,
    Clock,
    EffectKind,
    Form,
    Pause,
    Scar,
    advance,
    battle_scar,
    next_effect,
    night_rest,
    wounded,
)
from challenges.rules.options import MET_CLASSIC, UKM

T0 = 1_800_000_000.0  # an epoch instant: the clocks start here
MIN = 60.0
INCAP = HealthLevel.INCAPACITATED
MORTAL = HealthLevel.MORTALLY_WOUNDED


def kinds(effects) -> list[str]:
    return [e.kind.value for e in effects]


# Incapacitated ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "after", "expected"),
    [
        (MET_CLASSIC, 9 * MIN, []),
        (MET_CLASSIC, 10 * MIN, ["awake"]),
        (MET_CLASSIC, 60 * MIN, ["awake"]),  # once, however late
        (UKM, 60 * MIN, []),  # ukm: no time out of play, only no initiating
    ],
)
def test_incapacitated_is_out_of_play_ten_minutes(options, after, expected) -> None:
    clock, effects = advance(Clock(INCAP, start=T0), T0 + after, options)
    assert kinds(effects) == expected
    assert clock.health is INCAP  # awake, still Incapacitated until healed
    assert clock.awake == bool(expected)


def test_awake_is_announced_once() -> None:
    clock, effects = advance(Clock(INCAP, start=T0), T0 + 11 * MIN, MET_CLASSIC)
    again, more = advance(clock, T0 + 30 * MIN, MET_CLASSIC)
    assert kinds(effects) == ["awake"] and more == () and again == clock


# Mortally Wounded ------------------------------------------------------------


@pytest.mark.parametrize(
    ("physical", "after", "lost", "dead"),
    [
        (3, 9 * MIN + 59, 0, False),
        (3, 10 * MIN, 1, False),
        (3, 29 * MIN, 2, False),
        (3, 30 * MIN, 3, False),  # the last Physical Trait
        (3, 39 * MIN, 3, False),
        (3, 40 * MIN, 3, True),  # ten minutes after the last one
        (0, 9 * MIN, 0, False),
        (0, 10 * MIN, 0, True),  # nothing to lose: dies at the first mark
    ],
)
def test_mortally_wounded_loses_a_trait_every_ten_minutes(physical, after, lost, dead) -> None:
    clock, effects = advance(Clock(MORTAL, start=T0, physical=physical), T0 + after, MET_CLASSIC)
    assert clock.lost == lost == kinds(effects).count("trait_lost")
    assert clock.physical == physical - lost
    assert (clock.health is HealthLevel.DEAD) == dead == ("died" in kinds(effects))


@pytest.mark.parametrize("options", [MET_CLASSIC, UKM], ids=["met_classic", "ukm"])
def test_the_mortal_clock_is_the_same_under_both_presets(options) -> None:
    clock, effects = advance(Clock(MORTAL, start=T0, physical=1), T0 + 20 * MIN, options)
    assert kinds(effects) == ["trait_lost", "died"]
    assert [e.at - T0 for e in effects] == [10 * MIN, 20 * MIN]


def test_medical_aid_stops_the_mortal_clock() -> None:
    clock, effects = advance(Clock(MORTAL, start=T0, physical=5), T0 + 15 * MIN, MET_CLASSIC)
    aided = replace(clock, aid=True)
    later, more = advance(aided, T0 + 5 * 60 * MIN, MET_CLASSIC)
    assert kinds(effects) == ["trait_lost"]
    assert more == () and later.lost == 1 and later.health is MORTAL
    assert next_effect(aided, MET_CLASSIC) is None


def test_the_dead_have_no_clock() -> None:
    assert next_effect(Clock(HealthLevel.DEAD, start=T0, garou=True), MET_CLASSIC) is None


# Time out --------------------------------------------------------------------


def test_time_out_freezes_every_clock() -> None:
    """Wounded at T0; a Time out from minute 5 to minute 25: the first Trait is
    lost at minute 30 of the wall clock (ten minutes of play)."""
    pause = Pause()
    clock = Clock(MORTAL, start=pause.play(T0), physical=4)
    pause = pause.begin(T0 + 5 * MIN)
    during, effects = advance(clock, pause.play(T0 + 24 * MIN), MET_CLASSIC)
    assert effects == ()
    assert pause.remaining(clock.start + MORTAL_TRAIT_SECONDS, T0 + 24 * MIN) == 5 * MIN
    pause = pause.end(T0 + 25 * MIN)
    assert pause.total == 20 * MIN and pause.since is None
    _, effects = advance(clock, pause.play(T0 + 29 * MIN), MET_CLASSIC)
    assert effects == ()
    _, effects = advance(clock, pause.play(T0 + 30 * MIN), MET_CLASSIC)
    assert kinds(effects) == ["trait_lost"]


@pytest.mark.parametrize(
    ("pauses", "wall_minutes", "play_minutes"),
    [
        ([], 10, 10),
        ([(2, 4)], 10, 8),
        ([(2, 4), (6, 9)], 10, 5),
        ([(2, 4), (6, None)], 10, 4),  # still in Time out at minute 10
    ],
)
def test_play_time_excludes_every_time_out(pauses, wall_minutes, play_minutes) -> None:
    pause = Pause()
    start = pause.play(T0)
    for begin, end in pauses:
        pause = pause.begin(T0 + begin * MIN)
        if end is not None:
            pause = pause.end(T0 + end * MIN)
    assert pause.play(T0 + wall_minutes * MIN) - start == play_minutes * MIN


def test_a_restart_recomputes_from_stored_instants() -> None:
    """A server that restarts holds nothing in memory: advancing the stored
    clock in two steps (before and after the restart) gives what one step gives."""
    clock = Clock(MORTAL, start=T0, physical=2)
    one, effects_once = advance(clock, T0 + 35 * MIN, MET_CLASSIC)
    half, first = advance(clock, T0 + 12 * MIN, MET_CLASSIC)
    stored = Clock(**half.__dict__)  # what the database gives back after a restart
    two, second = advance(stored, T0 + 35 * MIN, MET_CLASSIC)
    assert one == two and effects_once == first + second
    assert kinds(effects_once) == ["trait_lost", "trait_lost", "died"]


# Garou healing ---------------------------------------------------------------

GAROU = Clock(HealthLevel.WOUNDED, start=T0, garou=True, form=Form.CRINOS, rest_start=T0)


@pytest.mark.parametrize(
    ("clock", "after", "health"),
    [
        (GAROU, 4 * MIN, HealthLevel.WOUNDED),
        (GAROU, 5 * MIN, HealthLevel.BRUISED),
        (GAROU, 10 * MIN, HealthLevel.HEALTHY),
        (GAROU, 60 * MIN, HealthLevel.HEALTHY),
        (replace(GAROU, form=Form.HOMID), 60 * MIN, HealthLevel.WOUNDED),  # Homid: no healing
        (replace(GAROU, rest_start=None), 60 * MIN, HealthLevel.WOUNDED),  # not resting still
        (replace(GAROU, garou=False), 60 * MIN, HealthLevel.WOUNDED),  # not a Garou
        (replace(GAROU, rest_start=T0 + 3 * MIN), 7 * MIN, HealthLevel.WOUNDED),
        (replace(GAROU, rest_start=T0 + 3 * MIN), 8 * MIN, HealthLevel.BRUISED),
        (replace(GAROU, aggravated=1), 60 * MIN, HealthLevel.BRUISED),  # aggravated stays
        (replace(GAROU, aggravated=2), 60 * MIN, HealthLevel.WOUNDED),
    ],
)
def test_a_resting_garou_heals_a_level_every_five_minutes(clock, after, health) -> None:
    healed, effects = advance(clock, T0 + after, MET_CLASSIC)
    assert healed.health is health
    assert kinds(effects) == ["healed"] * (clock.health - health)


def test_a_healing_garou_outruns_the_mortal_clock() -> None:
    clock = replace(GAROU, health=MORTAL, physical=3)
    healed, effects = advance(clock, T0 + 12 * MIN, MET_CLASSIC)
    assert kinds(effects) == ["healed", "healed"]
    assert healed.health is HealthLevel.WOUNDED and healed.physical == 3
    assert healed.start == T0 + 2 * GAROU_HEAL_SECONDS


def test_a_heal_restarts_the_incapacitated_clock() -> None:
    clock = replace(GAROU, health=MORTAL, rest_start=T0 + 3 * MIN, physical=3)
    healed, effects = advance(clock, T0 + 9 * MIN, MET_CLASSIC)
    assert kinds(effects) == ["healed"] and healed.health is INCAP
    nxt = next_effect(healed, MET_CLASSIC)
    assert nxt is not None and nxt.kind is EffectKind.HEALED and nxt.at == T0 + 13 * MIN


def test_a_wound_starts_the_new_level_now() -> None:
    clock, _ = advance(Clock(MORTAL, start=T0, physical=4, aid=True, aggravated=3), T0, UKM)
    hurt = wounded(clock, HealthLevel.BRUISED, T0 + 50 * MIN)
    assert (hurt.start, hurt.aid, hurt.lost, hurt.aggravated) == (T0 + 50 * MIN, False, 0, 1)


# Aggravated wounds, battle scars -----------------------------------------------


@pytest.mark.parametrize(
    ("health", "aggravated", "after"),
    [
        (HealthLevel.WOUNDED, 0, (HealthLevel.HEALTHY, 0)),
        (HealthLevel.WOUNDED, 2, (HealthLevel.BRUISED, 1)),
        (MORTAL, 4, (INCAP, 3)),
        (HealthLevel.DEAD, 4, (HealthLevel.DEAD, 0)),
    ],
)
def test_a_night_heals_one_aggravated_level(health, aggravated, after) -> None:
    assert night_rest(health, aggravated) == after


@pytest.mark.parametrize(
    ("number", "scar"),
    [(1, Scar.LIGHT), (3, Scar.LIGHT), (4, Scar.DEEP), (5, Scar.DEEP), (6, Scar.PERMANENT)],
)
def test_battle_scars_light_then_deep_then_permanent(number, scar) -> None:
    assert battle_scar(number) is scar


def test_battle_scars_count_from_one() -> None:
    with pytest.raises(ValueError):
        battle_scar(0)


def test_permanent_injuries_add_negative_traits() -> None:
    by_name = {i.name: i for i in PERMANENT_INJURIES}
    assert by_name["Improper Bone Setting"].negative == ("Lame",)
    assert by_name["Skull Head"].category == "social"
    assert by_name["Collapsed Lung"].negative == ("Decrepit", "Lethargic")
    assert by_name["Broken Jaw"].negative == ()


# Properties ------------------------------------------------------------------


@given(
    physical=st.integers(0, 20),
    steps=st.lists(st.floats(0, 3 * 3600, allow_nan=False), min_size=1, max_size=6),
    aid_at=st.one_of(st.none(), st.integers(0, 5)),
)
def test_the_mortal_clock_never_takes_more_than_time_allows(
    physical: int, steps: list[float], aid_at: int | None
) -> None:
    """Advanced at any instants (aid given at one of them): never more Traits
    lost than elapsed/10 min, never below zero Physical Traits, death only ten
    minutes after the last Physical Trait, and nothing twice."""
    clock = Clock(MORTAL, start=T0, physical=physical)
    seen = 0
    last_loss = T0
    for i, at in enumerate(sorted(steps)):
        if aid_at == i:
            clock = replace(clock, aid=True)
        clock, effects = advance(clock, T0 + at, MET_CLASSIC)
        seen += len(effects)
        elapsed = (T0 + at) - T0  # as the clock sees it (epoch seconds are floats)
        assert clock.lost <= elapsed // MORTAL_TRAIT_SECONDS
        assert clock.physical >= 0 and clock.lost + clock.physical == physical
        for effect in effects:
            assert effect.at <= T0 + at
            if effect.kind is EffectKind.TRAIT_LOST:
                last_loss = effect.at
            if effect.kind is EffectKind.DIED:
                assert clock.physical == 0
                assert effect.at >= last_loss + MORTAL_TRAIT_SECONDS
        _, again = advance(clock, T0 + at, MET_CLASSIC)
        assert again == ()
    assert seen == clock.lost + (clock.health is HealthLevel.DEAD)


# seeds/000 "Health", the worked example ------------------------------------------


def test_howls_at_dawn_incapacitated_by_logan_is_out_ten_minutes_then_heals_to_fight() -> None:
    """seeds/000 "Health": Logan incapacitates Howls-at-Dawn. He is out of play
    for ten minutes; awake, he still may not enter a challenge until he has
    healed a level; a Garou resting out of Homid form heals one every five
    minutes (seeds/000 "Healing"), and then he may."""
    from challenges.rules import Combatant
    from challenges.rules.judge import can_enter

    def may_fight(level: HealthLevel) -> bool:
        howls = Combatant(1, "Howls-at-Dawn", traits=(), health=level)
        return can_enter(howls, MET_CLASSIC, initiate=True)

    out = Clock(INCAP, start=T0, garou=True, form=Form.LUPUS)
    assert not may_fight(out.health)
    still_out, effects = advance(out, T0 + 9 * MIN, MET_CLASSIC)
    assert effects == () and not still_out.awake
    awake, effects = advance(out, T0 + 10 * MIN, MET_CLASSIC)
    assert kinds(effects) == ["awake"] and awake.health is INCAP and not may_fight(awake.health)
    resting = replace(awake, rest_start=T0 + 10 * MIN)
    healed, effects = advance(resting, T0 + 15 * MIN, MET_CLASSIC)
    assert kinds(effects) == ["healed"] and healed.health is HealthLevel.WOUNDED
    assert may_fight(healed.health)

"""Contested and extended actions of the Storytelling System
(challenges.rules.storytelling.actions), seeds/003 "Actions"."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from challenges.rules.storytelling import (
    STORYTELLING,
    Contest,
    ContestedTie,
    ExtendedAction,
    ExtendedDramatic,
    ExtendedEnd,
    RulesError,
    ScriptedDice,
    Side,
    abandon_extended,
    contested_action,
    extended_roll,
    start_extended,
)

# --- contested actions: "each player ... rolls the dice pool for his character and the
# person with the most successes wins" ----------------------------------------------------


@pytest.mark.parametrize(
    ("challenger", "defender", "faces", "winner"),
    [
        (2, 2, (8, 9, 8, 1), Side.CHALLENGER),  # 2 successes against 1
        (2, 3, (8, 1, 8, 9, 10, 2), Side.DEFENDER),  # 1 against 3 (the 10 rerolled)
        (0, 2, (10, 3, 1, 1), Side.CHALLENGER),  # a chance die's 10 beats no success
        (3, 1, (1, 2, 3, 1), None),  # no successes either side: the status quo holds
        (2, 2, (8, 1, 9, 1), None),  # one each: a tie (the seed is silent: status quo)
    ],
)
def test_the_most_successes_win_a_contested_action(challenger, defender, faces, winner):
    dice = ScriptedDice(faces)
    contest = contested_action(challenger=challenger, defender=defender, dice=dice)
    assert contest.winner is winner and dice.left == 0
    assert len(contest.rolls) == 1


def test_under_roll_again_a_tie_is_rolled_again_and_every_roll_kept():
    options = replace(STORYTELLING, contested_tie=ContestedTie.ROLL_AGAIN)
    dice = ScriptedDice([8, 9, 1, 2, 1, 8])  # tie (1–1), tie (0–0), then 0 against 1
    contest = contested_action(challenger=1, defender=1, dice=dice, options=options)
    assert contest.winner is Side.DEFENDER
    assert [(a.successes, b.successes) for a, b in contest.rolls] == [(1, 1), (0, 0), (0, 1)]


def test_under_roll_again_endless_ties_end_in_the_status_quo():
    options = replace(STORYTELLING, contested_tie=ContestedTie.ROLL_AGAIN, most_contest_rolls=3)
    contest = contested_action(
        challenger=1, defender=1, dice=ScriptedDice([1] * 6), options=options
    )
    assert contest.tie and len(contest.rolls) == 3


def test_a_contest_round_trips_through_json():
    contest = contested_action(challenger=2, defender=1, dice=ScriptedDice([10, 8, 3, 9]))
    assert Contest.from_dict(json.loads(json.dumps(contest.to_dict()))) == contest


# --- extended actions: "every roll of the dice represents a fixed amount of time (usually
# 10 minutes) ... You accumulate successes from roll to roll until you get a certain number
# ..., at which point either something happens or you run out of time" ----------------------


def started(**kw: object) -> ExtendedAction:
    return start_extended(**kw).state  # type: ignore[arg-type]


def rolls(state: ExtendedAction, *rounds: tuple[int, tuple[int, ...]]) -> ExtendedAction:
    for pool, faces in rounds:
        state = extended_roll(state, pool=pool, dice=ScriptedDice(faces)).state
    return state


def test_an_extended_action_rolls_every_ten_minutes_unless_told_otherwise():
    assert started(target=5).interval_seconds == 600


def test_successes_accumulate_until_the_target_is_reached():
    state = rolls(started(target=4, most_rolls=5), (3, (8, 9, 1)), (3, (1, 2, 3)))
    assert (state.successes, state.rolls_made, state.ended) == (2, 2, None)
    assert state.elapsed_seconds == 1200 and state.rolls_left == 3
    assert state.time_left_seconds == 1800
    state = rolls(state, (3, (10, 8, 1, 2)))
    assert state.ended is ExtendedEnd.SUCCEEDED and state.succeeded and state.successes == 4
    assert state.summary == "Succeeded: 4 of 4 successes after 3 rolls (30 minutes)."


def test_it_runs_out_of_time_when_the_rolls_allowed_are_spent():
    state = rolls(started(target=10, most_rolls=2), (2, (8, 1)), (2, (9, 1)))
    assert state.ended is ExtendedEnd.OUT_OF_TIME and not state.succeeded
    assert state.summary.startswith("Out of time: 2 of 10 successes after 2 rolls")


def test_a_budget_in_seconds_allows_as_many_rolls_as_fit_in_it():
    state = started(target=10, interval_seconds=600, budget_seconds=3600)  # an hour: six rolls
    assert state.rolls_left == 6
    for _ in range(5):
        state = rolls(state, (1, (1,)))
    assert state.ended is None and state.time_left_seconds == 600
    state = rolls(state, (1, (2,)))
    assert state.ended is ExtendedEnd.OUT_OF_TIME and state.rolls_left == 0


def test_the_last_roll_that_reaches_the_target_succeeds_rather_than_runs_out():
    state = rolls(started(target=2, most_rolls=1), (2, (8, 8)))
    assert state.ended is ExtendedEnd.SUCCEEDED


def test_a_dramatic_failure_ends_it_by_default():
    # the seed is silent: the app ends it, failed, and says why
    state = rolls(started(target=3, most_rolls=5), (2, (8, 1)), (0, (1,)))
    assert state.ended is ExtendedEnd.DRAMATIC_FAILURE
    assert state.successes == 1
    assert state.summary.startswith("Ended by a dramatic failure: 1 of 3 successes")


def test_under_no_successes_a_dramatic_failure_only_adds_nothing():
    options = replace(STORYTELLING, extended_dramatic=ExtendedDramatic.NO_SUCCESSES)
    state = rolls(started(target=3, most_rolls=5, options=options), (0, (1,)))
    assert state.ended is None and state.successes == 0 and state.rolls_made == 1


def test_without_a_limit_it_goes_on_until_it_succeeds_or_is_abandoned():
    state = rolls(started(target=3), (1, (1,)), (1, (1,)))
    assert state.rolls_left is None and state.summary.endswith("no time limit.")
    done = abandon_extended(state, reason="The guards came back.")
    assert done.state.ended is ExtendedEnd.ABANDONED
    assert done.state.summary.endswith("The guards came back.")
    assert [e.kind for e in done.events] == ["extended_ended"]


def test_a_roll_after_the_end_is_refused_and_says_why_it_ended():
    state = rolls(started(target=1), (1, (9,)))
    with pytest.raises(RulesError, match="over. Succeeded"):
        extended_roll(state, pool=1, dice=ScriptedDice([8]))
    with pytest.raises(RulesError, match="over"):
        abandon_extended(state)


def test_each_roll_is_an_event_and_the_end_another():
    state = started(target=1)
    events = extended_roll(state, pool=2, dice=ScriptedDice([8, 1])).events
    assert [e.kind for e in events] == ["extended_rolled", "extended_ended"]
    assert events[0].data["roll"]["dice"] == [[8, True, None], [1, False, None]]
    assert events[1].data["ended"] == "succeeded"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"target": 0}, "target"),
        ({"target": 3, "interval_seconds": 0}, "time"),
        ({"target": 3, "most_rolls": 0}, "at least one roll"),
        ({"target": 3, "interval_seconds": 600, "budget_seconds": 300}, "shorter than one roll"),
    ],
)
def test_a_bad_extended_action_is_refused(kwargs, message):
    with pytest.raises(RulesError, match=message):
        start_extended(**kwargs)


def test_an_extended_action_round_trips_through_json():
    state = rolls(started(target=5, budget_seconds=3000), (2, (10, 8, 1)))
    assert ExtendedAction.from_dict(json.loads(json.dumps(state.to_dict()))) == state

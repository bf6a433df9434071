"""The Storytelling System's health track (challenges.rules.storytelling.health):
the seed's worked example, then one row per statement of RULES.md
`storytelling` about damage, wound penalties, a full track and healing,
citing seeds/003's headings. Tracks are drawn as the sheet does: "*" aggravated,
"X" lethal, "/" bashing, "·" empty."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from challenges.rules.storytelling import (
    STORYTELLING,
    DamageType,
    FullTrack,
    HealthStatus,
    HealthTrack,
    RulesError,
    heal,
    take_damage,
)

B, L, A = DamageType.BASHING, DamageType.LETHAL, DamageType.AGGRAVATED
MINUTE, DAY = 60, 24 * 3600


def track(picture: str) -> HealthTrack:
    """A track from its picture, e.g. "*X/····"."""
    return HealthTrack(
        size=len(picture),
        aggravated=picture.count("*"),
        lethal=picture.count("X"),
        bashing=picture.count("/"),
    )


def hit(picture: str, points: int, kind: DamageType, **options: object) -> str:
    return take_damage(track(picture), points, kind, replace(STORYTELLING, **options)).track.picture


# --- the seed's worked example: seeds/003 "Marking Damage" --------------------------
# "imagining that your character has seven Health dots"


SEVEN = HealthTrack(size=7)


def test_seven_health_dots_then_one_bashing_point_marks_the_first_box():
    after = take_damage(SEVEN, 1, B).track
    assert after.picture == "/······"


def test_then_one_lethal_point_pushes_the_bashing_wound_right():
    after = take_damage(take_damage(SEVEN, 1, B).track, 1, L).track
    assert after.picture == "X/·····"


def test_then_one_aggravated_point_pushes_both_right():
    after = take_damage(take_damage(take_damage(SEVEN, 1, B).track, 1, L).track, 1, A).track
    assert after.picture == "*X/····"
    assert after.boxes == (A, L, B, None, None, None, None)


# --- marking damage ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "points", "kind", "after"),
    [
        # "starting with the box under the leftmost dot ... proceeding left to right"
        ("·····", 2, B, "//···"),  # seeds/003 "Marking Damage": bashing, a slash
        ("·····", 2, L, "XX···"),  # lethal, an X
        ("·····", 1, A, "*····"),  # aggravated, an asterisk
        # "it pushes any existing bashing damage right on the track" (lethal)
        ("//···", 1, L, "X//··"),
        # "It also pushes any existing lethal and bashing damage right" (aggravated)
        ("X//··", 2, A, "**X//"),
        ("X····", 1, B, "X/···"),  # bashing goes to the right of lethal
        # seeds/003 "Additional Damage": "Any new bashing or lethal wound upgrades an
        # existing bashing wound to lethal (make the leftmost / into an X)"
        ("X////", 1, B, "XX///"),
        ("X////", 1, L, "XX///"),
        ("*X///", 2, L, "*XXX/"),
        # "Additional aggravated damage converts a point of lethal or bashing damage
        # to aggravated (make the leftmost X or / into an asterisk)"
        ("XX///", 1, A, "*X///"),
        ("/////", 1, A, "*////"),
        ("*X///", 3, A, "****/"),
        # fills the empty boxes first, then upgrades (damage never beyond the track)
        ("//···", 5, B, "XX///"),
        ("X/···", 3, L, "XXXX/"),
        ("X/···", 4, L, "XXXXX"),
    ],
)
def test_damage_is_marked_as_the_seed_says(before, points, kind, after):
    assert hit(before, points, kind) == after


def test_the_seeds_note_a_bleeding_out_track_holds_no_bashing():
    # seeds/003 "No More Health": "this would mean the character has no bashing damage at all"
    bleeding = track("*XXXX")
    assert bleeding.status is HealthStatus.BLEEDING_OUT and bleeding.bashing == 0


@pytest.mark.parametrize(
    ("before", "points", "kind", "options", "after", "unmarked"),
    [
        # the seed is silent: bashing or lethal with no bashing wound to upgrade
        ("XXXXX", 1, B, {}, "XXXXX", 1),
        ("*XXXX", 2, L, {}, "*XXXX", 2),
        ("XXXXX", 2, L, {"full_track": FullTrack.LETHAL_TO_AGGRAVATED}, "**XXX", 0),
        ("*****", 1, B, {"full_track": FullTrack.LETHAL_TO_AGGRAVATED}, "*****", 1),
        # aggravated never upgrades an existing aggravated box (RULES.md)
        ("*****", 3, A, {}, "*****", 3),
    ],
)
def test_what_a_full_track_cannot_show_is_reported_unmarked(
    before, points, kind, options, after, unmarked
):
    done = take_damage(track(before), points, kind, replace(STORYTELLING, **options))
    assert (done.track.picture, done.unmarked) == (after, unmarked)
    assert done.marked + done.upgraded + done.unmarked == points


def test_negative_damage_is_refused():
    with pytest.raises(RulesError, match="negative"):
        take_damage(SEVEN, -1, B)


# --- wound penalties: seeds/003 "Wound Penalties" -----------------------------------


@pytest.mark.parametrize(
    ("picture", "penalty"),
    [
        ("·······", 0),
        ("////···", 0),  # four of seven: still four boxes free of the last three
        ("/////··", -1),  # "When the third-to-last box is marked ... –1"
        ("*X////·", -2),  # "when the second to last is marked it is –2"
        ("*XX////", -3),  # "when the last box is marked it is –3"
        ("*·····", 0),
        ("/··", -1),  # a three-box track: the first box is the third-to-last
        ("//", -3),
        ("X·", -2),
        ("·", 0),
    ],
)
def test_wound_penalties_follow_the_last_three_boxes(picture, penalty):
    assert track(picture).wound_penalty == penalty


# --- no more Health: seeds/003 "No More Health" ---------------------------------------


@pytest.mark.parametrize(
    ("picture", "status"),
    [
        ("·····", HealthStatus.UNHURT),
        ("X//··", HealthStatus.HURT),
        ("X////", HealthStatus.UNCONSCIOUS),  # "If that rightmost wound is bashing ... unconscious"
        ("XXXXX", HealthStatus.BLEEDING_OUT),  # "lethal or aggravated ... bleeds to death"
        ("*****", HealthStatus.BLEEDING_OUT),
        ("***XX", HealthStatus.BLEEDING_OUT),
    ],
)
def test_a_full_track_means_what_its_last_wound_says(picture, status):
    assert track(picture).status is status


# --- healing: seeds/003 "Healing" --------------------------------------------------------


@pytest.mark.parametrize(
    ("picture", "elapsed", "after", "healed"),
    [
        # "one point of bashing damage every 15 minutes"
        ("//···", 14 * MINUTE, "//···", ()),
        ("//···", 15 * MINUTE, "/····", (B,)),
        ("//···", 30 * MINUTE, "·····", (B, B)),
        # "one point of lethal damage every two days"
        ("X····", 2 * DAY - 1, "X····", ()),
        ("X····", 2 * DAY, "·····", (L,)),
        # "one point of aggravated damage every week"
        ("*····", 7 * DAY, "·····", (A,)),
        # "Lost Health is recovered from right to left": the bashing first
        ("X/···", 15 * MINUTE, "X····", (B,)),
        ("*X/··", 15 * MINUTE + 2 * DAY, "*····", (B, L)),
        ("*X/··", 15 * MINUTE + 2 * DAY + 7 * DAY, "·····", (B, L, A)),
    ],
)
def test_healing_takes_the_seeds_time_per_point_from_the_right(picture, elapsed, after, healed):
    done = heal(track(picture), elapsed)
    assert (done.track.picture, done.healed) == (after, healed)


def test_healing_says_when_the_next_point_heals_and_how_much_time_it_used():
    done = heal(track("X//··"), 40 * MINUTE)
    assert done.track.picture == "X····"
    assert done.seconds_used == 30 * MINUTE  # 10 minutes carry over toward the lethal point
    assert done.next_in == 30 * MINUTE + 2 * DAY
    assert heal(track("·····"), 10**6).next_in is None


def test_negative_elapsed_time_is_refused():
    with pytest.raises(RulesError, match="negative"):
        heal(SEVEN, -1)


# --- the track itself -----------------------------------------------------------------------


def test_a_track_round_trips_through_json():
    t = track("*X//··")
    assert HealthTrack.from_dict(json.loads(json.dumps(t.to_dict()))) == t


@pytest.mark.parametrize(
    "kwargs", [{"size": 0}, {"size": 3, "bashing": 4}, {"size": 3, "lethal": -1}]
)
def test_an_impossible_track_is_refused(kwargs):
    with pytest.raises(ValueError):
        HealthTrack(**kwargs)

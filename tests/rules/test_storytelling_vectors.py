"""The independent rule vectors of tests/rules/storytelling_vectors.json,
written by hand from seeds/003's text (not from the engine), run against the
public API of challenges.rules.storytelling. Each vector names its seed
heading and the rule it checks; the test id is that rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from challenges.rules import storytelling as story
from challenges.rules.storytelling import ScriptedDice

VECTORS = json.loads((Path(__file__).parent / "storytelling_vectors.json").read_text())
SYMBOL = {"aggravated": "*", "lethal": "X", "bashing": "/", None: "."}
RESULT = {
    "dramatic failure": story.RollOutcome.DRAMATIC_FAILURE,
    "failure": story.RollOutcome.FAILURE,
    "success": story.RollOutcome.SUCCESS,
    "exceptional success": story.RollOutcome.EXCEPTIONAL_SUCCESS,
}
STATE = {
    "hurt": story.HealthStatus.HURT,
    "unconscious": story.HealthStatus.UNCONSCIOUS,
    "bleeding out": story.HealthStatus.BLEEDING_OUT,
}


def cases(group: str) -> Any:
    return pytest.mark.parametrize(
        "v", VECTORS[group], ids=[f"{v['source']}: {v['rule']}" for v in VECTORS[group]]
    )


def drawn(track: story.HealthTrack) -> str:
    return "".join(SYMBOL[None if b is None else b.value] for b in track.boxes)


def from_picture(picture: str) -> story.HealthTrack:
    return story.HealthTrack(
        len(picture), picture.count("*"), picture.count("X"), picture.count("/")
    )


@cases("rolls")
def test_roll_vector(v):
    dice = ScriptedDice(v["faces"])
    result = story.roll(v["pool"], dice)
    assert (result.successes, result.outcome) == (v["successes"], RESULT[v["result"]])
    assert dice.left == 0


@cases("pools")
def test_pool_vector(v):
    pool = story.dice_pool(
        attribute=tuple(v["attribute"]),
        skill=None if v["skill"] is None else tuple(v["skill"]),
        specialty=v.get("specialty", False),
        willpower=v.get("willpower", False),
        modifiers=[("Narrator", m) for m in v.get("modifiers", [])],
        wound_penalty=v.get("wound_penalty", 0),
        wisdom=v.get("wisdom", False),
    )
    assert pool.dice == v["dice"]
    assert pool.chance is (v["dice"] <= 0)


@cases("health")
def test_health_vector(v):
    track = story.HealthTrack(v["dots"])
    for kind, points in v["damage"]:
        track = story.take_damage(track, points, story.DamageType(kind)).track
    assert drawn(track) == v["track"]
    assert track.wound_penalty == v["penalty"]
    assert track.status is STATE[v["state"]]


@cases("healing")
def test_healing_vector(v):
    assert drawn(story.heal(from_picture(v["track"]), v["seconds"]).track) == v["after"]


@cases("attacks")
def test_attack_vector(v):
    pool = story.attack_pool(
        kind=story.AttackKind(v["attack"]),
        attribute=v["attribute"],
        skill=v["skill"],
        weapon=v.get("weapon", 0),
        improvised=v.get("improvised", False),
        defense=v.get("defense", 0),
        armor=v.get("armour", 0),
        point_blank=v.get("point_blank", False),
        prone=v.get("prone", False),
        concealment=v.get("concealment", 0),
        range_band=story.RangeBand(v.get("range", "short")),
    )
    assert pool.dice == v["dice"]


@cases("defense")
def test_defense_vector(v):
    got = story.effective_defense(
        v["defense"], dodging=v["dodging"], earlier_attacks=v["attack_number"] - 1
    )
    assert got == v["effective"]


@cases("cover")
def test_cover_vector(v):
    shot = story.roll(v["pool"], ScriptedDice(v["faces"]))
    done = story.attack_damage(shot, damage_type=story.DamageType.LETHAL, cover=v["durability"])
    assert done.damage == v["damage"]


@cases("initiative")
def test_initiative_vector(v):
    dice = ScriptedDice([v["face"], 10])
    assert story.roll_initiative(modifier=v["modifier"], dice=dice).total == v["total"]
    assert dice.left == 1


@cases("speed")
def test_speed_vector(v):
    assert story.yards(v["speed"], running=v["running"]) == v["yards"]

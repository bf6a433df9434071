"""Issue 13: a Storytelling fight through its services (challenges.services.
story_combat) with the engine's rules and exact dice (``server_dice`` patched
with ScriptedDice): Initiative rolled once and kept, Defense off close-combat
pools (less one per further attack, doubled by a dodge, +2 for a Willpower
point), damage on the target's track and her wound penalty on her next pool,
refusals that change nothing, a narrator's rulings on a track, natural
healing and what carries into the next session. seeds/003 "Combat",
"Health", "Healing"."""

from __future__ import annotations

import uuid

import pytest

from challenges import services
from challenges.models import Event, StoryCombat
from challenges.rules import RulesError
from challenges.rules import storytelling as rules
from challenges.services import ActionRefused
from challenges.services import story_combat as fights
from characters.models import Presence
from tests.factories import story_fight_evening

pytestmark = pytest.mark.django_db


def _id() -> str:
    return uuid.uuid4().hex


@pytest.fixture
def t():
    return story_fight_evening()


def _start(t, dice, faces=(1, 5, 9)):
    """Ada (Initiative +3), Bram (+2), Cleo (+1) roll ``faces`` in that order."""
    dice(*faces)
    return services.fight_start(
        session=t["session"],
        characters=[t["ada"], t["bram"], t["cleo"]],
        user=t["narrator"],
        msg_id=_id(),
    )


def _state(row: StoryCombat) -> rules.CombatState:
    row.refresh_from_db()
    return rules.CombatState.from_dict(row.state)


def _track(t, name: str) -> tuple[int, int, int]:
    p = Presence.objects.get(session=t["session"], character=t[name])
    return (p.track_aggravated, p.track_lethal, p.track_bashing)


def _attack(t, row, who, target, **kw):
    return services.fight_attack(
        fight_id=row.pk,
        character=t[who],
        target_id=t[target].pk,
        kind=kw.pop("kind", "unarmed"),
        user=t[f"{who}_player"],
        msg_id=_id(),
        **kw,
    )


def _mark(t, name: str, points: int, damage_type: str, reason: str) -> None:
    """A narrator's ruling: ``points`` of ``damage_type`` on ``name``'s track."""
    services.track_mark(
        session=t["session"],
        character=t[name],
        points=points,
        damage_type=damage_type,
        reason=reason,
        user=t["narrator"],
        msg_id=_id(),
    )


def test_initiative_is_rolled_once_with_its_die_and_orders_the_fight(t, dice):
    row = _start(t, dice)  # Ada 1+3=4, Bram 5+2=7, Cleo 9+1=10
    state = _state(row)
    assert [f.name for f in state.fighters] == ["Cleo", "Bram", "Ada"]
    assert [(r["by"], r["face"], r["total"]) for r in row.rolls] == [
        (t["cleo"].pk, 9, 10),
        (t["bram"].pk, 5, 7),
        (t["ada"].pk, 1, 4),
    ]  # logged in the order of the fight
    assert rules.whose_turn(state) == t["cleo"].pk
    services.fight_end_turn(fight_id=row.pk, user=t["narrator"], msg_id=_id())
    assert [f.initiative.total for f in _state(row).fighters] == [10, 7, 4]  # kept, no new roll


def test_an_attack_takes_the_targets_defense_off_and_marks_her_track(t, dice):
    row = _start(t, dice)
    # Cleo: Strength 3 + Brawl 2 − Bram's Defense 2 = 3 dice: 8, 10 (again: 9), 2
    dice(8, 10, 2, 9)
    _attack(t, row, "cleo", "bram", damage_type="lethal")
    row.refresh_from_db()
    last = row.rolls[-1]
    assert last["defense"] == 2 and last["damage"] == 3
    assert rules.DicePool.from_dict(last["pool"]).dice == 3
    assert _track(t, "bram") == (0, 3, 0)
    assert last["track"] == "XXX···"  # six Health boxes
    assert rules.whose_turn(_state(row)) == t["bram"].pk
    assert Event.objects.filter(kind="fight_rolled", data__fight=row.pk).count() == 1


def test_a_further_attack_in_the_turn_meets_one_less_defense(t, dice):
    row = _start(t, dice)
    dice(1, 1, 1)
    _attack(t, row, "cleo", "ada")
    dice(1, 1, 1)  # Bram: Strength 2 + Brawl 2 − (Ada's Defense 2 − 1) = 3 dice
    _attack(t, row, "bram", "ada")
    row.refresh_from_db()
    assert [r["defense"] for r in row.rolls if r["kind"] == "attack"] == [2, 1]


def test_a_dodge_doubles_defense_and_is_refused_after_acting(t, dice):
    row = _start(t, dice)
    services.fight_dodge(fight_id=row.pk, character=t["ada"], user=t["ada_player"], msg_id=_id())
    dice(1)  # Cleo's 5 dice less Ada's doubled Defense 4: one die
    _attack(t, row, "cleo", "ada")
    row.refresh_from_db()
    assert row.rolls[-1]["defense"] == 4
    assert rules.DicePool.from_dict(row.rolls[-1]["pool"]).dice == 1
    with pytest.raises(RulesError, match="already used her action"):
        services.fight_dodge(
            fight_id=row.pk, character=t["cleo"], user=t["cleo_player"], msg_id=_id()
        )


def test_wounds_lower_the_attackers_next_pool(t, dice):
    row = _start(t, dice)
    _mark(t, "bram", 4, "bashing", "fell down the stairs")
    dice(1, 1, 1)
    _attack(t, row, "cleo", "ada")
    dice(1, 1)  # Bram: 2 + 2 − Ada 1 − wound penalty 1 (4 of 6 boxes marked) = 2 dice
    _attack(t, row, "bram", "ada")
    row.refresh_from_db()
    pool = rules.DicePool.from_dict(row.rolls[-1]["pool"])
    assert dict(pool.parts)["Wound penalty"] == -1 and pool.dice == 2


def test_willpower_on_defense_adds_two_and_spends_the_targets_point(t, dice):
    row = _start(t, dice)
    services.fight_guard(
        fight_id=row.pk, character=t["ada"], on=True, user=t["ada_player"], msg_id=_id()
    )
    dice(1)
    _attack(t, row, "cleo", "ada")  # 5 dice − 4
    row.refresh_from_db()
    assert row.rolls[-1]["defense"] == 4 and row.rolls[-1]["guard"]
    assert Presence.objects.get(session=t["session"], character=t["ada"]).willpower_spent == 1
    assert row.guard == []


def test_the_attackers_willpower_adds_three_dice_once(t, dice):
    row = _start(t, dice)
    dice(1, 1, 1, 1, 1, 1)
    _attack(t, row, "cleo", "bram", willpower=True)
    row.refresh_from_db()
    assert rules.DicePool.from_dict(row.rolls[-1]["pool"]).dice == 6
    assert Presence.objects.get(session=t["session"], character=t["cleo"]).willpower_spent == 1


@pytest.mark.parametrize(
    ("who", "target", "kw", "error", "words"),
    [
        ("bram", "ada", {}, RulesError, "not Bram's turn"),
        ("cleo", "cleo", {}, RulesError, "someone else"),
        ("cleo", "dora", {}, RulesError, "someone else"),
        ("cleo", "ada", {"kind": "magic"}, ActionRefused, "unarmed, armed"),
        ("cleo", "ada", {"weapon": 9}, RulesError, "0 to 5"),
        ("cleo", "ada", {"damage_type": "fire"}, ActionRefused, "bashing, lethal"),
    ],
)
def test_a_refused_attack_changes_nothing(t, dice, who, target, kw, error, words):
    row = _start(t, dice)
    before = (row.version, len(row.rolls), _track(t, "ada"))
    with pytest.raises(error, match=words):
        _attack(t, row, who, target, **kw)
    row.refresh_from_db()
    assert (row.version, len(row.rolls), _track(t, "ada")) == before


def test_a_move_during_a_time_out_is_refused_and_end_is_not(t, dice):
    row = _start(t, dice)
    services.session_time_out(session=t["session"], user=t["narrator"], msg_id=_id())
    with pytest.raises(ActionRefused, match="[Tt]ime out"):
        _attack(t, row, "cleo", "ada")
    row.refresh_from_db()
    assert row.rolls[-1]["kind"] == "initiative"
    services.fight_end(fight_id=row.pk, user=t["narrator"], msg_id=_id())
    row.refresh_from_db()
    assert row.ended_at is not None


def test_only_a_narrator_of_a_dice_pool_chronicle_starts_a_fight(t, dice):
    with pytest.raises(ActionRefused, match="narrators"):
        services.fight_start(
            session=t["session"],
            characters=[t["ada"], t["bram"]],
            user=t["ada_player"],
            msg_id=_id(),
        )
    t["chronicle"].ruleset = "bns"
    t["chronicle"].save()
    with pytest.raises(ActionRefused, match="dice pools"):
        _start(t, dice)
    assert not StoryCombat.objects.exists()


def test_add_and_remove_a_fighter(t, dice):
    row = _start(t, dice)
    dice(10)  # Dora: 10 + 0
    services.fight_add(fight_id=row.pk, character=t["dora"], user=t["narrator"], msg_id=_id())
    row.refresh_from_db()
    assert row.rolls[-1]["by"] == t["dora"].pk and row.rolls[-1]["total"] == 10
    services.fight_remove(
        fight_id=row.pk, character_id=t["dora"].pk, user=t["narrator"], msg_id=_id()
    )
    assert t["dora"].pk not in _state(row).order


def test_a_narrators_ruling_marks_and_heals_the_track_with_a_reason(t):
    args = {"session": t["session"], "character": t["ada"], "user": t["narrator"]}
    services.track_mark(points=2, damage_type="lethal", reason="fire", msg_id=_id(), **args)
    services.track_mark(points=1, damage_type="bashing", reason="a fall", msg_id=_id(), **args)
    assert _track(t, "ada") == (0, 2, 1)
    services.track_heal(points=2, reason="a healing spell", msg_id=_id(), **args)
    assert _track(t, "ada") == (0, 1, 0)
    kinds = list(Event.objects.filter(kind__startswith="track_").values_list("kind", flat=True))
    assert kinds == ["track_mark", "track_mark", "track_heal"]
    with pytest.raises(ActionRefused, match="reason"):
        services.track_heal(points=1, reason=" ", msg_id=_id(), **args)


def test_bashing_heals_a_point_every_fifteen_minutes_of_play(t):
    args = {"session": t["session"], "character": t["ada"], "user": t["narrator"]}
    services.track_mark(points=2, damage_type="bashing", reason="a brawl", msg_id=_id(), **args)
    p = Presence.objects.get(session=t["session"], character=t["ada"])
    start = p.heal_start
    assert p.heal_due == start + 15 * 60
    assert services.story_heal_apply(t["session"].pk, now=start + 14 * 60) == 0
    assert services.story_heal_apply(t["session"].pk, now=start + 15 * 60 + 1) == 1
    assert _track(t, "ada") == (0, 0, 1)
    p.refresh_from_db()
    assert p.heal_start == start + 15 * 60 and p.heal_due == start + 30 * 60


def test_lethal_wounds_carry_into_the_next_session_and_bashing_heals(t):
    args = {"session": t["session"], "character": t["ada"], "user": t["narrator"]}
    services.track_mark(points=1, damage_type="lethal", reason="a knife", msg_id=_id(), **args)
    services.track_mark(points=2, damage_type="bashing", reason="a fall", msg_id=_id(), **args)
    session = services.session_start(chronicle=t["chronicle"], user=t["narrator"], msg_id=_id())
    p = Presence.objects.get(session=session, character=t["ada"])
    # no time passed: the bashing points are still there, the lethal one carries
    assert (p.track_aggravated, p.track_lethal) == (0, 1)
    fields = fights.story_night(p, health=6, now=(p.heal_start or 0) + 3 * 24 * 3600)
    assert fields["track_lethal"] == 0 and fields["track_bashing"] == 0


def test_the_history_tells_the_fight_and_the_rulings_in_words(t, dice):
    from challenges.history import session_history

    row = _start(t, dice)
    dice(8, 10, 2, 9)
    _attack(t, row, "cleo", "bram", damage_type="lethal")
    _mark(t, "ada", 1, "bashing", "a fall")
    texts = [e.text for e in session_history(t["session"]).entries]
    assert f"Fight #{row.pk} starts, Initiative rolled: Cleo (10), Bram (7), Ada (4)" in texts
    assert (
        f"Fight #{row.pk}: Cleo attacks Bram (Defense 2): 3 successes, 3 lethal (track XXX···)"
        in texts
    )
    assert "Ada's track: 1 bashing (a fall): ······ → /·····" in texts
    mine = [e.text for e in session_history(t["session"], character_id=t["ada"].pk).entries]
    assert "Ada's track: 1 bashing (a fall): ······ → /·····" in mine


def test_her_phone_says_when_her_next_point_heals(t, client):
    _mark(t, "ada", 1, "bashing", "a fall")
    client.force_login(t["ada_player"])
    page = client.get(f"/play/{t['ada'].pk}/").content.decode()
    assert "Next point heals in 15 min." in page
    services.track_heal(
        session=t["session"],
        character=t["ada"],
        points=1,
        reason="a spell",
        user=t["narrator"],
        msg_id=_id(),
    )
    assert "Next point heals" not in client.get(f"/play/{t['ada'].pk}/").content.decode()


def test_a_character_outside_the_fight_cannot_move_in_it(t, dice):
    row = _start(t, dice)
    with pytest.raises(RulesError, match="not in this fight"):
        services.fight_dodge(
            fight_id=row.pk, character=t["dora"], user=t["dora_player"], msg_id=_id()
        )
    with pytest.raises(ActionRefused, match="Only this chronicle's narrators"):
        services.fight_end_turn(fight_id=row.pk, user=t["ada_player"], msg_id=_id())
    assert _state(row).turn == 1 and row.version == 1

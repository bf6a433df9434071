"""Issue 13: storytelling rolls through the services (seeds/003 "Dice
Pools", "Rolling Dice", "Actions"): a roll a narrator calls for and the
player's tap, wound penalties and Willpower, an NPC's roll and an open roll,
contested and extended actions, and every refusal changing nothing."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from challenges import services
from challenges.consistency import find_inconsistencies
from challenges.history import session_history
from challenges.models import DiceRoll, Event
from challenges.rules import RulesError
from challenges.services import rolls
from characters.management.commands.demo import STORY_CHRONICLE
from characters.models import Chronicle, Presence
from tests.challenges.rolls_setup import scripted, story_evening
from tests.factories import evening

pytestmark = pytest.mark.django_db


@pytest.fixture
def night():
    return story_evening()


def _spec(attribute="Dexterity", skill="Stealth", **extra):
    return services.roll_spec(attribute=attribute, skill=skill, **extra)


def _call(night, who="iris", msg_id="call", **spec):
    return services.roll_call(
        session=night["session"],
        character=night[who],
        spec=_spec(**spec),
        user=night["narrator"],
        msg_id=msg_id,
    )


def _make(night, row, who="iris", msg_id="make", willpower=False):
    return services.roll_make(
        roll_id=row.pk,
        character=night[who],
        willpower=willpower,
        user=night[f"{who}_player"],
        msg_id=msg_id,
    )


def _spent(night, who="iris") -> int:
    return Presence.objects.get(session=night["session"], character=night[who]).willpower_spent


def test_a_called_roll_waits_for_her_tap_then_the_server_rolls_every_die(night, monkeypatch):
    row = _call(night)
    assert (row.kind, row.label, row.result, row.rolled_at) == (
        "called",
        "Dexterity + Stealth",
        None,
        None,
    )
    scripted(monkeypatch, 10, 3, 8, 9)  # Dexterity 2 + Stealth 1: three dice, the 10 rerolled
    row = _make(night, row)
    assert row.pool == {"parts": [["Dexterity", 2], ["Stealth", 1]], "willpower": False}
    assert row.result["dice"] == [[10, True, None], [3, False, None], [8, True, None], [9, True, 0]]
    assert (row.result["successes"], row.result["outcome"]) == (3, "success")
    assert row.rolled_at is not None and row.version == 2
    logged = Event.objects.filter(session=night["session"], kind="roll_rolled").get()
    assert logged.data["faces"] == [10, 3, 8, 9]
    texts = [e.text for e in session_history(night["session"]).entries]
    assert "Iris rolls Dexterity + Stealth: 10, 3, 8, 9 · 3 successes (success)" in texts


@pytest.mark.parametrize(
    ("spec", "parts"),
    [
        ({"skill": None, "attribute": "Wits"}, [["Wits", 3]]),
        ({"skill": "Brawl"}, [["Dexterity", 2], ["Brawl", 0], ["Unskilled (Physical)", -1]]),
        (
            {"skill": "Science", "attribute": "Intelligence"},
            [["Intelligence", 3], ["Science", 0], ["Unskilled (Mental)", -3]],
        ),
        (
            {"skill": "Occult", "attribute": "Intelligence", "specialty": True},
            [["Intelligence", 3], ["Occult", 3], ["Specialty", 1]],
        ),
        (
            {"equipment": 2, "modifiers": [("Darkness", -2)]},
            [["Dexterity", 2], ["Stealth", 1], ["Equipment", 2], ["Darkness", -2]],
        ),
    ],
)
def test_a_pool_adds_her_dots_and_every_modifier(night, monkeypatch, spec, parts):
    row = _call(night, **spec)
    scripted(monkeypatch, *[1] * 12)
    assert _make(night, row).pool["parts"] == parts


def test_her_wound_penalty_is_taken_off_the_pool_when_she_rolls(night, monkeypatch):
    row = _call(night)
    # Five of seven boxes marked: the third-from-last is marked, −1.
    Presence.objects.filter(character=night["iris"]).update(track_bashing=5)
    scripted(monkeypatch, 1, 1)
    row = _make(night, row)
    assert row.pool["parts"][-1] == ["Wound penalty", -1] and len(row.result["dice"]) == 2


def test_willpower_adds_three_dice_and_is_spent_tonight(night, monkeypatch):
    row = _call(night, willpower_allowed=True)
    scripted(monkeypatch, *[2] * 6)
    row = _make(night, row, willpower=True)
    assert row.pool["parts"][-1] == ["Willpower", 3] and len(row.result["dice"]) == 6
    assert (_spent(night), row.willpower_spent) == (1, 1)


def test_willpower_is_refused_in_words_when_none_is_left_and_nothing_changes(night, monkeypatch):
    Presence.objects.filter(character=night["iris"]).update(willpower_spent=5)
    row = _call(night, willpower_allowed=True)
    scripted(monkeypatch, *[2] * 6)
    with pytest.raises(services.ActionRefused, match="Iris has no Willpower left tonight"):
        _make(night, row, willpower=True)
    row.refresh_from_db()
    assert (row.result, row.version, _spent(night)) == (None, 1, 5)


def test_willpower_is_refused_when_the_narrator_did_not_allow_it(night, monkeypatch):
    row = _call(night, willpower_allowed=False)
    scripted(monkeypatch, *[2] * 6)
    with pytest.raises(services.ActionRefused, match="did not allow Willpower"):
        _make(night, row, willpower=True)
    assert _spent(night) == 0


def test_a_modifier_called_willpower_is_refused_one_point_per_roll(night):
    with pytest.raises(RulesError, match="Only one Willpower point"):
        _call(night, modifiers=[("Willpower", 3)])
    assert not DiceRoll.objects.exists()


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"attribute": "Charm"}, "no Attribute called 'Charm'"),
        ({"skill": "Hacking"}, "no Skill called 'Hacking'"),
        ({"modifiers": [("Luck", 11)]}, "at most 10 dice"),
        ({"modifiers": [("", 2)]}, "a reason"),
        ({"modifiers": [(f"m{i}", 1) for i in range(5)]}, "At most 4 modifiers"),
        ({"skill": None, "specialty": True}, "needs a Skill"),
    ],
)
def test_a_forged_pool_is_refused_in_words(spec, words):
    with pytest.raises(services.ActionRefused, match=words):
        _spec(**spec)


def test_a_specialty_she_does_not_have_is_refused_at_the_call(night):
    with pytest.raises(RulesError, match="no Specialty in Stealth"):
        _call(night, specialty=True)
    assert not DiceRoll.objects.exists()


def test_another_players_roll_is_refused_and_left_waiting(night, monkeypatch):
    row = _call(night)
    scripted(monkeypatch, 9, 9, 9)
    with pytest.raises(services.ActionRefused, match="not yours"):
        _make(night, row, who="marcus")
    row.refresh_from_db()
    assert row.result is None


def test_a_roll_already_made_is_refused_and_a_repeated_message_is_already_done(night, monkeypatch):
    row = _call(night)
    scripted(monkeypatch, 9, 9, 9, 1, 1, 1)
    made = _make(night, row)
    with pytest.raises(services.AlreadyDone):
        _make(night, row)
    with pytest.raises(services.ActionRefused, match="already made"):
        _make(night, row, msg_id="again")
    row.refresh_from_db()
    assert row.result == made.result and row.version == 2


def test_no_roll_is_made_during_a_time_out(night, monkeypatch):
    row = _call(night)
    services.session_time_out(session=night["session"], user=night["narrator"], msg_id="to")
    scripted(monkeypatch, 9, 9, 9)
    with pytest.raises(services.ActionRefused, match="Time out"):
        _make(night, row)
    with pytest.raises(services.ActionRefused, match="Time out"):
        _call(night, msg_id="call2")
    row.refresh_from_db()
    assert row.result is None and DiceRoll.objects.count() == 1


def test_only_a_narrator_calls_for_a_roll(night):
    with pytest.raises(services.ActionRefused, match="narrators"):
        services.roll_call(
            session=night["session"],
            character=night["iris"],
            spec=_spec(),
            user=night["iris_player"],
            msg_id="x",
        )


def test_an_npc_rolls_at_once_and_a_narrator_rolls_openly(night, monkeypatch):
    scripted(monkeypatch, 8, 8, 1, 1, 1, 1, 1, 10, 2)
    row = _call(night, who="shade")  # Dexterity 4 + Stealth 3: seven dice
    assert row.kind == "npc" and row.result["successes"] == 2 and row.rolled_at
    opened = services.roll_open(
        session=night["session"],
        dice=0,
        label="Is the bridge watched?",
        user=night["narrator"],
        msg_id="o",
    )
    # A chance die: its 10 succeeds and is rolled again; the reroll's 2 does not.
    assert opened.result["dice"] == [[10, True, None], [2, False, 0]]
    assert (opened.kind, opened.character_id, opened.label) == (
        "open",
        None,
        "Is the bridge watched?",
    )


@pytest.mark.parametrize("dice", [31, 1000])
def test_an_oversized_open_roll_is_refused(night, dice):
    with pytest.raises(services.ActionRefused, match="0 to 30 dice"):
        services.roll_open(
            session=night["session"], dice=dice, label="", user=night["narrator"], msg_id="o"
        )


# --- contested ---------------------------------------------------------------------


def _contest(night, willpower=False, **spec):
    return services.roll_contest(
        session=night["session"],
        character=night["iris"],
        opponent=night["marcus"],
        spec=_spec(**spec),
        willpower=willpower,
        label="Slip past Marcus",
        user=night["iris_player"],
        msg_id="contest",
    )


def _resist(night, row, willpower=False, msg_id="resist"):
    return services.roll_resist(
        roll_id=row.pk,
        character=night["marcus"],
        spec=_spec(attribute="Wits", skill=None),
        willpower=willpower,
        user=night["marcus_player"],
        msg_id=msg_id,
    )


@pytest.mark.parametrize(
    ("faces", "winner", "successes"),
    [
        ((8, 9, 1, 9, 2), "iris", [2, 1]),
        ((1, 2, 3, 9, 8), "marcus", [0, 2]),
        ((8, 2, 3, 9, 2), None, [1, 1]),  # a tie: the status quo holds
    ],
)
def test_a_contest_rolls_both_pools_and_the_most_successes_wins(
    night, monkeypatch, faces, winner, successes
):
    row = _contest(night)
    assert row.result is None and row.opponent_id == night["marcus"].pk
    scripted(monkeypatch, *faces)  # Iris: Dexterity 2 + Stealth 1; Marcus: Wits 2
    row = _resist(night, row)
    assert row.rolled_at is not None and row.opponent_label == "Wits"
    pair = row.result["rolls"][-1]
    assert [pair[0]["successes"], pair[1]["successes"]] == successes
    expected = {"iris": "challenger", "marcus": "defender", None: None}[winner]
    assert row.result["winner"] == expected
    logged = Event.objects.get(kind="roll_contested")
    assert logged.data["winner"] == (night[winner].pk if winner else None)


def test_a_contest_spends_each_sides_willpower_when_rolled(night, monkeypatch):
    row = _contest(night, willpower=True)
    assert _spent(night) == 0
    scripted(monkeypatch, *[1] * 11)
    _resist(night, row, willpower=True)
    assert (_spent(night), _spent(night, "marcus")) == (1, 1)


def test_only_her_opponent_resists_and_only_once(night, monkeypatch):
    row = _contest(night)
    scripted(monkeypatch, *[1] * 20)
    with pytest.raises(services.ActionRefused, match="not yours to resist"):
        services.roll_resist(
            roll_id=row.pk,
            character=night["iris"],
            spec=_spec(),
            user=night["iris_player"],
            msg_id="r0",
        )
    _resist(night, row)
    with pytest.raises(services.ActionRefused, match="already rolled"):
        _resist(night, row, msg_id="r2")


def test_a_narrator_resists_for_an_npc(night, monkeypatch):
    row = services.roll_contest(
        session=night["session"],
        character=night["iris"],
        opponent=night["shade"],
        spec=_spec(),
        user=night["narrator"],
        msg_id="c",
    )
    scripted(monkeypatch, *[9] * 3, *[1] * 4)
    row = services.roll_resist(
        roll_id=row.pk,
        character=night["shade"],
        spec=_spec(attribute="Wits", skill=None),
        user=night["narrator"],
        msg_id="r",
    )
    assert row.result["winner"] == "challenger"


# --- extended -------------------------------------------------------------------


def _extended(night, **extra):
    values = {"target": 3, "interval_minutes": 10, "most_rolls": 3} | extra
    return services.roll_extended(
        session=night["session"],
        character=night["iris"],
        spec=_spec(),
        user=night["narrator"],
        msg_id="ext",
        **values,
    )


def _tap(night, row, msg_id):
    return services.roll_extended_roll(
        roll_id=row.pk, character=night["iris"], user=night["iris_player"], msg_id=msg_id
    )


def test_an_extended_action_gathers_successes_a_roll_per_interval(night, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(rolls, "_now", lambda: clock[0])
    row = _extended(night)
    scripted(monkeypatch, 8, 1, 1, 9, 8, 1)
    row = _tap(night, row, "t1")  # the first roll at once
    assert row.result["rolls"][0]["successes"] == 1 and row.rolled_at is None
    clock[0] += 300
    with pytest.raises(services.ActionRefused, match=r"Your next roll is in 5:00\."):
        _tap(night, row, "t2")
    clock[0] += 300
    row = _tap(night, row, "t3")
    assert row.result["ended"] == "succeeded" and row.rolled_at is not None
    summary = "Succeeded: 3 of 3 successes after 2 rolls (20 minutes)."
    assert Event.objects.filter(kind="roll_extended_rolled").last().data["summary"] == summary


def test_an_extended_action_runs_out_of_time(night, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(rolls, "_now", lambda: clock[0])
    row = _extended(night, most_rolls=None, budget_minutes=15)  # one roll of 10 minutes
    scripted(monkeypatch, 1, 1, 8)
    row = _tap(night, row, "t1")
    assert row.result["ended"] == "out_of_time"
    words = r"over\. Out of time: 1 of 3 successes after 1 roll \(10 minutes\)"
    with pytest.raises(services.ActionRefused, match=words):
        _tap(night, row, "t2")


def test_a_time_out_does_not_count_toward_the_interval(night, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(rolls, "_now", lambda: clock[0])
    row = _extended(night)
    scripted(monkeypatch, *[1] * 9)
    row = _tap(night, row, "t1")
    clock[0] += 600
    # Five minutes of it were a Time out (already over): five minutes still to wait.
    night["session"].__class__.objects.filter(pk=night["session"].pk).update(time_out_seconds=300)
    with pytest.raises(services.ActionRefused, match=r"Your next roll is in 5:00\."):
        _tap(night, row, "t2")


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        ({"target": 0}, RulesError),
        ({"budget_minutes": 5, "most_rolls": None}, RulesError),
        ({"target": 101}, services.ActionRefused),
    ],
)
def test_an_impossible_extended_action_is_refused(night, extra, error):
    with pytest.raises(error):
        _extended(night, **extra)
    assert not DiceRoll.objects.exists()


# --- pages ------------------------------------------------------------------------


def _page(user, name, *args) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(reverse(name, args=args))
    assert response.status_code == 200
    return response.content.decode()


def test_the_awakening_demo_plays_rolls_on_the_dashboard_and_the_phones():
    call_command("demo", stdout=StringIO())
    chronicle = Chronicle.objects.get(name=STORY_CHRONICLE)
    session = chronicle.open_session()
    iris = chronicle.characters.get(name="Iris Vale")
    board = _page(chronicle.narrators.get(), "narrate", session.pk)
    for words in ("Call for a roll…", "Roll openly…", "Contested action…", "Extended action…"):
        assert words in board
    phone = _page(iris.player, "play", iris.pk)
    assert "Contest someone" in phone and 'id="rolls"' in phone
    for other in ("Marcus Hale", "Seraphine", "Nico Reyes"):
        assert f">{other}</option>" in phone


def test_a_met_chronicle_offers_no_rolls():
    game = evening()
    board = _page(game["narrator"], "narrate", game["session"].pk)
    phone = _page(game["helen_player"], "play", game["helen"].pk)
    assert "Call for a roll" not in board and "Dice rolls" not in board
    assert "Contest someone" not in phone and 'id="rolls"' not in phone


def test_an_evening_of_rolls_leaves_the_database_consistent(night, monkeypatch):
    scripted(monkeypatch, *[9] * 40)
    _make(night, _call(night))
    _call(night, who="shade", msg_id="npc")
    row = _contest(night)
    _resist(night, row)
    assert find_inconsistencies() == []


def test_the_admin_lists_the_rolls_read_only(night, monkeypatch, admin_client):
    scripted(monkeypatch, 9, 9, 9)
    row = _make(night, _call(night))
    listed = admin_client.get(reverse("admin:challenges_diceroll_changelist"))
    assert listed.status_code == 200 and "called roll #" in listed.content.decode()
    page = admin_client.get(reverse("admin:challenges_diceroll_change", args=[row.pk]))
    assert page.status_code == 200 and "Dexterity + Stealth" in page.content.decode()
    assert 'name="label"' not in page.content.decode()  # nothing to edit


def test_the_dashboard_lists_rolls_waiting_on_someone_first_then_the_latest_rolled(
    night, monkeypatch
):
    """Issue 14: a roll called long ago and still waiting for her tap stays on
    the dashboard (with the narrator's buttons) however many rolls came
    after it, above the ``ROLLS_SHOWN`` latest rolled; once made it goes to
    the top of the rolled ones. The stamp's ``roll`` part counts the rolls
    listed."""
    from challenges import heartbeat, views

    scripted(monkeypatch, *([6] * 200))
    waiting = _call(night)  # her tap never comes (yet)
    opened = [
        services.roll_open(
            session=night["session"],
            dice=2,
            label=f"Open {n}",
            user=night["narrator"],
            msg_id=f"o{n}",
        )
        for n in range(views.ROLLS_SHOWN + 3)
    ]
    newer = _call(night, who="marcus", msg_id="call2")
    listed = views.dashboard_roll_rows(night["session"])
    assert [r.pk for r in listed[:2]] == [newer.pk, waiting.pk]  # waiting: newest first
    assert [r.pk for r in listed[2:]] == [r.pk for r in reversed(opened)][: views.ROLLS_SHOWN]

    def part():
        return heartbeat.rolls_part(night["session"].pk, shown=views.ROLLS_SHOWN)

    assert part() == heartbeat.challenges_tally_part(
        heartbeat.Tally(1, {r.pk: (r.version,) for r in listed})
    )
    _make(night, waiting)
    listed = views.dashboard_roll_rows(night["session"])
    assert [r.pk for r in listed[:3]] == [newer.pk, waiting.pk, opened[-1].pk]
    assert part() == heartbeat.challenges_tally_part(
        heartbeat.Tally(1, {r.pk: (r.version,) for r in listed})
    )


def test_a_roll_that_comes_back_on_the_dashboards_list_is_drawn_for_the_feed(night, monkeypatch):
    """Issue 14: when a waiting roll is rolled, a roll beyond the list's
    waiting ones comes back on it; the feed's next flush draws its card
    (it is not in ``listed_before``, the list the dashboards show), so a
    dashboard can place it instead of taking its whole list."""
    from challenges import views
    from challenges.consumers import feed

    scripted(monkeypatch, *([6] * 400))
    # Iris's rolls, and one of Marcus's (his alone changes when he rolls it).
    calls = [
        _call(night, who="marcus" if n == 5 else "iris", msg_id=f"call{n}")
        for n in range(views.ROLLS_SHOWN + 1)
    ]
    first = feed.render_changes(night["session"], {}, {}, set(), {calls[-1].pk: None})
    listed = {pk for pk, _ in first.rolls.listed}
    assert calls[0].pk not in listed  # the oldest waiting roll is beyond the list
    _make(night, calls[5], who="marcus", msg_id="make5")  # rolled: to the results...
    changed = {calls[5].pk: None}
    again = feed.render_changes(night["session"], {}, {}, set(), changed, False, listed)
    # ...and the oldest waiting comes back on the list: both cards drawn.
    assert set(again.rolls.cards) == {calls[5].pk, calls[0].pk}
    unknown = feed.render_changes(night["session"], {}, {}, set(), changed, False, None)
    assert set(unknown.rolls.cards) == {calls[5].pk}  # no list known: the changed card only

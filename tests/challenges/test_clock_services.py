"""Health clocks through challenges.services.clocks: a wound starts a clock,
due effects are applied once (idempotent, from stored instants), Time out
pauses them, a narrator's aid, rest, heal and aggravated controls, battle
scars and a new session's night of rest. ``now`` is injected (no sleeping)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from challenges.models import Event, TraitLoss
from challenges.rules import HealthLevel
from challenges.services import ActionRefused, clocks, session_start
from challenges.services._writes import _wound
from characters.models import Character, Presence
from tests.factories import grady_loses_resilient

MIN = 60.0


class Clock:
    """The services' clock, moved by hand."""

    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def now(monkeypatch):
    fake = Clock(timezone.now().timestamp())
    monkeypatch.setattr(clocks, "_now", fake)
    return fake


def wound(game, name: str, times: int, *, tick: bool = True) -> Presence:
    """``times`` wounds as a resolved attack gives them; ``tick``: then the
    clocks are applied at once, as the next heartbeat does."""
    character = game[name]
    with transaction.atomic():
        for _ in range(times):
            _wound(game["session"].pk, character.pk)
    if tick:
        clocks.clocks_apply(game["session"].pk, clocks._now())
    return Presence.objects.get(session=game["session"], character=character)


def lost_to_clock(game, name: str) -> int:
    return TraitLoss.objects.filter(
        character=game[name], challenge=None, reason=clocks.MORTAL_REASON
    ).count()


def kinds(game) -> list[str]:
    return list(
        Event.objects.filter(session=game["session"], kind__startswith="clock_").values_list(
            "kind", flat=True
        )
    )


def mid() -> str:
    return uuid.uuid4().hex


@pytest.mark.django_db
def test_a_wound_to_mortally_wounded_starts_the_clock_and_a_battle_scar(game, now) -> None:
    presence = wound(game, "grady", 4, tick=False)
    assert presence.clock_due == clocks.FRESH  # due at once: the next heartbeat sees it
    assert not Event.objects.filter(kind="battle_scar").exists()
    assert clocks.clocks_apply(game["session"].pk, now.now) == 1
    presence.refresh_from_db()
    assert presence.health == HealthLevel.MORTALLY_WOUNDED
    assert presence.clock_start == pytest.approx(now.now)
    assert presence.clock_due == pytest.approx(now.now + 10 * MIN)
    game["grady"].refresh_from_db()
    assert game["grady"].battle_scars == 1
    scar = Event.objects.get(kind="battle_scar")
    assert scar.data["scar"] == "light" and scar.data["number"] == 1


@pytest.mark.django_db
def test_nothing_due_costs_one_query(game, now, django_assert_num_queries) -> None:
    wound(game, "grady", 4)
    now.now += 9 * MIN
    with django_assert_num_queries(1):
        assert clocks.clocks_apply(game["session"].pk, now.now) == 0


@pytest.mark.django_db
def test_due_traits_and_death_are_applied_once(game, now) -> None:
    start = now.now
    wound(game, "grady", 4)  # Grady holds 5 Physical Traits
    assert clocks.clocks_apply(game["session"].pk, start + 25 * MIN) == 1
    assert lost_to_clock(game, "grady") == 2
    assert clocks.clocks_apply(game["session"].pk, start + 25 * MIN) == 0  # idempotent
    assert lost_to_clock(game, "grady") == 2
    clocks.clocks_apply(game["session"].pk, start + 2 * 60 * MIN)
    presence = Presence.objects.get(session=game["session"], character=game["grady"])
    assert lost_to_clock(game, "grady") == 5
    assert presence.health == HealthLevel.DEAD and presence.clock_due is None
    assert kinds(game) == ["clock_trait_lost"] * 5 + ["clock_died"]
    died = Event.objects.get(kind="clock_died")
    assert died.data["at"] == pytest.approx(start + 60 * MIN)  # 10 min after the 5th at 50


@pytest.mark.django_db
def test_a_restart_recomputes_from_stored_instants(game, now) -> None:
    """A new worker has nothing in memory: what is due is read from the rows."""
    start = now.now
    wound(game, "grady", 4)
    clocks._last_tick.clear()  # the throttle of a worker that restarted
    clocks.clocks_apply(game["session"].pk, start + 12 * MIN)
    clocks._last_tick.clear()
    clocks.clocks_apply(game["session"].pk, start + 31 * MIN)
    assert lost_to_clock(game, "grady") == 3


@pytest.mark.django_db
def test_time_out_pauses_the_clock(game, now) -> None:
    start = now.now
    wound(game, "grady", 4)
    session = game["session"]
    # A Time out of 20 minutes, from minute 5 to minute 25, recorded as Resume records it.
    session.time_out_seconds = 20 * MIN
    session.save(update_fields=["time_out_seconds"])
    assert clocks.clocks_apply(session.pk, start + 29 * MIN) == 0
    assert clocks.clocks_apply(session.pk, start + 30 * MIN) == 1
    assert lost_to_clock(game, "grady") == 1
    session.time_out, session.time_out_since = True, timezone.now()
    session.save(update_fields=["time_out", "time_out_since"])
    assert clocks.clocks_due(session.pk, start + 5 * 60 * MIN) == []  # a Time out: nothing due


@pytest.mark.django_db
def test_resume_counts_the_time_out_seconds(game, now) -> None:
    from challenges.services import session_resume, session_time_out

    session = game["session"]
    session_time_out(session=session, user=game["narrator"], msg_id=mid())
    session.refresh_from_db()
    session.time_out_since -= timedelta(minutes=7)
    session.save(update_fields=["time_out_since"])
    session_resume(session=session, user=game["narrator"], msg_id=mid())
    session.refresh_from_db()
    assert session.time_out_seconds == pytest.approx(7 * MIN, abs=5)


@pytest.mark.django_db
def test_medical_aid_stops_the_clock(game, now) -> None:
    start = now.now
    wound(game, "grady", 4)
    now.now = start + 11 * MIN
    clocks.clock_aid(
        session=game["session"], character=game["grady"], user=game["narrator"], msg_id=mid()
    )
    assert lost_to_clock(game, "grady") == 1  # the Trait due before the aid is lost
    clocks.clocks_apply(game["session"].pk, start + 5 * 60 * MIN)
    assert lost_to_clock(game, "grady") == 1
    assert "clock_aid" in kinds(game)


@pytest.mark.parametrize(
    ("times", "control", "kwargs", "message"),
    [
        (1, "clock_aid", {}, "is not Mortally Wounded"),
        (0, "clock_heal", {}, "is not hurt"),
        (1, "clock_aggravated", {"count": 2}, "has 1 wound level"),
        (1, "clock_rest", {"resting": True, "form": "crinos"}, "is not a Garou"),
        (1, "clock_rest", {"resting": True, "form": "wolf"}, "Choose Homid"),
    ],
)
@pytest.mark.django_db
def test_refusals_change_nothing(game, now, times, control, kwargs, message) -> None:
    before = wound(game, "grady", times)
    events = Event.objects.count()
    with pytest.raises(ActionRefused, match=message):
        getattr(clocks, control)(
            session=game["session"],
            character=game["grady"],
            user=game["narrator"],
            msg_id=mid(),
            **kwargs,
        )
    after = Presence.objects.get(pk=before.pk)
    assert (after.health, after.aggravated, after.aid_given, after.rest_start) == (
        before.health,
        before.aggravated,
        before.aid_given,
        before.rest_start,
    )
    assert Event.objects.count() == events


@pytest.mark.django_db
def test_only_a_narrator_controls_a_clock(game, now) -> None:
    wound(game, "grady", 4)
    with pytest.raises(ActionRefused, match="narrators"):
        clocks.clock_aid(
            session=game["session"],
            character=game["grady"],
            user=game["helen_player"],
            msg_id=mid(),
        )


@pytest.mark.django_db
def test_a_resting_garou_heals_but_not_her_aggravated_level(game, now) -> None:
    start = now.now
    Character.objects.filter(pk=game["grady"].pk).update(garou=True)
    wound(game, "grady", 3)
    common = {"session": game["session"], "character": game["grady"], "user": game["narrator"]}
    clocks.clock_aggravated(count=1, msg_id=mid(), **common)
    clocks.clock_rest(resting=True, form="crinos", msg_id=mid(), **common)
    clocks.clocks_apply(game["session"].pk, start + 4 * MIN)
    presence = Presence.objects.get(session=game["session"], character=game["grady"])
    assert presence.health == HealthLevel.INCAPACITATED
    clocks.clocks_apply(game["session"].pk, start + 30 * MIN)
    presence.refresh_from_db()
    assert presence.health == HealthLevel.BRUISED  # the aggravated level stays
    assert kinds(game).count("clock_healed") == 2


@pytest.mark.django_db
def test_homid_form_stops_healing(game, now) -> None:
    start = now.now
    Character.objects.filter(pk=game["grady"].pk).update(garou=True)
    wound(game, "grady", 2)
    common = {"session": game["session"], "character": game["grady"], "user": game["narrator"]}
    clocks.clock_rest(resting=True, form="homid", msg_id=mid(), **common)
    clocks.clocks_apply(game["session"].pk, start + 60 * MIN)
    presence = Presence.objects.get(session=game["session"], character=game["grady"])
    assert presence.health == HealthLevel.WOUNDED and presence.clock_due is None


@pytest.mark.django_db
def test_a_narrator_heals_one_level(game, now) -> None:
    wound(game, "grady", 4)
    presence = clocks.clock_heal(
        session=game["session"], character=game["grady"], user=game["narrator"], msg_id=mid()
    )
    assert presence.health == HealthLevel.INCAPACITATED
    assert presence.clock_due == pytest.approx(now.now + 10 * MIN)  # ten minutes out, anew


@pytest.mark.django_db
def test_battle_scars_progress_episode_by_episode(game, now) -> None:
    common = {"session": game["session"], "character": game["grady"], "user": game["narrator"]}
    scars = []
    for _ in range(6):
        wound(game, "grady", 4 - Presence.objects.get(character=game["grady"]).health)
        scars.append(Event.objects.filter(kind="battle_scar").last().data["scar"])
        clocks.clock_heal(msg_id=mid(), **common)
    assert scars == ["light"] * 3 + ["deep"] * 2 + ["permanent"]


@pytest.mark.django_db
def test_a_new_session_heals_one_aggravated_level(game, now) -> None:
    wound(game, "grady", 3)
    clocks.clock_aggravated(
        session=game["session"],
        character=game["grady"],
        count=2,
        user=game["narrator"],
        msg_id=mid(),
    )
    following = session_start(chronicle=game["chronicle"], user=game["narrator"])
    grady = Presence.objects.get(session=following, character=game["grady"])
    helen = Presence.objects.get(session=following, character=game["helen"])
    assert (grady.health, grady.aggravated) == (HealthLevel.BRUISED, 1)
    assert (helen.health, helen.aggravated) == (HealthLevel.HEALTHY, 0)


@pytest.mark.django_db
def test_an_attack_that_incapacitates_starts_ten_minutes_out(game, now) -> None:
    grady_loses_resilient(game)  # a wound through a real challenge: Bruised, no clock
    presence = Presence.objects.get(session=game["session"], character=game["grady"])
    assert presence.health == HealthLevel.BRUISED and presence.clock_due == clocks.FRESH
    assert presence.clock_start == pytest.approx(now.now)
    assert clocks.clocks_apply(game["session"].pk, now.now) == 1  # seen: no clock runs
    presence.refresh_from_db()
    assert presence.clock_due is None
    presence = wound(game, "grady", 2)
    assert presence.health == HealthLevel.INCAPACITATED
    view = clocks.clock_view(presence, game["session"], physical=3)
    assert view["kind"] == "awake" and 599 <= view["remaining"] <= 600
    assert clocks.clocks_apply(game["session"].pk, now.now + 10 * MIN) == 1
    assert kinds(game) == ["clock_awake"]


@pytest.mark.django_db
def test_a_permanent_injury_adds_its_negative_trait(game, now) -> None:
    common = {"session": game["session"], "character": game["grady"], "user": game["narrator"]}
    with pytest.raises(ActionRefused, match="no permanent battle scar"):
        clocks.clock_injury(injury="Collapsed Lung:Decrepit", msg_id=mid(), **common)
    Character.objects.filter(pk=game["grady"].pk).update(battle_scars=6)
    with pytest.raises(ActionRefused, match="Choose one"):
        clocks.clock_injury(injury="Collapsed Lung:Hideous", msg_id=mid(), **common)
    for _ in range(2):
        trait = clocks.clock_injury(injury="Collapsed Lung:Decrepit", msg_id=mid(), **common)
    trait.refresh_from_db()
    assert (trait.name, trait.category, trait.negative, trait.count) == (
        "Decrepit",
        "physical",
        True,
        2,
    )
    assert clocks.clock_injury(injury="Broken Jaw", msg_id=mid(), **common) is None
    assert Event.objects.filter(kind="battle_injury").count() == 3


@pytest.mark.django_db
def test_the_character_panel_shows_the_clock_and_its_controls(game, now, client) -> None:
    from django.urls import reverse

    wound(game, "grady", 4)
    Character.objects.filter(pk=game["grady"].pk).update(battle_scars=6, garou=True)
    client.force_login(game["narrator"])
    url = reverse("narrate_character", args=[game["session"].pk, game["grady"].pk])
    html = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "Next Physical Trait lost in" in html and 'data-remaining="600"' in html
    assert 'value="clock.aid"' in html and 'value="clock.heal"' in html
    assert 'value="clock.rest"' in html  # a Garou
    assert 'value="Collapsed Lung:Decrepit"' in html  # a permanent battle scar
    clocks.clock_aid(
        session=game["session"], character=game["grady"], user=game["narrator"], msg_id=mid()
    )
    html = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert 'value="clock.aid"' not in html and "Next Physical Trait" not in html


@pytest.mark.django_db
def test_a_character_arriving_incapacitated_gets_her_clock_at_the_next_check(game, now) -> None:
    Presence.objects.filter(character=game["grady"]).update(health=HealthLevel.INCAPACITATED)
    assert clocks.clocks_apply(game["session"].pk, now.now) == 0  # started, nothing due yet
    presence = Presence.objects.get(character=game["grady"])
    assert presence.clock_start == pytest.approx(now.now)
    assert presence.clock_due == pytest.approx(now.now + 10 * MIN)
    assert clocks.clocks_due(game["session"].pk, now.now + MIN) == []
    assert not Event.objects.filter(kind="battle_scar").exists()


@pytest.mark.django_db
def test_the_demo_marks_its_garou() -> None:
    from django.core.management import call_command

    call_command("demo", verbosity=0)
    helen = Character.objects.filter(name="Helen", rage__gt=0).first()
    assert helen is not None and helen.garou
    assert not Character.objects.filter(rage=0, garou=True).exists()

"""Issue 12: the narrator's character panel lists the live bns combats she is
in (the round, her place in the order, whose action it is, her effects) with a
link to the combat's block on the dashboard; a MET panel reads no combat.
seeds/002 "Resolving Combat", "Combat Maneuvers" (Grapple)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from unittest.mock import patch

import pytest
from bs4 import BeautifulSoup
from django.test import Client
from django.urls import reverse

from challenges import services, views
from challenges.models import Combat
from challenges.rules import bns_combat as rules
from challenges.views.combat import panel_combats
from characters.models import GameSession
from tests.factories import bns_combat_evening


def mid() -> str:
    return uuid.uuid4().hex


@pytest.fixture
def t(db):
    return bns_combat_evening()


def _start(t, *names) -> Combat:
    return services.combat_start(
        session=t["session"], characters=[t[n] for n in names], user=t["narrator"], msg_id=mid()
    )


def _grapple(row: Combat, fighter: int, by: int) -> None:
    """``by`` grapples ``fighter`` (what a won Grapple challenge records)."""
    row.refresh_from_db()
    state = rules.CombatState.from_dict(row.state)
    row.state = rules.grapple(state, fighter=fighter, by=by, now=0.0).state.to_dict()
    row.save()


def _panel(t, name: str) -> BeautifulSoup:
    client = Client()
    client.force_login(t["narrator"])
    url = reverse("narrate_character", args=[t["session"].pk, t[name].pk])
    return BeautifulSoup(client.get(url, headers={"HX-Request": "true"}).content, "html.parser")


def _lines(panel: BeautifulSoup) -> list[str]:
    return [
        " ".join(li.get_text(" ", strip=True).split()) for li in panel.select(".panel-combats li")
    ]


@pytest.mark.parametrize(
    ("name", "line"),
    [
        ("rosa", "Turn 1 · Everyman round · place 2 of 3 in the order · her initiative"),
        ("vesper", "Turn 1 · Everyman round · place 1 of 3 in the order · Rosa is acting"),
        (
            "jack",
            "Turn 1 · Everyman round · place 3 of 3 in the order · Rosa is acting"
            " · grappled by Rosa",
        ),
    ],
)
def test_the_character_panel_lists_her_combat_with_her_place_whose_turn_and_effects(
    t, name, line
) -> None:
    row = _start(t, "rosa", "jack", "vesper")  # Vesper 9, Rosa 7, Jack 6
    services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=mid())  # Rosa's turn
    _grapple(row, t["jack"].pk, t["rosa"].pk)
    panel = _panel(t, name)
    assert _lines(panel) == [f"Combat #{row.pk} · {line}"]
    assert panel.select_one(".panel-combats a")["href"] == f"#combat-{row.pk}"


def test_the_panels_link_leads_to_the_combats_block_on_the_dashboard(t) -> None:
    row = _start(t, "rosa", "jack")
    client = Client()
    client.force_login(t["narrator"])
    url = reverse("narrate_character", args=[t["session"].pk, t["jack"].pk])
    page = BeautifulSoup(client.get(url).content, "html.parser")  # the dashboard, panel open
    block = page.find(id=f"combat-{row.pk}")
    assert block is not None and "combat" in block["class"]
    # The block names everyone in it, so an open panel redraws on its frames (dashboard.js).
    assert block["data-characters"].split() == [str(t["rosa"].pk), str(t["jack"].pk)]
    assert page.select_one("#character-panel .panel-combats a")["href"] == f"#combat-{row.pk}"


def test_a_surprise_action_and_a_rage_round_she_sits_out_are_said(t) -> None:
    row = _start(t, "tooth", "rosa")
    row = services.combat_start(
        session=t["session"],
        characters=[t["vesper"], t["jack"]],
        surprise=t["jack"].pk,
        user=t["narrator"],
        msg_id=mid(),
    )
    assert _lines(_panel(t, "jack")) == [
        f"Combat #{row.pk} · Turn 1 · Surprise Action · place 2 of 2 in the order"
        " · her Surprise Action"
    ]
    first = Combat.objects.exclude(pk=row.pk).get()
    for _ in range(2):  # Tooth and Rosa end their initiatives: Rage round 1, Tooth's alone
        services.combat_advance(combat_id=first.pk, user=t["narrator"], msg_id=mid())
    assert _lines(_panel(t, "rosa")) == [
        f"Combat #{first.pk} · Turn 1 · Rage round 1 · place 2 of 2 in the order"
        " (not in this round) · Tooth is acting"
    ]


def test_a_combat_ended_or_one_she_was_taken_out_of_is_not_listed(t) -> None:
    ended = _start(t, "rosa", "jack")
    services.combat_end(combat_id=ended.pk, user=t["narrator"], msg_id=mid())
    row = _start(t, "rosa", "vesper", "jack")
    services.combat_remove(
        combat_id=row.pk, character_id=t["jack"].pk, user=t["narrator"], msg_id=mid()
    )
    assert panel_combats(t["session"], t["jack"].pk) == []
    assert _panel(t, "jack").select(".panel-combats") == []
    assert [c.pk for c in panel_combats(t["session"], t["rosa"].pk)] == [row.pk]


def test_a_bns_panel_reads_its_combats_in_one_query(t, django_assert_num_queries) -> None:
    _start(t, "rosa", "jack")
    _start(t, "vesper", "tooth")
    session = GameSession.objects.select_related("chronicle").get(pk=t["session"].pk)
    with django_assert_num_queries(1):
        assert len(panel_combats(session, t["rosa"].pk)) == 1


def test_a_met_panel_reads_no_combat(game, django_assert_num_queries) -> None:
    met = GameSession.objects.select_related("chronicle").get(pk=game["session"].pk)
    with django_assert_num_queries(0):
        assert panel_combats(met, game["grady"].pk) == []
    with django_assert_num_queries(10):  # what it cost before issue 12's combats
        assert views.character_panel_context(met, game["grady"].pk)["combats"] == []


@pytest.mark.parametrize(
    ("fields", "effects"),
    [
        ({}, []),
        ({"grappled_by": ("vesper", "rosa")}, ["grappled by Vesper, Rosa"]),
        ({"prone": True}, ["prone"]),
        (
            {"blinded": 2, "unconscious_until": 600.0},
            ["blinded (2 simple actions to clear)", "unconscious (10 more minutes)"],
        ),
        ({"unconscious_until": -1.0}, []),  # woken up: no longer said
        ({"grappled_by": ("rosa",), "prone": True}, ["grappled by Rosa", "prone"]),
    ],
)
def test_her_panel_names_her_effects_in_the_engines_words(t, fields, effects) -> None:
    """The panel says what the phones and the combat block say
    (``bns_combat.conditions``), an unconsciousness that is over not at all."""
    row = _start(t, "rosa", "jack", "vesper")
    state = rules.CombatState.from_dict(row.state)
    if "grappled_by" in fields:
        fields = {**fields, "grappled_by": tuple(t[n].pk for n in fields["grappled_by"])}
    jack = replace(state.fighter(t["jack"].pk), **fields)
    fighters = tuple(jack if f.fighter_id == jack.fighter_id else f for f in state.fighters)
    row.state = replace(state, fighters=fighters).to_dict()
    row.save(update_fields=["state"])
    with patch("challenges.views.combat.time.time", return_value=0.0):
        (combat,) = panel_combats(t["session"], t["jack"].pk)
    assert combat.effects == effects

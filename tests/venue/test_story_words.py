"""A Storytelling chronicle's screens: the narrators' roster draws each
Health track as the phone does (boxes, marks, wound penalties); a count of
dice agrees with its noun ("1 die", "3 dice"); the phone and the
narrator's panel show her Health once. seeds/003 "Marking Damage",
"Wound Penalties"."""

from __future__ import annotations

import uuid

import pytest
from bs4 import BeautifulSoup
from django.template import Context, Template
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse

from challenges import services, views
from challenges.rules.storytelling.dice import DicePool, Roll
from challenges.views.dice import roll_view
from tests.factories import story_fight_evening


@pytest.fixture
def t(db):
    return story_fight_evening()


def _hurt(t, who: str, points: int, kind: str = "lethal") -> None:
    services.track_mark(
        session=t["session"],
        character=t[who],
        points=points,
        damage_type=kind,
        reason="a fall",
        user=t["narrator"],
        msg_id=uuid.uuid4().hex,
    )


def test_the_roster_draws_a_health_track_as_boxes(t):
    _hurt(t, "ada", 2)
    html = render_to_string(
        "challenges/_roster_row.html", views.roster_row_context(t["session"], t["ada"].pk)
    )
    track = BeautifulSoup(html, "html.parser").select_one(".health-track")
    boxes = track.select(".box")
    assert len(boxes) == 6
    assert [b.get("class") for b in boxes[:3]] == [["box", "box-lethal"]] * 2 + [["box"]]
    assert [b.small.get_text() for b in boxes if b.small] == ["-1", "-2", "-3"]
    assert track["aria-label"].startswith("Health: 2 of 6 boxes marked")


@pytest.mark.parametrize(
    ("parts", "words"),
    [
        ((("Dice", 1),), "Dice 1 = 1 die"),
        ((("Strength", 2), ("Brawl", 1)), "Strength 2 + Brawl 1 = 3 dice"),
    ],
)
def test_a_pool_of_one_reads_one_die(parts, words):
    pool = DicePool(parts)
    roll = Roll.from_dict({"dice": [], "chance": False, "pool": pool.dice})
    assert roll_view(roll, pool).pool_text == words


def test_an_open_roll_of_one_is_labelled_one_die(t):
    row = services.roll_open(
        session=t["session"], dice=1, label="", user=t["narrator"], msg_id=uuid.uuid4().hex
    )
    assert row.label == "1 die"


def _health_tracks(client: Client, url: str, **headers) -> int:
    page = BeautifulSoup(client.get(url, headers=headers).content, "html.parser")
    return len(page.select(".health-track"))


def test_the_phone_and_the_narrators_panel_show_her_health_once(t):
    phone = Client()
    phone.force_login(t["ada_player"])
    assert _health_tracks(phone, reverse("play", args=[t["ada"].pk])) == 1
    assert _health_tracks(phone, reverse("story_sheet_print", args=[t["ada"].pk])) == 1
    narrator = Client()
    narrator.force_login(t["narrator"])
    panel = reverse("narrate_character", args=[t["session"].pk, t["ada"].pk])
    assert _health_tracks(narrator, panel, **{"HX-Request": "true"}) == 1


@pytest.mark.parametrize(
    ("n", "words"), [(1, "1 die"), (0, "0 dice"), (3, "3 dice"), (-1, "-1 die")]
)
def test_a_wound_penalty_of_one_reads_one_die(n, words):
    """The fight's wound penalty on the phone and the dashboard (``|dice``)."""
    assert Template("{% load words %}{{ n|dice }}").render(Context({"n": n})) == words

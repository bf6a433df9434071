"""A narrator finds any challenge of the evening (``views.find``), not only
the window her dashboard lists: by either side's name, category, state and
age, each choice counted under the other filters; narrators only."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from bs4 import BeautifulSoup
from django.db.models import Q
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from challenges.models import Challenge
from tests.factories import crowded_session, make_user

pytestmark = pytest.mark.django_db


def _find(client: Client, session, **filters) -> BeautifulSoup:
    response = client.get(reverse("narrate_find", args=[session.pk]), filters)
    assert response.status_code == 200
    return BeautifulSoup(response.content, "html.parser")


def _found(doc: BeautifulSoup) -> list[int]:
    return [int(li["data-found"]) for li in doc.select("li[data-found]")]


def _counts(doc: BeautifulSoup, name: str) -> dict[str, int]:
    chips = doc.select(f'[data-filter="{name}"] button')
    return {
        re.sub(r"\s*\d+$", "", chip.get_text(" ", strip=True)): int(chip.select_one(".count").text)
        for chip in chips
    }


@pytest.fixture
def crowd(game):
    session = game["session"]
    guests = crowded_session(session, characters=30, challenges=90, open_every=3)
    client = Client()
    client.force_login(game["narrator"])
    return session, guests, client


def test_a_sides_name_finds_her_challenges_either_side_any_case(crowd):
    session, guests, client = crowd
    name = guests[7].name
    sides = Challenge.objects.filter(session=session).filter(
        Q(challenger=guests[7]) | Q(defender=guests[7])
    )
    mine = set(sides.values_list("pk", flat=True))
    assert mine
    doc = _find(client, session, q=name.upper())
    assert set(_found(doc)) == mine
    assert doc.select_one(".find-total").get_text().startswith(f"{len(mine)} challenge")
    for li in doc.select("li[data-found]"):
        assert name in li.get_text()
        assert li.select_one("button[data-rule]") is not None  # one tap from Rule…


def test_each_choice_is_counted_under_the_other_filters(crowd):
    session, _, client = crowd
    in_session = Challenge.objects.filter(session=session)
    doc = _find(client, session)
    states = _counts(doc, "state")
    assert states["Open"] == in_session.exclude(stage="resolved").count()
    assert states["Resolved"] == in_session.filter(stage="resolved").count()
    assert states["Waiting on a narrator"] == 0
    assert _counts(doc, "category")["Physical"] == in_session.filter(category="physical").count()
    # Open only: the categories count open ones; the states still count all.
    doc = _find(client, session, state="open")
    assert _counts(doc, "category")["Physical"] == states["Open"]
    assert _counts(doc, "state") == states
    assert len(_found(doc)) == min(30, states["Open"])


def test_age_finds_those_waiting_at_least_that_long_the_longest_first(crowd):
    session, _, client = crowd
    old = Challenge.objects.filter(session=session).exclude(stage="resolved").order_by("id")[:3]
    ids = [c.pk for c in old]
    Challenge.objects.filter(pk__in=ids).update(stage_since=timezone.now() - timedelta(hours=2))
    doc = _find(client, session, state="open", age="60")
    assert sorted(_found(doc)) == sorted(ids)
    assert _counts(doc, "age")["an hour or more"] == 3


def test_a_call_for_a_narrator_is_found_by_its_state(crowd):
    session, _, client = crowd
    called = Challenge.objects.filter(session=session).exclude(stage="resolved").first()
    Challenge.objects.filter(pk=called.pk).update(called_at=timezone.now())
    doc = _find(client, session, state="called")
    assert _found(doc) == [called.pk]
    assert "narrator called" in doc.select_one("li[data-found]").get_text()


def test_unknown_filters_are_ignored_and_only_narrators_may_look(crowd, game):
    session, _, client = crowd
    everything = _find(client, session)
    assert _found(_find(client, session, state="nonsense", category="<x>", age="9")) == _found(
        everything
    )
    stranger = Client()
    stranger.force_login(make_user("nosy"))
    assert stranger.get(reverse("narrate_find", args=[session.pk])).status_code == 403

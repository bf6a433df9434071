"""Refusals a player meets at a venue: friendly 403/404 pages in the app's
style, a join link that no longer works says what to do, and the log keeps one
line per expected refusal instead of a traceback. A narrator of one chronicle
lands on her dashboard."""

from __future__ import annotations

import logging
import time

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse
from sesame.utils import get_token

from characters.models import Chronicle
from characters.services import join_links_revoke
from characters.views import LINK_EXPIRED
from tests.factories import make_character, make_user

pytestmark = pytest.mark.django_db


def _later(monkeypatch, seconds: float) -> None:
    """Move ``time.time`` (what django-sesame stamps and checks tokens with) on."""
    now = time.time() + seconds
    monkeypatch.setattr(time, "time", lambda: now)


def _token(game, kind: str, monkeypatch) -> str:
    player = game["helen_player"]
    if kind == "mistyped":
        return get_token(player, scope="join")[:-3] + "xyz"
    if kind == "another scope":
        return get_token(player)
    token = get_token(player, scope="join")
    if kind == "revoked":
        _later(monkeypatch, 5)
        join_links_revoke(user=player)
    if kind == "expired":
        _later(monkeypatch, settings.SESAME_MAX_AGE + 5)
    return token


@pytest.mark.parametrize("kind", ["expired", "revoked", "mistyped", "another scope", "missing"])
def test_a_join_link_that_no_longer_works_says_ask_a_narrator(game, kind, caplog, monkeypatch):
    query = {} if kind == "missing" else {"token": _token(game, kind, monkeypatch)}
    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = Client().get(reverse("join"), query)
    assert response.status_code == 403
    page = response.content.decode()
    assert LINK_EXPIRED in page and 'class="bar"' in page and 'href="/"' in page
    (record,) = [r for r in caplog.records if r.name == "django.request"]
    assert record.getMessage() == "Forbidden (Permission denied): /accounts/join/"
    assert record.exc_info is None and "Traceback" not in caplog.text


@pytest.mark.parametrize(
    ("who", "url", "status", "words"),
    [
        ("grady_player", "helen_play", 404, "There is nothing here."),
        ("helen_player", "narrate", 403, "You do not narrate this chronicle."),
        ("helen_player", "/no/such/page/", 404, "There is nothing here."),
    ],
)
def test_refusals_are_friendly_pages_and_one_line_in_the_log(game, who, url, status, words, caplog):
    client = Client()
    client.force_login(game[who])
    path = {
        "helen_play": reverse("play", args=[game["helen"].pk]),
        "narrate": reverse("narrate", args=[game["session"].pk]),
    }.get(url, url)
    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = client.get(path)
    assert response.status_code == status
    page = response.content.decode()
    assert words in page and "Back to the start" in page and "narrator.css" in page
    records = [r for r in caplog.records if r.name == "django.request"]
    assert len(records) == 1 and records[0].exc_info is None
    assert "Traceback" not in caplog.text


def test_a_server_error_keeps_its_traceback(caplog):
    from narrator.logs import OneLineRefusals

    try:
        raise ValueError("a real bug")
    except ValueError:
        import sys

        record = logging.LogRecord(
            "django.request", logging.ERROR, "", 0, "boom", (), sys.exc_info()
        )
    assert OneLineRefusals().filter(record) and record.exc_info is not None


def test_a_narrator_of_one_chronicle_lands_on_narrate(game):
    client = Client()
    client.force_login(game["narrator"])
    response = client.get(reverse("home"))
    assert response.status_code == 302 and response["Location"] == reverse("narrate_index")


def test_a_narrator_of_two_chronicles_or_who_also_plays_gets_the_list(game):
    narrator = game["narrator"]
    make_character(game["chronicle"], "Nora", narrator)
    client = Client()
    client.force_login(narrator)
    assert client.get(reverse("home")).status_code == 200
    other = make_user("other")
    for name in ("First", "Second"):
        Chronicle.objects.create(name=name).narrators.add(other)
    client.force_login(other)
    response = client.get(reverse("home"))
    assert response.status_code == 200 and "First" in response.content.decode()

"""The "Challenge someone" form: chips in a small game, a search box in a big
one, and a form that websocket views leave alone."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from challenges import views
from challenges.views import OPPONENT_CHIPS_AT_MOST, OPPONENT_RESULTS
from characters.models import Chronicle, GameSession
from tests.challenges.wsutil import helen_challenges_grady
from tests.factories import make_character, make_user


def _crowd(game, n: int, prefix: str = "Guest") -> list:
    return [make_character(game["chronicle"], f"{prefix} {i:04d}") for i in range(n)]


def _search(client, character, q: str = ""):
    return client.get(reverse("opponents", args=[character.pk]), {"q": q})


def _defenders(html: str) -> set[int]:
    return {int(v) for v in re.findall(r'name="defender" value="(\d+)"', html)}


@pytest.fixture
def helen_client(client, game):
    client.force_login(game["helen_player"])
    return client


def test_a_small_game_shows_every_other_present_character_as_a_chip(helen_client, game):
    _crowd(game, OPPONENT_CHIPS_AT_MOST - 1)  # with Grady: exactly the threshold
    html = helen_client.get(reverse("play", args=[game["helen"].pk])).content.decode()
    assert len(_defenders(html)) == OPPONENT_CHIPS_AT_MOST
    assert game["grady"].pk in _defenders(html) and game["helen"].pk not in _defenders(html)
    assert 'id="opponent-q"' not in html


def test_a_big_game_shows_a_search_box_and_no_chips(helen_client, game):
    _crowd(game, OPPONENT_CHIPS_AT_MOST)  # with Grady: one over the threshold
    html = helen_client.get(reverse("play", args=[game["helen"].pk])).content.decode()
    assert _defenders(html) == set()
    assert '<label for="opponent-q">Find an opponent by name</label>' in html
    assert 'type="search" name="q"' in html


def test_the_opponent_choice_is_one_bounded_query_however_many_are_present(game):
    _crowd(game, 60)
    with CaptureQueriesContext(connection) as queries:
        choice = views.opponent_choice(game["session"], game["helen"])
    assert choice == {"opponents": [], "opponent_search": True}
    assert len(queries) == 1 and "LIMIT 25" in queries[0]["sql"]


def test_a_search_finds_present_characters_whose_name_contains_the_text(helen_client, game):
    ray = make_character(game["chronicle"], "Ray <the Bold>")
    make_character(game["chronicle"], "Raymond", present=False)
    other = Chronicle.objects.create(name="Elsewhere")
    GameSession.objects.create(chronicle=other, name="Tonight")
    make_character(other, "Ray Elsewhere")
    response = _search(helen_client, game["helen"], "  ray ")
    html = response.content.decode()
    assert response.status_code == 200
    assert _defenders(html) == {ray.pk}
    assert "Ray &lt;the Bold&gt;" in html


def test_a_search_never_offers_the_searcher_herself(helen_client, game):
    assert _defenders(_search(helen_client, game["helen"], "hel").content.decode()) == set()
    html = _search(helen_client, game["helen"], "").content.decode()
    assert _defenders(html) == {game["grady"].pk}


def test_a_search_shows_at_most_twenty_matches_and_says_there_are_more(helen_client, game):
    crowd = _crowd(game, OPPONENT_RESULTS + 5)
    html = _search(helen_client, game["helen"], "guest").content.decode()
    assert _defenders(html) == {c.pk for c in crowd[:OPPONENT_RESULTS]}
    assert "More match: type more of the name." in html


def test_a_search_without_a_match_says_so(helen_client, game):
    html = _search(helen_client, game["helen"], "zed").content.decode()
    assert _defenders(html) == set() and "Nobody here matches “<bdi>zed</bdi>”." in html


def test_another_players_character_cannot_be_searched_from(helen_client, game):
    assert _search(helen_client, game["grady"], "hel").status_code == 404


def test_an_anonymous_search_is_sent_to_log_in(client, game):
    response = _search(client, game["helen"], "gra")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_a_search_marks_nobody_present(helen_client, game):
    player = make_user("ines")
    ines = make_character(game["chronicle"], "Ines", player, present=False)
    helen_client.force_login(player)
    assert _defenders(_search(helen_client, ines, "").content.decode()) == {
        game["helen"].pk,
        game["grady"].pk,
    }
    assert not ines.presences.exists()


@pytest.mark.django_db(transaction=True)
async def test_websocket_views_leave_the_challenge_form_alone_but_refresh_its_bids(game):
    helen, grady, helen_frames, grady_frames = await helen_challenges_grady(game)
    frames = helen_frames + grady_frames
    views_sent = [f for f in frames if 'id="live"' in f]
    cards_sent = [f for f in frames if 'id="card-' in f and 'id="live"' not in f]
    assert len(views_sent) >= 2 and cards_sent  # both first views, then the new card
    for frame in cards_sent:
        assert 'name="defender"' not in frame and 'id="start"' not in frame
    for frame in views_sent:
        assert 'name="defender"' not in frame and 'id="start"' not in frame
        assert 'name="stakes"' not in frame and 'name="is_attack"' not in frame
        assert '<fieldset id="start-bids" class="bid" hx-swap-oob="true">' in frame
        assert 'id="sheet" hx-swap-oob="true"' in frame
    await helen.disconnect()
    await grady.disconnect()

"""The admin speaks the game's words: health level, Time out, Traits held
×N, the rulesets by name; not the framework's or the code's."""

import re

import pytest
from django.urls import reverse

from tests.factories import evening

pytestmark = pytest.mark.django_db


@pytest.fixture
def game(admin_client):
    return evening()


def _text(response) -> str:
    """The page's words, tags and repeated spaces left out."""
    assert response.status_code == 200
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))


def test_a_characters_page_speaks_of_health_levels_and_traits_held(admin_client, game):
    page = _text(
        admin_client.get(reverse("admin:characters_character_change", args=[game["helen"].pk]))
    )

    assert "Health level at the start of a session" in page
    assert "Times held" in page  # the Traits inline's column (Quick ×3)
    assert "Spent on Willpower retests (UK Masquerade)" in page
    assert "Narrator answers its challenges at once" in page
    for code in ("(ukm)", "(met_classic)", "the server answers", "Django administration"):
        assert code not in page


def test_a_sessions_page_speaks_of_time_out_and_health_levels_tonight(admin_client, game):
    page = _text(
        admin_client.get(reverse("admin:characters_gamesession_change", args=[game["session"].pk]))
    )

    assert "In Time out since" in page
    assert "Health level tonight" in page  # who is here, in the inline


def test_the_sessions_list_heads_its_columns_in_the_games_words(admin_client, game):
    page = _text(admin_client.get(reverse("admin:characters_gamesession_changelist")))

    assert "Time out" in page and "Started" in page
    assert "Narrator administration" in _text(admin_client.get(reverse("admin:index")))

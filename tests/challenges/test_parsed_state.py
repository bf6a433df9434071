"""A committed row's state is parsed once (``views.shared.parsed_state``):
the move's own state is kept on the row the phones and dashboards of its
worker read, and equals a fresh parse of the stored dict."""

from __future__ import annotations

import pytest

from challenges import views
from challenges.models import Challenge
from challenges.rows import committed_rows
from challenges.rules import ChallengeState
from challenges.views.shared import parsed_state
from tests.factories import opposed_challenge

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_kept_row_brings_its_state_and_a_new_state_is_parsed_again(game, monkeypatch):
    challenge = opposed_challenge(
        game["session"], game["helen"], game["grady"], bid="Ferocious", answer="Tough"
    )
    parses = []
    real = ChallengeState.from_dict
    monkeypatch.setattr(
        ChallengeState, "from_dict", staticmethod(lambda d: parses.append(d) or real(d))
    )
    kept = committed_rows.get(challenge.pk, challenge.version)
    for who in ("helen", "grady"):
        view = views.challenge_view(kept, game[who])
        assert view.state == real(Challenge.objects.get(pk=challenge.pk).state)
    assert parses == []  # the move's state, kept with the row: no parse
    fresh = Challenge.objects.get(pk=challenge.pk)
    assert parsed_state(fresh) is parsed_state(fresh) and len(parses) == 1
    fresh.state = {**fresh.state}  # a state assigned anew is parsed again
    assert parsed_state(fresh) == parsed_state(kept) and len(parses) == 2

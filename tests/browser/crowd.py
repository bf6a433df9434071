"""``python -m tests.browser.crowd``: fill the live server's database (the
SQLite file named by ``DATABASE_URL``) with a crowded evening for the
dashboard's browser test: ``tests.factories.crowded_session`` (147 guests, 600
challenges, 100 of them open) in its open session, plus a guest whose name starts with
right-to-left text and runs on as one 200-character word, challenging
Helen with stakes that start with a right-to-left override and run on as one
200-character word, waiting for two hours (the first open row). Prints the odd
guest's id."""

from __future__ import annotations

import os
import uuid
from datetime import timedelta

# Right-to-left text, then one 190-character word (bidi controls never reach a
# sheet: characters.names removes them on save).
ODD_NAME = "אסתר " + "w" * 190  # within the 200 characters a name may have
# A real event's crowd: 150 present with Helen, Grady and the odd one; 100 open.
CHARACTERS, CHALLENGES = 147, 600


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.browser.live_settings")
    import django

    django.setup()
    from django.utils import timezone

    from challenges import services
    from characters.models import Character, GameSession
    from tests.factories import crowded_session, make_character, make_user

    session = GameSession.objects.select_related("chronicle").get(ended_at__isnull=True)
    crowded_session(session, characters=CHARACTERS, challenges=CHALLENGES, open_every=6)
    odd = make_character(
        session.chronicle, ODD_NAME, make_user("odd"), traits=[("חזק", "physical", 2)]
    )
    challenge = services.challenge_open(
        session=session,
        challenger=odd,
        defender=Character.objects.get(name="Helen"),
        category="physical",
        bids=["חזק"],
        stakes="\u202e" + "s" * 200,
        user=odd.player,
        msg_id=uuid.uuid4().hex,
    )
    # Waiting longer than any other: listed first among the open ones (the
    # column orders the listing, the state's stage_since the rows and clocks).
    since = timezone.now() - timedelta(hours=2)
    challenge.refresh_from_db()
    challenge.state = {**challenge.state, "stage_since": since.timestamp()}
    challenge.stage_since = since
    challenge.save(update_fields=["state", "stage_since"])
    print(odd.pk, flush=True)


if __name__ == "__main__":
    main()

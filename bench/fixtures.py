"""Bench data in the bench database: ``python -m bench.fixtures``.

Run with ``DATABASE_URL`` (and ``SECRET_KEY``) set to the bench's own values;
the bench command does that in a subprocess so the user's database is never
opened. Two subcommands:

- ``prepare PHONES DASHBOARDS OUT``: migrate, then create one chronicle with an
  open session, ``PHONES`` players each with one present character (Physical
  Trait *Quick* ×500, so no phone runs out of Traits to bid), ``DASHBOARDS``
  narrators, and a logged-in session cookie for each; writes JSON to ``OUT``:
  ``{"session": id, "phones": [[character_id, cookie], ...], "dashboards": [cookie, ...]}``.
- ``verify``: print JSON counts of challenges, resolved challenges (of them,
  voided by a narrator: the reconnect storms' rulings), Trait losses and
  challenges with more than one loss (a doubled result).
"""

from __future__ import annotations

import json
import os
import sys

BID_TRAIT = "Quick"
BID_COPIES = 500


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "narrator.settings")
    import django

    django.setup()


def prepare(phones: int, dashboards: int, out: str) -> None:
    """Create the bench chronicle and write the connection details to ``out``."""
    from django.contrib.auth import SESSION_KEY, get_user_model
    from django.contrib.auth.hashers import make_password
    from django.contrib.sessions.backends.db import SessionStore
    from django.contrib.sessions.models import Session
    from django.core.management import call_command
    from django.db import transaction

    from characters.models import Character, Chronicle, GameSession, Presence, Trait

    call_command("migrate", verbosity=0, interactive=False)
    User = get_user_model()
    password = make_password(None)  # unusable: bench users log in by cookie only
    with transaction.atomic():
        players = User.objects.bulk_create(
            User(username=f"bench-player-{i}", password=password) for i in range(phones)
        )
        narrators = User.objects.bulk_create(
            User(username=f"bench-narrator-{i}", password=password) for i in range(dashboards)
        )
        chronicle = Chronicle.objects.create(name="Bench Chronicle")
        chronicle.narrators.add(*narrators)
        session = GameSession.objects.create(chronicle=chronicle, name="Bench evening")
        characters = Character.objects.bulk_create(
            Character(chronicle=chronicle, name=f"Bench {i:05d}", player=user)
            for i, user in enumerate(players)
        )
        Trait.objects.bulk_create(
            Trait(character=c, name=BID_TRAIT, category="physical", count=BID_COPIES)
            for c in characters
        )
        Presence.objects.bulk_create(Presence(session=session, character=c) for c in characters)

        store = SessionStore()
        cookies: dict[int, str] = {}
        rows = []
        for user in [*players, *narrators]:
            key = store._get_new_session_key()
            data = {
                SESSION_KEY: str(user.pk),
                "_auth_user_backend": "django.contrib.auth.backends.ModelBackend",
                "_auth_user_hash": user.get_session_auth_hash(),
            }
            rows.append(
                Session(
                    session_key=key,
                    session_data=store.encode(data),
                    expire_date=store.get_expiry_date(),
                )
            )
            cookies[user.pk] = key
        Session.objects.bulk_create(rows)
    with open(out, "w") as fh:
        json.dump(
            {
                "session": session.pk,
                "phones": [[c.pk, cookies[c.player_id]] for c in characters],
                "dashboards": [cookies[n.pk] for n in narrators],
            },
            fh,
        )


def verify() -> None:
    """Print the database's own count of challenges and losses as JSON."""
    from django.db.models import Count

    from challenges.models import Challenge, TraitLoss

    resolved = Challenge.objects.filter(stage="resolved")
    per_challenge = TraitLoss.objects.values("challenge").annotate(n=Count("id"))
    print(
        json.dumps(
            {
                "challenges": Challenge.objects.count(),
                "resolved": resolved.count(),
                "voided": resolved.filter(outcome="void").count(),
                "losses": TraitLoss.objects.count(),
                "doubled_losses": per_challenge.filter(n__gt=1).count(),
            }
        )
    )


if __name__ == "__main__":
    _setup()
    command, *args = sys.argv[1:]
    if command == "prepare":
        prepare(int(args[0]), int(args[1]), args[2])
    elif command == "verify":
        verify()
    else:
        raise SystemExit(f"unknown command {command!r}")

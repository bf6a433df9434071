"""The real ASGI app (Daphne: HTTP and websockets) on 127.0.0.1 for the browser tests.

``python -m tests.browser.live_server migrate`` migrates the SQLite file named by
``DATABASE_URL`` and exits. ``python -m tests.browser.live_server serve FD``
builds ``tests.factories.evening()`` in that database (and Ines, a latecomer
not yet present), prints one JSON line (the
ids and a one-tap join link for Grady) and serves until terminated, on the
listening socket it inherits as file descriptor FD (bound by the test process,
so no other server can take the port meanwhile). The database is a file, so the
test process can read and write it too; a ``dice.json`` beside it scripts the
next roll of the Storytelling dice (issue 13).
"""

from __future__ import annotations

import json
import os
import sys


def main(argv: list[str]) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.browser.live_settings")
    import django

    django.setup()
    from django.core.management import call_command

    if argv[0] == "migrate":
        call_command("migrate", verbosity=0, interactive=False)
        return

    from sesame.utils import get_query_string

    from tests.factories import evening, make_character, make_user

    fd = int(argv[1])
    game = evening()
    # A latecomer: not present until her player opens her sheet.
    ines = make_character(
        game["chronicle"],
        "Ines",
        make_user("ines"),
        traits=[("Dexterous", "physical", 1), ("Clever", "mental", 2)],
        present=False,
    )
    print(
        json.dumps(
            {
                "session": game["session"].pk,
                "helen": game["helen"].pk,
                "grady": game["grady"].pk,
                "ines": ines.pk,
                "grady_join": "/accounts/join/"
                + get_query_string(game["grady_player"], scope="join"),
            }
        ),
        flush=True,
    )
    _scripted_dice()
    from daphne.cli import CommandLineInterface

    CommandLineInterface().run(["--fd", str(fd), "narrator.asgi:application"])


def _scripted_dice() -> None:
    """Issue 13: a browser test scripts the server's dice by writing a JSON
    list of faces to ``dice.json`` beside the database; the next roll takes
    them (a ScriptedDice) and the file is removed. Without the file the dice
    are the server's own (``secrets``)."""
    from pathlib import Path

    from django.conf import settings

    from challenges.rules.storytelling import ScriptedDice
    from challenges.services import dice

    script = Path(settings.DATABASES["default"]["NAME"]).with_name("dice.json")
    own = dice.server_dice

    def server_dice():
        if not script.exists():
            return own()
        faces = json.loads(script.read_text())
        script.unlink()
        return ScriptedDice(faces)

    dice.server_dice = server_dice


if __name__ == "__main__":
    main(sys.argv[1:])

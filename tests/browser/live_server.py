"""The real ASGI app (Daphne: HTTP and websockets) on 127.0.0.1 for the browser tests.

``python -m tests.browser.live_server migrate`` migrates the SQLite file named by
``DATABASE_URL`` and exits. ``python -m tests.browser.live_server serve FD``
builds ``tests.factories.evening()`` in that database (and Ines, a latecomer
not yet present), prints one JSON line (the
ids and a one-tap join link for Grady) and serves until terminated, on the
listening socket it inherits as file descriptor FD (bound by the test process,
so no other server can take the port meanwhile). The database is a file, so the
test process can read and write it too.
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
    from daphne.cli import CommandLineInterface

    CommandLineInterface().run(["--fd", str(fd), "narrator.asgi:application"])


if __name__ == "__main__":
    main(sys.argv[1:])

"""The server's dice (issue 13): every Storytelling roll is made here with
``secrets``, never by a phone (the app's policy: RULES.md `storytelling`,
"The app makes every roll on the server with `secrets` and logs it")."""

from __future__ import annotations

import secrets

from challenges.rules.storytelling.dice import DiceSource, d10


def server_dice() -> DiceSource:
    """A fresh dice source backed by ``secrets.randbelow``: what every
    service passes to the engine's rolls. Tests patch this function to pass
    ``ScriptedDice`` instead."""
    return d10(secrets.randbelow)

import pytest

from challenges.rules import storytelling as rules
from challenges.services import story_combat as fights
from tests.factories import evening


@pytest.fixture
def game(db):
    return evening()


@pytest.fixture
def dice(monkeypatch):
    """Issue 13: script the server's dice: ``dice(3, 8, …)`` are the faces of the next
    call of ``server_dice`` (a ScriptedDice)."""
    queued: list[int] = []

    def script(*faces: int) -> None:
        queued[:] = faces

    def server_dice() -> rules.ScriptedDice:
        faces, queued[:] = list(queued), []
        return rules.ScriptedDice(faces)

    monkeypatch.setattr(fights.dice_service, "server_dice", server_dice)
    return script

import pytest

from characters.models import Chronicle, GameSession
from tests.factories import make_character, make_user

#: Copies of each Trait: enough that a hundred lost challenges never run a sheet dry.
COPIES = 150


@pytest.fixture
def table(db):
    """A chronicle with an open session, a narrator and ``pairs`` of present
    characters, each with one Physical Trait of ``COPIES`` copies. Call it with
    the number of pairs; returns a dict with ``session``, ``narrator`` and
    ``pairs``: [(challenger, defender), ...]."""

    def build(pairs: int = 1) -> dict:
        narrator = make_user("narrator")
        chronicle = Chronicle.objects.create(name="Fault Chronicle")
        chronicle.narrators.add(narrator)
        session = GameSession.objects.create(chronicle=chronicle, name="Tonight")
        built = []
        for n in range(pairs):
            a = make_character(
                chronicle,
                f"Agnes{n}",
                make_user(f"agnes{n}"),
                traits=[("Strong", "physical", COPIES)],
            )
            b = make_character(
                chronicle,
                f"Boris{n}",
                make_user(f"boris{n}"),
                traits=[("Tough", "physical", COPIES)],
            )
            built.append((a, b))
        return {"session": session, "narrator": narrator, "pairs": built, "chronicle": chronicle}

    return build

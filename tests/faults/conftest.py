import pytest

from tests.factories import paired_chronicle

#: Copies of each Trait: enough that a hundred lost challenges never run a sheet dry.
COPIES = 150


@pytest.fixture
def table(db):
    """A chronicle with an open session, a narrator and ``pairs`` of present
    characters (Agnes n with "Strong", Boris n with "Tough", ``COPIES`` copies
    each). Call it with the number of pairs; returns
    ``tests.factories.paired_chronicle``'s dict: ``session``, ``narrator``,
    ``chronicle`` and ``pairs``: [(challenger, defender), ...]."""

    def build(pairs: int = 1) -> dict:
        return paired_chronicle(pairs, copies=COPIES, chronicle_name="Fault Chronicle")

    return build

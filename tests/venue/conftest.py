import pytest

from tests.factories import evening


@pytest.fixture
def game(db):
    return evening()

"""The phone's header names the chronicle, the character and tonight's
session; every whole view sends it again out of band, so a change of session
reaches a phone that stays connected."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from channels.db import database_sync_to_async
from django.utils import timezone

from tests.faults.phones import Phone

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def _header(phone: Phone) -> list[str]:
    header = BeautifulSoup(phone.view, "html.parser").find(id="phone-header")
    return [" ".join(part.get_text().split()) for part in header.find_all(recursive=False)]


@database_sync_to_async
def _rename(character, name: str) -> None:
    character.name = name
    character.save()  # as the admin does: the phone gets its whole view (challenges.signals)


async def test_the_header_comes_with_every_whole_view(game):
    helen = Phone(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    first = await helen.connect()
    assert 'id="phone-header" class="phone-header" hx-swap-oob="true"' in first
    assert _header(helen) == ["Helen", "Test Chronicle", "Tonight"]
    await _rename(game["helen"], "Helen of Troy")
    await helen.settle(quiet=0.5)
    assert _header(helen) == ["Helen of Troy", "Test Chronicle", "Tonight"]
    await helen.close()


async def test_a_phone_without_a_session_says_so_in_its_header(game):
    await database_sync_to_async(
        lambda: type(game["session"]).objects.update(ended_at=timezone.now())
    )()
    grady = Phone(f"/ws/play/{game['grady'].pk}/", game["grady_player"])
    await grady.connect()
    assert _header(grady) == ["Grady", "Test Chronicle", "No session tonight"]
    await grady.close()

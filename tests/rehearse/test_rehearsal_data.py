"""The rehearsal's chronicle and the history it writes without phones
(``bench.rehearsal``), in-process on the test database."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bench import rehearsal
from challenges.consistency import find_inconsistencies
from challenges.models import Challenge, DiceRoll
from characters.models import Character, Chronicle

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("ruleset", ["met_classic", "ukm", "bns", "storytelling"])
def test_the_filled_history_is_resolved_with_events_and_consistent(ruleset):
    made = rehearsal.create(ruleset, 8)
    counts = rehearsal.fill(made, 12)

    names = list(
        Character.objects.filter(chronicle__name="Rehearsal").values_list("name", flat=True)
    )
    assert len(set(names)) == 8 and all(len(name.split()) == 2 for name in names)
    if ruleset == "storytelling":
        played = DiceRoll.objects.filter(session_id=made.session, rolled_at__isnull=False)
    else:
        played = Challenge.objects.filter(session_id=made.session, stage="resolved")
        assert not played.exclude(events__kind="resolved").exists()
    assert played.count() == 12, counts
    assert find_inconsistencies() == []


def test_a_second_rehearsal_replaces_the_first():
    rehearsal.create("met_classic", 4)
    made = rehearsal.create("bns", 6)

    chronicle = Chronicle.objects.get(name="Rehearsal")
    assert (chronicle.ruleset, chronicle.characters.count()) == ("bns", 6)
    assert chronicle.sessions.get().pk == made.session


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--characters", "1"], "at least 2"),
        (["--rate", "0"], "--rate"),
        (["--duration", "-1"], "--duration"),
        (["--challenges", "-3"], "--challenges"),
        (["--url", "ftp://example.org"], "--url"),
    ],
)
def test_a_rehearsal_with_bad_options_is_refused_and_changes_nothing(args, message):
    with pytest.raises(CommandError, match=message):
        call_command("rehearse", *args)
    assert not Chronicle.objects.filter(name="Rehearsal").exists()

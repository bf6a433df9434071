"""Frame audit: did any hidden throw reach someone other than its owner before
the reveal? (seeds/000 "The Test": neither side sees the other's throw before
both are committed.)

Every element that shows a throw carries machine-readable attributes
(``templates/challenges/_card.html``, ``_dashboard_row.html``)::

    <strong data-throw="rock" data-side="challenger" data-challenge="12" data-test="1">

Given the frames a set of clients received (who received it, when, the text),
``find_leaks`` reports every throw shown to a viewer who does not own it in a
frame received before that test's reveal. The reveal time is the ``created_at``
of the test's "revealed" Event, written in the same transaction as the second
throw, so a legitimate frame (rendered after commit) is always received later.
A player's own throw is hers to see at any time; the narrator's throw in a
static challenge or simple test belongs to no player and is hidden from the
dashboard too until the reveal.

What this cannot see: a throw rendered without the attributes. The templates
are the only place throws are rendered, which keeps that gap small.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from html.parser import HTMLParser

NARRATOR = "narrator"  # the viewer of a narrator dashboard


@dataclass(frozen=True)
class Frame:
    """One server → client frame as received: ``viewer`` is the character id of
    the phone (int) or ``NARRATOR``; ``received_at`` is epoch seconds."""

    viewer: int | str
    received_at: float
    text: str


@dataclass(frozen=True)
class ShownThrow:
    """A throw shown in a frame: challenge id, test number (1-based), side, gesture."""

    challenge: int
    test: int
    side: str
    throw: str


@dataclass(frozen=True)
class Leak:
    """A throw shown to someone it was hidden from, and why it counts as a leak."""

    frame: Frame
    shown: ShownThrow | None
    reason: str


class _ThrowParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[dict[str, str | None]] = []

    def handle_starttag(self, tag, attrs) -> None:
        data = dict(attrs)
        if "data-throw" in data:
            self.found.append(data)


def shown_throws(text: str) -> tuple[list[ShownThrow], list[str]]:
    """Every throw marked in ``text`` (HTML), and problems with malformed marks.
    JSON control frames and HTML without throws give ``([], [])``."""
    if "data-throw" not in text:
        return [], []
    parser = _ThrowParser()
    parser.feed(text)
    parser.close()
    shown, problems = [], []
    for data in parser.found:
        try:
            shown.append(
                ShownThrow(
                    challenge=int(data.get("data-challenge") or ""),
                    test=int(data.get("data-test") or ""),
                    side=str(data.get("data-side") or ""),
                    throw=str(data.get("data-throw") or ""),
                )
            )
        except ValueError:
            problems.append(f"a throw without its challenge or test: {data}")
    return shown, problems


def find_leaks(
    frames: Iterable[Frame],
    *,
    reveals: Mapping[tuple[int, int], float],
    owners: Mapping[int, tuple[int | None, int | None]],
) -> list[Leak]:
    """Every leak in ``frames``.

    ``reveals`` maps ``(challenge id, test number)`` to the epoch seconds of its
    reveal (absent: never revealed); ``owners`` maps a challenge id to the
    character ids of ``(challenger, defender)`` (defender None: the narrator's
    side). A throw is a leak when its viewer is not its owner and the frame was
    received before the reveal, when its challenge or side is unknown, or when
    its mark is malformed (a scanner that cannot read a mark must not pass it).
    """
    leaks = []
    for frame in frames:
        shown, problems = shown_throws(frame.text)
        leaks += [Leak(frame, None, problem) for problem in problems]
        for item in shown:
            if item.challenge not in owners or item.side not in ("challenger", "defender"):
                leaks.append(Leak(frame, item, "a throw of an unknown challenge or side"))
                continue
            owner = owners[item.challenge][0 if item.side == "challenger" else 1]
            if owner is not None and frame.viewer == owner:
                continue  # her own throw
            revealed_at = reveals.get((item.challenge, item.test))
            if revealed_at is None:
                leaks.append(Leak(frame, item, "shown but never revealed"))
            elif frame.received_at < revealed_at:
                leaks.append(
                    Leak(frame, item, f"shown {revealed_at - frame.received_at:.3f} s early")
                )
    return leaks


def reveal_times(challenge_ids: Iterable[int]) -> dict[tuple[int, int], float]:
    """``(challenge id, test number) → epoch seconds`` of every "revealed" Event."""
    from challenges.models import Event

    rows = Event.objects.filter(challenge_id__in=list(challenge_ids), kind="revealed")
    return {
        (row.challenge_id, int(row.data["test"])): row.created_at.timestamp()
        for row in rows.only("challenge_id", "data", "created_at")
    }


def challenge_owners(challenge_ids: Iterable[int]) -> dict[int, tuple[int | None, int | None]]:
    """``challenge id → (challenger id, defender id or None)``."""
    from challenges.models import Challenge

    rows = Challenge.objects.filter(pk__in=list(challenge_ids))
    return {pk: (ch, de) for pk, ch, de in rows.values_list("pk", "challenger_id", "defender_id")}


def scan(frames: Iterable[Frame]) -> list[Leak]:
    """``find_leaks`` against the database: reveal times and owners of every
    challenge whose throw appears in ``frames`` (sync code; one query each)."""
    frames = list(frames)
    ids = {item.challenge for frame in frames for item in shown_throws(frame.text)[0]}
    return find_leaks(frames, reveals=reveal_times(ids), owners=challenge_owners(ids))

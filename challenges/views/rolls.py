"""Storytelling rolls as people see them (issue 13): a phone's rolls
(``_roll_phone.html``: a roll called for with its Roll button, a contest to
resist, an extended action with its countdowns, her latest results) and the
dashboard's (``_roll_dashboard.html``: the session's rolls newest first with
their dice, the forms to call, roll, contest and start an extended action).
Every roll is drawn by ``_dice.html`` from :func:`~challenges.views.dice.roll_view`.
Read-only: :mod:`challenges.services.rolls` writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from django.db.models import Q

from challenges import words
from challenges.heartbeat import listed_rolls
from challenges.models import DiceRoll
from challenges.rules import RulesError, storytelling
from challenges.rules.storytelling import ATTRIBUTES, SKILLS
from challenges.services.rolls import (
    extended_end_at,
    extended_next_at,
    play_now,
    spec_pool,
)
from challenges.views.dice import RollView, roll_view
from characters.models import Character, GameSession
from characters.story_sheets import StorySheetView, story_sheets

ROLLS_SHOWN = 20
"""Rolls a dashboard lists of each kind: waiting on someone, and rolled
(``heartbeat.listed_rolls``)."""

PHONE_DONE_SHOWN = 5
"""Finished rolls a phone keeps under the ones waiting for her."""


@dataclass
class RollSide:
    """One side of a roll as drawn: ``name`` (who rolled, "" for an open
    roll), ``label`` ("Dexterity + Stealth"), ``roll`` (None: not rolled yet)."""

    name: str
    label: str
    roll: RollView | None = None


def _clock(seconds: float) -> tuple[int, str]:
    whole = max(0, int(seconds + 0.999))
    return whole, f"{whole // 60}:{whole % 60:02d}"


@dataclass
class RollCard:
    """One :class:`~challenges.models.DiceRoll` for one screen. ``sides``: the
    rolls to draw (a contest: the acting side, then the resisting side; an
    extended action: each roll, oldest first). ``title``: what it is, e.g.
    "Iris Vale: Dexterity + Stealth". ``waiting``: for a tap (``to_roll``:
    "Roll Dexterity + Stealth (3 dice)"). ``can_roll``/``can_resist``: this
    screen makes that tap (her phone; the dashboard for an NPC).
    ``willpower``: a Willpower point may be offered. ``verdict``: who won, or
    the tie, or an extended action's summary. For an extended action:
    ``successes``, ``target``, ``next_in``/``next_shown`` and
    ``end_in``/``end_shown`` (seconds of play, None: no limit)."""

    pk: int
    version: int
    kind: str
    title: str
    over: bool
    sides: list[RollSide] = field(default_factory=list)
    to_roll: str = ""
    can_roll: bool = False
    can_resist: bool = False
    willpower: bool = False
    verdict: str = ""
    successes: int = 0
    target: int = 0
    next_in: int | None = None
    next_shown: str = ""
    end_in: int | None = None
    end_shown: str = ""


def _dice_words(spec: dict, sheet: StorySheetView | None) -> str:
    """ "Roll Dexterity + Stealth (3 dice)" from her sheet tonight."""
    label = spec["attribute"] + (f" + {spec['skill']}" if spec.get("skill") else "")
    if sheet is None:
        return f"Roll {label}"
    try:
        pool = spec_pool(spec, sheet)
    except (RulesError, KeyError):
        return f"Roll {label}"
    size = "a chance die" if pool.chance else words.dice(pool.dice)
    return f"Roll {label} ({size})"


def roll_card(
    row: DiceRoll,
    sheets: dict[int, StorySheetView],
    *,
    me: int | None,
    narrator: bool,
    now: float | None = None,
) -> RollCard:
    """The :class:`RollCard` of ``row`` for ``me`` (her character id; None: a
    narrator's dashboard, which taps for NPCs when ``narrator``); ``sheets``:
    the story sheets tonight of the characters in it; ``now``: the session's
    play instant (for an extended action's countdowns). No query."""
    name = row.character.name if row.character else ""
    other = row.opponent.name if row.opponent else ""
    npc = row.character is not None and row.character.player_id is None
    card = RollCard(
        pk=row.pk,
        version=row.version,
        kind=row.kind,
        title=f"{name}: {row.label}" if name else row.label,
        over=row.is_over,
    )
    sheet = sheets.get(row.character_id) if row.character_id else None
    mine = me is not None and me == row.character_id
    if row.kind in (DiceRoll.Kind.CALLED, DiceRoll.Kind.NPC, DiceRoll.Kind.OPEN):
        card.sides = [
            RollSide(name, row.label, roll_view(row.result, row.pool) if row.result else None)
        ]
        if not row.is_over:
            card.to_roll = _dice_words(row.spec, sheet)
            card.can_roll = mine
            card.willpower = bool(row.spec.get("willpower_allowed")) and bool(
                sheet and sheet.willpower_left
            )
        return card
    if row.kind == DiceRoll.Kind.CONTESTED:
        card.title = f"{name} against {other}: {row.label}"
        if not row.is_over:
            card.can_resist = me == row.opponent_id or (
                narrator and row.opponent is not None and row.opponent.player_id is None
            )
            opp = sheets.get(row.opponent_id) if row.opponent_id else None
            card.willpower = bool(opp and opp.willpower_left)
            card.sides = [RollSide(name, spec_words(row.spec)), RollSide(other, "")]
            return card
        contest = storytelling.Contest.from_dict(row.result)
        first, second = contest.rolls[-1]
        card.sides = [
            RollSide(name, spec_words(row.spec), roll_view(first, row.pool)),
            RollSide(other, row.opponent_label, roll_view(second, row.opponent_pool)),
        ]
        if contest.winner is None:
            card.verdict = "A tie: nobody wins, things stay as they are."
        else:
            winner = name if contest.winner.value == "challenger" else other
            card.verdict = f"{winner} wins."
        if len(contest.rolls) > 1:
            card.verdict += f" (Rolled {len(contest.rolls)} times: ties rolled again.)"
        return card
    # An extended action.
    state = storytelling.ExtendedAction.from_dict(row.result)
    card.sides = [RollSide(name, row.label, roll_view(r)) for r in state.rolls]
    card.successes, card.target, card.verdict = state.successes, state.target, state.summary
    if state.ended is None:
        card.can_roll = mine or (narrator and npc)
        card.to_roll = _dice_words(row.spec, sheet)
        card.willpower = bool(row.spec.get("willpower_allowed", True)) and bool(
            sheet and sheet.willpower_left
        )
        if now is not None:
            card.next_in, card.next_shown = _clock(extended_next_at(row, state) - now)
            end = extended_end_at(row, state)
            if end is not None:
                card.end_in, card.end_shown = _clock(end - now)
    return card


def spec_words(spec: dict) -> str:
    """ "Dexterity + Stealth" of a stored spec."""
    return spec["attribute"] + (f" + {spec['skill']}" if spec.get("skill") else "")


def roll_cards(
    rows: list[DiceRoll], session: GameSession, *, me: int | None, narrator: bool
) -> list[RollCard]:
    """The :class:`RollCard` of each of ``rows`` (characters selected) for
    one screen (``me``, ``narrator``: as :func:`roll_card`). The story sheets
    are read only for the people of rows still waiting or going on (four
    queries; none when every row is over: a finished roll's card draws
    nothing of a sheet); the session's play instant only for an extended
    action, its Time out read again (one query) while one goes on: a
    screen's session may be older than its last Time out."""
    if any(r.kind == DiceRoll.Kind.EXTENDED and not r.is_over for r in rows):
        session.refresh_from_db(fields=["time_out", "time_out_since", "time_out_seconds"])
    people = {
        c.pk: c for r in rows if not r.is_over for c in (r.character, r.opponent) if c is not None
    }
    sheets = story_sheets(list(people.values()), session) if people else {}
    now = play_now(session) if any(r.kind == DiceRoll.Kind.EXTENDED for r in rows) else None
    return [roll_card(r, sheets, me=me, narrator=narrator, now=now) for r in rows]


PHONE_WINDOW = PHONE_DONE_SHOWN + 10
"""Her newest rolls a phone's list is drawn from (:func:`phone_shown`)."""


def phone_window(character: Character, session: GameSession) -> list[DiceRoll]:
    """Her :data:`PHONE_WINDOW` newest rolls of ``session`` (as roller or
    opponent), newest first, characters selected. One query."""
    return list(
        DiceRoll.objects.filter(session=session)
        .filter(Q(character=character) | Q(opponent=character))
        .select_related("character", "opponent")[:PHONE_WINDOW]
    )


class Kept(NamedTuple):
    """What a phone keeps of a roll of her window (:func:`phone_window`):
    ``key`` (its place: newest first by ``(created_at, id)``, as
    ``DiceRoll.Meta.ordering``), ``pk``, ``version`` drawn, ``is_over``."""

    key: tuple
    pk: int
    version: int
    is_over: bool

    @classmethod
    def of(cls, row: DiceRoll) -> Kept:
        return cls((row.created_at, row.pk), row.pk, row.version, row.is_over)


def phone_shown(window: list) -> list:
    """What a phone lists of her ``window`` (:func:`phone_window`, newest
    first; anything with ``is_over``): those waiting or going on, then the
    :data:`PHONE_DONE_SHOWN` latest results, each part newest first."""
    waiting = [r for r in window if not r.is_over]
    return waiting + [r for r in window if r.is_over][:PHONE_DONE_SHOWN]


def phone_rolls(
    character: Character, session: GameSession | None, window: list[DiceRoll] | None = None
) -> list[RollCard]:
    """Her rolls tonight: those waiting for her (or going on), then her
    :data:`PHONE_DONE_SHOWN` latest results, newest first; drawn from
    ``window`` (:func:`phone_window`, read here if None). Five queries at
    most; none without a session."""
    if session is None:
        return []
    if window is None:
        window = phone_window(character, session)
    return roll_cards(phone_shown(window), session, me=character.pk, narrator=False)


def session_roll(session: GameSession, roll_id: int) -> DiceRoll | None:
    """Roll ``roll_id`` of ``session``, characters selected (None: not of it). One query."""
    return (
        DiceRoll.objects.filter(pk=roll_id, session=session)
        .select_related("character", "opponent")
        .first()
    )


def dashboard_roll_rows(session: GameSession) -> list[DiceRoll]:
    """What a dashboard lists (``heartbeat.listed_rolls``): the
    :data:`ROLLS_SHOWN` newest rolls of ``session`` waiting on someone, newest
    first, then its :data:`ROLLS_SHOWN` latest rolled, latest first;
    characters selected. Two queries."""
    rows = DiceRoll.objects.filter(session=session).select_related("character", "opponent")
    return [row for listed in listed_rolls(rows, ROLLS_SHOWN) for row in listed]


def dashboard_roll_changes(
    session: GameSession,
    rolls: set[int],
    characters: set[int],
    listed_before: set[int] | None = None,
) -> tuple[list[DiceRoll], list[RollCard]]:
    """What the dashboards' roll lists need after the rolls ``rolls`` (ids)
    or the characters ``characters`` (ids: her Willpower or health, which a
    waiting roll's card draws) changed: ``(rows, cards)``, the rows a
    dashboard lists (:func:`dashboard_roll_rows`) and the cards of those of
    them that may look different now: each of ``rolls``, each still
    waiting or going on that involves a character of ``rolls`` or
    ``characters`` (a roll spends Willpower), and each not in
    ``listed_before`` (the ids the dashboards listed: a roll that comes
    back on the list when another leaves it, which they no longer show;
    None: not known). Three queries, one more for
    rolls of ``rolls`` not listed, and four for the sheets if a card
    drawn is still waiting."""
    rows = dashboard_roll_rows(session)
    people = set(characters)
    people.update(p for r in rows if r.pk in rolls for p in (r.character_id, r.opponent_id))
    if unlisted := rolls - {r.pk for r in rows}:
        for pair in DiceRoll.objects.filter(session=session, pk__in=unlisted).values_list(
            "character_id", "opponent_id"
        ):
            people.update(pair)
    people.discard(None)
    drawn = [
        r
        for r in rows
        if r.pk in rolls
        or (not r.is_over and {r.character_id, r.opponent_id} & people)
        or (listed_before is not None and r.pk not in listed_before)
    ]
    return rows, roll_cards(drawn, session, me=None, narrator=True)


def dashboard_rolls(session: GameSession) -> dict:
    """The dashboard's rolls (``rolls``: :func:`dashboard_roll_rows`) and
    what its forms offer (``roll_attributes``, ``roll_skills``,
    ``roll_characters``: present characters ``(id, name)``). Six queries at most."""
    from challenges.views.dashboard import ON_ROSTER

    rows = dashboard_roll_rows(session)
    present = list(
        Character.objects.filter(presences__session=session, presences__status__in=ON_ROSTER)
        .order_by("name")
        .values_list("pk", "name")
    )
    return {
        "rolls": roll_cards(rows, session, me=None, narrator=True),
        "roll_characters": present,
        **roll_choices(),
    }


def place_rolls(
    shown: list[int], listed: list[int], cards: dict[int, str], section: str, *, empty: bool
) -> tuple[str, list[int]] | None:
    """The frame that turns a screen's roll list ``shown`` (ids, in screen
    order) into ``listed`` (the ids a fresh render lists, in order), given
    ``cards`` (``{id: the card's HTML}``, rendered for this screen: the rolls
    that changed): ``(frame, listed)``, or None when only the whole list
    can do it (a roll of ``listed`` neither shown nor in ``cards``, rolls
    kept whose order differs, or ``empty``, the list's "no rolls" line, to
    add or take away). In the frame, the cards of ``shown`` not in
    ``listed`` are deleted; each of ``cards`` in ``listed`` replaces its
    card in place (a bare card: htmx swaps it by id) or, shown elsewhere or
    not at all, is deleted and put after its predecessor in ``listed``
    (``afterend:#roll-ID``), or first in ``#section``. ``section``: the
    list's element id ("rolls", "roll-dashboard")."""
    wanted = set(listed)
    kept = [pk for pk in shown if pk in wanted]
    on_screen = set(kept)
    if any(pk not in on_screen and pk not in cards for pk in listed):
        return None
    if [pk for pk in kept if pk not in cards] != [
        pk for pk in listed if pk in on_screen and pk not in cards
    ]:
        return None
    if empty and (not shown) != (not listed):
        return None  # the "no rolls" line would have to come or go
    parts = [
        f'<article id="roll-{pk}" hx-swap-oob="delete"></article>'
        for pk in shown
        if pk not in wanted
    ]
    screen = kept
    before = None
    for pk in listed:
        html = cards.get(pk)
        if html is not None:
            at = screen.index(pk) if pk in on_screen else -1
            if at >= 0 and (screen[at - 1] if at else None) == before:
                parts.append(html)
            else:
                if at >= 0:
                    del screen[at]
                    parts.append(f'<article id="roll-{pk}" hx-swap-oob="delete"></article>')
                where = f"afterend:#roll-{before}" if before else f"afterbegin:#{section}"
                screen.insert(screen.index(before) + 1 if before else 0, pk)
                on_screen.add(pk)
                parts.append(f'<div hx-swap-oob="{where}">{html}</div>')
        before = pk
    if screen != listed:  # not reached: every card was put after its predecessor
        return None
    return "".join(parts), screen


def roll_choices() -> dict:
    """The Attributes and Skills a roll form offers, in sheet order."""
    return {"roll_attributes": list(ATTRIBUTES), "roll_skills": list(SKILLS)}

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

from django.db.models import Q

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
"""Rolls a dashboard lists, newest first."""

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
    size = "a chance die" if pool.chance else f"{pool.dice} dice"
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


def _cards(rows: list[DiceRoll], session: GameSession, *, me: int | None, narrator: bool) -> list:
    people = {c.pk: c for r in rows for c in (r.character, r.opponent) if c is not None}
    sheets = story_sheets(list(people.values()), session) if people else {}
    now = play_now(session) if any(r.kind == DiceRoll.Kind.EXTENDED for r in rows) else None
    return [roll_card(r, sheets, me=me, narrator=narrator, now=now) for r in rows]


def phone_rolls(character: Character, session: GameSession | None) -> list[RollCard]:
    """Her rolls tonight: those waiting for her (or going on), then her
    :data:`PHONE_DONE_SHOWN` latest results, newest first. Five queries at
    most; none without a session."""
    if session is None:
        return []
    rows = list(
        DiceRoll.objects.filter(session=session)
        .filter(Q(character=character) | Q(opponent=character))
        .select_related("character", "opponent")[: PHONE_DONE_SHOWN + 10]
    )
    waiting = [r for r in rows if not r.is_over]
    done = [r for r in rows if r.is_over][:PHONE_DONE_SHOWN]
    return _cards(waiting + done, session, me=character.pk, narrator=False)


def dashboard_rolls(session: GameSession) -> dict:
    """The dashboard's rolls (``rolls``: the :data:`ROLLS_SHOWN` newest) and
    what its forms offer (``roll_attributes``, ``roll_skills``,
    ``roll_characters``: present characters ``(id, name)``). Six queries at most."""
    from challenges.views.dashboard import ON_ROSTER

    rows = list(
        DiceRoll.objects.filter(session=session).select_related("character", "opponent")[
            :ROLLS_SHOWN
        ]
    )
    present = list(
        Character.objects.filter(presences__session=session, presences__status__in=ON_ROSTER)
        .order_by("name")
        .values_list("pk", "name")
    )
    return {
        "rolls": _cards(rows, session, me=None, narrator=True),
        "roll_characters": present,
        **roll_choices(),
    }


def roll_choices() -> dict:
    """The Attributes and Skills a roll form offers, in sheet order."""
    return {"roll_attributes": list(ATTRIBUTES), "roll_skills": list(SKILLS)}

"""``bns`` combat rounds on the screens (issue 12): :class:`CombatView`, one
combat as one viewer sees it (a narrator: the round, the order, who acts,
each fighter's actions left and target counts, her buttons; a player: the
same order and her own moves from the engine's ``legal_actions``).
Rendered by ``_combat_dashboard.html`` (dashboard) and ``_combat_phone.html``
(phone). Only a chronicle whose ruleset has combat rounds
(``Ruleset.combat_rounds``) reads them: a MET screen costs no query."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from challenges.heartbeat import COMBATS_SHOWN
from challenges.models import Combat
from challenges.rules import RulesError
from challenges.rules import bns_combat as rules
from challenges.rules.core import Category, more_minutes
from challenges.rules.rulesets import get_ruleset
from characters.models import GameSession, Immunity

TIES_WORDS = (
    "The seed names no rule for equal initiatives: you decide their order (until you do, by name)."
)
"""What the dashboard says beside the tie buttons (seeds/002 "Resolving Combat")."""


@dataclass
class FighterRow:
    """One fighter in the order, as the screens show her."""

    pk: int
    name: str
    initiative: int
    rage_rounds: int
    in_round: bool
    done: bool
    held: bool
    acting: bool
    standard_left: bool
    simple_left: bool
    steps: int
    #: "Physical 1/2 · Social 0/1 · Mental 0/1": challenges against her this round, of the limit.
    targeted: str
    #: The order with her one place earlier (a tie only), for the narrator's ↑ button.
    up_order: list[int] = field(default_factory=list)
    #: What maneuvers left on her: "grappled by Helen · prone · blinded (2 simple
    #: actions to clear)" ("" for nothing), seeds/002 "Combat Maneuvers".
    conditions: str = ""

    @property
    def actions_left(self) -> str:
        """ "standard and simple", "simple", "none"."""
        left = [
            w for w, ok in (("standard", self.standard_left), ("simple", self.simple_left)) if ok
        ]
        return " and ".join(left) or "none"


@dataclass
class CombatView:
    """One combat for one viewer (``me``: her character id; None: a narrator)."""

    pk: int
    version: int
    label: str
    ended: bool
    order: list[FighterRow]
    acting_name: str
    surprise: bool
    ties: bool
    #: For a player: the line under the round ("Your initiative: …", "Grady is acting").
    status: str = ""
    me: int | None = None
    my_turn: bool = False
    can_standard: bool = False
    can_simple: bool = False
    max_steps: int = 0
    can_advance: bool = False
    can_hold: bool = False
    #: Prone: her simple action stands her up; blinded: it clears her eyes.
    can_stand_up: bool = False
    can_clear_eyes: bool = False
    #: Grappled, on her simple action: (id, name) of each grappler she may try
    #: to best, and (attack, label, her pool) of each way (brawl, melee): her
    #: phone's "Escape from <name>'s grapple" (seeds/002 Grapple); the pools
    #: come from her sheet (``views.phone.phone_combats``).
    escape_from: list[tuple[int, str]] = field(default_factory=list)
    escape_attacks: list[tuple[str, str, int]] = field(default_factory=list)
    #: Her Physical focus's free maneuver is spent in this live combat
    #: (seeds/002 "Physical Focuses in Combat": once per combat).
    focus_used: bool = False
    assist_attacker: list[tuple[int, str]] = field(default_factory=list)
    assist_defender: list[tuple[int, str]] = field(default_factory=list)
    #: For a player on her initiative: whom she may challenge now and how
    #: ("Grady: Physical, Social, Mental"), and the immunities against her
    #: ("Grady is immune to your Dominate for 9 more minutes").
    targets: list[str] = field(default_factory=list)
    immune: list[str] = field(default_factory=list)
    #: For a narrator: immunities running ("Rosa to Vesper's Dominate: 9 more minutes").
    immunities: list[str] = field(default_factory=list)
    #: For a narrator: characters present tonight she may add (id, name).
    add_options: list[tuple[int, str]] = field(default_factory=list)


def _targeted(state: rules.CombatState, pk: int) -> str:
    return " · ".join(
        f"{c.label} {state.targeted(pk, c)}/{state.options.limit(c)}" for c in Category
    )


def _status(state: rules.CombatState, me: int, legal: rules.LegalActions, names: dict) -> str:
    acting = rules.whose_turn(state)
    if state.ended:
        return "The combat is over."
    if legal.acting:
        left = [w for w, ok in (("standard", legal.standard), ("simple", legal.simple)) if ok]
        if not left:
            return "Your initiative: both actions taken; end your initiative."
        what = " and ".join(left)
        return f"Your initiative: take your {what} action"
    mine = state.fighter(me)
    if not state.in_round(mine):
        return f"You do not act in Rage round {state.rage_round}. " + (
            f"{names[acting]} is acting." if acting is not None else ""
        )
    if acting is None:
        return ""
    if state.surprise is not None:
        return f"{names[acting]} takes a Surprise Action."
    return f"{names[acting]} is acting."


def combat_view(
    row: Combat, me: int | None, *, now: float | None = None, present=(), immunities=()
) -> CombatView:
    """The view of ``row`` for character ``me`` (None: a narrator; then
    ``present``, ``(id, name)`` of the characters here tonight, gives the
    add options). ``now``: epoch seconds (default: the clock).
    ``immunities``: ``(target, attacker, power, until)`` of the session
    (:func:`immunities_now`), those of the combat's fighters shown. No query."""
    now = time.time() if now is None else now
    state = rules.CombatState.from_dict(row.state)
    info = rules.describe(state, now)
    names = {f.fighter_id: f.name for f in (*state.fighters, *state.removed)}
    ids = [f.fighter_id for f in state.fighters]
    order = []
    for i, f in enumerate(info["order"]):
        up: list[int] = []
        if i and info["order"][i - 1]["initiative"] == f["initiative"] and not state.ended:
            up = [*ids[: i - 1], ids[i], ids[i - 1], *ids[i + 1 :]]
        order.append(
            FighterRow(
                pk=f["id"],
                name=f["name"],
                initiative=f["initiative"],
                rage_rounds=f["rage_rounds"],
                in_round=f["in_round"],
                done=f["done"],
                held=f["held"],
                acting=f["acting"],
                standard_left=f["standard_left"],
                simple_left=f["simple_left"],
                steps=f["steps"],
                targeted=_targeted(state, f["id"]),
                up_order=up,
                conditions=" · ".join(f["conditions"]),
            )
        )
    acting = info["acting"]
    view = CombatView(
        pk=row.pk,
        version=row.version,
        label=info["label"],
        ended=state.ended,
        order=order,
        acting_name=names[acting] if acting is not None else "",
        surprise=state.surprise is not None,
        ties=any(r.up_order for r in order),
        me=me,
    )
    if me is None:
        view.add_options = [(pk, name) for pk, name in present if pk not in ids]
        view.immunities = [
            f"{names[target]} to {names[attacker]}'s {power}: {more_minutes(until - now)}"
            for target, attacker, power, until in immunities
            if target in names and attacker in names and until > now
        ]
        return view
    if me not in ids:
        view.status = "You are out of this combat." if not state.ended else "The combat is over."
        return view
    legal = rules.legal_actions(state, me, now)
    view.focus_used = not state.ended and state.fighter(me).focus_used
    view.status = _status(state, me, legal, names)
    view.my_turn = legal.acting
    view.can_standard, view.can_simple = legal.standard, legal.simple
    view.max_steps = legal.steps
    view.can_advance, view.can_hold = legal.advance, legal.hold
    view.can_stand_up, view.can_clear_eyes = legal.stand_up, legal.clear_eyes
    view.escape_from = [(pk, names[pk]) for pk in legal.escape]
    view.targets = [
        f"{names[pk]}: {', '.join(c.label for c in categories)}" for pk, categories in legal.targets
    ]
    view.immune = [
        f"{names[target]} is immune to your {power} for {more_minutes(until - now)}"
        for target, attacker, power, until in immunities
        if attacker == me and target in names and until > now
    ]
    view.assist_attacker = [(pk, names[pk]) for pk in legal.assist_attacker]
    view.assist_defender = [
        (a, f"{names[state.attacks[a].attacker]}'s attack on {names[state.attacks[a].target]}")
        for a in legal.assist_defender
    ]
    return view


def combat_rounds(session: GameSession | None) -> bool:
    """The session's ruleset runs combats in rounds (``Ruleset.combat_rounds``,
    ``bns``). No query when its chronicle is loaded."""
    if session is None:
        return False
    try:
        return get_ruleset(session.chronicle.ruleset).combat_rounds
    except RulesError:
        return False


def immunities_now(session: GameSession, now: float) -> list[tuple[int, int, str, float]]:
    """``(target, attacker, power, until)`` of every immunity of ``session``
    running at ``now`` (epoch seconds): the Immunity rows, the one store of
    the rule in a combat and out of one (seeds/002 "Retrying Failed
    Attacks"). One query."""
    rows = Immunity.objects.filter(
        session=session, until__gt=datetime.fromtimestamp(now, tz=UTC)
    ).values_list("character_id", "attacker_id", "power", "until")
    return [(t, a, p, u.timestamp()) for t, a, p, u in rows]


def combat_views(session: GameSession, me: int | None, *, present=()) -> list[CombatView]:
    """The combats of ``session`` a screen shows (hers for a player, all for
    a narrator), the newest first, at most :data:`COMBATS_SHOWN`. One query,
    and one more for the immunities while a combat is live."""
    rows = Combat.objects.filter(session=session)
    if me is not None:
        rows = rows.filter(participants=me)
    rows = list(rows.order_by("-created_at", "-pk")[:COMBATS_SHOWN])
    now = time.time()
    live = any(row.ended_at is None for row in rows)
    immunities = immunities_now(session, now) if live else []
    return [combat_view(row, me, now=now, present=present, immunities=immunities) for row in rows]


# --- a character's combats, on her panel on the dashboard ------------------------------


@dataclass(frozen=True)
class PanelCombat:
    """A live combat one character is in, as her panel on the dashboard lists
    it: the combat's id (the dashboard's block is ``#combat-<pk>``), the round
    ("Turn 2 · Rage round 1"), her ``place`` in the order (1-based) ``of`` how
    many, whether she acts in this round, who is acting (``her_turn``: she is;
    ``surprise``: it is a Surprise Action) and her ``effects``, what
    maneuvers left on her in the engine's words (``rules.conditions``:
    "grappled by Rosa", "prone", "unconscious (9 more minutes)")."""

    pk: int
    label: str
    place: int
    of: int
    in_round: bool
    acting_name: str
    her_turn: bool
    surprise: bool
    effects: list[str]


def panel_combats(session: GameSession, character_id: int) -> list[PanelCombat]:
    """The live combats of ``session`` that character ``character_id`` is in
    (not ended, not taken out), the newest first: none without combat rounds
    (no query when the session's chronicle is loaded), else one query."""
    if not combat_rounds(session):
        return []
    rows = Combat.objects.filter(
        session=session, participants=character_id, ended_at__isnull=True
    ).order_by("-created_at", "-pk")
    shown = []
    now = time.time()
    for row in rows:
        state = rules.CombatState.from_dict(row.state)
        ids = [f.fighter_id for f in state.fighters]
        if character_id not in ids:
            continue  # taken out of it
        me = state.fighter(character_id)
        acting = rules.whose_turn(state)
        shown.append(
            PanelCombat(
                pk=row.pk,
                label=rules.round_label(state),
                place=ids.index(character_id) + 1,
                of=len(ids),
                in_round=state.in_round(me),
                acting_name=state.fighter(acting).name if acting is not None else "",
                her_turn=acting == character_id,
                surprise=state.surprise is not None,
                effects=rules.conditions(state, me, now),
            )
        )
    return shown

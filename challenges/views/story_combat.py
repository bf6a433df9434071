"""Storytelling fights on the screens (issue 13): :class:`FightView`, one fight
as one viewer sees it (a narrator: the turn, the order, who acts, each
fighter's Defense left this turn and her track, her buttons; a player: the
same and her moves from the engine's ``legal_moves``), with every roll of the
fight drawn die by die (``_dice.html``). Rendered by ``_fight_dashboard.html``
and ``_fight_phone.html``. Only a chronicle that rolls dice pools
(``Chronicle.has_dice_pools``) reads them: a MET or ``bns`` screen costs no
query."""

from __future__ import annotations

from dataclasses import dataclass, field

from challenges.heartbeat import FIGHTS_SHOWN
from challenges.models import StoryCombat
from challenges.rules import storytelling as rules
from challenges.views.dice import RollView, roll_view
from characters.models import Character, GameSession, Presence
from characters.story_sheets import story_sheets

ATTACK_KINDS = [(k.value, f"{k.value.title()} ({' + '.join(k.traits)})") for k in rules.AttackKind]
DAMAGE_TYPES = [(d.value, d.label) for d in rules.DamageType]


def dice_pools(session: GameSession | None) -> bool:
    """The session's chronicle rolls dice pools. No query when its chronicle
    is loaded."""
    return session is not None and session.chronicle.has_dice_pools


@dataclass
class FighterRow:
    """One fighter in the order, as the screens show her."""

    pk: int
    name: str
    initiative: int
    acting: bool
    done: bool
    holding: bool
    dodging: bool
    prone: bool
    #: Her Defense against the next attack this turn (dodging doubles it, −1 per attack).
    defense: int
    track: str
    status: str
    wound_penalty: int

    @property
    def tags(self) -> str:
        """ "acting · prone · dodging" ("" for none)."""
        words = [
            w
            for w, on in (
                ("acting", self.acting),
                ("done", self.done and not self.acting),
                ("holds her action", self.holding),
                ("dodging", self.dodging),
                ("prone", self.prone),
            )
            if on
        ]
        return " · ".join(words)


@dataclass
class RollLine:
    """One roll of the fight: ``text`` in words and, for an attack, ``roll``
    (:class:`RollView`, every die); for Initiative ``face`` (its one die)."""

    text: str
    roll: RollView | None = None
    face: int | None = None


@dataclass
class FightView:
    """One fight for one viewer (``me``: her character id; None: a narrator)."""

    pk: int
    version: int
    turn: int
    ended: bool
    order: list[FighterRow]
    acting_name: str
    rolls: list[RollLine]
    status: str = ""
    me: int | None = None
    my_turn: bool = False
    moves: rules.CombatMoves = field(default_factory=rules.CombatMoves)
    prone: bool = False
    targets: list[tuple[int, str]] = field(default_factory=list)
    guard: bool = False
    willpower_left: int = 0
    add_options: list[tuple[int, str]] = field(default_factory=list)

    @property
    def label(self) -> str:
        return "over" if self.ended else f"Turn {self.turn}"


def _roll_lines(rolls: list[dict], names: dict[int, str]) -> list[RollLine]:
    """The fight's rolls, newest first."""
    lines = []
    for r in reversed(rolls):
        who = names.get(int(r["by"]), "?")
        if r["kind"] == "initiative":
            penalty = f" {r['wound_penalty']} wounds" if r.get("wound_penalty") else ""
            text = f"{who}'s Initiative: {r['face']} + {r['modifier']}{penalty} = {r['total']}"
            lines.append(RollLine(text, face=int(r["face"])))
            continue
        target = names.get(int(r["target"]), "?")
        guard = " (Willpower +2)" if r.get("guard") else ""
        damage = (
            f"{r['damage']} {r['damage_type']}: {target}'s track {r['track']}"
            if r["damage"]
            else "no damage"
        )
        text = f"{who} attacks {target} ({r['attack']}, Defense {r['defense']}{guard}): {damage}"
        lines.append(RollLine(text, roll=roll_view(r["roll"], r["pool"])))
    return lines


def _status(state: rules.CombatState, me: int, moves: rules.CombatMoves, names: dict) -> str:
    if state.ended:
        return "The fight is over."
    if me not in state.order:
        return "You are out of this fight."
    acting = rules.whose_turn(state)
    if moves.act:
        return "Your turn: take your action."
    if me in state.acted:
        return "You have used your action this turn."
    if acting is not None:
        return f"{names.get(acting, '?')} is acting."
    return "The turn waits on those holding their action."


def fight_view(
    row: StoryCombat,
    me: int | None,
    sheets: dict,
    *,
    present: list[tuple[int, str]] | None = None,
) -> FightView:
    """One fight for one viewer from its row and the fighters' sheets
    tonight (``story_sheets``). No query."""
    state = rules.CombatState.from_dict(row.state)
    names = {f.character_id: f.name for f in state.fighters}
    acting = rules.whose_turn(state)
    order = []
    for f in state.fighters:
        if f.character_id in state.removed:
            continue
        sheet = sheets.get(f.character_id)
        track = sheet.track if sheet is not None else rules.HealthTrack(1)
        order.append(
            FighterRow(
                pk=f.character_id,
                name=f.name,
                initiative=f.initiative.total if f.initiative else 0,
                acting=f.character_id == acting,
                done=f.character_id in state.acted,
                holding=f.character_id in state.holding,
                dodging=f.character_id in state.dodging,
                prone=f.character_id in state.prone,
                defense=rules.defense_against(state, f.character_id),
                track=track.picture,
                status=track.status.label,
                wound_penalty=track.wound_penalty,
            )
        )
    view = FightView(
        pk=row.pk,
        version=row.version,
        turn=state.turn,
        ended=state.ended,
        order=order,
        acting_name=names.get(acting, "") if acting is not None else "",
        rolls=_roll_lines(row.rolls, names),
        me=me,
    )
    if me is not None:
        moves = rules.legal_moves(state, me)
        view.moves = moves
        view.my_turn = moves.act
        view.status = _status(state, me, moves, names)
        view.prone = me in state.prone
        view.targets = [(f.pk, f.name) for f in order if f.pk != me]
        view.guard = me in row.guard
        sheet = sheets.get(me)
        view.willpower_left = sheet.willpower_left if sheet is not None else 0
    elif present is not None and not state.ended:
        view.add_options = [(pk, name) for pk, name in present if pk not in state.order]
    return view


def fight_views(
    session: GameSession | None,
    me: int | None,
    *,
    present: list[tuple[int, str]] | None = None,
) -> list[FightView]:
    """The :data:`FIGHTS_SHOWN` newest fights of ``session`` (``me``'s on her
    phone), for one viewer. Five queries at most (the fights, then the
    fighters' sheets)."""
    if session is None:
        return []
    rows = StoryCombat.objects.filter(session=session)
    if me is not None:
        rows = rows.filter(participants=me)
    rows = list(rows.order_by("-created_at", "-pk")[:FIGHTS_SHOWN])
    if not rows:
        return []
    ids = {int(f["character_id"]) for r in rows for f in r.state["fighters"]}
    sheets = story_sheets(list(Character.objects.filter(pk__in=ids)), session)
    return [fight_view(r, me, sheets, present=present) for r in rows]


def heal_text(presence: Presence | None, session: GameSession | None) -> str:
    """ "Next point heals in 12 min" (seeds/003 "Healing"), "" with nothing
    to heal; "frozen" during a Time out."""
    from challenges.services.story_combat import heal_next_in

    seconds = heal_next_in(presence, session)
    if seconds is None:
        return ""
    minutes = max(1, round(seconds / 60))
    if minutes >= 48 * 60:
        when = f"{round(minutes / (24 * 60))} days"
    elif minutes >= 120:
        when = f"{round(minutes / 60)} h"
    else:
        when = f"{minutes} min"
    frozen = " (Time out: healing waits)" if session is not None and session.time_out else ""
    return f"Next point heals in {when}{frozen}"


def phone_fights(character: Character, session: GameSession | None, sheet) -> dict:
    """Issue 13: ``{"fights", "heal_text"}`` for her phone, read only when
    her sheet is one of dots (``sheet.story``): no query for a MET or ``bns``
    phone."""
    if session is None or getattr(sheet, "story", None) is None:
        return {"fights": [], "heal_text": ""}
    presence = Presence.objects.filter(session=session, character=character).first()
    return {
        "fights": fight_views(session, character.pk),
        "heal_text": heal_text(presence, session),
    }

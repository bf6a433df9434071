"""The view-models both screens share. Each viewer gets her own rendering:
``ChallengeView`` shows a throw to the other side (or a narrator) only once
both throws of that test are in; ``shown_throws`` and ``state_shown`` do the
same for the admin. ``SharedRenders`` keeps a rendering every connection of
this process would make alike. Rendered inside ``challenges/_card.html`` (a
phone) and ``challenges/_dashboard_row.html`` (a dashboard)."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from challenges.models import Challenge
from challenges.rules import (
    ChallengeState,
    Kind,
    Moves,
    Outcome,
    Pool,
    RetestKind,
    Side,
    Stage,
    TestRecord,
    legal_moves,
    modifiers,
    retest_ratings,
)
from challenges.rules.judge import effective, most_declarable, options_of
from challenges.rules.options import Overbid
from characters.models import Character
from characters.services import TraitLine

RESULT_COLLAPSE_SECONDS = 180  # a dashboard's result shows as one line after this


HIDDEN = "hidden"  # a throw that is in but not yet revealed, where a viewer sees that much


def shown_throws(record: TestRecord) -> tuple[str | None, str | None]:
    """``(challenger throw, defender throw)`` of a test as anyone outside it
    sees them (a narrator's dashboard, the admin): both once the test is
    revealed (``TestRecord.revealed``: both throws in), before that neither,
    the narrator's own preset throw included."""
    if not record.revealed:
        return None, None
    assert record.challenger_throw is not None and record.defender_throw is not None
    return record.challenger_throw.value, record.defender_throw.value


def state_shown(state: dict) -> dict:
    """A challenge's stored ``state`` dict with the throws of every unrevealed
    test replaced by :data:`HIDDEN` (None where not thrown): what the admin
    shows. A state that does not parse is shown with every throw hidden."""
    tests = []
    for test in state.get("tests") or []:
        if "attacker_throw" in test:  # issue 12: a test of test pools (rules.bns.BnsTest)
            both = bool(test.get("attacker_throw")) and bool(test.get("defender_throw"))
            keys = ("attacker_throw", "defender_throw")
            tests.append({**test, **{k: test[k] if both else _hidden(test.get(k)) for k in keys}})
            continue
        try:
            record = TestRecord.from_dict(test)
        except (KeyError, TypeError, ValueError):
            record = TestRecord()
        shown = dict(zip(("challenger_throw", "defender_throw"), shown_throws(record), strict=True))
        for key, throw in shown.items():
            shown[key] = throw or (HIDDEN if test.get(key) else None)
        tests.append({**test, **shown})
    return {**state, "tests": tests}


def _hidden(throw: Any) -> str | None:
    """An unrevealed throw as the admin shows it: :data:`HIDDEN`, None if none."""
    return HIDDEN if throw else None


@dataclass(frozen=True)
class TestView:
    """One test as one viewer may see it: the other side's throw only once revealed."""

    number: int
    mine: str | None
    theirs: str | None
    revealed: bool
    challenger_throw: str | None
    defender_throw: str | None
    thrown: tuple[bool, bool]
    record: TestRecord


class CallsNarrator:
    """s11 rulings: a call for a narrator and the rulings, on cards and rows;
    shared by :class:`ChallengeView` and ``views.bns.BnsCardView`` (each has
    ``challenge``, ``side``, ``is_resolved`` and both names)."""

    challenge: Challenge
    side: Side | None
    is_resolved: bool
    challenger_name: str
    defender_name: str

    @property
    def called(self) -> bool:
        """A side has called a narrator and no ruling or dismissal has answered yet."""
        return self.challenge.called_at is not None

    @property
    def called_at(self) -> float:
        """Epoch seconds of the call (0 when none): the dashboard beeps once per call."""
        return self.challenge.called_at.timestamp() if self.challenge.called_at else 0.0

    @property
    def called_by_name(self) -> str:
        """Who called: her character's name ("" when no call)."""
        if not self.challenge.called_by:
            return ""
        return (
            self.challenger_name
            if self.challenge.called_by == "challenger"
            else (self.defender_name)
        )

    @property
    def called_by_me(self) -> bool:
        return self.side is not None and self.challenge.called_by == self.side.value

    @property
    def ruling_lines(self) -> list[dict[str, str]]:
        """The narrators' rulings on this challenge, oldest first: each
        ``{"text", "reason", "narrator", "at"}`` (``Challenge.rulings``)."""
        return [r for r in (self.challenge.rulings or []) if isinstance(r, dict)]

    @property
    def can_call(self) -> bool:
        """A phone may call a narrator: hers, not already called, and open or
        resolved less than ``services.CALL_WINDOW_SECONDS`` ago."""
        from challenges.services.rulings import CALL_WINDOW_SECONDS

        if self.side is None or self.called:
            return False
        if not self.is_resolved:
            return True
        done = self.challenge.resolved_at
        return done is not None and time.time() - done.timestamp() < CALL_WINDOW_SECONDS


def _test_fields(tests: list[TestView]) -> list[dict]:
    """Each test's fields, and its record's, as dicts (:class:`CardFace`)."""
    return [{**vars(t), "record": vars(t.record)} for t in tests]


def _choice_fields(lines: list[TraitLine]) -> list[dict]:
    """What a card shows of each Trait she may bid (:class:`CardFace`)."""
    return [{"name": line.name, "free": line.free} for line in lines]


class CardFace(dict):
    """What a phone's card (``_card.html``) looks up on a :class:`ChallengeView`,
    each value read from the view on its first lookup and kept.

    Django resolves ``c.name`` by trying ``c["name"]`` before
    ``getattr(c, "name")``; on an object the first try raises and is caught,
    and a card makes ~80 lookups. On this dict the first try answers, and a
    property the card reads several times (``opponent_name``) is computed
    once. For the same reason ``state``, ``moves``, each of ``tests`` (and its
    ``record``) and of ``bid_choices`` are dicts of what the card shows.
    ``pk`` and ``version`` (``data-version``, which a reconnect names) are
    text: an int would go through number localization at each of the card's
    forms, to print the same digits (no thousand separator). A name the view lacks
    raises AttributeError, as a lookup on the view did (issue 14: ~13% less
    CPU per card frame; docs/performance.md)."""

    AS_DICTS: dict[str, Callable[[Any], Any]] = {
        "state": vars,  # the dataclass's own __dict__: read, never written
        "moves": vars,
        "tests": _test_fields,
        "bid_choices": _choice_fields,
    }

    def __init__(self, view: ChallengeView) -> None:
        super().__init__(pk=str(view.pk), version=str(view.challenge.version))
        self.view = view

    def __missing__(self, key: str) -> Any:
        value = getattr(self.view, key)
        if key in self.AS_DICTS:
            value = self.AS_DICTS[key](value)
        self[key] = value
        return value


@dataclass
class ChallengeView(CallsNarrator):
    """A challenge as seen by ``side`` (None: a narrator's dashboard)."""

    challenge: Challenge
    state: ChallengeState
    side: Side | None
    #: Traits the viewer may bid now (phone only), and her Trait count in the
    #: challenge's category (the default declaration in a tie).
    bid_choices: list[TraitLine] = field(default_factory=list)
    held: int = 0
    #: A voided challenge's reason, as the narrator gave it (dashboard only).
    void_reason: str = ""

    pooled = False
    """A MET challenge (issue 12: ``views.bns.BnsCardView`` has True)."""

    @property
    def pk(self) -> int:
        return self.challenge.pk

    @cached_property
    def face(self) -> CardFace:
        """This view as a phone's card looks it up (:class:`CardFace`)."""
        return CardFace(self)

    @property
    def stage(self) -> str:
        return self.state.stage.value

    @property
    def is_resolved(self) -> bool:
        return self.state.stage == Stage.RESOLVED

    @property
    def category_label(self) -> str:
        return self.state.category.value.title() if self.state.category else ""

    @property
    def kind_label(self) -> str:
        return {
            Kind.OPPOSED: f"{self.category_label} challenge",
            Kind.STATIC: f"Static {self.category_label} challenge",
            Kind.SIMPLE: "Simple test",
        }[self.state.kind]

    @property
    def challenger_name(self) -> str:
        return self.state.challenger.name

    @property
    def defender_name(self) -> str:
        if self.state.defender is not None:
            return self.state.defender.name
        if self.challenge.prepared_id and self.state.stakes:
            return self.state.stakes  # a prepared static: the object's name
        return "the narrator"

    # issue 11, statics ------------------------------------------------------
    @property
    def secret_difficulty(self) -> bool:
        """A prepared static on a player's phone: its difficulty is shown
        nowhere (not the number, nor as the narrator's declared count)."""
        return bool(self.challenge.prepared_id) and self.side is not None

    @property
    def reveal(self) -> str:
        """What winning a prepared static reveals: for the winner's phone only,
        once the result is in; "" otherwise (one query, only then)."""
        if not (
            self.challenge.prepared_id
            and self.side == Side.CHALLENGER
            and self.state.outcome == Outcome.CHALLENGER_WINS
        ):
            return ""
        prepared = self.challenge.prepared
        return prepared.reveal if prepared is not None else ""

    @property
    def opponent_name(self) -> str:
        return self.defender_name if self.side == Side.CHALLENGER else self.challenger_name

    def _is(self, side: Side) -> bool:
        return self.side == side

    @property
    def my_bids(self) -> tuple[str, ...]:
        if self.side == Side.CHALLENGER:
            return self.state.challenger_bids
        if self.side == Side.DEFENDER:
            return self.state.defender_bids
        return ()

    @property
    def my_bid_copies(self) -> list[tuple[int | None, str]]:
        """The viewer's copies at risk in this challenge, ``(Trait id or None,
        name as bid)`` each: none once it is resolved."""
        if self.is_resolved:
            return []
        ids: tuple[int | None, ...] = ()
        if self.side == Side.CHALLENGER:
            ids = self.state.challenger_bid_ids
        elif self.side == Side.DEFENDER:
            ids = self.state.defender_bid_ids
        names = self.my_bids
        return [(ids[n] if n < len(ids) else None, name) for n, name in enumerate(names)]

    @property
    def their_bids(self) -> tuple[str, ...]:
        if self.side == Side.CHALLENGER:
            return self.state.defender_bids
        return self.state.challenger_bids

    @property
    def tests(self) -> list[TestView]:
        views = []
        for number, record in enumerate(self.state.tests, start=1):
            revealed = record.revealed
            ch = record.challenger_throw.value if record.challenger_throw else None
            de = record.defender_throw.value if record.defender_throw else None
            # The narrator's own throw in a static challenge is hidden from her
            # dashboard too until the player throws: she may have not chosen it.
            mine = (
                ch if self.side == Side.CHALLENGER else de if self.side == Side.DEFENDER else None
            )
            theirs = (de if self.side == Side.CHALLENGER else ch) if revealed else None
            narrator_side_has_thrown = de is not None and self.state.kind == Kind.OPPOSED
            shown_ch, shown_de = shown_throws(record)
            views.append(
                TestView(
                    number=number,
                    mine=mine,
                    theirs=theirs,
                    revealed=revealed,
                    challenger_throw=shown_ch,
                    defender_throw=shown_de,
                    thrown=(ch is not None, narrator_side_has_thrown or revealed),
                    record=record,
                )
            )
        return views

    @property
    def current_test(self) -> TestView | None:
        tests = self.tests
        return tests[-1] if tests else None

    # What the viewer may do now ------------------------------------------
    @cached_property
    def moves(self) -> Moves:
        """Every move the viewer may make now (``rules.legal_moves``); none on
        a dashboard. The card offers exactly these."""
        if self.side is None:
            return Moves()
        return legal_moves(self.state, self.side)

    @property
    def can_bid(self) -> bool:
        return bool(self.moves.bid)

    @property
    def bid_two(self) -> bool:
        """She must bid two Traits (``met_classic``: Bruised or Wounded)."""
        return self.moves.bid >= 2

    @property
    def can_throw(self) -> bool:
        return self.moves.throw

    @property
    def can_declare(self) -> bool:
        return self.moves.declare is not None

    @property
    def declare_max(self) -> int:
        """The most she may declare now (her count, or a count that stands)."""
        return self.moves.declare or 0

    @property
    def overbid_risks_trait(self) -> bool:
        """An overbid risks one more Trait (``met_classic``, seeds/000
        "Overbidding"); under ``ukm`` she announces a number instead."""
        return options_of(self.state).overbid is Overbid.NEW_TRAIT_DOUBLE_COUNT

    @property
    def overbid_most(self) -> int:
        """The count an overbid announces by default: her most, with her
        modifiers under ``ukm`` (``rules.call_retest``)."""
        if self.side is None:
            return 0
        base = most_declarable(self.state, self.side)
        if self.overbid_risks_trait:
            return base
        return effective(self.state, self.side, base)

    @property
    def needs_trait_choices(self) -> bool:
        """Her Trait buttons are needed now: a bid, Traits owed, or an overbid
        that risks one more Trait."""
        m = self.moves
        overbid = RetestKind.OVERBID in m.retests and self.overbid_risks_trait
        return bool(m.bid or m.owed or overbid)

    @property
    def retest_buttons(self) -> list[dict]:
        """The retests she may call now, each ``{"kind", "label", "name"}``,
        one per Ability or Discipline the engine allows in this challenge's
        category (``rules.retest_ratings``; labelled "Retest with Brawl 3");
        the overbid is left to its own form (it needs a Trait or a count)."""
        out: list[dict] = []
        for kind in self.moves.retests:
            if kind is RetestKind.DISCIPLINE and self.side:
                out += [
                    {"kind": kind.value, "label": f"Retest with {d.name}", "name": d.name}
                    for d in retest_ratings(self.state, self.side, kind)
                ]
            elif kind is RetestKind.ABILITY and self.side:
                out += [
                    {
                        "kind": kind.value,
                        "label": f"Retest with {a.name} {a.rating}",
                        "name": a.name,
                    }
                    for a in retest_ratings(self.state, self.side, kind)
                ]
            elif kind is RetestKind.WILLPOWER:
                out.append(
                    {"kind": kind.value, "label": "Spend Willpower: retest (final)", "name": ""}
                )
        return out

    @property
    def can_overbid(self) -> bool:
        return RetestKind.OVERBID in self.moves.retests

    @property
    def my_abilities(self) -> list[tuple[str, int]]:
        """(name, rating) of each Ability she may answer an ability retest
        with: those that apply to this challenge's category."""
        if not self.side:
            return []
        return [
            (a.name, a.rating) for a in retest_ratings(self.state, self.side, RetestKind.ABILITY)
        ]

    @property
    def can_cancel_discipline(self) -> bool:
        """She holds the Discipline of the retest she must answer (seeds/004
        "Challenge Re-Tests": the same Discipline cancels it)."""
        pending = self.state.pending
        me = self.state.combatant(self.side) if self.side else None
        return (
            self.moves.answer is RetestKind.DISCIPLINE
            and pending is not None
            and me is not None
            and me.discipline(pending.name) is not None
        )

    @property
    def declared_by_challenger(self) -> int | None:
        test = self.state.current_test
        return test.challenger_declared if test else None

    # What each side declared, named and spent --------------------------------
    def _who(self, side: Side, name: Callable[[str], str] = str) -> str:
        """ "You" for the viewer's own side, else the side's name."""
        if side == self.side:
            return "You"
        return name(self.challenger_name if side == Side.CHALLENGER else self.defender_name)

    def _verb(self, side: Side, you: str, she: str) -> str:
        """``you`` when ``side`` is the viewer's, else ``she`` ("bid"/"bids")."""
        return you if side == self.side else she

    @property
    def declared_html(self) -> list[SafeString]:
        """What either side declared or named, one sentence each (safe HTML,
        names in ``<bdi>``): surprise, the power used, weapons, the defender's
        stated action, Negative Trait calls with their result, Traits owed,
        Blood spent."""
        state = self.state
        lines: list[SafeString] = []

        def who(side: Side, mid: bool = False) -> SafeString:
            """The side's name, or "You" ("you" in mid-sentence)."""
            text = self._who(side, bdi)
            return mark_safe(
                "you" if mid and side == self.side else text
            )  # names went through bdi()

        c, d = Side.CHALLENGER, Side.DEFENDER
        if state.surprise:
            lines.append(
                format_html(
                    "Surprise: {} {} by surprise.", who(c), self._verb(c, "attack", "attacks")
                )
            )
        if state.power:
            lines.append(format_html("Power used: <bdi>{}</bdi>.", state.power))
        for side in (c, d):
            if weapon := state.of(side, "weapon"):
                lines.append(
                    format_html(
                        "{} {} <bdi>{}</bdi>.", who(side), self._verb(side, "use", "uses"), weapon
                    )
                )
        if state.defender_stakes:
            lines.append(
                format_html(
                    "If {} {}: “<bdi>{}</bdi>”.",
                    who(d, mid=True),
                    self._verb(d, "win", "wins"),
                    state.defender_stakes,
                )
            )
        classic = self.overbid_risks_trait
        for call in state.calls:
            caller, other = call.caller, call.caller.other
            if not call.correct:
                result = format_html(
                    "wrong: {} {}",
                    who(caller, mid=True),
                    self._verb(caller, "risk", "risks") + " one more Trait"
                    if classic
                    else self._verb(caller, "are", "is") + " one Trait down",
                )
            elif classic and call.matched:
                result = format_html(
                    "correct: {} {} one more Trait",
                    who(other, mid=True),
                    self._verb(other, "bid", "bids"),
                )
            elif classic:
                result = format_html(
                    "correct, and nothing left to add: {} bid is safe and counts one more Trait",
                    "your" if caller == self.side else format_html("{}’s", who(caller)),
                )
            else:
                result = format_html(
                    "correct: {} {} one Trait down",
                    who(other, mid=True),
                    self._verb(other, "are", "is"),
                )
            lines.append(
                format_html(
                    "{} {} the Negative Trait <bdi>{}</bdi>: {}.",
                    who(caller),
                    self._verb(caller, "name", "names"),
                    call.name,
                    result,
                )
            )
        for side in (c, d):
            owed = state.of(side, "owed")
            if owed and state.stage is Stage.THROWS:
                lines.append(
                    format_html(
                        "{} {} {} more Trait{} to add before the test.",
                        who(side),
                        self._verb(side, "have", "has"),
                        owed,
                        "" if owed == 1 else "s",
                    )
                )
            if blood := state.of(side, "blood"):
                lines.append(
                    format_html("{} spent {} Blood for Physical Traits.", who(side), blood)
                )
        minutes = options_of(state).willpower_immunity_minutes
        for character_id, immunity in state.granted:
            side = c if character_id == state.challenger.character_id else d
            whose = "your" if side.other == self.side else format_html("{}’s", who(side.other))
            lines.append(
                format_html(
                    "{} {} immune to {} <bdi>{}</bdi> for {} minutes (Willpower).",
                    who(side),
                    self._verb(side, "are", "is"),
                    whose,
                    immunity.power,
                    minutes,
                )
            )
        return lines

    @property
    def modifier_lines(self) -> list[tuple[str, str]]:
        """``(whose, "Bruised −1, Sword +2")`` for each side with modifiers to
        her count in a tie or overbid (``rules.modifiers``)."""
        out = []
        for side in (Side.CHALLENGER, Side.DEFENDER):
            mods = modifiers(self.state, side)
            if mods:
                out.append((self._who(side), ", ".join(_signed(r, n) for r, n in mods)))
        return out

    @property
    def retest_history(self) -> list[str]:
        """Each test held again, in words: "Test 2: Overbid (Helen)",
        "Test 3: Narrator's retest"; then each retest called but not held,
        in the viewer's words (:meth:`_not_held`)."""
        out = []
        for number, record in enumerate(self.state.tests, start=1):
            if record.retest is None:
                continue
            by = f" ({self._who(record.by)})" if record.by is not None else ""
            out.append(f"Test {number}: {record.retest.label}{by}")
        held = {(r.by, r.retest) for r in self.state.tests if r.retest is not None}
        pending = self.state.pending
        for side, kind in self.state.called:
            waiting = pending is not None and (pending.side, pending.kind) == (side, kind)
            if (side, kind) not in held and not waiting:
                out.append(self._not_held(side, kind))
        return out

    def _not_held(self, side: Side, kind: RetestKind) -> str:
        """A retest ``side`` called that was not held (seeds/004 "Challenge
        Re-Tests"): "Your Discipline retest was cancelled by Grady.", "You
        cancelled Helen's Discipline retest.", "Helen's ability retest was
        not held: Grady's Ability is as high.", "Helen's overbid failed."."""
        caller = "Your" if side == self.side else f"{self._who(side)}'s"
        other = side.other
        if kind is RetestKind.DISCIPLINE:
            if other == self.side:
                return f"You cancelled {self._who(side)}'s Discipline retest."
            return f"{caller} Discipline retest was cancelled by {self._who(other)}."
        if kind is RetestKind.ABILITY:
            whose = "your" if other == self.side else f"{self._who(other)}'s"
            return f"{caller} ability retest was not held: {whose} Ability is as high."
        return f"{caller} {kind.label.lower()} failed."

    def compared(self, record: TestRecord) -> tuple[int, int] | None:
        """The counts compared after a tie with both declared, modifiers
        added: ``(challenger, defender)``; None when no modifier changed them."""
        c, d = record.challenger_declared, record.defender_declared
        if c is None or d is None:
            return None
        mine = effective(self.state, Side.CHALLENGER, c)
        theirs = (
            d if self.state.kind is not Kind.OPPOSED else effective(self.state, Side.DEFENDER, d)
        )
        return None if (mine, theirs) == (c, d) else (mine, theirs)

    @property
    def compared_lines(self) -> list[str]:
        """For each tie whose counts were changed by modifiers: "Test 1:
        compared 5 against 4 (with modifiers)"."""
        out = []
        for number, record in enumerate(self.state.tests, start=1):
            if (pair := self.compared(record)) is not None:
                theirs = "the difficulty" if self.secret_difficulty else pair[1]
                out.append(f"Test {number}: compared {pair[0]} against {theirs} (with modifiers)")
        return out

    @property
    def my_health_label(self) -> str:
        me = self.state.combatant(self.side) if self.side else None
        return me.health.label if me else ""

    @property
    def my_weapons(self) -> list:
        """Her weapons (``rules.Weapon``), as the challenge knows them."""
        me = self.state.combatant(self.side) if self.side else None
        return list(me.weapons) if me else []

    @property
    def relent_stakes(self) -> str:
        """What happens if the viewer relents: the other side's stated action."""
        if self.state.kind is not Kind.OPPOSED:
            return ""
        return self.state.stakes if self.side == Side.DEFENDER else self.state.defender_stakes

    @property
    def pending_text(self) -> str:
        """The retest awaiting an answer, in words ("" when none): "Helen
        overbids: risks one more Trait and declares 6 Traits.", "Helen calls
        an ability retest with Brawl 3."."""
        pending = self.state.pending
        if pending is None or self.state.stage is not Stage.RETEST_ANSWER:
            return ""
        side = pending.side
        caller = self._who(side)
        if pending.kind is RetestKind.OVERBID:
            if self.overbid_risks_trait:
                what = self._verb(
                    side, "risk one more Trait and declare", "risks one more Trait and declares"
                )
            else:
                what = self._verb(side, "announce", "announces")
            overbids = self._verb(side, "overbid", "overbids")
            return f"{caller} {overbids}: {what} {pending.count} Traits."
        calls = self._verb(side, "call", "calls")
        if pending.kind is RetestKind.ABILITY:
            return f"{caller} {calls} an ability retest with {pending.name} {pending.rating}."
        return f"{caller} {calls} a Discipline retest with {pending.name}."

    @property
    def can_force_retest(self) -> bool:
        """A narrator may force a retest now (``rules.narrator_retest``)."""
        return self.state.stage in (
            Stage.RETEST,
            Stage.RETEST_ANSWER,
            Stage.DECLARE_CHALLENGER,
            Stage.DECLARE_DEFENDER,
        )

    @property
    def waiting_on(self) -> str:
        """Whose move it is, in words: "Grady", "Helen and Grady", "" when over."""
        return self._waiting_on(str)

    @property
    def waiting_on_html(self) -> SafeString:
        """:attr:`waiting_on` with each name inside ``<bdi>`` (safe HTML)."""
        return mark_safe(self._waiting_on(bdi))  # every name went through bdi()

    def _waiting_sides(self) -> tuple[Side, ...]:
        state = self.state
        if state.stage is Stage.THROWS and (state.challenger_owed or state.defender_owed):
            return tuple(s for s in (Side.CHALLENGER, Side.DEFENDER) if state.of(s, "owed"))
        waiting = state.waiting_on
        if waiting is None:
            return ()
        return (waiting,) if isinstance(waiting, Side) else tuple(waiting)

    def _waiting_on(self, name: Callable[[str], str]) -> str:
        names = {Side.CHALLENGER: self.challenger_name, Side.DEFENDER: self.defender_name}
        return " and ".join(name(names[s]) for s in self._waiting_sides())

    @property
    def waiting_for(self) -> str:
        """What the challenge waits for, in the game's words (after "for")."""
        state = self.state
        if state.stage is Stage.THROWS and (state.challenger_owed or state.defender_owed):
            return "one more Trait (a Negative Trait was named)"
        if state.stage is Stage.RETEST_ANSWER and state.pending is not None:
            return {
                RetestKind.OVERBID: "an answer to an overbid",
                RetestKind.ABILITY: "an answer to an ability retest",
            }.get(state.pending.kind, "an answer to a Discipline retest")
        return {
            Stage.BID: "a bid",
            Stage.RESPONSE: "a bid or relent",
            Stage.THROWS: "a throw",
            Stage.DECLARE_CHALLENGER: "a Trait count",
            Stage.DECLARE_DEFENDER: "a Trait count",
            Stage.RETEST: "a retest or to accept the result",
            Stage.RETEST_ANSWER: "an answer to a retest",
            Stage.RESOLVED: "",
        }[state.stage]

    @property
    def narrator_stage(self) -> SafeString:
        """Whose move it is and what she may do, for a narrator (safe HTML,
        names in ``<bdi>``): "Waiting on Grady for a bid or relent", "Waiting
        on Grady: may retest (Overbid) or accept", "Waiting on Grady to
        answer an overbid"; "" once over."""
        who = self.waiting_on_html
        if not who:
            return mark_safe("")
        state = self.state
        if state.stage is Stage.RETEST and state.retest_side is not None:
            kinds = ", ".join(k.label for k in legal_moves(state, state.retest_side).retests)
            return format_html("Waiting on {}: may retest ({}) or accept", who, kinds)
        if state.stage is Stage.RETEST_ANSWER:
            return format_html(
                "Waiting on {} to answer {}", who, self.waiting_for.removeprefix("an answer to ")
            )
        return format_html("Waiting on {} for {}", who, self.waiting_for)

    @property
    def waiting_on_me(self) -> bool:
        """The challenge waits on the viewer's move (her card is highlighted)."""
        return self.side is not None and self.side in self._waiting_sides()

    @property
    def stage_since(self) -> float:
        """Epoch seconds of the last stage change (the dashboard's clock starts here)."""
        return self.state.stage_since

    @property
    def stage_since_iso(self) -> str:
        return datetime.fromtimestamp(self.state.stage_since, tz=UTC).isoformat()

    @property
    def collapsed(self) -> bool:
        """A result older than :data:`RESULT_COLLAPSE_SECONDS` (a dashboard
        shows it as its outcome line only); False while unresolved."""
        return self.is_resolved and time.time() - self.stage_since > RESULT_COLLAPSE_SECONDS

    # Outcome --------------------------------------------------------------
    @property
    def outcome(self) -> str:
        return self.state.outcome.value if self.state.outcome else ""

    @property
    def i_won(self) -> bool | None:
        outcome = self.state.outcome
        if outcome in (None, Outcome.DRAW, Outcome.VOID) or self.side is None:
            return None
        return (outcome == Outcome.CHALLENGER_WINS) == (self.side == Side.CHALLENGER)

    @property
    def outcome_text(self) -> str:
        """The result in words for this viewer, with what was lost."""
        return self._outcome(str)

    @property
    def outcome_html(self) -> SafeString:
        """:attr:`outcome_text` with each name and Trait inside ``<bdi>`` (safe
        HTML): a name with a right-to-left override cannot garble the sentence."""
        return mark_safe(self._outcome(bdi))  # every name went through bdi()

    def _outcome(self, name: Callable[[str], str]) -> str:
        state = self.state
        if state.outcome is None:
            return ""
        if (
            state.outcome == Outcome.VOID
            and state.defender is not None
            and any(pool is Pool.RAGE for _, pool, _ in state.spent)
        ):
            # seeds/000 "Order of Challenges": her Gift goes first.
            return f"Pre-empted: {name(self.defender_name)} spent Rage for a Gift; nothing is lost."
        if state.outcome == Outcome.VOID:
            return "Voided by a narrator: nothing is lost."
        if state.kind in (Kind.STATIC, Kind.SIMPLE):
            head = "Success!" if state.outcome == Outcome.CHALLENGER_WINS else "Failure."
        elif state.outcome == Outcome.DRAW:
            head = "Draw."
        elif self.side is None:
            winner = (
                self.challenger_name
                if state.outcome == Outcome.CHALLENGER_WINS
                else self.defender_name
            )
            head = f"{name(winner)} wins."
        else:
            head = "You win!" if self.i_won else "You lose."
        names = {state.challenger.character_id: state.challenger.name}
        if state.defender is not None:
            names[state.defender.character_id] = state.defender.name
        mine = self.viewer_id
        own = _own_losses(
            [name(loss.trait) for loss in state.losses if loss.character_id == mine],
            mine in state.wounds,
        )
        if own:
            # Her own losses, second person, right after the head: "You lose: your
            # Quick is lost and you lose a health level."
            stem = head.rstrip(".!") + (" (relented)" if state.relented else "")
            head = f"{stem}: {own}."
        elif state.relented:
            head += " (relented)"
        parts = []
        for character_id, who in names.items():
            lost = [name(loss.trait) for loss in state.losses if loss.character_id == character_id]
            wounded = character_id in state.wounds
            if character_id == mine or (not lost and not wounded):
                continue
            what = []
            if lost:
                what.append(", ".join(_copies(lost)))
            if wounded:
                what.append("a health level")
            parts.append(f"{name(who)} loses {' and '.join(what)}.")
        return " ".join([head, *parts])

    @property
    def viewer_id(self) -> int | None:
        """The id of the character whose phone this is (None on a dashboard)."""
        if self.side == Side.CHALLENGER:
            return self.state.challenger.character_id
        if self.side == Side.DEFENDER and self.state.defender is not None:
            return self.state.defender.character_id
        return None


def _signed(reason: str, n: int) -> str:
    """ "Bruised −1", "Sword +2": a modifier as phones show it."""
    return f"{reason} {'+' if n > 0 else '−'}{abs(n)}"


def bdi(text: str) -> str:
    """``text`` escaped inside ``<bdi>``: a user-supplied name or Trait isolated
    from the sentence around it (a right-to-left override stays inside)."""
    return format_html("<bdi>{}</bdi>", text)


def _copies(traits: list[str]) -> list[str]:
    """Names of lost copies grouped, in first-seen order: ["Tough", "Quick",
    "Tough"] → ["Tough ×2", "Quick"]."""
    counts: dict[str, int] = {}
    for name in traits:
        counts[name] = counts.get(name, 0) + 1
    return [name if n == 1 else f"{name} ×{n}" for name, n in counts.items()]


def _own_losses(traits: list[str], wounded: bool) -> str:
    """What a player lost, in the second person: "your Quick is lost", "your
    Quick and Tough ×2 are lost and you lose a health level", "" for nothing."""
    what = []
    if traits:
        grouped = _copies(traits)
        names = grouped[0] if len(grouped) == 1 else f"{', '.join(grouped[:-1])} and {grouped[-1]}"
        what.append(f"your {names} {'is' if len(traits) == 1 else 'are'} lost")
    if wounded:
        what.append("you lose a health level")
    return " and ".join(what)


def parsed_state(challenge: Challenge) -> ChallengeState:
    """``ChallengeState.from_dict(challenge.state)``, parsed once per row: kept
    on the row with the very dict it was parsed from (a row whose ``state``
    is assigned anew is parsed again; states are frozen, so sharing one is
    safe). ``services._writes._save`` keeps the move's own state this way:
    both phones and the dashboards of the mover's worker, reading the row
    :class:`~challenges.rows.CommittedRows` kept, parse nothing (the engine's
    round trip ``from_dict(to_dict(s)) == s`` is property-tested)."""
    kept = challenge.__dict__.get("parsed_state")
    if kept is not None and kept[0] is challenge.state:
        return kept[1]
    state = ChallengeState.from_dict(challenge.state)
    challenge.__dict__["parsed_state"] = (challenge.state, state)
    return state


def challenge_view(challenge: Challenge, character: Character | None) -> ChallengeView:
    """Wrap ``challenge`` for ``character``'s phone (None: a narrator's dashboard);
    a challenge of test pools (issue 12) as a ``views.bns.BnsCardView``."""
    side = None
    if character is not None:
        if character.pk == challenge.challenger_id:
            side = Side.CHALLENGER
        elif character.pk == challenge.defender_id:
            side = Side.DEFENDER
    if challenge.pooled:
        from challenges.views.bns import bns_card

        return bns_card(challenge, side)  # type: ignore[return-value]
    return ChallengeView(challenge, parsed_state(challenge), side)


class SharedRenders:
    """Renderings that every connection of this process would make identically,
    kept by a key built from a broadcast's ids and version (a bounded LRU).

    Twelve dashboards receiving one ``challenge.updated`` then cost one query
    and one rendering, not twelve. A key of None means "render, do not keep"
    (an event without a version). A version's rendering never goes stale: it is
    made after that version was committed, so it shows it or a later one. A
    key may also be everything a rendering shows (a phone's bid buttons,
    ``views.phone.start_bids_key``; a category of her sheet,
    ``templatetags.sheets``): the same key, the same bytes.

    ``size`` (entries): 16,384 holds a 1,500-phone evening's sheet
    categories (three per phone) and bid buttons with room for the
    challenges' renders; at ~1 kB an entry, ~16 MB at most. Fewer would
    evict the phones' own entries before they are used again.
    """

    def __init__(self, size: int = 16384) -> None:
        self.size = size
        self.items: OrderedDict[tuple, Any] = OrderedDict()

    def get(self, key: tuple | None, render: Callable[[], Any]) -> Any:
        """``render()``'s result, kept under ``key`` (rendered anew if None)."""
        if key is None:
            return render()
        if key in self.items:
            self.items.move_to_end(key)
            return self.items[key]
        value = self.items[key] = render()
        if len(self.items) > self.size:
            self.items.popitem(last=False)
        return value


shared_renders = SharedRenders()

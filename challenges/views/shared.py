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
from typing import Any

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from challenges.models import Challenge
from challenges.rules import ChallengeState, Kind, Outcome, Side, Stage, TestRecord
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
        try:
            record = TestRecord.from_dict(test)
        except (KeyError, TypeError, ValueError):
            record = TestRecord()
        shown = dict(zip(("challenger_throw", "defender_throw"), shown_throws(record), strict=True))
        for key, throw in shown.items():
            shown[key] = throw or (HIDDEN if test.get(key) else None)
        tests.append({**test, **shown})
    return {**state, "tests": tests}


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


@dataclass
class ChallengeView:
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

    @property
    def pk(self) -> int:
        return self.challenge.pk

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
        return "the narrator"

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
    @property
    def can_bid(self) -> bool:
        if self.state.stage == Stage.RESPONSE:
            return self._is(Side.DEFENDER)
        return self.state.stage == Stage.BID and self._is(Side.CHALLENGER)

    @property
    def can_throw(self) -> bool:
        if self.state.stage != Stage.THROWS or self.side is None:
            return False
        test = self.current_test
        return test is None or test.mine is None

    @property
    def can_declare(self) -> bool:
        return (self.state.stage == Stage.DECLARE_CHALLENGER and self._is(Side.CHALLENGER)) or (
            self.state.stage == Stage.DECLARE_DEFENDER and self._is(Side.DEFENDER)
        )

    @property
    def declared_by_challenger(self) -> int | None:
        test = self.state.current_test
        return test.challenger_declared if test else None

    @property
    def waiting_on(self) -> str:
        """Whose move it is, in words: "Grady", "Helen and Grady", "" when over."""
        return self._waiting_on(str)

    @property
    def waiting_on_html(self) -> SafeString:
        """:attr:`waiting_on` with each name inside ``<bdi>`` (safe HTML)."""
        return mark_safe(self._waiting_on(bdi))  # every name went through bdi()

    def _waiting_on(self, name: Callable[[str], str]) -> str:
        stage = self.state.stage
        if stage == Stage.RESOLVED:
            return ""
        if stage in (Stage.BID, Stage.DECLARE_CHALLENGER):
            return name(self.challenger_name)
        if stage in (Stage.RESPONSE, Stage.DECLARE_DEFENDER):
            return name(self.defender_name)
        if stage in (Stage.RETEST, Stage.RETEST_ANSWER):
            side = self.state.waiting_on
            return name(self.challenger_name if side == Side.CHALLENGER else self.defender_name)
        test = self.state.current_test
        names = []
        if test is None or test.challenger_throw is None:
            names.append(name(self.challenger_name))
        if self.state.kind == Kind.OPPOSED and (test is None or test.defender_throw is None):
            names.append(name(self.defender_name))
        return " and ".join(names)

    @property
    def waiting_for(self) -> str:
        """What the challenge waits for, in the game's words."""
        return {
            Stage.BID: "a bid",
            Stage.RESPONSE: "a bid or relent",
            Stage.THROWS: "a throw",
            Stage.DECLARE_CHALLENGER: "a Trait count",
            Stage.DECLARE_DEFENDER: "a Trait count",
            Stage.RETEST: "a retest or accept",
            Stage.RETEST_ANSWER: "an answer to a retest",
            Stage.RESOLVED: "",
        }[self.state.stage]

    @property
    def waiting_on_me(self) -> bool:
        return self.can_bid or self.can_throw or self.can_declare

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
                what.append(", ".join(lost))
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


def bdi(text: str) -> str:
    """``text`` escaped inside ``<bdi>``: a user-supplied name or Trait isolated
    from the sentence around it (a right-to-left override stays inside)."""
    return format_html("<bdi>{}</bdi>", text)


def _own_losses(traits: list[str], wounded: bool) -> str:
    """What a player lost, in the second person: "your Quick is lost", "your
    Quick and Tough are lost and you lose a health level", "" for nothing."""
    what = []
    if traits:
        names = traits[0] if len(traits) == 1 else f"{', '.join(traits[:-1])} and {traits[-1]}"
        what.append(f"your {names} {'is' if len(traits) == 1 else 'are'} lost")
    if wounded:
        what.append("you lose a health level")
    return " and ".join(what)


def challenge_view(challenge: Challenge, character: Character | None) -> ChallengeView:
    """Wrap ``challenge`` for ``character``'s phone (None: a narrator's dashboard)."""
    side = None
    if character is not None:
        if character.pk == challenge.challenger_id:
            side = Side.CHALLENGER
        elif character.pk == challenge.defender_id:
            side = Side.DEFENDER
    return ChallengeView(challenge, ChallengeState.from_dict(challenge.state), side)


class SharedRenders:
    """Renderings that every connection of this process would make identically,
    kept by a key built from a broadcast's ids and version (a bounded LRU).

    Twelve dashboards receiving one ``challenge.updated`` then cost one query
    and one rendering, not twelve. A key of None means "render, do not keep"
    (an event without a version). A version's rendering never goes stale: it is
    made after that version was committed, so it shows it or a later one.
    """

    def __init__(self, size: int = 4096) -> None:
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

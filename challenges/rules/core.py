"""Types of the rules engine: throws, categories, health, Traits, combatants,
tests, events and the challenge state with its lossless dict form.

Pure Python: nothing here imports Django, so the engine can be tested and
reasoned about on its own. Rule sources are cited as seeds/000 "Heading"
(MET *The Apocalypse*, chapter "Rules").
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum, IntEnum, StrEnum
from typing import Any, NamedTuple

SCHEMA = 1
"""Version of :meth:`ChallengeState.to_dict`'s layout (key ``"schema"``)."""


class RulesError(Exception):
    """The one exception for an illegal move.

    ``str()`` is a sentence a player can read, in the game's words, e.g.
    "The challenger declares first." Raised by every transition before any
    state is built, so a refused move changes nothing.
    """


class Throw(StrEnum):
    """One rock-paper-scissors gesture (a "chop"). seeds/000 "Rock-Paper-Scissors"."""

    ROCK = "rock"
    PAPER = "paper"
    SCISSORS = "scissors"

    @property
    def label(self) -> str:
        """ "Rock", "Paper" or "Scissors"."""
        return self.value.title()


_BEATS: dict[Throw, Throw] = {
    Throw.ROCK: Throw.SCISSORS,
    Throw.SCISSORS: Throw.PAPER,
    Throw.PAPER: Throw.ROCK,
}


def beats(a: Throw, b: Throw) -> bool:
    """True if throw ``a`` beats throw ``b``: rock crushes scissors, scissors
    cuts paper, paper covers rock; identical throws tie (False both ways).
    seeds/000 "Rock-Paper-Scissors"."""
    return _BEATS[Throw(a)] is Throw(b)


class Category(StrEnum):
    """The three Trait categories; every Trait bid in a challenge is of the
    challenge's category. seeds/000 "Initial Bid"."""

    PHYSICAL = "physical"
    SOCIAL = "social"
    MENTAL = "mental"

    @property
    def label(self) -> str:
        """ "Physical", "Social" or "Mental"."""
        return self.value.title()


class HealthLevel(IntEnum):
    """Health levels, best to worst; each lost attack costs one. seeds/000 "Health"."""

    HEALTHY = 0
    BRUISED = 1
    WOUNDED = 2
    INCAPACITATED = 3
    MORTALLY_WOUNDED = 4
    DEAD = 5

    def worse(self) -> HealthLevel:
        """One level down (a wound), capped at DEAD."""
        return HealthLevel(min(self + 1, HealthLevel.DEAD))

    @property
    def label(self) -> str:
        """The level in words: "Healthy" … "Mortally Wounded", "Dead"."""
        return self.name.replace("_", " ").title()


class Kind(StrEnum):
    """Opposed (character against character), static (against a narrator-set
    difficulty) or simple test. seeds/000 "Challenges", "Static Challenges",
    "Simple Tests"."""

    OPPOSED = "opposed"
    STATIC = "static"
    SIMPLE = "simple"


class Side(StrEnum):
    """A side of a challenge; in static challenges and simple tests the
    DEFENDER side is the narrator."""

    CHALLENGER = "challenger"
    DEFENDER = "defender"

    @property
    def other(self) -> Side:
        """The opposite side."""
        return Side.DEFENDER if self is Side.CHALLENGER else Side.CHALLENGER


class Stage(StrEnum):
    """Where a challenge stands.

    BID: static only, waiting on the player's bid. RESPONSE: opposed, waiting
    on the defender to bid or relent. THROWS: waiting on throws of the current
    test. DECLARE_CHALLENGER / DECLARE_DEFENDER: after a tie, waiting on a
    Trait count (challenger first). RESOLVED: over.
    """

    BID = "bid"
    RESPONSE = "response"
    THROWS = "throws"
    DECLARE_CHALLENGER = "declare_challenger"
    DECLARE_DEFENDER = "declare_defender"
    RESOLVED = "resolved"


class Outcome(StrEnum):
    """How a challenge ended. For static challenges and simple tests
    CHALLENGER_WINS means the player succeeded. VOID: a narrator voided it."""

    CHALLENGER_WINS = "challenger_wins"
    DEFENDER_WINS = "defender_wins"
    DRAW = "draw"
    VOID = "void"


def _norm(name: str) -> str:
    return " ".join(name.split()).casefold()


@dataclass(frozen=True)
class TraitHolding:
    """One Trait a character holds tonight.

    ``count``: copies still held (lost ones excluded, ones bid anywhere
    included), a Trait count ≥ 0. ``at_risk``: copies bid in OTHER unresolved
    challenges. Free to bid here = ``count - at_risk``. ``negative``: a
    Negative Trait (never bid, never counted). ``trait_id``: the sheet row it
    stands for (None when there is none, e.g. in the engine's tests); the engine
    only carries it into bids and losses, so that a renamed Trait stays the same
    Trait. ``category`` may be given as its value ("physical") and is stored as
    a :class:`Category`. Raises ValueError on a negative count or unknown
    category. seeds/000 "Using Traits".
    """

    name: str
    category: Category
    count: int
    at_risk: int = 0
    negative: bool = False
    trait_id: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "category", Category(self.category))
        if self.count < 0 or self.at_risk < 0:
            raise ValueError(f"Trait counts cannot be negative: {self!r}")

    @property
    def free(self) -> int:
        """Copies that may be bid now: ``count - at_risk``, never below 0."""
        return max(0, self.count - self.at_risk)


@dataclass(frozen=True)
class Combatant:
    """A character as the engine sees her tonight: her Traits and health.

    ``traits`` is stored as a tuple; ``health`` may be given as an int.
    """

    character_id: int
    name: str
    traits: tuple[TraitHolding, ...]
    health: HealthLevel = HealthLevel.HEALTHY

    def __post_init__(self) -> None:
        object.__setattr__(self, "traits", tuple(self.traits))
        object.__setattr__(self, "health", HealthLevel(self.health))

    def count(self, category: Category) -> int:
        """Trait count in ``category``: the sum of ``count`` of her non-negative
        Traits there, bid ones included, lost ones excluded. It is the most she
        may declare in a tie. seeds/000 "Testing"."""
        category = Category(category)
        return sum(t.count for t in self.traits if t.category is category and not t.negative)

    def holdings(self, name: str, category: Category | None = None) -> tuple[TraitHolding, ...]:
        """Her Traits called ``name`` (case and spacing ignored), optionally of
        one ``category``; Negative Traits included."""
        key = _norm(name)
        return tuple(
            t
            for t in self.traits
            if _norm(t.name) == key and (category is None or t.category is Category(category))
        )

    def free(self, name: str, category: Category) -> int:
        """Copies of the non-negative Trait ``name`` in ``category`` she may bid
        now (held minus at risk elsewhere), a Trait count ≥ 0."""
        return sum(t.free for t in self.holdings(name, category) if not t.negative)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form: ``{"character_id", "name", "health": int, "traits":
        [{"name", "category", "count", "at_risk", "negative", "trait_id"}, ...]}``."""
        return {
            "character_id": self.character_id,
            "name": self.name,
            "health": int(self.health),
            "traits": [
                {
                    "name": t.name,
                    "category": t.category.value,
                    "count": t.count,
                    "at_risk": t.at_risk,
                    "negative": t.negative,
                    "trait_id": t.trait_id,
                }
                for t in self.traits
            ],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Combatant:
        """Inverse of :meth:`to_dict`. Raises KeyError/ValueError if malformed."""
        return cls(
            character_id=int(d["character_id"]),
            name=str(d["name"]),
            health=HealthLevel(d["health"]),
            traits=tuple(
                TraitHolding(
                    name=str(t["name"]),
                    category=Category(t["category"]),
                    count=int(t["count"]),
                    at_risk=int(t["at_risk"]),
                    negative=bool(t["negative"]),
                    trait_id=_int(t.get("trait_id")),
                )
                for t in d["traits"]
            ),
        )


@dataclass(frozen=True)
class TestRecord:
    """One test (one simultaneous throw) of a challenge and its tie-break.

    Throws are None until committed; in static challenges and simple tests the
    narrator's ``defender_throw`` is set when the challenge opens. Declared
    counts are Trait counts (None: not declared). ``winner`` is the side that
    won this test, outright or on counts (None: pending or a draw); ``tie``:
    the throws were identical. seeds/000 "Testing".
    """

    __test__ = False  # not a pytest test class

    challenger_throw: Throw | None = None
    defender_throw: Throw | None = None
    challenger_declared: int | None = None
    defender_declared: int | None = None
    winner: Side | None = None
    tie: bool = False

    @property
    def revealed(self) -> bool:
        """Both throws are in, so both may be shown to everyone."""
        return self.challenger_throw is not None and self.defender_throw is not None

    def throw_of(self, side: Side) -> Throw | None:
        """The throw of ``side`` (None if not yet thrown)."""
        return self.challenger_throw if side is Side.CHALLENGER else self.defender_throw

    def declared_by(self, side: Side) -> int | None:
        """The Trait count ``side`` declared (None if not yet declared)."""
        return self.challenger_declared if side is Side.CHALLENGER else self.defender_declared

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form, enums as their values."""
        return {
            "challenger_throw": _value(self.challenger_throw),
            "defender_throw": _value(self.defender_throw),
            "challenger_declared": self.challenger_declared,
            "defender_declared": self.defender_declared,
            "winner": _value(self.winner),
            "tie": self.tie,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TestRecord:
        """Inverse of :meth:`to_dict`. Raises KeyError/ValueError if malformed."""
        return cls(
            challenger_throw=_enum(Throw, d["challenger_throw"]),
            defender_throw=_enum(Throw, d["defender_throw"]),
            challenger_declared=_int(d["challenger_declared"]),
            defender_declared=_int(d["defender_declared"]),
            winner=_enum(Side, d["winner"]),
            tie=bool(d["tie"]),
        )


@dataclass(frozen=True)
class Loss:
    """One copy of a Trait lost for the rest of the session (one per bid entry
    of the loser): ``trait`` is its name as bid, ``trait_id`` the sheet row bid
    (None if the bid carried none). seeds/000 "Testing"."""

    character_id: int
    trait: str
    category: Category
    trait_id: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "category", Category(self.category))


@dataclass(frozen=True)
class Event:
    """One entry of a challenge's public history.

    ``kind`` is one of "opened", "bid", "relented", "responded", "threw",
    "revealed", "tied", "declared", "resolved", "voided"; ``data`` holds only
    JSON primitives (str, int, float, bool, None, lists, dicts). A "threw"
    event never carries the throw itself: throws are public only in
    "revealed", once both are in.
    """

    kind: str
    data: dict[str, Any] = field(default_factory=dict)


class Transition(NamedTuple):
    """What a move produces: the new state and the events it emitted, in order."""

    state: ChallengeState
    events: tuple[Event, ...]


def _value(member: Enum | None) -> Any:
    return None if member is None else member.value


def _enum(enum: type[Any], value: Any) -> Any:
    return None if value is None else enum(value)


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


@dataclass(frozen=True)
class ChallengeState:
    """The whole state of one challenge; transitions in ``engine`` return new ones.

    ``ruleset``: a key of ``RULESETS``. ``category``: None only for simple
    tests. ``defender``: None for static challenges and simple tests (the
    narrator's side). ``difficulty``: the narrator's Trait count (static only).
    ``*_bids``: Trait names as bid, one entry per copy at risk; ``*_bid_ids``:
    beside each, the bid holding's ``trait_id`` (empty in states saved before
    ids were kept: read them with :meth:`bid_entries`). ``relented``: the
    challenge ended by a relent. ``stakes``: what happens on a win, free text.
    ``stage_since``: epoch seconds of the last stage change. ``tests``: one
    record per test, oldest first (retests append). ``losses``/``wounds``: set
    on resolution; ``wounds`` holds character ids, one health level each.

    The state holds both throws and both Trait pools: it is the server's
    record, never to be sent to a player as is.
    """

    kind: Kind
    ruleset: str
    category: Category | None
    challenger: Combatant
    defender: Combatant | None
    difficulty: int | None
    challenger_bids: tuple[str, ...]
    defender_bids: tuple[str, ...]
    relented: bool
    is_attack: bool
    stakes: str
    stage: Stage
    stage_since: float
    tests: tuple[TestRecord, ...]
    outcome: Outcome | None
    losses: tuple[Loss, ...]
    wounds: tuple[int, ...]
    challenger_bid_ids: tuple[int | None, ...] = ()
    defender_bid_ids: tuple[int | None, ...] = ()

    @property
    def current_test(self) -> TestRecord | None:
        """The latest test, or None before the first one."""
        return self.tests[-1] if self.tests else None

    @property
    def waiting_on(self) -> Side | tuple[Side, ...] | None:
        """Who must move next.

        BID, DECLARE_CHALLENGER → CHALLENGER; RESPONSE, DECLARE_DEFENDER →
        DEFENDER; THROWS → a tuple of the sides whose throw for the current
        test is missing (the narrator's side is never waited on in static
        challenges and simple tests); RESOLVED → None.
        """
        stage = self.stage
        if stage is Stage.RESOLVED:
            return None
        if stage in (Stage.BID, Stage.DECLARE_CHALLENGER):
            return Side.CHALLENGER
        if stage in (Stage.RESPONSE, Stage.DECLARE_DEFENDER):
            return Side.DEFENDER
        test = self.current_test or TestRecord()
        sides = [Side.CHALLENGER] if test.challenger_throw is None else []
        if self.kind is Kind.OPPOSED and test.defender_throw is None:
            sides.append(Side.DEFENDER)
        return tuple(sides)

    def combatant(self, side: Side) -> Combatant | None:
        """The character on ``side`` (None for the narrator's side)."""
        return self.challenger if Side(side) is Side.CHALLENGER else self.defender

    def bids_of(self, side: Side) -> tuple[str, ...]:
        """The Trait names ``side`` has bid."""
        return self.challenger_bids if Side(side) is Side.CHALLENGER else self.defender_bids

    def bid_entries(self, side: Side) -> tuple[tuple[str, int | None], ...]:
        """``(name as bid, trait_id or None)`` for each copy ``side`` has bid."""
        ids = self.challenger_bid_ids if Side(side) is Side.CHALLENGER else self.defender_bid_ids
        names = self.bids_of(side)
        return tuple(zip(names, (*ids, *[None] * (len(names) - len(ids))), strict=False))

    def with_combatants(self, challenger: Combatant, defender: Combatant | None) -> ChallengeState:
        """The same state with refreshed Trait pools and health (the service
        calls this before each move). Raises ValueError if a combatant is not
        the same character, or a defender is given for a static challenge or
        simple test (or missing for an opposed one)."""
        if challenger.character_id != self.challenger.character_id:
            raise ValueError("with_combatants: the challenger is a different character")
        if (defender is None) != (self.defender is None):
            raise ValueError("with_combatants: the defender must match the challenge's kind")
        if (
            defender is not None
            and self.defender is not None
            and defender.character_id != self.defender.character_id
        ):
            raise ValueError("with_combatants: the defender is a different character")
        return replace(self, challenger=challenger, defender=defender)

    def to_dict(self) -> dict[str, Any]:
        """A JSON- and msgpack-safe dict (enums as values, tuples as lists,
        ``"schema"``: layout version). Lossless: ``from_dict(to_dict())``
        equals the state. Top-level keys include "category" (value or None),
        "challenger_bids" and "defender_bids" (lists of names),
        "challenger_bid_ids" and "defender_bid_ids" (lists of ids or None)."""
        return {
            "schema": SCHEMA,
            "kind": self.kind.value,
            "ruleset": self.ruleset,
            "category": _value(self.category),
            "challenger": self.challenger.to_dict(),
            "defender": None if self.defender is None else self.defender.to_dict(),
            "difficulty": self.difficulty,
            "challenger_bids": list(self.challenger_bids),
            "defender_bids": list(self.defender_bids),
            "challenger_bid_ids": list(self.challenger_bid_ids),
            "defender_bid_ids": list(self.defender_bid_ids),
            "relented": self.relented,
            "is_attack": self.is_attack,
            "stakes": self.stakes,
            "stage": self.stage.value,
            "stage_since": self.stage_since,
            "tests": [t.to_dict() for t in self.tests],
            "outcome": _value(self.outcome),
            "losses": [
                {
                    "character_id": x.character_id,
                    "trait": x.trait,
                    "category": x.category.value,
                    "trait_id": x.trait_id,
                }
                for x in self.losses
            ],
            "wounds": list(self.wounds),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ChallengeState:
        """Inverse of :meth:`to_dict`. Raises ValueError for an unknown schema
        version or a bad enum value, KeyError for a missing key."""
        schema = d.get("schema", SCHEMA)
        if schema != SCHEMA:
            raise ValueError(f"Unknown ChallengeState schema {schema!r}")
        return cls(
            kind=Kind(d["kind"]),
            ruleset=str(d["ruleset"]),
            category=_enum(Category, d["category"]),
            challenger=Combatant.from_dict(d["challenger"]),
            defender=None if d["defender"] is None else Combatant.from_dict(d["defender"]),
            difficulty=_int(d["difficulty"]),
            challenger_bids=tuple(str(n) for n in d["challenger_bids"]),
            defender_bids=tuple(str(n) for n in d["defender_bids"]),
            challenger_bid_ids=tuple(_int(n) for n in d.get("challenger_bid_ids", ())),
            defender_bid_ids=tuple(_int(n) for n in d.get("defender_bid_ids", ())),
            relented=bool(d["relented"]),
            is_attack=bool(d["is_attack"]),
            stakes=str(d["stakes"]),
            stage=Stage(d["stage"]),
            stage_since=float(d["stage_since"]),
            tests=tuple(TestRecord.from_dict(t) for t in d["tests"]),
            outcome=_enum(Outcome, d["outcome"]),
            losses=tuple(
                Loss(
                    int(x["character_id"]),
                    str(x["trait"]),
                    Category(x["category"]),
                    _int(x.get("trait_id")),
                )
                for x in d["losses"]
            ),
            wounds=tuple(int(w) for w in d["wounds"]),
        )

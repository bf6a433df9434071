"""Types of the rules engine: throws, categories, health, Traits, combatants,
tests, events and the challenge state with its lossless dict form.

Pure Python: nothing here imports Django, so the engine can be tested and
reasoned about on its own. Rule sources are cited as seeds/000 "Heading"
(MET *The Apocalypse*, chapter "Rules").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import Enum, IntEnum, StrEnum
from typing import Any, NamedTuple, TypeVar

E = TypeVar("E", bound=Enum)

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
    Trait count (challenger first). RETEST: a test has a winner and its loser
    (``ChallengeState.retest_side``) may call a retest or accept the result.
    RETEST_ANSWER: the other side answers a called retest (``pending``): her
    count against an overbid, her Ability against an ability retest, the same
    Discipline (or not) against a Discipline retest. RESOLVED: over.
    """

    BID = "bid"
    RESPONSE = "response"
    THROWS = "throws"
    DECLARE_CHALLENGER = "declare_challenger"
    DECLARE_DEFENDER = "declare_defender"
    RETEST = "retest"
    RETEST_ANSWER = "retest_answer"
    RESOLVED = "resolved"


class Pool(StrEnum):
    """A spendable pool of the sheet, refreshed by each new session: Willpower
    (seeds/004 "Retrying The Test…"), Rage and Gnosis (seeds/000 "Order of
    Challenges"), Blood (seeds/004 "Expending Blood")."""

    WILLPOWER = "willpower"
    RAGE = "rage"
    GNOSIS = "gnosis"
    BLOOD = "blood"

    @property
    def label(self) -> str:
        """ "Willpower", "Rage", "Gnosis" or "Blood"."""
        return self.value.title()


class RetestKind(StrEnum):
    """Why a test was held again inside the same challenge.

    OVERBID (seeds/000 "Overbidding"; seeds/004 "Challenge Re-Tests"),
    ABILITY and WILLPOWER (seeds/004 "Retrying The Test In An Ability-Based
    Challenge"), DISCIPLINE (seeds/004 "Challenge Re-Tests"), WOUNDED: the
    free extra test against a Wounded character (seeds/000 "Health"; seeds/004
    "Trait Categories"), NARRATOR: forced by a narrator's ruling, EQUAL_COUNTS:
    equal counts after a tie under ``ukm`` (seeds/004 "In The Case Of A Draw").
    """

    OVERBID = "overbid"
    ABILITY = "ability"
    DISCIPLINE = "discipline"
    WILLPOWER = "willpower"
    WOUNDED = "wounded"
    NARRATOR = "narrator"
    EQUAL_COUNTS = "equal_counts"

    @property
    def label(self) -> str:
        """The retest in the games' words, e.g. "Overbid", "Willpower retest"."""
        return {
            "overbid": "Overbid",
            "ability": "Ability retest",
            "discipline": "Discipline retest",
            "willpower": "Willpower retest",
            "wounded": "Free extra test",
            "narrator": "Narrator's retest",
            "equal_counts": "Retest on equal counts",
        }[self.value]


class Outcome(StrEnum):
    """How a challenge ended. For static challenges and simple tests
    CHALLENGER_WINS means the player succeeded. VOID: a narrator voided it."""

    CHALLENGER_WINS = "challenger_wins"
    DEFENDER_WINS = "defender_wins"
    DRAW = "draw"
    VOID = "void"


def _as(enum: type[E], value: Any) -> E:
    """``value`` as a member of ``enum``; a member is returned as is (calling
    the enum again costs a lookup on every state read, many per phone view)."""
    return value if type(value) is enum else enum(value)


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
    a :class:`Category`. ``stamina``: a Stamina-based Physical Trait, the only
    kind a surprised defender may bid (seeds/004 "Negative Traits", Surprise).
    Raises ValueError on a negative count or unknown category. seeds/000 "Using Traits".
    """

    name: str
    category: Category
    count: int
    at_risk: int = 0
    negative: bool = False
    trait_id: int | None = None
    stamina: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "category", _as(Category, self.category))
        if self.count < 0 or self.at_risk < 0:
            raise ValueError(f"Trait counts cannot be negative: {self!r}")

    @property
    def free(self) -> int:
        """Copies that may be bid now: ``count - at_risk``, never below 0."""
        return max(0, self.count - self.at_risk)


@dataclass(frozen=True)
class Rating:
    """An Ability (*Brawl* 3) or a Discipline (*Dominate* 2) of a sheet: never
    bid, never lost; ``rating`` ≥ 1. Used for retests (seeds/004 "Retrying The
    Test In An Ability-Based Challenge", "Challenge Re-Tests")."""

    name: str
    rating: int = 1


@dataclass(frozen=True)
class Weapon:
    """A weapon of a sheet: ``bonus`` Traits added in a tie, only with the
    ``ability`` (e.g. "Melee", "Firearms"; "" needs none); ``ranged``: an
    unarmed defender cannot counterattack it. seeds/004 "Weapons / Ranged
    Combat"."""

    name: str
    bonus: int = 0
    ability: str = ""
    ranged: bool = False


@dataclass(frozen=True)
class Immunity:
    """Immune to ``attacker_id``'s use of ``power`` until ``until`` (epoch
    seconds): a defender whose Willpower retest fended off the attack.
    seeds/004 "Retrying The Test In An Ability-Based Challenge"."""

    attacker_id: int
    power: str
    until: float


def more_minutes(seconds: float) -> str:
    """Time left in words, rounded up to whole minutes, at least one: "9 more
    minutes", "1 more minute" (an immunity, a Knock Out)."""
    n = max(1, int((seconds + 59) // 60))
    return f"{n} more minute{'s' if n != 1 else ''}"


def immunity_to(
    immunities: Sequence[Immunity], attacker_id: int | None, power: str, now: float
) -> Immunity | None:
    """The one immunity check of every ruleset: the immunity among
    ``immunities`` (a target's) to ``attacker_id``'s use of ``power`` still
    running at ``now`` (epoch seconds; case and spacing of the power
    ignored), or None. Another attacker or another power is never refused.
    seeds/004 "Retrying The Test In An Ability-Based Challenge" (ukm: won by
    a Willpower retest), seeds/002 "Retrying Failed Attacks" (bns: after a
    failed Mental or Social challenge)."""
    key = _norm(power)
    return next(
        (
            i
            for i in immunities
            if i.attacker_id == attacker_id and _norm(i.power) == key and i.until > now
        ),
        None,
    )


@dataclass(frozen=True)
class Combatant:
    """A character as the engine sees her tonight: her Traits and health, and
    what retests and extras read: Abilities and Disciplines (:class:`Rating`),
    weapons, pools left tonight (``pools``: {Pool: amount ≥ 0}, missing = 0),
    immunities, ``blood_traits`` (Blood Traits still active from an earlier
    challenge, ``ukm``) and ``blood_limit`` (her generation's limit of Blood
    per spending, None = the preset's). Sequences are stored as tuples;
    ``health`` may be given as an int, ``pools`` as a mapping.
    """

    character_id: int
    name: str
    traits: tuple[TraitHolding, ...]
    health: HealthLevel = HealthLevel.HEALTHY
    abilities: tuple[Rating, ...] = ()
    disciplines: tuple[Rating, ...] = ()
    weapons: tuple[Weapon, ...] = ()
    pools: tuple[tuple[Pool, int], ...] = ()
    immunities: tuple[Immunity, ...] = ()
    blood_traits: int = 0
    blood_limit: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "traits", tuple(self.traits))
        object.__setattr__(self, "health", _as(HealthLevel, self.health))
        object.__setattr__(self, "abilities", tuple(self.abilities))
        object.__setattr__(self, "disciplines", tuple(self.disciplines))
        object.__setattr__(self, "weapons", tuple(self.weapons))
        object.__setattr__(self, "immunities", tuple(self.immunities))
        raw = self.pools.items() if isinstance(self.pools, dict) else self.pools
        pools = tuple(sorted((_as(Pool, p), int(n)) for p, n in raw)) if raw else ()
        if any(n < 0 for _, n in pools) or self.blood_traits < 0:
            raise ValueError(f"Pools cannot be negative: {pools!r}")
        object.__setattr__(self, "pools", pools)

    def pool(self, pool: Pool) -> int:
        """What is left of ``pool`` tonight (0 if she has none)."""
        return dict(self.pools).get(Pool(pool), 0)

    def ability(self, name: str) -> Rating | None:
        """Her Ability called ``name`` (case and spacing ignored), or None."""
        key = _norm(name)
        return next((a for a in self.abilities if _norm(a.name) == key), None)

    def discipline(self, name: str) -> Rating | None:
        """Her Discipline called ``name`` (case and spacing ignored), or None."""
        key = _norm(name)
        return next((d for d in self.disciplines if _norm(d.name) == key), None)

    def weapon(self, name: str) -> Weapon | None:
        """Her weapon called ``name`` (case and spacing ignored), or None."""
        key = _norm(name)
        return next((w for w in self.weapons if _norm(w.name) == key), None)

    def immune_to(self, attacker_id: int, power: str, now: float) -> Immunity | None:
        """Her immunity to ``attacker_id``'s ``power`` still running at ``now``
        (:func:`immunity_to`)."""
        return immunity_to(self.immunities, attacker_id, power, now)

    def count(self, category: Category, *, stamina_only: bool = False) -> int:
        """Trait count in ``category``: the sum of ``count`` of her non-negative
        Traits there (only Stamina-based ones with ``stamina_only``), bid ones
        included, lost ones excluded. It is the most she may declare in a tie.
        seeds/000 "Testing"."""
        category = Category(category)
        return sum(
            t.count
            for t in self.traits
            if t.category is category and not t.negative and (t.stamina or not stamina_only)
        )

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
        [{"name", "category", "count", "at_risk", "negative", "trait_id",
        "stamina"}, ...], "abilities": [[name, rating]], "disciplines": [[name,
        rating]], "weapons": [[name, bonus, ability, ranged]], "pools": {pool:
        n}, "immunities": [[attacker_id, power, until]], "blood_traits",
        "blood_limit"}``."""
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
                    "stamina": t.stamina,
                }
                for t in self.traits
            ],
            "abilities": [[a.name, a.rating] for a in self.abilities],
            "disciplines": [[d.name, d.rating] for d in self.disciplines],
            "weapons": [[w.name, w.bonus, w.ability, w.ranged] for w in self.weapons],
            "pools": {p.value: n for p, n in self.pools},
            "immunities": [[i.attacker_id, i.power, i.until] for i in self.immunities],
            "blood_traits": self.blood_traits,
            "blood_limit": self.blood_limit,
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
                    stamina=bool(t.get("stamina", False)),
                )
                for t in d["traits"]
            ),
            abilities=tuple(Rating(str(n), int(r)) for n, r in d.get("abilities", ())),
            disciplines=tuple(Rating(str(n), int(r)) for n, r in d.get("disciplines", ())),
            weapons=tuple(
                Weapon(str(n), int(b), str(a), bool(r)) for n, b, a, r in d.get("weapons", ())
            ),
            pools=tuple((Pool(p), int(n)) for p, n in d.get("pools", {}).items()),
            immunities=tuple(
                Immunity(int(a), str(p), float(u)) for a, p, u in d.get("immunities", ())
            ),
            blood_traits=int(d.get("blood_traits", 0)),
            blood_limit=_int(d.get("blood_limit")),
        )


@dataclass(frozen=True)
class TestRecord:
    """One test (one simultaneous throw) of a challenge and its tie-break.

    Throws are None until committed; in static challenges and simple tests the
    narrator's ``defender_throw`` is set when the challenge opens. Declared
    counts are Trait counts (None: not declared). ``winner`` is the side that
    won this test, outright or on counts (None: pending or a draw); ``tie``:
    the throws were identical. ``retest``: why this test was held (None: the
    first test), ``by``: the side that called it (None for the narrator's and
    the automatic ones). seeds/000 "Testing".
    """

    __test__ = False  # not a pytest test class

    challenger_throw: Throw | None = None
    defender_throw: Throw | None = None
    challenger_declared: int | None = None
    defender_declared: int | None = None
    winner: Side | None = None
    tie: bool = False
    retest: RetestKind | None = None
    by: Side | None = None

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
            "retest": _value(self.retest),
            "by": _value(self.by),
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
            retest=_enum(RetestKind, d.get("retest")),
            by=_enum(Side, d.get("by")),
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
        object.__setattr__(self, "category", _as(Category, self.category))


@dataclass(frozen=True)
class NegativeCall:
    """A Negative Trait ``name`` that ``caller`` named against the other side,
    ``correct`` if the other holds it in the challenge's category.
    ``matched``: under ``met_classic``, whoever had to bid one more Trait for
    it could (False: the caller's own bid is safe and the call counts as an
    extra Trait for her in a tie or overbid). seeds/000 "Negative Traits";
    seeds/004 "Negative Traits"."""

    caller: Side
    name: str
    correct: bool
    matched: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "caller", _as(Side, self.caller))


@dataclass(frozen=True)
class PendingRetest:
    """A retest called by ``side`` and waiting on the other side's answer
    (stage RETEST_ANSWER): an overbid with the overbidder's ``count``
    (``met_classic``: her declared Traits; ``ukm``: the number she announced),
    an ability retest with her Ability ``name`` and ``rating``, a Discipline
    retest with her Discipline ``name``."""

    kind: RetestKind
    side: Side
    name: str = ""
    rating: int = 0
    count: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", _as(RetestKind, self.kind))
        object.__setattr__(self, "side", _as(Side, self.side))

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "kind": self.kind.value,
            "side": self.side.value,
            "name": self.name,
            "rating": self.rating,
            "count": self.count,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PendingRetest:
        """Inverse of :meth:`to_dict`."""
        return cls(
            RetestKind(d["kind"]),
            Side(d["side"]),
            str(d["name"]),
            int(d["rating"]),
            _int(d["count"]),
        )


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

    What the complications add (all default to "none", so states saved
    before them read the same): ``power``: the power the challenger uses
    (for a Willpower retest's immunity); ``defender_stakes``: the defender's
    stated action; ``surprise``; ``*_weapon``: the weapon each side named;
    ``calls``: Negative Traits named (:class:`NegativeCall`); ``*_owed``:
    Traits a side must still add to her bid before the test (``met_classic``
    Negative Traits); ``*_forfeits``: how many of a side's first bid entries
    are lost whatever happens (``met_classic``: the bid of a test she lost
    before overbidding); ``*_blood``: Blood Traits spent in this challenge;
    ``*_standing``: a side's declared count, which stands for the rest of the
    challenge (``ukm``); ``retest_side``: who may retest (stage RETEST);
    ``pending``: the retest awaiting an answer; ``called``: every retest a
    side called, ``(side, RetestKind)``, granted or not; ``spent``: pools spent,
    ``(character_id, Pool, amount)``; ``granted``: immunities won,
    ``(character_id, Immunity)``; ``narrator_initiated`` and ``difficult``:
    a simple test's tie rule (``ukm``); ``object_overbids`` and
    ``object_retests``: the narrator's side of a static challenge may overbid
    and retest (a prepared static's permissions, played by the engine).
    a simple test's tie rule (``ukm``). ``mob_attackers``: in the test of a
    mob scene's target (``challenges.rules.mob``), how many attackers the
    challenger leads (0: not a mob's test).

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
    power: str = ""
    defender_stakes: str = ""
    surprise: bool = False
    challenger_weapon: str = ""
    defender_weapon: str = ""
    calls: tuple[NegativeCall, ...] = ()
    challenger_owed: int = 0
    defender_owed: int = 0
    challenger_forfeits: int = 0
    defender_forfeits: int = 0
    challenger_blood: int = 0
    defender_blood: int = 0
    challenger_standing: int | None = None
    defender_standing: int | None = None
    retest_side: Side | None = None
    pending: PendingRetest | None = None
    called: tuple[tuple[Side, RetestKind], ...] = ()
    spent: tuple[tuple[int, Pool, int], ...] = ()
    granted: tuple[tuple[int, Immunity], ...] = ()
    narrator_initiated: bool = False
    difficult: bool = False
    object_overbids: bool = False
    object_retests: bool = False
    mob_attackers: int = 0

    def of(self, side: Side, name: str) -> Any:
        """The per-side field ``name`` of ``side``: ``of(DEFENDER, "owed")`` is
        ``defender_owed``. Per side: bids, bid_ids, weapon, owed, forfeits,
        blood, standing."""
        return getattr(self, f"{Side(side).value}_{name}")

    @property
    def current_test(self) -> TestRecord | None:
        """The latest test, or None before the first one."""
        return self.tests[-1] if self.tests else None

    @property
    def waiting_on(self) -> Side | tuple[Side, ...] | None:
        """Who must move next.

        BID, DECLARE_CHALLENGER → CHALLENGER; RESPONSE, DECLARE_DEFENDER →
        DEFENDER; RETEST → ``retest_side``; RETEST_ANSWER → the side that did
        not call the ``pending`` retest; THROWS → a tuple of the sides whose throw for the current
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
        if stage is Stage.RETEST:
            return self.retest_side
        if stage is Stage.RETEST_ANSWER:
            assert self.pending is not None
            return self.pending.side.other
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

    def bid_entries_ids(self, side: Side) -> tuple[int | None, ...]:
        """The ``trait_id`` of each copy ``side`` has bid (None where unknown)."""
        return tuple(trait_id for _, trait_id in self.bid_entries(side))

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
            "power": self.power,
            "defender_stakes": self.defender_stakes,
            "surprise": self.surprise,
            "challenger_weapon": self.challenger_weapon,
            "defender_weapon": self.defender_weapon,
            "calls": [[c.caller.value, c.name, c.correct, c.matched] for c in self.calls],
            "challenger_owed": self.challenger_owed,
            "defender_owed": self.defender_owed,
            "challenger_forfeits": self.challenger_forfeits,
            "defender_forfeits": self.defender_forfeits,
            "challenger_blood": self.challenger_blood,
            "defender_blood": self.defender_blood,
            "challenger_standing": self.challenger_standing,
            "defender_standing": self.defender_standing,
            "retest_side": _value(self.retest_side),
            "pending": None if self.pending is None else self.pending.to_dict(),
            "called": [[s.value, k.value] for s, k in self.called],
            "spent": [[c, p.value, n] for c, p, n in self.spent],
            "granted": [[c, i.attacker_id, i.power, i.until] for c, i in self.granted],
            "narrator_initiated": self.narrator_initiated,
            "difficult": self.difficult,
            "object_overbids": self.object_overbids,
            "object_retests": self.object_retests,
            "mob_attackers": self.mob_attackers,
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
            power=str(d.get("power", "")),
            defender_stakes=str(d.get("defender_stakes", "")),
            surprise=bool(d.get("surprise", False)),
            challenger_weapon=str(d.get("challenger_weapon", "")),
            defender_weapon=str(d.get("defender_weapon", "")),
            calls=tuple(
                NegativeCall(Side(c), str(n), bool(ok), bool(m))
                for c, n, ok, m in d.get("calls", ())
            ),
            challenger_owed=int(d.get("challenger_owed", 0)),
            defender_owed=int(d.get("defender_owed", 0)),
            challenger_forfeits=int(d.get("challenger_forfeits", 0)),
            defender_forfeits=int(d.get("defender_forfeits", 0)),
            challenger_blood=int(d.get("challenger_blood", 0)),
            defender_blood=int(d.get("defender_blood", 0)),
            challenger_standing=_int(d.get("challenger_standing")),
            defender_standing=_int(d.get("defender_standing")),
            retest_side=_enum(Side, d.get("retest_side")),
            pending=None if d.get("pending") is None else PendingRetest.from_dict(d["pending"]),
            called=tuple((Side(s), RetestKind(k)) for s, k in d.get("called", ())),
            spent=tuple((int(c), Pool(p), int(n)) for c, p, n in d.get("spent", ())),
            granted=tuple(
                (int(c), Immunity(int(a), str(p), float(u))) for c, a, p, u in d.get("granted", ())
            ),
            narrator_initiated=bool(d.get("narrator_initiated", False)),
            difficult=bool(d.get("difficult", False)),
            object_overbids=bool(d.get("object_overbids", False)),
            object_retests=bool(d.get("object_retests", False)),
            mob_attackers=int(d.get("mob_attackers", 0)),
        )

"""The state of one ``bns`` opposed challenge: a frozen, JSON-round-trippable
:class:`BnsChallengeState` (the web app keeps it in a JSONField and rebuilds
it before every move). Moves live in ``bns.engine``.

The attacker is core's ``Side.CHALLENGER``, the defender ``Side.DEFENDER``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from challenges.rules.bns.maneuvers import Assist, Effect, ManeuverUse, Payment
from challenges.rules.bns.options import BNS, BnsOptions
from challenges.rules.bns.sheet import AttackKind, Defence, Fighter
from challenges.rules.core import Side, Throw, beats

SCHEMA = 1
"""Version of :meth:`BnsChallengeState.to_dict`'s layout (key ``"schema"``)."""


class BnsStage(StrEnum):
    """Where a ``bns`` challenge stands: ANSWER (the defender chooses her
    defence), THROWS (pools known to both; waiting on the current test's
    throws), RETEST (the loser of the first test may spend Willpower to
    retest, or accept), RESOLVED."""

    ANSWER = "answer"
    THROWS = "throws"
    RETEST = "retest"
    RESOLVED = "resolved"


class Result(StrEnum):
    """How a ``bns`` challenge ended, for the attacker. seeds/002 "Winning a
    Challenge", "Exceptional Success". VOID: a narrator voided it."""

    SUCCESS = "success"
    EXCEPTIONAL = "exceptional"
    FAILURE = "failure"
    VOID = "void"

    @property
    def label(self) -> str:
        """ "Success", "Exceptional success", "Failure" or "Void"."""
        return {
            "success": "Success",
            "exceptional": "Exceptional success",
            "failure": "Failure",
            "void": "Void",
        }[self.value]


@dataclass(frozen=True)
class BnsTest:
    """One test (one rock-paper-scissors throw each). ``retest_by``: the side
    whose Willpower bought it (None for the first test). ``winner``: set once
    both have thrown; ``tie``: both threw the same (the winner then follows
    the pools). seeds/002 "Tests and Challenges"."""

    attacker_throw: Throw | None = None
    defender_throw: Throw | None = None
    retest_by: Side | None = None
    winner: Side | None = None
    tie: bool = False

    def throw_of(self, side: Side) -> Throw | None:
        """``side``'s throw in this test, or None."""
        return self.attacker_throw if Side(side) is Side.CHALLENGER else self.defender_throw

    @property
    def outright(self) -> bool:
        """The attacker won this test outright (her throw beat the defender's)."""
        return (
            self.attacker_throw is not None
            and self.defender_throw is not None
            and beats(self.attacker_throw, self.defender_throw)
        )

    def to_dict(self) -> dict[str, Any]:
        """{"attacker_throw", "defender_throw", "retest_by", "winner", "tie"}."""
        return {
            "attacker_throw": _v(self.attacker_throw),
            "defender_throw": _v(self.defender_throw),
            "retest_by": _v(self.retest_by),
            "winner": _v(self.winner),
            "tie": self.tie,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BnsTest:
        """Inverse of :meth:`to_dict`."""
        return cls(
            attacker_throw=_e(Throw, d["attacker_throw"]),
            defender_throw=_e(Throw, d["defender_throw"]),
            retest_by=_e(Side, d["retest_by"]),
            winner=_e(Side, d["winner"]),
            tie=bool(d["tie"]),
        )


@dataclass(frozen=True)
class Inflicted:
    """An effect on the defender: ``effect``, lasting ``seconds`` (None: until
    she acts as the seed says), from ``since`` epoch seconds."""

    effect: Effect
    seconds: float | None
    since: float

    @property
    def until(self) -> float | None:
        """Epoch seconds it ends (None: it ends by her actions)."""
        return None if self.seconds is None else self.since + self.seconds


def _v(member: StrEnum | None) -> Any:
    return None if member is None else member.value


def _e(enum: type[Any], value: Any) -> Any:
    return None if value is None else enum(value)


def _pairs(raw: Any) -> tuple[tuple[str, int], ...]:
    return tuple((str(name), int(n)) for name, n in raw)


@dataclass(frozen=True)
class BnsChallengeState:
    """The whole state of one ``bns`` opposed challenge.

    Set when it opens: ``attacker``, ``defender`` (the :class:`Fighter` as
    the sheets gave them then), ``attack``, ``power`` (a Mental/Social
    power's name, else ""), ``power_skill`` (the skill its pool adds),
    ``maneuvers``, ``surprise``, ``first_round``, ``assist`` (an ally's Assist
    Attacker), ``defence_assist`` (a Stock NPC's Assist Defender: +1 to a
    Dodge-based pool), ``staking`` (the weapon has the staking quality),
    ``attacker_blind`` (she cannot see the defender), ``escape`` (a grappled
    attacker's challenge to escape the defender's Grapple: no damage),
    ``defences`` (those the
    defender may choose from), ``*_modifiers`` ((reason, amount) pairs given
    by the app: a ruling, equipment), ``options``.

    Then: ``defence`` (the one she chose), ``attacker_pool`` and
    ``defender_pool`` (known to both from THROWS on; fixed for the whole
    challenge), ``tests`` (oldest first), ``retest_side`` (stage RETEST),
    ``*_willpower_spent`` (points this challenge cost each side),
    ``focus_used`` (the attacker's free maneuver spent here); on resolution
    ``result``, ``damage`` (points to the defender), ``effects``,
    ``immune_until`` (epoch seconds: a failed Mental/Social attack leaves the
    defender immune to this attacker's power until then), ``reason`` (a
    narrator's void or settle). ``stage_since``: epoch seconds of the last
    stage change.

    It holds both throws: the server's record, never sent to a player as is.
    """

    attacker: Fighter
    defender: Fighter
    attack: AttackKind
    stage: BnsStage
    stage_since: float
    power: str = ""
    power_skill: str = ""
    maneuvers: tuple[ManeuverUse, ...] = ()
    surprise: bool = False
    first_round: bool = False
    assist: Assist | None = None
    defence_assist: bool = False
    staking: bool = False
    attacker_blind: bool = False
    escape: bool = False
    defences: tuple[Defence, ...] = ()
    attacker_modifiers: tuple[tuple[str, int], ...] = ()
    defender_modifiers: tuple[tuple[str, int], ...] = ()
    options: BnsOptions = BNS
    defence: Defence | None = None
    attacker_pool: int | None = None
    defender_pool: int | None = None
    tests: tuple[BnsTest, ...] = ()
    retest_side: Side | None = None
    attacker_willpower_spent: int = 0
    defender_willpower_spent: int = 0
    focus_used: bool = False
    result: Result | None = None
    damage: int = 0
    effects: tuple[Inflicted, ...] = ()
    immune_until: float | None = None
    reason: str = ""

    def fighter(self, side: Side) -> Fighter:
        """The attacker (CHALLENGER) or the defender (DEFENDER)."""
        return self.attacker if Side(side) is Side.CHALLENGER else self.defender

    def pool(self, side: Side) -> int | None:
        """``side``'s test pool (None before the defender has answered)."""
        return self.attacker_pool if Side(side) is Side.CHALLENGER else self.defender_pool

    def willpower_spent(self, side: Side) -> int:
        """Willpower ``side`` has spent in this challenge."""
        if Side(side) is Side.CHALLENGER:
            return self.attacker_willpower_spent
        return self.defender_willpower_spent

    def willpower_left(self, side: Side) -> int:
        """``side``'s current Willpower less what this challenge cost her, ≥ 0."""
        return max(0, self.fighter(side).willpower - self.willpower_spent(side))

    def fighter_after(self, side: Side) -> Fighter:
        """``side``'s Fighter as the challenge leaves her: Willpower spent
        taken off, and the attacker's focus maneuver marked used if it was
        used here (damage and effects are the sheets' to apply)."""
        who = self.fighter(side)
        used = who.free_maneuver_used or (Side(side) is Side.CHALLENGER and self.focus_used)
        return replace(who, willpower=self.willpower_left(side), free_maneuver_used=used)

    @property
    def current_test(self) -> BnsTest | None:
        """The latest test, or None before the first."""
        return self.tests[-1] if self.tests else None

    @property
    def exceptional(self) -> bool:
        """The attacker scored an exceptional success."""
        return self.result is Result.EXCEPTIONAL

    @property
    def waiting_on(self) -> tuple[Side, ...]:
        """The sides that must move now: the defender at ANSWER, the sides
        still to throw at THROWS, ``retest_side`` at RETEST, none when over."""
        if self.stage is BnsStage.ANSWER:
            return (Side.DEFENDER,)
        if self.stage is BnsStage.RETEST:
            return () if self.retest_side is None else (self.retest_side,)
        if self.stage is BnsStage.THROWS and self.current_test is not None:
            test = self.current_test
            return tuple(s for s in Side if test.throw_of(s) is None)
        return ()

    def maneuvers_paid(self, paid: Payment) -> tuple[ManeuverUse, ...]:
        """The maneuvers applied here paid by ``paid``."""
        return tuple(u for u in self.maneuvers if u.paid is paid)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (enums as values, tuples as lists, ``"schema"``).
        Lossless: ``from_dict(to_dict())`` equals the state."""
        return {
            "schema": SCHEMA,
            "ruleset": "bns",
            "attacker": self.attacker.to_dict(),
            "defender": self.defender.to_dict(),
            "attack": self.attack.value,
            "stage": self.stage.value,
            "stage_since": self.stage_since,
            "power": self.power,
            "power_skill": self.power_skill,
            "maneuvers": [[u.maneuver.value, u.paid.value] for u in self.maneuvers],
            "surprise": self.surprise,
            "first_round": self.first_round,
            "assist": _v(self.assist),
            "defence_assist": self.defence_assist,
            "staking": self.staking,
            "attacker_blind": self.attacker_blind,
            "escape": self.escape,
            "defences": [d.value for d in self.defences],
            "attacker_modifiers": [list(m) for m in self.attacker_modifiers],
            "defender_modifiers": [list(m) for m in self.defender_modifiers],
            "options": self.options.to_dict(),
            "defence": _v(self.defence),
            "attacker_pool": self.attacker_pool,
            "defender_pool": self.defender_pool,
            "tests": [t.to_dict() for t in self.tests],
            "retest_side": _v(self.retest_side),
            "attacker_willpower_spent": self.attacker_willpower_spent,
            "defender_willpower_spent": self.defender_willpower_spent,
            "focus_used": self.focus_used,
            "result": _v(self.result),
            "damage": self.damage,
            "effects": [[i.effect.value, i.seconds, i.since] for i in self.effects],
            "immune_until": self.immune_until,
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BnsChallengeState:
        """Inverse of :meth:`to_dict`. ValueError for an unknown schema or a
        bad value, KeyError for a missing key."""
        if d.get("schema", SCHEMA) != SCHEMA:
            raise ValueError(f"Unknown BnsChallengeState schema {d.get('schema')!r}")
        pool_a, pool_d, immune = d["attacker_pool"], d["defender_pool"], d["immune_until"]
        return cls(
            attacker=Fighter.from_dict(d["attacker"]),
            defender=Fighter.from_dict(d["defender"]),
            attack=AttackKind(d["attack"]),
            stage=BnsStage(d["stage"]),
            stage_since=float(d["stage_since"]),
            power=str(d["power"]),
            power_skill=str(d["power_skill"]),
            maneuvers=tuple(ManeuverUse(m, p) for m, p in d["maneuvers"]),
            surprise=bool(d["surprise"]),
            first_round=bool(d["first_round"]),
            assist=_e(Assist, d["assist"]),
            defence_assist=bool(d["defence_assist"]),
            staking=bool(d["staking"]),
            attacker_blind=bool(d["attacker_blind"]),
            escape=bool(d.get("escape", False)),
            defences=tuple(Defence(x) for x in d["defences"]),
            attacker_modifiers=_pairs(d["attacker_modifiers"]),
            defender_modifiers=_pairs(d["defender_modifiers"]),
            options=BnsOptions.from_dict(d["options"]),
            defence=_e(Defence, d["defence"]),
            attacker_pool=None if pool_a is None else int(pool_a),
            defender_pool=None if pool_d is None else int(pool_d),
            tests=tuple(BnsTest.from_dict(t) for t in d["tests"]),
            retest_side=_e(Side, d["retest_side"]),
            attacker_willpower_spent=int(d["attacker_willpower_spent"]),
            defender_willpower_spent=int(d["defender_willpower_spent"]),
            focus_used=bool(d["focus_used"]),
            result=_e(Result, d["result"]),
            damage=int(d["damage"]),
            effects=tuple(
                Inflicted(Effect(e), None if s is None else float(s), float(t))
                for e, s, t in d["effects"]
            ),
            immune_until=None if immune is None else float(immune),
            reason=str(d["reason"]),
        )

"""View-models of an opposed challenge of test pools (issue 12, ruleset
``bns``, seeds/002): :class:`BnsCardView` (one phone's card or a narrator's
row; ``challenges/_bns_card.html`` and ``_bns_dashboard_row.html``) and the
"Challenge someone" form's choices (:func:`bns_start_options`). A viewer
sees the other side's throw only once both throws of that test are in, and
both pools once the defender has chosen her defence; her controls are
exactly the engine's ``legal_moves`` for her side."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property

from challenges.models import Challenge
from challenges.rules import Side, bns
from challenges.services.bns import fighter_of
from challenges.views.shared import RESULT_COLLAPSE_SECONDS, CallsNarrator, _signed
from characters.attribute_sheets import AttributeSheet
from characters.models import Character

#: What each stage waits for, in words (after "Waiting on <name> to ...").
_WAITING_FOR = {
    bns.BnsStage.ANSWER: "choose a defence",
    bns.BnsStage.THROWS: "throw",
    bns.BnsStage.RETEST: "retest with Willpower or accept",
}


@dataclass(frozen=True)
class BnsTestView:
    """One test as one viewer may see it: ``number`` (1, 2), ``mine`` (her
    throw, phone only), ``theirs`` and both throws only once ``revealed``;
    ``thrown``: (attacker in, defender in); ``winner`` and ``retest_by``:
    names; ``tie``."""

    number: int
    mine: str | None
    theirs: str | None
    revealed: bool
    attacker_throw: str | None
    defender_throw: str | None
    thrown: tuple[bool, bool]
    winner: str
    tie: bool
    retest_by: str


@dataclass
class BnsCardView(CallsNarrator):
    """A challenge of test pools as ``side`` sees it (None: a narrator)."""

    challenge: Challenge
    state: bns.BnsChallengeState
    side: Side | None
    void_reason: str = ""

    pooled = True
    """Templates and consumers tell it from a MET ``ChallengeView`` by this."""

    @property
    def pk(self) -> int:
        return self.challenge.pk

    @property
    def stage(self) -> str:
        return self.state.stage.value

    @property
    def is_resolved(self) -> bool:
        return self.state.stage is bns.BnsStage.RESOLVED

    @property
    def challenger_name(self) -> str:
        return self.state.attacker.name

    @property
    def defender_name(self) -> str:
        return self.state.defender.name

    @property
    def opponent_name(self) -> str:
        return self.defender_name if self.side is Side.CHALLENGER else self.challenger_name

    @property
    def kind_label(self) -> str:
        """ "Brawl attack", "Mental power: Dominate", "Grapple escape (Brawl)"."""
        if self.state.escape:
            return f"Grapple escape ({self.state.attack.label})"
        if self.state.attack.physical:
            return f"{self.state.attack.label} attack"
        return f"{self.state.attack.label}: {self.state.power}"

    @property
    def maneuvers_text(self) -> str:
        """ "Knock Out (1 Willpower), Disarm (Strength focus)", "" without any."""
        paid = {
            bns.Payment.WILLPOWER: "1 Willpower",
            bns.Payment.FOCUS: "focus",
            bns.Payment.ASSIST: "assist",
        }
        return ", ".join(f"{u.maneuver.label} ({paid[u.paid]})" for u in self.state.maneuvers)

    @property
    def tags(self) -> list[str]:
        out = []
        if self.state.surprise:
            out.append("surprise")
        if self.state.first_round:
            out.append("first round")
        if self.state.staking:
            out.append("staking weapon")
        return out

    @cached_property
    def moves(self) -> bns.BnsMoves:
        """The engine's legal moves for this phone's side (none on a dashboard)."""
        if self.side is None or self.is_resolved:
            return bns.BnsMoves()
        return bns.legal_moves(self.state, self.side)

    @property
    def defence_choices(self) -> list[tuple[str, str, int]]:
        """(value, label, her pool with it) of each defence she may choose."""
        return [(d.value, d.label, bns.defence_pool(self.state, d)) for d in self.moves.defences]

    @property
    def pools_known(self) -> bool:
        """Both have chosen: the pools are shown to both sides."""
        return self.state.attacker_pool is not None and self.state.defender_pool is not None

    @property
    def pool_line(self) -> str:
        """ "Pools: Rosa 8 (Brawl) vs Tooth 11 (Physical + Dodge)"."""
        if not self.pools_known:
            return ""
        defence = self.state.defence.label if self.state.defence else ""
        mods = bns.pool_modifiers(self.state, Side.CHALLENGER)
        extra = "".join(f", {_signed(reason, n)}" for reason, n in mods)
        return (
            f"Pools: {self.challenger_name} {self.state.attacker_pool} "
            f"({self.state.attack.label}{extra}) vs {self.defender_name} "
            f"{self.state.defender_pool} ({defence})"
        )

    def _name(self, side: Side | None) -> str:
        if side is None:
            return ""
        return self.challenger_name if side is Side.CHALLENGER else self.defender_name

    @property
    def tests(self) -> list[BnsTestView]:
        out = []
        for number, test in enumerate(self.state.tests, start=1):
            a, d = test.attacker_throw, test.defender_throw
            revealed = a is not None and d is not None
            mine = theirs = None
            if self.side is not None:
                own = test.throw_of(self.side)
                other = test.throw_of(self.side.other)
                mine = own.value if own else None
                theirs = other.value if other and revealed else None
            out.append(
                BnsTestView(
                    number=number,
                    mine=mine,
                    theirs=theirs,
                    revealed=revealed,
                    attacker_throw=a.value if revealed and a else None,
                    defender_throw=d.value if revealed and d else None,
                    thrown=(a is not None, d is not None),
                    winner=self._name(test.winner),
                    tie=test.tie,
                    retest_by=self._name(test.retest_by),
                )
            )
        return out

    @property
    def willpower_text(self) -> str:
        """ "Willpower spent: Rosa 1, Tooth 1", "" when none was."""
        parts = [
            f"{self._name(side)} {self.state.willpower_spent(side)}"
            for side in Side
            if self.state.willpower_spent(side)
        ]
        return f"Willpower spent: {', '.join(parts)}" if parts else ""

    @property
    def result(self) -> str:
        """The result's value ("success", "exceptional", "failure", "void"), "" while open."""
        return self.state.result.value if self.state.result else ""

    @property
    def effects_text(self) -> str:
        """ "Unconscious (10 minutes), Prone", "" for none."""
        parts = []
        for inflicted in self.state.effects:
            label = inflicted.effect.label
            if inflicted.seconds:
                label += f" ({round(inflicted.seconds / 60)} minutes)"
            parts.append(label)
        return ", ".join(parts)

    @property
    def outcome_text(self) -> str:
        """The result in the seed's words, as this viewer reads it. A narrator
        reads the attacker's result: "Exceptional success: Tooth takes 2
        damage; Tooth is Unconscious (10 minutes).", "Failure: Tooth is not
        hurt.", "Void: why.". The attacker reads the same with herself as
        "you" ("Success: you escape the grapple."); the defender reads what
        happened to her: "You lose to Jack: you are Prone.", "You win: you are
        not hurt.". seeds/002 "Winning a Challenge", "Exceptional Success"."""
        result = self.state.result
        if result is None:
            return ""
        if result is bns.Result.VOID:
            return f"Void: {self.state.reason}." if self.state.reason else "Void."
        if self.side is Side.DEFENDER:
            return self._defender_outcome(result)
        attacker = "you" if self.side is Side.CHALLENGER else self.challenger_name
        head = result.label
        if result is bns.Result.FAILURE and self.state.escape:
            still = "you are" if self.side is Side.CHALLENGER else f"{attacker} is"
            return f"{head}: {still} still grappled by {self.defender_name}."
        if result is bns.Result.FAILURE:
            return f"{head}: {self.defender_name} is not hurt{self._immune(self.defender_name)}."
        what = []
        if self.state.damage:
            what.append(f"{self.defender_name} takes {self.state.damage} damage")
        if self.effects_text:
            what.append(f"{self.defender_name} is {self.effects_text}")
        if self.state.escape:
            escapes = "escape" if self.side is Side.CHALLENGER else "escapes"
            what.append(f"{attacker} {escapes} the grapple")
        return f"{head}: {'; '.join(what)}." if what else f"{head}."

    def _immune(self, defender: str) -> str:
        """ "; Rosa is immune to Vesper's Dominate for 10 minutes" after a
        failed power (``defender``: her name, or "you are"'s "you"), "" else."""
        if self.state.immune_until is None:
            return ""
        minutes = round(self.state.options.immunity_seconds / 60)
        whose = "your" if self.side is Side.CHALLENGER else f"{self.challenger_name}'s"
        verb = "are" if defender == "you" else "is"
        return f"; {defender} {verb} immune to {whose} {self.state.power} for {minutes} minutes"

    def _defender_outcome(self, result: bns.Result) -> str:
        """:attr:`outcome_text` for the defender's phone, in the second person."""
        attacker = self.challenger_name
        if result is bns.Result.FAILURE and self.state.escape:
            return f"You win: {attacker} is still in your grapple."
        if result is bns.Result.FAILURE:
            return f"You win: you are not hurt{self._immune('you')}."
        exceptional = "'s exceptional success" if result is bns.Result.EXCEPTIONAL else ""
        head = f"You lose to {attacker}{exceptional}"
        what = []
        if self.state.damage:
            what.append(f"you take {self.state.damage} damage")
        if self.effects_text:
            what.append(f"you are {self.effects_text}")
        if self.state.escape:
            what.append(f"{attacker} escapes your grapple")
        return f"{head}: {'; '.join(what)}." if what else f"{head}."

    @property
    def i_won(self) -> bool | None:
        """Her side won (None on a dashboard, while open, or void)."""
        result = self.state.result
        if self.side is None or result is None or result is bns.Result.VOID:
            return None
        attacker_won = result in (bns.Result.SUCCESS, bns.Result.EXCEPTIONAL)
        return attacker_won == (self.side is Side.CHALLENGER)

    @property
    def waiting_on_me(self) -> bool:
        return self.side is not None and self.side in self.state.waiting_on

    @property
    def waiting_text(self) -> str:
        """ "Waiting on Tooth to choose a defence.", "" when over."""
        waiting = self.state.waiting_on
        if not waiting:
            return ""
        names = " and ".join(self._name(s) for s in waiting)
        return f"Waiting on {names} to {_WAITING_FOR.get(self.state.stage, 'move')}."

    narrator_stage = waiting_text

    @property
    def stage_since(self) -> float:
        return self.state.stage_since

    @property
    def stage_since_iso(self) -> str:
        return datetime.fromtimestamp(self.state.stage_since, tz=UTC).isoformat()

    @property
    def collapsed(self) -> bool:
        """A result older than RESULT_COLLAPSE_SECONDS shows folded on a dashboard."""
        return self.is_resolved and time.time() - self.stage_since > RESULT_COLLAPSE_SECONDS


def bns_card(challenge: Challenge, side: Side | None) -> BnsCardView:
    """``challenge`` (of kind ``pools``) as ``side`` sees it (None: a narrator)."""
    return BnsCardView(challenge, bns.BnsChallengeState.from_dict(challenge.state), side)


#: The Physical attacks the "Challenge someone" form may offer, in its order.
_PHYSICAL_ATTACKS = tuple(k for k in bns.AttackKind if k.physical)
_PAID_WORDS = {
    bns.Payment.WILLPOWER: "1 Willpower",
    bns.Payment.FOCUS: "free: focus",
}


def bns_attacks(
    sheet: AttributeSheet,
    character: Character,
    kinds: Sequence[bns.AttackKind] = _PHYSICAL_ATTACKS,
) -> list[tuple[str, str, int]]:
    """(value, label, her pool) of each Physical attack of ``kinds`` she may
    make: those the engine allows her sheet (``bns.lacking_skill``: brawl
    always; melee, thrown and firearms with the Skill on her sheet), so the
    form offers exactly what ``bns.open`` accepts. seeds/002 "Common Test
    Pools". No query."""
    me = fighter_of(character, sheet)
    return [
        (kind.value, kind.label, bns.test_pool(me, attack=kind))
        for kind in kinds
        if not bns.lacking_skill(me, kind)
    ]


def bns_start_options(sheet: AttributeSheet, character: Character) -> dict:
    """What a test-pool sheet's "Challenge someone" form offers:
    ``bns_attacks`` [(value, label, pool)] (brawl always; melee, thrown and
    firearms with the Skill on her sheet), ``bns_maneuvers`` [(value,
    label)] (each maneuver she could pay for on some Physical attack against
    someone: "knock_out" with 1 Willpower when she has some left,
    "knock_out:focus" with her focus's free one), ``bns_powers`` (Mental and
    Social: always, named in the form). seeds/002 "Common Test Pools",
    "Combat Maneuvers". No query (``character`` is her row, for her name)."""
    me = fighter_of(character, sheet)
    attacks = bns_attacks(sheet, character)
    anyone = (
        bns.Fighter(name="target", physical=1, social=1, mental=1),
        bns.Fighter(
            name="target",
            physical=1,
            social=1,
            mental=1,
            wound_track=bns.WoundTrack.INCAPACITATED,
        ),
    )
    offers: dict[str, str] = {}
    for kind, _, _ in attacks:
        for target in anyone:
            for use in bns.maneuver_offers(
                attacker=me, defender=target, attack=kind, surprise=True, first_round=True
            ):
                if use.paid not in _PAID_WORDS:
                    continue
                value = use.maneuver.value
                if use.paid is not bns.Payment.WILLPOWER:
                    value += f":{use.paid.value}"
                offers[value] = f"{use.maneuver.label} ({_PAID_WORDS[use.paid]})"
    order = {m.value: i for i, m in enumerate(bns.Maneuver)}
    maneuvers = sorted(offers.items(), key=lambda kv: (order[kv[0].split(":")[0]], kv[0]))
    return {"bns_attacks": attacks, "bns_maneuvers": maneuvers, "bns_powers": True}

"""Cards at every stage a MET challenge goes through, for both sides, from
engine states (no database), and Trait sheets as a phone shows them beside
the cards: the corpus ``test_card_snapshots`` renders and compares with what
was recorded (``snapshots/cards.json``, ``snapshots/sheets.json``). Each entry is a
name and a ``ChallengeView`` built by ``test_card_moves.view``, its
``Challenge`` row dressed as the case needs (a call for a narrator, rulings,
a prepared static, a result just in)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

from challenges import rules
from challenges.models import PreparedStatic
from challenges.rules import Category, HealthLevel, RetestKind, Weapon
from challenges.views.shared import ChallengeView
from characters.models import Ability, Character
from characters.services import CategoryLines, Sheet, TraitLine
from tests.challenges.test_card_moves import (
    NOW,
    PAPER,
    ROCK,
    SCISSORS,
    C,
    D,
    answered,
    grady,
    helen,
    opened,
    opened_static,
    thrown,
    view,
)

CALLED_AT = datetime(2024, 5, 1, 21, 0, tzinfo=UTC)
RULINGS = [
    {"text": "The bid stands", "reason": "She <b>had</b> it", "narrator": "Nina", "at": 1.0},
    {"text": "Test again", "reason": "", "narrator": "Nina", "at": 2.0},
]


def _states() -> Iterator[tuple[str, object]]:
    """``(name, ChallengeState)`` of each case, both presets where they differ."""
    for ruleset in ("met_classic", "ukm"):
        o = opened(ruleset)
        yield f"{ruleset}/response", o
        yield (
            f"{ruleset}/response-bruised",
            opened(ruleset, defender=grady(health=HealthLevel.BRUISED)),
        )
        yield f"{ruleset}/response-mental", opened(ruleset, category=Category.MENTAL)
        a = answered(o)
        yield f"{ruleset}/throws", a
        yield f"{ruleset}/throws-one-in", rules.throw(a, side=C, throw=ROCK, now=NOW).state
        yield (
            f"{ruleset}/call-wrong",
            rules.call_negative(a, side=D, name="Cowardly", now=NOW).state,
        )
        called = rules.call_negative(a, side=C, name="Cowardly", now=NOW).state
        yield f"{ruleset}/call-right", called
        tie = thrown(a, ROCK, ROCK)
        yield f"{ruleset}/declare-challenger", tie
        declared = rules.declare(tie, side=C, count=4, now=NOW, choose=None).state
        yield f"{ruleset}/declare-defender", declared
        yield (
            f"{ruleset}/after-tie",
            rules.declare(declared, side=D, count=2, now=NOW, choose=None).state,
        )
        lost = thrown(a, ROCK, PAPER)
        yield f"{ruleset}/retest", lost
        yield f"{ruleset}/accepted", rules.accept(lost, side=C, now=NOW).state
        yield f"{ruleset}/won", thrown(a, SCISSORS, PAPER)
        yield f"{ruleset}/relented", rules.relent(o, side=D, now=NOW).state
        traits = ["Brawny"] if ruleset == "met_classic" else ()
        overbid = rules.call_retest(
            lost, side=C, kind=RetestKind.OVERBID, traits=traits, count=5, now=NOW
        ).state
        yield f"{ruleset}/overbid-answer", overbid
        yield (
            f"{ruleset}/overbid-answered",
            rules.answer_retest(overbid, side=D, count=2, now=NOW).state,
        )
        yield f"{ruleset}/attack", opened(ruleset, is_attack=True)
        static = opened_static(ruleset)
        yield f"{ruleset}/static-bid", static
        static = rules.bid(static, bids=["Quick"], now=NOW).state
        yield f"{ruleset}/static-throw", static
        yield f"{ruleset}/static-retest", rules.throw(static, side=C, throw=ROCK, now=NOW).state
        yield f"{ruleset}/static-won", rules.throw(static, side=C, throw=SCISSORS, now=NOW).state
        simple = rules.open_simple(
            ruleset=ruleset, challenger=helen(), narrator_throw=ROCK, choose=None, now=NOW
        ).state
        yield f"{ruleset}/simple", simple
        yield f"{ruleset}/simple-tie", rules.throw(simple, side=C, throw=ROCK, now=NOW).state
        for how in ("difficult", "narrator_initiated")[ruleset == "met_classic" :]:
            yield (
                f"{ruleset}/simple-{how}",
                rules.open_simple(
                    ruleset=ruleset,
                    challenger=helen(),
                    narrator_throw=ROCK,
                    choose=None,
                    stakes="Climb the wall",
                    now=NOW,
                    **{how: True},
                ).state,
            )
    yield (
        "met_classic/preempt",
        rules.preempt(opened("met_classic"), gift="Razor Claws", now=NOW).state,
    )
    yield (
        "met_classic/owed",
        rules.call_negative(
            answered(opened("met_classic")), side=C, name="Cowardly", now=NOW
        ).state,
    )
    ukm_lost = thrown(answered(opened("ukm")), ROCK, PAPER)
    yield (
        "ukm/ability-answer",
        rules.call_retest(ukm_lost, side=C, kind=RetestKind.ABILITY, name="Brawl", now=NOW).state,
    )
    yield (
        "ukm/discipline-answer",
        rules.call_retest(
            ukm_lost, side=C, kind=RetestKind.DISCIPLINE, name="Potence", now=NOW
        ).state,
    )
    yield "ukm/blood", rules.spend_blood(answered(opened("ukm")), side=C, amount=2, now=NOW).state
    mental = thrown(answered(opened("ukm", category=Category.MENTAL), "Calm"), PAPER, ROCK)
    yield "ukm/willpower", mental
    power = opened("ukm", category=Category.MENTAL, bids=["Clever"], power="Dominate: Command")
    power = thrown(answered(power, "Calm"), PAPER, ROCK)
    power = rules.call_retest(power, side=D, kind="willpower", now=NOW).state
    yield "ukm/immune", thrown(power, ROCK, PAPER)
    yield (
        "ukm/surprise",
        opened(
            "ukm",
            surprise=True,
            challenger=helen(weapons=(Weapon("Knife", 1, "Melee"),)),
            weapon="Knife",
        ),
    )
    yield (
        "ukm/stakes-weapon",
        rules.respond(
            opened("ukm"), bids=["Tough"], stakes="I throw <you> out", weapon="Sword", now=NOW
        ).state,
    )
    bruised = answered(opened("ukm", defender=grady(health=HealthLevel.BRUISED)))
    bruised = rules.declare(thrown(bruised, ROCK, ROCK), side=C, count=4, now=NOW).state
    yield "ukm/compared", rules.declare(bruised, side=D, count=2, now=NOW).state
    hurt = opened("met_classic", defender=grady(health=HealthLevel.WOUNDED), is_attack=True)
    hurt = rules.respond(hurt, bids=["Tough", "Resilient"], now=NOW).state
    yield "met_classic/wounded-lost", thrown(hurt, ROCK, SCISSORS)


def cards() -> Iterator[tuple[str, ChallengeView]]:
    """``(name, view)`` for each case and side, and the row dressings on a few."""
    for name, state in _states():
        for side in (C, D):
            yield f"{name}/{side.value}", view(state, side)
    state = answered(opened("ukm"))
    for side in (C, D):
        called = view(state, side)
        called.challenge.called_at, called.challenge.called_by = CALLED_AT, "defender"
        called.challenge.call_reason = "We <disagree>"
        called.challenge.rulings = RULINGS
        yield f"ukm/called/{side.value}", called
        done = view(thrown(state, ROCK, SCISSORS), side)
        done.challenge.resolved_at = datetime.now(tz=UTC)  # within the call window
        yield f"ukm/just-resolved/{side.value}", done
    prepared = PreparedStatic(pk=3, reveal="The safe holds\na <letter>")
    for throw, outcome in ((SCISSORS, "won"), (ROCK, "retest")):
        static = opened_static("met_classic", difficulty=2, stakes="The safe")
        static = rules.bid(static, bids=["Quick"], now=NOW).state
        card = view(rules.throw(static, side=C, throw=throw, now=NOW).state, C)
        card.challenge.prepared = prepared
        yield f"met_classic/prepared-{outcome}/challenger", card


def _line(pk: int, name: str, category: Category, count: int, **kw) -> TraitLine:
    return TraitLine(pk, name, category, count, kw.pop("lost", 0), False, **kw)


def sheets() -> Iterator[tuple[str, Sheet]]:
    """``(name, Sheet)``: a Trait sheet whole, with copies at risk in one or
    two challenges, with Traits lost, with a category emptied, wounded."""
    p, s, m = Category.PHYSICAL, Category.SOCIAL, Category.MENTAL
    lines = {
        p: [_line(1, "Quick", p, 3), _line(2, "Brawny", p, 2), _line(3, "Tough", p, 1)],
        s: [_line(4, "Alluring", s, 2), _line(5, "Witty <3", s, 1)],
        m: [_line(6, "Cunning", m, 3)],
    }

    def sheet(**changes) -> Sheet:
        cats = {**lines, **changes.pop("lines", {})}
        return Sheet(
            character=Character(pk=5, name="Helen"),
            session=None,
            health=changes.pop("health", HealthLevel.HEALTHY),
            categories=[CategoryLines(c, t) for c, t in cats.items()],
            negatives=[TraitLine(7, "Clumsy", p, 2, 0, True)],
            abilities=[Ability(name="Brawl", rating=2)],
        )

    yield "whole", sheet()
    quick = _line(1, "Quick", p, 3, at_risk=1, risked_in=(12,))
    yield "quick-at-risk", sheet(lines={p: [quick, *lines[p][1:]]})
    both = _line(1, "Quick", p, 3, at_risk=3, risked_in=(12, 14, 14))
    yield "quick-all-at-risk", sheet(lines={p: [both, *lines[p][1:]]})
    lost = _line(2, "Brawny", p, 2, lost=1)
    yield "brawny-lost", sheet(lines={p: [lines[p][0], lost, lines[p][2]]})
    yield "mental-gone", sheet(lines={m: [_line(6, "Cunning", m, 3, lost=3)]})
    yield "no-social", sheet(lines={s: []})
    yield "bruised", sheet(health=HealthLevel.BRUISED)

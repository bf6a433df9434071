"""The phone's card and the dashboard's row at every stage of a challenge,
under both presets: each control shown only when ``rules.legal_moves`` lists
its move, in the games' words; what the other side declared or named shown,
her Negative Traits never listed. Rendered from engine states, no database."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from django.template.loader import render_to_string

from challenges import rules
from challenges.models import Challenge
from challenges.rules import (
    Category,
    ChallengeState,
    Combatant,
    HealthLevel,
    Pool,
    Rating,
    RetestKind,
    Side,
    Stage,
    Throw,
    TraitHolding,
    Weapon,
)
from challenges.views.shared import ChallengeView
from characters.services import TraitLine

NOW = 1_000.0
C, D = Side.CHALLENGER, Side.DEFENDER
ROCK, PAPER, SCISSORS = Throw.ROCK, Throw.PAPER, Throw.SCISSORS


def helen(**changes) -> Combatant:
    base = Combatant(
        1,
        "Helen",
        traits=(
            TraitHolding("Quick", "physical", 3, trait_id=11),
            TraitHolding("Brawny", "physical", 3, trait_id=12),
            TraitHolding("Clumsy", "physical", 1, negative=True, trait_id=13),
            TraitHolding("Clever", "mental", 3, trait_id=14),
        ),
        abilities=(Rating("Brawl", 3),),
        disciplines=(Rating("Potence", 2),),
        pools={Pool.WILLPOWER: 2, Pool.BLOOD: 5},
    )
    return replace(base, **changes)


def grady(**changes) -> Combatant:
    base = Combatant(
        2,
        "Grady",
        traits=(
            TraitHolding("Tough", "physical", 1, trait_id=21),
            TraitHolding("Resilient", "physical", 1, trait_id=22),
            TraitHolding("Cowardly", "physical", 1, negative=True, trait_id=23),
            TraitHolding("Calm", "mental", 2, trait_id=24),
            TraitHolding("Gullible", "mental", 1, negative=True, trait_id=25),
        ),
        abilities=(Rating("Brawl", 1), Rating("Dodge", 2)),
        disciplines=(Rating("Potence", 1),),
        weapons=(Weapon("Sword", 2, "Melee"),),
        pools={Pool.WILLPOWER: 1, Pool.RAGE: 1},
    )
    return replace(base, **changes)


def opened(ruleset: str = "met_classic", *, category=Category.PHYSICAL, **kw) -> ChallengeState:
    bids = kw.pop("bids", ["Quick"] if category is Category.PHYSICAL else ["Clever"])
    return rules.open_opposed(
        ruleset=ruleset,
        challenger=kw.pop("challenger", helen()),
        defender=kw.pop("defender", grady()),
        category=category,
        bids=bids,
        stakes=kw.pop("stakes", "I knock you down"),
        now=NOW,
        **kw,
    ).state


def opened_static(ruleset: str, *, difficulty: int = 3, stakes: str = "The locked door"):
    """A static Physical challenge of Helen's, the narrator throwing Paper."""
    return rules.open_static(
        ruleset=ruleset,
        challenger=helen(),
        category=Category.PHYSICAL,
        difficulty=difficulty,
        narrator_throw=PAPER,
        choose=None,
        stakes=stakes,
        now=NOW,
    ).state


def answered(state: ChallengeState, bid: str = "Tough") -> ChallengeState:
    return rules.respond(state, bids=[bid], now=NOW).state


def thrown(state: ChallengeState, mine: Throw, theirs: Throw) -> ChallengeState:
    state = rules.throw(state, side=C, throw=mine, now=NOW).state
    return rules.throw(state, side=D, throw=theirs, now=NOW).state


def view(state: ChallengeState, side: Side | None) -> ChallengeView:
    challenge = Challenge(
        pk=7,
        kind=state.kind.value,
        challenger_id=state.challenger.character_id,
        defender_id=state.defender.character_id if state.defender else None,
        state=state.to_dict(),
    )
    v = ChallengeView(challenge, state, side)
    who = state.combatant(side) if side else None
    if who is not None and state.category is not None:
        v.held = who.count(state.category)
        if v.needs_trait_choices:
            bid = list(state.of(side, "bids"))
            v.bid_choices = [
                TraitLine(t.trait_id or 0, t.name, t.category, t.count, 0, False, bid.count(t.name))
                for t in who.traits
                if t.category is state.category and not t.negative and t.count > bid.count(t.name)
            ]
    return v


def card(state: ChallengeState, side: Side) -> str:
    return render_to_string("challenges/_card.html", {"c": view(state, side)})


def row(state: ChallengeState) -> str:
    return render_to_string("challenges/_dashboard_row.html", {"row": view(state, None)})


def actions(html: str) -> set[str]:
    """The frames a card's forms would send."""
    # s11: "Call a narrator" is on every card of hers (not a move of the rules).
    return set(re.findall(r'name="action" value="([\w.]+)"', html)) - {"challenge.call_narrator"}


def text(html: str) -> str:
    inline = re.sub(r"</?(bdi|strong|em|s|small)\b[^>]*>", "", html)
    return " ".join(re.sub(r"<[^>]+>", " ", inline).split())


PRESETS = ["met_classic", "ukm"]


# --- the response ---------------------------------------------------------------


@pytest.mark.parametrize("ruleset", PRESETS)
def test_the_defender_is_offered_a_bid_and_relent_and_the_challenger_waits(ruleset):
    state = opened(ruleset)
    mine = card(state, D)
    assert {"challenge.bid", "challenge.relent"} <= actions(mine)
    assert "challenge.throw" not in actions(mine)
    assert 'aria-label="Bid Tough"' in mine and "Cowardly" not in mine
    theirs = card(state, C)
    assert "Waiting on <bdi>Grady</bdi> for a bid or relent" in theirs
    # ukm: either side may relent before the test (seeds/004 "The Challenge").
    assert ("challenge.relent" in actions(theirs)) is (ruleset == "ukm")


def test_a_met_classic_werewolf_may_spend_rage_to_preempt():
    assert "Spend Rage: pre-empt with a Gift" in card(opened("met_classic"), D)
    assert "challenge.preempt" not in actions(card(opened("ukm"), D))


def test_a_bruised_defender_under_met_classic_must_bid_two_traits():
    state = opened("met_classic", defender=grady(health=HealthLevel.BRUISED))
    html = card(state, D)
    assert "Bruised: bid two Physical Traits" in html
    assert html.count('type="checkbox" name="bids"') == 2 and 'data-lists="bids"' in html
    ukm = card(opened("ukm", defender=grady(health=HealthLevel.BRUISED)), D)
    assert "bid two" not in ukm and 'aria-label="Bid Tough"' in ukm


def test_surprise_and_the_weapon_are_shown_to_the_defender_before_she_answers():
    state = opened(
        "ukm",
        surprise=True,
        challenger=helen(weapons=(Weapon("Knife", 1, "Melee"),)),
        weapon="Knife",
    )
    html = text(card(state, D))
    assert "Surprise: Helen attacks by surprise." in html and "Helen uses Knife." in html


# --- Negative Traits, added bids, Blood -----------------------------------------------


@pytest.mark.parametrize("ruleset", PRESETS)
def test_both_sides_may_name_a_negative_trait_in_free_text_after_both_bids(ruleset):
    state = answered(opened(ruleset))
    for side in (C, D):
        html = card(state, side)
        assert "Name a Negative Trait" in html and "challenge.negative" in actions(html)
        assert 'autocomplete="off"' in html and "<datalist" not in html
        assert "challenge.throw" in actions(html)
    # The caller never sees the other's Negative Traits.
    assert "Cowardly" not in card(state, C) and "Clumsy" not in card(state, D)


def test_a_correct_call_under_met_classic_makes_the_other_add_one_more_trait():
    state = answered(opened("met_classic"))
    state = rules.call_negative(state, side=C, name="Cowardly", now=NOW).state
    grady_card = card(state, D)
    assert "Helen names the Negative Trait Cowardly" in text(grady_card)
    assert "correct: you bid one more Trait" in text(grady_card)
    assert "Add one more Trait to your bid" in grady_card and "challenge.add_bid" in actions(
        grady_card
    )
    assert "challenge.throw" not in actions(grady_card)
    helen_card = text(card(state, C))
    assert "You name the Negative Trait Cowardly: correct: Grady bids one more Trait." in helen_card
    assert "Waiting on Grady for one more Trait" in helen_card
    assert "Waiting on Grady for one more Trait" in text(row(state))


def test_a_wrong_call_under_ukm_puts_the_caller_one_trait_down_on_both_cards():
    state = answered(opened("ukm"))
    state = rules.call_negative(state, side=D, name="Cowardly", now=NOW).state
    assert "wrong: you are one Trait down" in text(card(state, D))
    assert "Grady: Cowardly: wrong call −1" in text(card(state, C))
    assert "Grady: Cowardly: wrong call −1" in text(row(state))


def test_blood_is_offered_for_physical_traits_under_ukm_only():
    html = card(answered(opened("ukm")), C)
    assert "Spend Blood for Physical Traits" in html and 'max="3"' in html
    assert "challenge.blood" not in actions(card(answered(opened("met_classic")), C))


# --- ties and declarations ------------------------------------------------------------


@pytest.mark.parametrize("ruleset", PRESETS)
def test_after_a_tie_the_challenger_declares_first(ruleset):
    state = thrown(answered(opened(ruleset)), ROCK, ROCK)
    assert state.stage is Stage.DECLARE_CHALLENGER
    html = card(state, C)
    assert "challenge.declare" in actions(html) and 'max="6"' in html
    assert "challenge.declare" not in actions(card(state, D))
    assert "Waiting on <bdi>Helen</bdi> for a Trait count" in card(state, D)


# --- retests --------------------------------------------------------------------------


def _helen_loses(ruleset: str, **kw) -> ChallengeState:
    state = thrown(answered(opened(ruleset, **kw), **({} if "bid" not in kw else {})), ROCK, PAPER)
    assert state.stage is Stage.RETEST and state.retest_side is C, state.stage
    return state


def test_met_classic_loser_may_overbid_with_one_more_trait_or_accept():
    state = _helen_loses("met_classic")
    html = card(state, C)
    assert "Overbid: risk one more Trait" in html
    assert 'aria-label="Overbid with Brawny"' in html and 'data-lists="traits"' in html
    assert "Accept: you lose" in html
    assert "Retest with Brawl" not in html and "Willpower" not in html  # not met_classic
    assert actions(card(state, D)) == set()
    assert "Waiting on Helen: may retest (Overbid) or accept" in text(row(state))


def test_an_overbid_asks_the_other_side_for_her_count_and_shows_it_in_history():
    state = _helen_loses("met_classic")
    state = rules.call_retest(
        state, side=C, kind=RetestKind.OVERBID, traits=["Brawny"], now=NOW
    ).state
    assert state.stage is Stage.RETEST_ANSWER
    html = card(state, D)
    assert "Helen overbids: risks one more Trait and declares 6 Traits." in text(html)
    assert "challenge.answer" in actions(html) and "against the overbid" in html
    assert "Waiting on Grady to answer an overbid" in text(row(state))
    state = rules.answer_retest(state, side=D, count=2, now=NOW).state
    assert state.stage is Stage.THROWS
    assert "Test 2: Overbid (You)" in text(card(state, C))
    assert "Test 2 (Overbid, Helen)" in text(row(state))


def test_ukm_loser_is_offered_discipline_ability_overbid_in_order():
    state = _helen_loses("ukm")
    html = card(state, C)
    assert "Retest with Potence" in html and "Retest with Brawl 3" in html
    assert "Overbid: announce your Traits" in html and "Accept: you lose" in html
    order = [html.index(s) for s in ("with Potence", "with Brawl 3", "Overbid: announce")]
    assert order == sorted(order)


def test_an_ability_retest_asks_the_other_for_her_ability():
    state = _helen_loses("ukm")
    state = rules.call_retest(state, side=C, kind=RetestKind.ABILITY, name="Brawl", now=NOW).state
    html = card(state, D)
    assert "Helen calls an ability retest with Brawl 3." in text(html)
    assert "Answer with Brawl 1" in html and "Answer with Dodge 2" in html
    assert "No Ability to answer with" in html
    assert "Waiting on Grady to answer an ability retest" in text(row(state))


def test_a_discipline_retest_may_be_cancelled_by_the_same_discipline():
    state = _helen_loses("ukm")
    state = rules.call_retest(
        state, side=C, kind=RetestKind.DISCIPLINE, name="Potence", now=NOW
    ).state
    html = card(state, D)
    assert "Cancel it with your Potence" in html and 'data-bools="cancel"' in html
    assert "Let the retest stand" in html


def test_a_ukm_defender_may_spend_willpower_in_a_mental_challenge():
    state = answered(opened("ukm", category=Category.MENTAL), "Calm")
    state = thrown(state, PAPER, ROCK)
    assert state.retest_side is D
    html = card(state, D)
    assert "Spend Willpower: retest (final)" in html
    assert "Retest with Dodge" not in html  # a Physical Ability: no retest of a Mental challenge


# --- narrator --------------------------------------------------------------------------


@pytest.mark.parametrize("ruleset", PRESETS)
def test_the_narrator_may_force_a_retest_only_once_a_test_is_settled(ruleset):
    assert "Force a retest" not in row(answered(opened(ruleset)))
    html = row(_helen_loses(ruleset))
    assert "Force a retest" in html and 'data-force-retest="7"' in html


def test_the_narrators_row_shows_calls_and_modifiers():
    state = answered(opened("ukm", defender=grady(health=HealthLevel.BRUISED)))
    state = rules.call_negative(state, side=C, name="Cowardly", now=NOW).state
    html = text(row(state))
    assert "Helen names the Negative Trait Cowardly: correct: Grady is one Trait down." in html
    assert "Grady: Cowardly: Negative Trait −1, Bruised −1" in html


# --- taps ------------------------------------------------------------------------------


def test_a_plain_challenge_costs_the_defender_two_taps():
    """Bid (one tap on a Trait), throw (one tap): nothing else is needed."""
    state = opened("met_classic")
    html = card(state, D)
    assert re.search(r'<button name="bid" value="Tough"', html)  # one tap sends the bid
    state = answered(state)
    html = card(state, D)
    assert re.search(r'<button name="throw" value="rock"', html)  # one tap sends the throw


def test_the_defenders_stated_action_and_weapon_reach_the_challenger():
    state = rules.respond(
        opened("ukm"), bids=["Tough"], stakes="I throw you out", weapon="Sword", now=NOW
    ).state
    html = text(card(state, C))
    assert "If Grady wins: “I throw you out”." in html and "Grady uses Sword." in html
    assert "Grady: Sword +2" not in html  # no Melee: the bonus does not count (seeds/004)
    assert "If you win: “I throw you out”." in text(card(state, D))


def test_an_unmatched_call_makes_the_callers_bid_safe_under_met_classic():
    bare = grady(
        traits=(
            TraitHolding("Tough", "physical", 1, trait_id=21),
            TraitHolding("Cowardly", "physical", 1, negative=True),
        )
    )
    state = answered(opened("met_classic", defender=bare))
    state = rules.call_negative(state, side=C, name="Cowardly", now=NOW).state
    assert "nothing left to add: your bid is safe and counts one more Trait" in text(card(state, C))
    assert "nothing left to add: Helen’s bid is safe" in text(card(state, D))
    assert "You: Cowardly: not matched +1" in text(card(state, C))


# --- static challenges and simple tests ---------------------------------------------------


@pytest.mark.parametrize("ruleset", PRESETS)
def test_a_static_challenge_asks_a_bid_then_offers_an_overbid_against_the_difficulty(ruleset):
    state = opened_static(ruleset)
    html = card(state, C)
    assert 'aria-label="Bid Quick"' in html and "challenge.relent" in actions(html)
    state = rules.bid(state, bids=["Quick"], now=NOW).state
    state = rules.throw(state, side=C, throw=ROCK, now=NOW).state
    assert state.stage is Stage.RETEST
    html = card(state, C)
    assert "Overbid:" in html and "Accept: you lose" in html
    assert "Waiting on Helen: may retest (" in text(row(state))


def test_a_simple_test_offers_only_throws():
    state = rules.open_simple(
        ruleset="met_classic", challenger=helen(), narrator_throw=ROCK, choose=None, now=NOW
    ).state
    assert actions(card(state, C)) == {"challenge.throw"}
    assert "Force a retest" not in row(state)


def test_a_rage_preemption_ends_the_challenge_without_a_narrators_void():
    state = rules.preempt(opened("met_classic"), gift="Razor Claws", now=NOW).state
    assert "Pre-empted: Grady spent Rage for a Gift; nothing is lost." in text(card(state, C))
    assert "Voided by a narrator" not in text(row(state))


def test_a_willpower_retest_that_fends_off_the_power_shows_the_immunity():
    state = opened("ukm", category=Category.MENTAL, bids=["Clever"], power="Dominate: Command")
    state = thrown(answered(state, "Calm"), PAPER, ROCK)
    state = rules.call_retest(state, side=D, kind="willpower", now=NOW).state
    state = thrown(state, ROCK, PAPER)
    assert state.outcome is rules.Outcome.DEFENDER_WINS and state.granted
    assert "You are immune to Helen’s Dominate: Command for 10 minutes (Willpower)." in text(
        card(state, D)
    )
    assert "Grady is immune to your Dominate: Command" in text(card(state, C))
    assert "Test 2: Willpower retest (Grady)" in text(card(state, C))

"""Rulesets as data: each rule point where the games differ is a policy field,
so a variant (``ukm``, ``bns``) adds values here rather than if-chains in the
engine. See RULES.md "Where the rulesets differ".
"""

from __future__ import annotations

from dataclasses import dataclass

from challenges.rules.core import Combatant, RulesError


@dataclass(frozen=True)
class Ruleset:
    """The policies of one ruleset.

    ``draw_on_equal_counts``: after a tie, equal declared counts make a draw
    in which both sides lose their bids (seeds/000 "Testing"); False is
    reserved for ``ukm``'s retest-until-someone-wins, not built yet.
    ``simple_test_tie_succeeds``: a tie in a simple test is a success
    (seeds/000 "Simple Tests").
    """

    name: str
    draw_on_equal_counts: bool
    simple_test_tie_succeeds: bool


MET_CLASSIC = Ruleset(
    name="met_classic",
    draw_on_equal_counts=True,
    simple_test_tie_succeeds=True,
)

RULESETS: dict[str, Ruleset] = {MET_CLASSIC.name: MET_CLASSIC}
"""Known rulesets by name (the chronicle's ``ruleset`` field)."""


def get_ruleset(name: str) -> Ruleset:
    """The ruleset called ``name``. Raises RulesError("Unknown ruleset ...")."""
    try:
        return RULESETS[name]
    except (KeyError, TypeError):
        raise RulesError(f"Unknown ruleset {name!r}.") from None


def bids_required(combatant: Combatant, ruleset: Ruleset | str) -> int:
    """How many Traits ``combatant`` must bid to enter or answer a challenge.

    Always 1 for now. This is the one place wound penalties will change
    (seeds/000 "Health": a Bruised or Wounded character bids two Traits).
    ``ruleset`` is a Ruleset or its name (RulesError if unknown).
    """
    if isinstance(ruleset, str):
        ruleset = get_ruleset(ruleset)
    return 1

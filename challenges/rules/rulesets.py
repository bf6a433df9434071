"""Rulesets as data: each rule point where the games differ is a policy field,
so a variant (``ukm``, ``bns``) adds values here rather than if-chains in the
engine. See RULES.md "Where the rulesets differ".
"""

from __future__ import annotations

from dataclasses import dataclass

from challenges.rules import options as met_options
from challenges.rules.core import Combatant, HealthLevel, RulesError
from challenges.rules.options import Bruised, EqualCounts, MetOptions, SimpleTie, Wounded


@dataclass(frozen=True)
class Ruleset:
    """The policies of one ruleset.

    ``options``: the MET rule options (challenges/rules/options.py), one per
    row of RULES.md "Where the rulesets differ". The engine reads two of them
    through the properties below.
    """

    name: str
    options: MetOptions = met_options.MET_CLASSIC

    @property
    def draw_on_equal_counts(self) -> bool:
        """After a tie, equal declared counts make a draw in which both sides
        lose their bids (seeds/000 "Testing"); False is ``ukm``'s
        retest until someone wins (seeds/004 "In The Case Of A Draw")."""
        return self.options.equal_counts is EqualCounts.DRAW

    @property
    def simple_test_tie_succeeds(self) -> bool:
        """A tie in a simple test is a success (seeds/000 "Simple Tests")."""
        return self.options.simple_test_tie is SimpleTie.SUCCEEDS


MET_CLASSIC = Ruleset(name="met_classic", options=met_options.MET_CLASSIC)
UKM = Ruleset(name="ukm", options=met_options.UKM)

RULESETS: dict[str, Ruleset] = {MET_CLASSIC.name: MET_CLASSIC, UKM.name: UKM}
"""Known rulesets by name (the chronicle's ``ruleset`` field)."""


def get_ruleset(name: str) -> Ruleset:
    """The ruleset called ``name``. Raises RulesError("Unknown ruleset ...")."""
    try:
        return RULESETS[name]
    except (KeyError, TypeError):
        raise RulesError(f"Unknown ruleset {name!r}.") from None


def bids_required(combatant: Combatant, ruleset: Ruleset | str) -> int:
    """How many Traits ``combatant`` must bid to enter or answer a challenge:
    2 when Bruised or Wounded (or worse) under ``met_classic`` (seeds/000
    "Health"), else 1 (``ukm`` takes a Trait off her count instead, seeds/004
    "Trait Categories"). ``ruleset`` is a Ruleset or its name (RulesError if
    unknown).
    """
    if isinstance(ruleset, str):
        ruleset = get_ruleset(ruleset)
    health = combatant.health
    if health == HealthLevel.BRUISED and ruleset.options.bruised is Bruised.BID_TWO:
        return 2
    if (
        health >= HealthLevel.WOUNDED
        and ruleset.options.wounded is Wounded.BID_TWO_LOSE_TIES_FREE_TEST
    ):
        return 2
    return 1

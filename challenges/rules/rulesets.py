"""Rulesets as data: each rule point where the games differ is a policy field,
so a variant (``ukm``, ``bns``) adds values here rather than if-chains in the
engine. See RULES.md "Where the rulesets differ".
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from challenges.rules import options as met_options
from challenges.rules.core import Combatant, HealthLevel, RulesError
from challenges.rules.options import Bruised, EqualCounts, MetOptions, SimpleTie, Wounded


class SheetKind(StrEnum):
    """What a character sheet of a ruleset is made of."""

    #: Adjective Traits held several times, bid and lost in challenges; Abilities
    #: rated for retests (seeds/000 "Traits"; seeds/004 "Trait Categories").
    TRAITS = "traits"
    #: Numeric Attributes (Physical, Social, Mental) and Skills added into test
    #: pools; nothing is bid or lost (seeds/002 "Common Test Pools").
    ATTRIBUTES = "attributes"
    #: Attributes and Skills rated in dots (1 to 5), Merits, Willpower,
    #: Health boxes, Defense, Initiative modifier, Speed, Size, Wisdom and
    #: armor; rolled as d10 dice pools, nothing bid or lost (seeds/003
    #: "Dice Pools", "Traits").
    DICE = "dice"


@dataclass(frozen=True)
class Ruleset:
    """The policies of one ruleset.

    ``label``: its name for people ("By Night Studios MET").
    ``options``: the MET rule options (challenges/rules/options.py), one per
    row of RULES.md "Where the rulesets differ". The engine reads two of them
    through the properties below. A ruleset whose sheet is not ``TRAITS``
    plays no MET challenge (``met_challenges`` is False): its ``options`` are
    met_classic's, read only by code that never reaches its characters' play
    (health clocks run on MET health levels, which its sheets never leave).
    ``sheet``: what its sheets are made of (:class:`SheetKind`); the web layer
    reads it through the flags below (``adjective_traits``, ``met_challenges``,
    ``test_pools``, ``combat_rounds``, ``dice_pools``), never through the
    ruleset's name.
    """

    name: str
    options: MetOptions = met_options.MET_CLASSIC
    sheet: SheetKind = SheetKind.TRAITS
    label: str = ""

    @property
    def adjective_traits(self) -> bool:
        """Sheets hold adjective Traits (and Negative Traits) that are bid and
        lost: the MET "Challenge someone" form, bids, overbids, mob scenes,
        static challenges against a Trait count (seeds/000 "Rules")."""
        return self.sheet is SheetKind.TRAITS

    @property
    def met_challenges(self) -> bool:
        """The MET challenge engine (``challenges.rules.engine``, ``mob``)
        plays this ruleset: opposed and static challenges, simple tests and
        mob scenes with Trait bids. False for ``bns``, whose challenges are
        settled by test pools (seeds/002 "Tests and Challenges")."""
        return self.adjective_traits

    @property
    def test_pools(self) -> bool:
        """Sheets rate Attributes and Skills that add up to test pools
        (seeds/002 "Common Test Pools"), with Willpower current and permanent,
        a wound track and, for Garou, a form."""
        return self.sheet is SheetKind.ATTRIBUTES

    @property
    def dice_pools(self) -> bool:
        """Sheets rate Attributes and Skills in dots, with specialties, Merits,
        Willpower, Health boxes, Defense, Initiative modifier, Speed, Size,
        Wisdom and armor, rolled as d10 dice pools (seeds/003 "Dice Pools"):
        the Storytelling System. No Trait is bid, no test pool added up."""
        return self.sheet is SheetKind.DICE

    @property
    def combat_rounds(self) -> bool:
        """Combats run in rounds by initiative, tracked by
        ``challenges.rules.bns_combat`` (seeds/002 "Resolving Combat"): the
        dashboard offers to start one and phones show whose initiative it is."""
        return self.test_pools

    @property
    def skills_label(self) -> str:
        """What sheets call Abilities: "Skills" under test pools (seeds/002)
        and dice pools (seeds/003 "Skills"), else "Abilities" (seeds/000)."""
        return "Skills" if self.test_pools or self.dice_pools else "Abilities"

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


MET_CLASSIC = Ruleset(
    name="met_classic", options=met_options.MET_CLASSIC, label="Mind's Eye Theatre (classic)"
)
UKM = Ruleset(name="ukm", options=met_options.UKM, label="UK Masquerade house rules (MET)")
BNS = Ruleset(name="bns", sheet=SheetKind.ATTRIBUTES, label="By Night Studios MET")
"""seeds/002: Attributes and Skills in test pools; its rules engine is
``challenges.rules.bns`` (and ``bns_combat``), not the MET one."""

STORYTELLING = Ruleset(
    name="storytelling", sheet=SheetKind.DICE, label="Storytelling System (Mage: The Awakening)"
)
"""seeds/003: d10 dice pools of Attribute plus Skill, 10-again, chance dice and
the health track; its rules engine is ``challenges.rules.storytelling``."""

RULESETS: dict[str, Ruleset] = {r.name: r for r in (MET_CLASSIC, UKM, BNS, STORYTELLING)}
"""Known rulesets by name (the chronicle's ``ruleset`` field)."""


def get_ruleset(name: str) -> Ruleset:
    """The ruleset called ``name``. Raises RulesError("Unknown ruleset ...")."""
    try:
        return RULESETS[name]
    except (KeyError, TypeError):
        raise RulesError(f"Unknown ruleset {name!r}.") from None


def met_ruleset(name: str) -> Ruleset:
    """The ruleset called ``name``, which must play MET challenges (Trait
    bids). Raises RulesError for an unknown ruleset, and for one whose sheets
    have no Traits to bid (``bns``: "This chronicle plays By Night Studios
    MET: its sheets have no Traits to bid.")."""
    rules = get_ruleset(name)
    if not rules.met_challenges:
        raise RulesError(
            f"This chronicle plays {rules.label or rules.name}: its sheets have no Traits to bid."
        )
    return rules


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

"""Narrator's rules engine: Mind's Eye Theatre challenges as pure functions.

No Django here (tests/rules/test_boundary.py proves it). Types live in
``core``, ruleset policies in ``rulesets`` (MET rule options in
``options``), transitions in ``engine``; every public name is re-exported
here. Rule sources: seeds/000 (MET *The
Apocalypse*, "Rules") and /work/shared/RULES.md.
"""

from challenges.rules.core import (
    Category,
    ChallengeState,
    Combatant,
    Event,
    HealthLevel,
    Kind,
    Loss,
    Outcome,
    RulesError,
    Side,
    Stage,
    TestRecord,
    Throw,
    TraitHolding,
    Transition,
    beats,
)
from challenges.rules.engine import (
    Chooser,
    bid,
    declare,
    open_opposed,
    open_simple,
    open_static,
    respond,
    throw,
    void,
)
from challenges.rules.options import PRESETS, MetOptions, changed_options
from challenges.rules.rulesets import RULESETS, Ruleset, bids_required, get_ruleset

__all__ = [
    "PRESETS",
    "RULESETS",
    "Category",
    "ChallengeState",
    "Chooser",
    "Combatant",
    "Event",
    "HealthLevel",
    "Kind",
    "Loss",
    "MetOptions",
    "Outcome",
    "Ruleset",
    "RulesError",
    "Side",
    "Stage",
    "TestRecord",
    "Throw",
    "TraitHolding",
    "Transition",
    "beats",
    "bid",
    "bids_required",
    "changed_options",
    "declare",
    "get_ruleset",
    "open_opposed",
    "open_simple",
    "open_static",
    "respond",
    "throw",
    "void",
]

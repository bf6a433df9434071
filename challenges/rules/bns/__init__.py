"""The By Night Studios ruleset (``bns``, seeds/002 "By Night Studios MET: WtA
Combat Summary"): numeric test pools, exceptional successes, Willpower
retests and combat maneuvers, as pure functions (no Django).

Callers write ``from challenges.rules import bns`` (nothing here is
re-exported from ``challenges.rules``: ``bns.throw`` is not the MET
``throw``). Modules: ``sheet`` (:class:`Fighter`, attacks, defences,
:func:`test_pool`), ``maneuvers`` (the table :data:`MANEUVERS`),
``options`` (:class:`BnsOptions`, :data:`BNS`), ``state``
(:class:`BnsChallengeState`), ``engine`` (the moves and
:func:`legal_moves`), ``npc`` (auto-answering fighters). docs/rules.md
"bns: test pools, maneuvers, the opposed challenge" lists the moves.
"""

from challenges.rules.bns.engine import (
    DAMAGE,
    ESCAPE_ATTACKS,
    BnsMoves,
    BnsTransition,
    accept,
    answer,
    attack_pool,
    damage_of,
    defence_pool,
    effects_of,
    is_exceptional,
    legal_moves,
    maneuver_offers,
    open_challenge,
    pool_modifiers,
    retest,
    settle,
    test_winner,
    throw,
    void,
)
from challenges.rules.bns.maneuvers import (
    MANEUVERS,
    MAX_MANEUVERS,
    UNCONSCIOUS_SECONDS,
    Assist,
    Effect,
    Maneuver,
    ManeuverRule,
    ManeuverUse,
    Payment,
    check_maneuvers,
    parse_maneuver,
    stamina_resists,
)
from challenges.rules.bns.npc import npc_move, npc_moves
from challenges.rules.bns.options import BNS, BnsOptions, ExceptionalOrder
from challenges.rules.bns.sheet import (
    DEFENCE_OF,
    AttackKind,
    Defence,
    Fighter,
    PhysicalFocus,
    WoundTrack,
    attack_skill,
    lacking_skill,
    test_pool,
)
from challenges.rules.bns.state import BnsChallengeState, BnsStage, BnsTest, Inflicted, Result
from challenges.rules.core import Event, RulesError, Side, Throw

__all__ = [
    "BNS",
    "DAMAGE",
    "DEFENCE_OF",
    "ESCAPE_ATTACKS",
    "MANEUVERS",
    "MAX_MANEUVERS",
    "UNCONSCIOUS_SECONDS",
    "Assist",
    "AttackKind",
    "BnsChallengeState",
    "BnsMoves",
    "BnsOptions",
    "BnsStage",
    "BnsTest",
    "BnsTransition",
    "Defence",
    "Effect",
    "Event",
    "ExceptionalOrder",
    "Fighter",
    "Inflicted",
    "Maneuver",
    "ManeuverRule",
    "ManeuverUse",
    "Payment",
    "PhysicalFocus",
    "Result",
    "RulesError",
    "Side",
    "Throw",
    "WoundTrack",
    "accept",
    "answer",
    "attack_pool",
    "attack_skill",
    "check_maneuvers",
    "damage_of",
    "defence_pool",
    "effects_of",
    "is_exceptional",
    "lacking_skill",
    "legal_moves",
    "maneuver_offers",
    "npc_move",
    "npc_moves",
    "open_challenge",
    "parse_maneuver",
    "pool_modifiers",
    "retest",
    "settle",
    "stamina_resists",
    "test_pool",
    "test_winner",
    "throw",
    "void",
]

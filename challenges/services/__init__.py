"""The only code that writes challenges: permission → rules engine → atomic save
→ broadcast on commit.

Every move is one transaction that (1) claims the client's message id, so a
repeat is "already done" (a unique constraint enforces it), (2) locks the
session against a time out, the challenge row against a concurrent move, and
its characters' rows against a concurrent bid of the same Trait copy, (3)
asks the rules engine for the transition, (4) saves the new state, its test
rows, its events, lost Traits and wounds, and (5) broadcasts ids after commit.
A refused move raises and rolls everything back, message id included.

One module per flow, each a set of ``<entity>_<action>`` functions:
:mod:`~challenges.services.opposed` (a player's challenge: open, bid, throw,
declare), :mod:`~challenges.services.retests` (between bids and result: relent,
Negative Traits, added bids, Blood, Rage, retests and answers, accept),
:mod:`~challenges.services.static` (a narrator's static challenge
and simple test; a prepared static opened from its QR code),
:mod:`~challenges.services.mob` (mob scenes),
:mod:`~challenges.services.bns` (an opposed challenge of test pools, issue 12),
:mod:`~challenges.services.combat` (``bns`` combat rounds),
:mod:`~challenges.services.rolls` (storytelling rolls, issue 13),
:mod:`~challenges.services.story_combat` (Storytelling fights, the health track),
:mod:`~challenges.services.rulings` (void, settle, forced retest, a Trait
given back or taken, a call for a narrator, Time out, Resume),
:mod:`~challenges.services.session` (start, end, who is here) and
:mod:`~challenges.services.traits` (Traits at risk, for sheet edits). The
machinery they share is private: ``_core`` (errors, message ids, locks,
checks), ``_reads`` (a move's plain-SQL reads, ``combatants``) and ``_writes``
(one move under its locks, ``_save``). Import the public names from here.
"""

from challenges.services import clocks
from challenges.services._core import MAX_BIDS, MAX_STAKES, ActionRefused, AlreadyDone
from challenges.services._reads import (
    READS_ALL,
    READS_HELD,
    READS_NOTHING,
    READS_POOLS,
    OpenBid,
    RiskKey,
    combatant,
    combatants,
    open_bids,
)
from challenges.services.bns import (
    bns_accept,
    bns_answer,
    bns_npc_due,
    bns_open,
    bns_retest,
    bns_settle,
    bns_throw,
    bns_void,
    fighter_of,
)
from challenges.services.combat import (
    combat_act,
    combat_add,
    combat_advance,
    combat_assist,
    combat_check_challenge,
    combat_end,
    combat_fighter,
    combat_hold,
    combat_note_challenge,
    combat_remove,
    combat_reorder,
    combat_set_rage,
    combat_start,
)
from challenges.services.mob import (
    mob_bid,
    mob_choose,
    mob_close_choosing,
    mob_hurt,
    mob_open,
    mob_pick_leader,
    mob_void,
)
from challenges.services.npcs import (
    challenge_autoplay,
    npc_answer_due,
    npc_answer_session_due,
    npc_set,
    npc_sides,
)
from challenges.services.opposed import (
    challenge_bid,
    challenge_declare,
    challenge_open,
    challenge_throw,
)
from challenges.services.retests import (
    challenge_accept,
    challenge_add_bids,
    challenge_answer,
    challenge_blood,
    challenge_negative,
    challenge_preempt,
    challenge_relent,
    challenge_retest,
)

# issue 13: storytelling rolls (called, NPC, open, contested, extended)
from challenges.services.rolls import (
    roll_call,
    roll_contest,
    roll_extended,
    roll_extended_roll,
    roll_make,
    roll_open,
    roll_resist,
    roll_spec,
)
from challenges.services.rulings import (
    CALL_WINDOW_SECONDS,
    challenge_call_narrator,
    challenge_dismiss_call,
    challenge_force_retest,
    challenge_settle,
    challenge_trait_ruling,
    challenge_void,
    session_resume,
    session_time_out,
)
from challenges.services.session import (
    SESSION_ENDED_REASON,
    SessionEnding,
    presence_set,
    session_end,
    session_ending,
    session_start,
)
from challenges.services.static import prepared_static_open, simple_test_open, static_open
from challenges.services.story_combat import (
    fight_act,
    fight_add,
    fight_attack,
    fight_dodge,
    fight_end,
    fight_end_turn,
    fight_fighter,
    fight_guard,
    fight_remove,
    fight_start,
    fight_yield,
    heal_next_in,
    story_heal_apply,
    story_heal_tick,
    track_heal,
    track_mark,
)
from challenges.services.traits import trait_edit_refusal, trait_open_bids

__all__ = [
    "clocks",
    "CALL_WINDOW_SECONDS",
    "MAX_BIDS",
    "MAX_STAKES",
    "READS_ALL",
    "READS_HELD",
    "READS_NOTHING",
    "READS_POOLS",
    "SESSION_ENDED_REASON",
    "ActionRefused",
    "SessionEnding",
    "AlreadyDone",
    "OpenBid",
    "RiskKey",
    "bns_accept",
    "bns_answer",
    "bns_npc_due",
    "bns_open",
    "bns_retest",
    "bns_settle",
    "bns_throw",
    "bns_void",
    "fighter_of",
    "challenge_accept",
    "challenge_autoplay",
    "challenge_add_bids",
    "challenge_answer",
    "challenge_bid",
    "challenge_blood",
    "challenge_call_narrator",
    "challenge_declare",
    "challenge_dismiss_call",
    "challenge_force_retest",
    "challenge_negative",
    "challenge_open",
    "challenge_preempt",
    "challenge_relent",
    "challenge_retest",
    "challenge_settle",
    "challenge_throw",
    "challenge_trait_ruling",
    "challenge_void",
    "combatant",
    "combatants",
    "npc_answer_due",
    "npc_answer_session_due",
    "npc_set",
    "npc_sides",
    "combat_act",
    "combat_add",
    "combat_advance",
    "combat_assist",
    "combat_check_challenge",
    "combat_end",
    "combat_fighter",
    "combat_hold",
    "combat_note_challenge",
    "combat_remove",
    "combat_reorder",
    "combat_set_rage",
    "combat_start",
    "mob_bid",
    "mob_choose",
    "mob_close_choosing",
    "mob_hurt",
    "mob_open",
    "mob_pick_leader",
    "mob_void",
    "open_bids",
    "prepared_static_open",
    "presence_set",
    "session_end",
    "session_ending",
    "session_resume",
    "session_start",
    "session_time_out",
    "simple_test_open",
    "static_open",
    "trait_edit_refusal",
    "trait_open_bids",
    # issue 13: storytelling rolls
    "roll_call",
    "roll_contest",
    "roll_extended",
    "roll_extended_roll",
    "roll_make",
    "roll_open",
    "roll_resist",
    "roll_spec",
    # issue 13: Storytelling fights
    "fight_act",
    "fight_add",
    "fight_attack",
    "fight_dodge",
    "fight_end",
    "fight_end_turn",
    "fight_fighter",
    "fight_guard",
    "fight_remove",
    "fight_start",
    "fight_yield",
    "heal_next_in",
    "story_heal_apply",
    "story_heal_tick",
    "track_heal",
    "track_mark",
]

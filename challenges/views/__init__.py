"""Pages and the view-models shared by HTTP views and websocket consumers.

Each viewer gets her own rendering: ``ChallengeView`` shows a throw to the other
side (or a narrator) only once both throws of that test are in.

One module per screen, its view-models beside the templates it renders (each
module's docstring names them): :mod:`~challenges.views.phone` (a player's
phone), :mod:`~challenges.views.dashboard` (a narrator's dashboard and a
character's panel), :mod:`~challenges.views.shared` (``ChallengeView`` and
what both screens and the admin share), :mod:`~challenges.views.seats` (who
may connect where) and :mod:`~challenges.views.pages` (the HTTP views).
``challenges.urls``, the consumers and the admin import them from here.
"""

from challenges.views.combat import CombatView, combat_rounds, combat_view, combat_views
from challenges.views.dashboard import (
    DASHBOARD_LIMIT,
    ON_ROSTER,
    LostCopy,
    Placement,
    RosterRow,
    character_panel_context,
    dashboard_challenges,
    dashboard_combats,
    dashboard_context,
    dashboard_fights,
    dashboard_place,
    dashboard_row_context,
    roster_row_context,
    roster_rows_context,
)
from challenges.views.mob import MobView, mob_view, mob_views, phone_mobs
from challenges.views.pages import (
    dashboard_url,
    home,
    narrate,
    narrate_character,
    narrate_index,
    opponents,
    play,
)
from challenges.views.phone import (
    OPPONENT_CHIPS_AT_MOST,
    OPPONENT_QUERY_MAX,
    OPPONENT_RESULTS,
    RECENT_RESOLVED,
    opponent_choice,
    phone_cards_shown,
    phone_challenge,
    phone_combats,
    play_context,
    present_opponents,
    sheet_oob,
)
from challenges.views.rolls import (
    RollCard,
    dashboard_rolls,
    phone_rolls,
    roll_card,
    roll_choices,
)
from challenges.views.seats import character_in_session, narrated_session, player_seat
from challenges.views.shared import (
    HIDDEN,
    RESULT_COLLAPSE_SECONDS,
    ChallengeView,
    SharedRenders,
    TestView,
    bdi,
    challenge_view,
    shared_renders,
    shown_throws,
    state_shown,
)
from challenges.views.story_combat import (
    ATTACK_KINDS,
    DAMAGE_TYPES,
    FightView,
    dice_pools,
    fight_views,
    phone_fights,
)

__all__ = [
    "RollCard",
    "dashboard_rolls",
    "phone_rolls",
    "roll_card",
    "roll_choices",
    "ATTACK_KINDS",
    "DAMAGE_TYPES",
    "FightView",
    "dashboard_fights",
    "dice_pools",
    "fight_views",
    "phone_fights",
    "DASHBOARD_LIMIT",
    "HIDDEN",
    "ON_ROSTER",
    "OPPONENT_CHIPS_AT_MOST",
    "OPPONENT_QUERY_MAX",
    "OPPONENT_RESULTS",
    "RECENT_RESOLVED",
    "RESULT_COLLAPSE_SECONDS",
    "ChallengeView",
    "CombatView",
    "LostCopy",
    "MobView",
    "RosterRow",
    "SharedRenders",
    "TestView",
    "bdi",
    "challenge_view",
    "combat_rounds",
    "combat_view",
    "combat_views",
    "character_in_session",
    "character_panel_context",
    "dashboard_challenges",
    "dashboard_combats",
    "dashboard_context",
    "Placement",
    "dashboard_place",
    "dashboard_row_context",
    "dashboard_url",
    "home",
    "mob_view",
    "mob_views",
    "narrate",
    "narrate_character",
    "narrate_index",
    "narrated_session",
    "opponent_choice",
    "opponents",
    "phone_cards_shown",
    "phone_challenge",
    "phone_combats",
    "phone_mobs",
    "play",
    "play_context",
    "player_seat",
    "present_opponents",
    "roster_row_context",
    "roster_rows_context",
    "shared_renders",
    "sheet_oob",
    "shown_throws",
    "state_shown",
]

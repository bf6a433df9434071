"""Read-only admin for challenges and their history.

Only ``challenges.services`` writes these rows: it runs the rules engine, saves
atomically and tells every phone. An edit made here would do none of that, so
the admin shows challenges, tests, lost Traits and the append-only event
history but never adds, changes or deletes them. Rulings go through the
narrators' dashboard, where they are logged. A throw is shown here as on the
dashboard: only once both throws of its test are in
(``challenges.views.shown_throws``), in the state and in the test rows alike,
so an admin page open beside play leaks no throw. A staff narrator who is not a
superuser sees only her chronicles' rows; client action ids only superusers.
"""

import json

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from challenges.models import (
    Challenge,
    ClientAction,
    Combat,
    DiceRoll,
    Event,
    PreparedStatic,
    Test,
    TraitLoss,
)
from challenges.rules import TestRecord, Throw
from challenges.views import HIDDEN, shown_throws, state_shown
from characters.admin_scope import NarratedOnlyAdmin, RelatedOnly
from characters.models import Chronicle


class ReadOnlyMixin:
    """No add, change or delete permission; view permission as usual."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class TestInline(ReadOnlyMixin, admin.TabularInline):
    """Each test of the challenge: both throws, declared counts, the winner."""

    model = Test
    fields = [
        "number",
        "challenger_throws",
        "defender_throws",
        "challenger_declared",
        "defender_declared",
        "winner",
        "tie",
    ]
    readonly_fields = fields
    extra = 0

    @staticmethod
    def _shown(test: Test, index: int) -> str:
        record = TestRecord(
            challenger_throw=Throw(test.challenger_throw) if test.challenger_throw else None,
            defender_throw=Throw(test.defender_throw) if test.defender_throw else None,
        )
        thrown = (test.challenger_throw, test.defender_throw)[index]
        return shown_throws(record)[index] or (HIDDEN if thrown else "-")

    @admin.display(description="challenger throw")
    def challenger_throws(self, test: Test) -> str:
        return self._shown(test, 0)

    @admin.display(description="defender throw")
    def defender_throws(self, test: Test) -> str:
        return self._shown(test, 1)


class EventInline(ReadOnlyMixin, admin.TabularInline):
    """The challenge's history, oldest first."""

    model = Event
    fk_name = "challenge"
    fields = ["created_at", "kind", "actor", "data"]
    readonly_fields = fields
    extra = 0


class LossInline(ReadOnlyMixin, admin.TabularInline):
    """Traits lost in the challenge."""

    model = TraitLoss
    fields = ["character", "trait", "created_at"]
    readonly_fields = fields
    extra = 0


@admin.register(Challenge)
class ChallengeAdmin(NarratedOnlyAdmin, ReadOnlyMixin, admin.ModelAdmin):
    """Challenges by session, stage and outcome, with their tests and history."""

    chronicle_path = "session__chronicle"
    list_display = [
        "__str__",
        "session",
        "kind",
        "category",
        "stage",
        "outcome",
        "is_attack",
        "created_at",
    ]
    list_filter = ["kind", "stage", "outcome", "category", ("session__chronicle", RelatedOnly)]
    list_select_related = ["session__chronicle", "challenger", "defender"]
    search_fields = ["challenger__name", "defender__name", "stakes"]
    date_hierarchy = "created_at"
    inlines = [TestInline, LossInline, EventInline]
    exclude = ["state"]
    readonly_fields = ["shown_state"]

    @admin.display(description="state (throws hidden until revealed)")
    def shown_state(self, challenge: Challenge) -> str:
        text = json.dumps(state_shown(challenge.state or {}), indent=2, ensure_ascii=False)
        return format_html('<pre class="state">{}</pre>', text)


@admin.register(TraitLoss)
class TraitLossAdmin(NarratedOnlyAdmin, ReadOnlyMixin, admin.ModelAdmin):
    """Traits lost, per session: a new session restores them all."""

    chronicle_path = "session__chronicle"
    list_display = ["character", "trait", "session", "challenge", "created_at"]
    list_filter = [("session__chronicle", RelatedOnly), ("session", RelatedOnly)]
    list_select_related = ["character", "trait", "session__chronicle", "challenge"]
    search_fields = ["character__name", "trait__name"]


@admin.register(Event)
class EventAdmin(NarratedOnlyAdmin, ReadOnlyMixin, admin.ModelAdmin):
    """The append-only history of every session."""

    chronicle_path = "session__chronicle"
    list_display = ["id", "created_at", "session", "challenge", "kind", "actor"]
    list_filter = ["kind", ("session__chronicle", RelatedOnly), ("session", RelatedOnly)]
    list_select_related = ["session__chronicle", "challenge", "actor"]
    search_fields = ["kind"]


@admin.register(Combat)
class CombatAdmin(NarratedOnlyAdmin, ReadOnlyMixin, admin.ModelAdmin):
    """Issue 12: ``bns`` combats, read only (a narrator runs them from the
    dashboard; an edit here would tell no phone). The state is the rules
    engine's, shown as JSON: the order, the round, the challenges made."""

    chronicle_path = "session__chronicle"
    list_display = ["__str__", "session", "narrator", "created_at", "ended_at"]
    list_filter = [("session__chronicle", RelatedOnly)]
    list_select_related = ["session__chronicle", "narrator"]
    search_fields = ["participants__name"]
    exclude = ["state"]
    readonly_fields = ["shown_state"]

    @admin.display(description="state")
    def shown_state(self, combat: Combat) -> str:
        text = json.dumps(combat.state or {}, indent=2, ensure_ascii=False)
        return format_html('<pre class="state">{}</pre>', text)


@admin.register(DiceRoll)
class DiceRollAdmin(NarratedOnlyAdmin, ReadOnlyMixin, admin.ModelAdmin):
    """Issue 13: the log of storytelling rolls, read only (the server rolled
    them; the dashboard calls for them): the pool, every die, the result."""

    chronicle_path = "session__chronicle"
    list_display = ["__str__", "session", "character", "opponent", "created_at", "rolled_at"]
    list_filter = ["kind", ("session__chronicle", RelatedOnly)]
    list_select_related = ["session__chronicle", "character", "opponent"]
    search_fields = ["label", "character__name", "opponent__name"]


@admin.register(ClientAction)
class ClientActionAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """Client message ids already applied (for answering repeats)."""

    list_display = ["created_at", "user", "action", "msg_id"]
    list_filter = ["action"]
    list_select_related = ["user"]
    search_fields = ["user__username", "msg_id"]

    def has_view_permission(self, request, obj=None) -> bool:
        # Ids of every player's moves, across chronicles: superusers only.
        return request.user.is_superuser


# --- issue 11, statics ------------------------------------------------------------


class PreparedStaticInline(NarratedOnlyAdmin, admin.StackedInline):
    """A chronicle's prepared statics, edited on the chronicle's page."""

    model = PreparedStatic
    chronicle_path = "chronicle"
    extra = 0
    fields = [
        ("name", "category", "difficulty", "active"),
        "hint",
        "reveal",
        ("may_overbid", "may_retest"),
        ("available_from", "available_until", "session"),
        "qr_link",
    ]
    readonly_fields = ["qr_link"]

    @admin.display(description="QR link")
    def qr_link(self, static: PreparedStatic) -> str:
        if static.pk is None:
            return "—"
        path = reverse("static_scan", args=[static.token])
        return format_html('<a href="{}">{}</a>', path, path)


@admin.register(PreparedStatic)
class PreparedStaticAdmin(NarratedOnlyAdmin, admin.ModelAdmin):
    """Prepared statics (QR codes on objects): every chronicle's, editable."""

    chronicle_path = "chronicle"
    list_display = ["name", "chronicle", "category", "difficulty", "active", "session"]
    list_filter = ["active", "category", ("chronicle", RelatedOnly)]
    search_fields = ["name", "hint"]
    readonly_fields = ["token"]


def _with_statics_inline() -> None:
    """Add the prepared statics to the chronicle's admin page (appended, so
    ``characters.admin`` keeps its own inlines)."""
    chronicle_admin = admin.site._registry.get(Chronicle)
    if chronicle_admin is not None and PreparedStaticInline not in chronicle_admin.inlines:
        chronicle_admin.inlines = [*chronicle_admin.inlines, PreparedStaticInline]


_with_statics_inline()

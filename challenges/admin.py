"""Read-only admin for challenges and their history.

Only ``challenges.services`` writes these rows: it runs the rules engine, saves
atomically and tells every phone. An edit made here would do none of that, so
the admin shows challenges, tests, lost Traits and the append-only event
history but never adds, changes or deletes them. Rulings go through the
narrators' dashboard, where they are logged. A staff narrator who is not a
superuser sees only her chronicles' rows; client action ids only superusers.
"""

from django.contrib import admin

from challenges.models import Challenge, ClientAction, Event, Test, TraitLoss
from characters.admin_scope import NarratedOnlyAdmin, RelatedOnly


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
        "challenger_throw",
        "defender_throw",
        "challenger_declared",
        "defender_declared",
        "winner",
        "tie",
    ]
    readonly_fields = fields
    extra = 0


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

"""Admin scoping: a narrator who is staff but not a superuser sees and edits only
the objects of chronicles she narrates.

Model permissions (view/change/add) still decide *what kind* of object she may
touch; this decides *which ones*: change lists, change pages (another
chronicle's object is "not found"), list filters and the choices of every
chronicle, session, character and presence drop-down. Superusers see everything.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Model, QuerySet

from characters.models import Character, Chronicle, GameSession, Presence

# The lookup from each scoped model to its chronicle.
CHRONICLE_PATHS: dict[type[Model], str] = {
    Chronicle: "",
    GameSession: "chronicle",
    Character: "chronicle",
    Presence: "session__chronicle",
}


def narrated(queryset: QuerySet, user, chronicle_path: str) -> QuerySet:
    """``queryset`` cut to the objects of chronicles ``user`` narrates
    (all of them for a superuser). ``chronicle_path``: lookup to the Chronicle,
    "" for chronicles themselves."""
    if user.is_superuser:
        return queryset
    lookup = f"{chronicle_path}__narrators" if chronicle_path else "narrators"
    # A subquery, not a join: the change lists annotate counts a join would multiply.
    mine = queryset.model._default_manager.filter(**{lookup: user}).values("pk")
    return queryset.filter(pk__in=mine)


class NarratedOnlyAdmin:
    """Mixin for a ModelAdmin (or inline): see ``chronicle_path`` objects only in
    chronicles the user narrates; drop-downs of scoped models are cut the same way."""

    chronicle_path: str = "chronicle"

    def get_queryset(self, request):
        return narrated(super().get_queryset(request), request.user, self.chronicle_path)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        model = db_field.related_model
        if model in CHRONICLE_PATHS and not request.user.is_superuser:
            kwargs["queryset"] = narrated(
                model._default_manager.all(), request.user, CHRONICLE_PATHS[model]
            )
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


# List filters over a relation list only what the change list holds.
RelatedOnly = admin.RelatedOnlyFieldListFilter

"""``{% sheet_category cat %}``: one category of a Trait sheet
(``challenges/_sheet_category.html``), rendered once per what it shows in
this process (``views.shared_renders``). A phone's sheet is sent again with
each card whose move changed her Traits at risk, and such a move changes one
category: a sheet of 16 Traits costs ~0.4 ms to render whole (issue 14)."""

from __future__ import annotations

from django import template
from django.template.loader import render_to_string
from django.utils.safestring import SafeString

from challenges.views.shared import shared_renders
from characters.services import CategoryLines

register = template.Library()


@register.simple_tag
def sheet_category(cat: CategoryLines) -> SafeString:
    """``cat`` rendered, kept under its category and its Trait lines (frozen
    dataclasses compared by value: every field the template reads)."""
    return shared_renders.get(
        ("sheet_category", cat.category, tuple(cat.traits)),
        lambda: render_to_string("challenges/_sheet_category.html", {"cat": cat}),
    )

"""``{{ n|dice }}``: a count of dice in words ("1 die", "3 dice"), as
:func:`challenges.words.dice`."""

from __future__ import annotations

from django import template

from challenges import words

register = template.Library()
register.filter("dice", words.dice)

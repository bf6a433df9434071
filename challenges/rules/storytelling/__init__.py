"""The Storytelling System (``storytelling``, seeds/003 "Game Rules"): d10
dice pools rolled by the server, 10-again, chance dice, contested and
extended actions, combat turns with Defense, and the health track, as pure
functions (no Django).

Callers write ``from challenges.rules import storytelling`` (nothing here is
re-exported from ``challenges.rules``). Modules: ``traits`` (the names of
Attributes and Skills and their categories, shared by the engine and the
sheets).
"""

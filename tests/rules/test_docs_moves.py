"""docs/rules.md "The engine's moves" stays true: one row per move of the
engine, naming each keyword argument the move takes."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from challenges.rules import engine

DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
MOVES = [
    "open_opposed",
    "respond",
    "relent",
    "preempt",
    "call_negative",
    "add_bids",
    "spend_blood",
    "throw",
    "declare",
    "call_retest",
    "answer_retest",
    "accept",
    "narrator_retest",
    "void",
    "settle",
    "open_static",
    "bid",
    "open_simple",
]


def test_the_list_of_moves_is_every_public_function_of_the_engine() -> None:
    public = {
        name
        for name, f in inspect.getmembers(engine, inspect.isfunction)
        if not name.startswith("_") and f.__module__ == engine.__name__
    }
    assert public == set(MOVES)


@pytest.mark.parametrize("move", MOVES)
def test_docs_list_each_move_with_its_arguments(move: str) -> None:
    section = DOCS.read_text().split("## The engine's moves", 1)[1]
    row = next(line for line in section.splitlines() if line.startswith(f"| `{move}("))
    documented = row.split("(", 1)[1].split(")", 1)[0].replace(" ", "").split(",")
    params = inspect.signature(getattr(engine, move)).parameters
    wanted = [p for p in params if p not in ("state", "now", "choose")]
    if move in ("open_static", "open_simple"):
        wanted.append("choose")  # the narrator's throw is drawn with it
    assert sorted(d for d in documented if d) == sorted(wanted)
    assert row.count("|") == 5
    assert "seeds/" in row.rsplit("|", 2)[1] or "RULES.md" in row.rsplit("|", 2)[1]

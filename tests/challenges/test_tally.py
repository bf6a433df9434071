"""``heartbeat.Tally``: a dashboard's stamp parts kept up to date as rows
change (issue 14) equal a full recount after any sequence of changes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from challenges import heartbeat

ENTRIES = st.tuples(
    st.integers(min_value=-1, max_value=6),
    st.integers(min_value=0, max_value=40),
    st.integers(min_value=0, max_value=1),
)
IDS = st.integers(min_value=1, max_value=30)
CHANGES = st.lists(
    st.one_of(st.tuples(st.just("set"), IDS, ENTRIES), st.tuples(st.just("pop"), IDS)),
    max_size=80,
)


@given(start=st.dictionaries(IDS, ENTRIES, max_size=20), changes=CHANGES)
def test_roster_totals_equal_a_recount_after_any_changes(start, changes):
    tally = heartbeat.Tally(3, start)
    rows = dict(start)
    for change in changes:
        if change[0] == "set":
            tally[change[1]] = rows[change[1]] = change[2]
        else:
            assert tally.pop(change[1]) == rows.pop(change[1], None)
        assert heartbeat.roster_tally_part(tally) == heartbeat.roster_part(rows)
        assert len(tally) == len(rows) and (change[1] in tally) == (change[1] in rows)


@given(
    start=st.dictionaries(IDS, st.integers(min_value=1, max_value=99), max_size=20),
    changes=st.lists(
        st.one_of(
            st.tuples(st.just("set"), IDS, st.integers(min_value=1, max_value=99)),
            st.tuples(st.just("pop"), IDS),
        ),
        max_size=80,
    ),
)
def test_challenge_totals_equal_a_recount_after_any_changes(start, changes):
    tally = heartbeat.Tally(1, {pk: (v,) for pk, v in start.items()})
    versions = dict(start)
    for change in changes:
        if change[0] == "set":
            versions[change[1]] = change[2]
            tally[change[1]] = (change[2],)
        else:
            versions.pop(change[1], None)
            tally.pop(change[1])
        assert heartbeat.challenges_tally_part(tally) == heartbeat.aggregate(versions)


def test_an_entry_of_another_width_is_refused():
    with pytest.raises(ValueError, match="an entry of 2 integers in a tally of 3"):
        heartbeat.Tally(3)[1] = (1, 2)

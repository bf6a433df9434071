"""What twelve dashboards cost the worker per challenge (issue 14), measured
in-process through the real router: two phones play ``CHALLENGES`` challenges
(open, bid, both throw), first with no dashboard, then with ``DASHBOARDS``
dashboards, each waited on until it shows every result. The figures
(``time.process_time``: this process's CPU, the test client included on both
sides) are printed, not asserted: machines differ. What is asserted is that
every dashboard ends with the stamp a fresh one would carry. Run it with
``NARRATOR_MEASURE=1 pytest tests/challenges/test_dashboard_cost.py -s``.
"""

from __future__ import annotations

import os
import time

import pytest
from channels.db import database_sync_to_async

from challenges.models import Challenge
from tests.challenges.wsutil import act_ok, connect, expect
from tests.factories import crowded_session, make_character, make_user
from tests.faults.phones import Phone, current_dashboard_stamp

pytestmark = pytest.mark.django_db(transaction=True)

CHALLENGES = 12
DASHBOARDS = 12
ROSTER = 300  # characters present besides the two who play


@database_sync_to_async
def _newest() -> int:
    return Challenge.objects.order_by("-id").values_list("id", flat=True)[0]


async def _play(helen, grady, game, dashboards, count: int = CHALLENGES) -> float:
    """CPU seconds for ``count`` challenges, until every dashboard shows each result."""
    start = time.process_time()
    for _ in range(count):
        await act_ok(
            helen, action="challenge.open", defender=str(game["grady"].pk), bid="physical:Quick"
        )
        pk = await _newest()
        await act_ok(grady, action="challenge.bid", challenge=pk, bid="Tough")
        await act_ok(helen, action="challenge.throw", challenge=pk, throw="rock")
        await act_ok(grady, action="challenge.throw", challenge=pk, throw="scissors")
        for dashboard in dashboards:
            await expect(dashboard.socket, f'id="challenge-{pk}" class="row stage-resolved')
    return time.process_time() - start


@pytest.fixture
def crowd(db):
    from tests.factories import narrated_chronicle

    table = narrated_chronicle()
    table["helen_player"], table["grady_player"] = make_user("helen"), make_user("grady")
    table["helen"] = make_character(
        table["chronicle"], "Helen", table["helen_player"], traits=[("Quick", "physical", 500)]
    )
    table["grady"] = make_character(
        table["chronicle"], "Grady", table["grady_player"], traits=[("Tough", "physical", 500)]
    )
    crowded_session(table["session"], characters=ROSTER, challenges=50)
    return table


@pytest.mark.skipif(not os.getenv("NARRATOR_MEASURE"), reason="a measurement: NARRATOR_MEASURE=1")
async def test_twelve_dashboards_cost_per_challenge(crowd):
    game = crowd
    helen, _ = await connect(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    grady, _ = await connect(f"/ws/play/{game['grady'].pk}/", game["grady_player"])
    await _play(helen, grady, game, [], 2)  # templates loaded, caches warm
    alone = await _play(helen, grady, game, [])
    dashboards = [
        Phone(f"/ws/narrate/{game['session'].pk}/", game["narrator"]) for _ in range(DASHBOARDS)
    ]
    for dashboard in dashboards:
        await dashboard.connect()
    watched = await _play(helen, grady, game, dashboards)
    per = (watched - alone) / CHALLENGES / DASHBOARDS * 1000
    print(
        f"\n[dashboards] {CHALLENGES} challenges, {ROSTER + 2} on the roster: "
        f"{alone / CHALLENGES * 1000:.1f} ms CPU each without dashboards, "
        f"{watched / CHALLENGES * 1000:.1f} ms with {DASHBOARDS}: "
        f"{(watched - alone) / CHALLENGES * 1000:.1f} ms for the dashboards, {per:.2f} ms each"
    )
    stamp = await current_dashboard_stamp(game["session"])
    for dashboard in dashboards:
        await dashboard.settle()
        assert dashboard.stamp == stamp
        await dashboard.close()
    await helen.disconnect()
    await grady.disconnect()

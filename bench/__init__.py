"""The load generator behind ``python manage.py bench``
(``bench/management/commands/bench.py``): a Django app of its own (no
models), apart from the product it measures.

- ``fixtures``: a throwaway chronicle of bench players, narrators and their
  session cookies, and the consistency check afterwards (run in a subprocess
  against the bench database, never the user's).
- ``bare``: the baseline, a bare Channels consumer (one group send per throw,
  no database) served the same way as Narrator.
- ``servers``: the throwaway database, a private Redis, Daphne workers on
  loopback, and their CPU time and memory read from ``/proc``.
- ``load``: simulated phones and dashboards (many sockets in one asyncio
  process, each pinging as ``static/narrator/app.js`` does) and the scenarios:
  paced, saturation, burst, time out, reconnect (current screens, and stale
  ones with the dashboards, at once or jittered), heartbeat, and the
  evenings: a realistic met_classic mix with mob scenes (``evening``), bns
  opposed challenges with test pools (``evening_bns``) and storytelling dice
  rolls (``evening_storytelling``), each played from what the phones' cards
  offer, the last two in a chronicle of their ruleset; and issue 30's
  crowded dashboard (``crowded_dashboard``: 150 characters, 600 challenges,
  100 open, in a chronicle of its own): its first view's size and worker
  CPU, its updates' size, whether it stays connected, and its Time out.
- ``report``: percentiles and the printed table.
"""

SCENARIOS = (
    "paced",
    "saturation",
    "burst",
    "time_out",
    "reconnect",
    "reconnect_stale",
    "reconnect_jitter",
    "heartbeat",
    "evening_bns",  # its own chronicle (bns): wounds and Willpower there only
    "evening_storytelling",  # its own chronicle (storytelling): Willpower there only
    "crowded_dashboard",  # its own chronicle: issue 30's crowd of 150, 600 challenges
    "evening",  # last: it adds Traits, wounds characters and spends their Traits
)

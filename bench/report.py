"""Figures of one scenario on one app, and the printed table."""

from __future__ import annotations

from dataclasses import dataclass, field


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100) of ``values``; 0.0 if empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))  # ceil
    return ordered[int(rank) - 1]


@dataclass
class Result:
    """One scenario × configuration × app: latencies in seconds, counts, CPU."""

    scenario: str
    config: str
    app: str
    latencies: list[float] = field(default_factory=list)
    elapsed: float = 0.0  # seconds, first start to last result
    lost: int = 0
    skipped: int = 0  # paced starts with no idle pair
    unplayable: int = 0  # challenges not started: a phone of the pair is not connected
    doubled: int = 0
    server_closed: int = 0
    cpu_seconds: float = 0.0  # worker CPU (user + system) during the scenario
    note: str = ""

    def add(self, seconds: float) -> None:
        self.latencies.append(seconds)

    @property
    def count(self) -> int:
        return len(self.latencies)

    @property
    def rate(self) -> float:
        return self.count / self.elapsed if self.elapsed else 0.0

    def ms(self, q: float) -> float:
        return percentile(self.latencies, q) * 1000

    @property
    def cpu_ms_per_item(self) -> float:
        return self.cpu_seconds * 1000 / self.count if self.count else 0.0


COLUMNS = (
    "scenario",
    "config",
    "app",
    "n",
    "p50 ms",
    "p95 ms",
    "p99 ms",
    "max ms",
    "done/s",
    "lost",
    "doubled",
    "closed",
    "CPU ms/each",
    "p99 ×bare",
    "note",
)


def rows(results: list[Result]) -> list[list[str]]:
    """Table rows, each Narrator row with its p99 as a multiple of the bare app's."""
    bare = {(r.scenario, r.config): r for r in results if r.app == "bare"}
    out = []
    for r in results:
        base = bare.get((r.scenario, r.config))
        ratio = ""
        if r.app != "bare" and base is not None and base.ms(99) > 0 and r.count:
            ratio = f"{r.ms(99) / base.ms(99):.1f}"
        out.append(
            [
                r.scenario,
                r.config,
                r.app,
                str(r.count),
                f"{r.ms(50):.0f}",
                f"{r.ms(95):.0f}",
                f"{r.ms(99):.0f}",
                f"{r.ms(100):.0f}",
                f"{r.rate:.1f}",
                str(r.lost),
                str(r.doubled),
                str(r.server_closed),
                f"{r.cpu_ms_per_item:.1f}",
                ratio,
                r.note,
            ]
        )
    return out


def table(results: list[Result]) -> str:
    """A Markdown pipe table, readable in a terminal and pasteable into docs."""
    body = rows(results)
    widths = [max(len(c), *(len(row[i]) for row in body)) for i, c in enumerate(COLUMNS)]

    def line(cells) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    return "\n".join(
        [line(COLUMNS), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, body)]
    )

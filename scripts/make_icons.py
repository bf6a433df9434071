"""Draw the web app's icons (``static/narrator/icon-*.png``) from the
favicon's shapes (``static/narrator/favicon.svg``: an "N" on a rounded
square), without any imaging library: ``python scripts/make_icons.py``.
The maskable icon fills its square and keeps the "N" inside the circle of 80 %
(the safe zone a launcher may crop to a circle)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "static" / "narrator"
ACCENT = (0x7A, 0x1E, 0x2C)
WHITE = (0xFF, 0xFF, 0xFF)
#: The favicon's "N", in its 64-unit box.
N = [
    (18, 48), (18, 16), (24, 16), (40, 37), (40, 16),
    (46, 16), (46, 48), (40, 48), (24, 27), (24, 48),
]  # fmt: skip
SAMPLES = 3  # per axis: 9 samples a pixel smooth the edges


def _inside(polygon, x: float, y: float) -> bool:
    inside = False
    for (x1, y1), (x2, y2) in zip(polygon, polygon[1:] + polygon[:1], strict=True):
        if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
            inside = not inside
    return inside


def _in_rounded(x: float, y: float, radius: float) -> bool:
    """In the 64-unit square with corners of ``radius``."""
    cx = min(max(x, radius), 64 - radius)
    cy = min(max(y, radius), 64 - radius)
    return (x - cx) ** 2 + (y - cy) ** 2 <= radius**2


def draw(size: int, *, maskable: bool) -> bytes:
    """The RGBA rows of one icon ``size`` pixels square."""
    scale = 0.5 / (28 / 64) if maskable else 1.0  # the N (28 units wide) into 50 %
    rows = []
    for py in range(size):
        row = bytearray([0])  # filter: none
        for px in range(size):
            ink = paper = 0
            for sy in range(SAMPLES):
                for sx in range(SAMPLES):
                    x = (px + (sx + 0.5) / SAMPLES) * 64 / size
                    y = (py + (sy + 0.5) / SAMPLES) * 64 / size
                    if not maskable and not _in_rounded(x, y, 14):
                        continue
                    paper += 1
                    nx, ny = 32 + (x - 32) / scale, 32 + (y - 32) / scale
                    ink += _inside(N, nx, ny)
            n = SAMPLES * SAMPLES
            rgb = [
                round((c * (paper - ink) + w * ink) / paper) if paper else 0
                for c, w in zip(ACCENT, WHITE, strict=True)
            ]
            row += bytes([*rgb, round(255 * paper / n)])
        rows.append(bytes(row))
    return b"".join(rows)


def png(size: int, rgba: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rgba, 9))
        + chunk(b"IEND", b"")
    )


def main() -> None:
    for name, size, maskable in (
        ("icon-192.png", 192, False),
        ("icon-512.png", 512, False),
        ("icon-maskable-512.png", 512, True),
    ):
        (OUT / name).write_bytes(png(size, draw(size, maskable=maskable)))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""explain_layout.py: a screenshot of an explain page, compared loosely.

  explain_layout.py grid PNG        prints the PNG's layout grid (a reference)
  explain_layout.py compare PNG REF exit 0 when PNG's layout matches REF's

The layout grid cuts the image into cells of CELL x CELL pixels and gives
each the share of its pixels that are not background, in tenths (0-9): where
the page draws its panels, arrows and grid, not the pixels themselves, so a
font or an anti-aliasing difference between machines leaves it alone while a
moved or missing panel does not. Two grids match when they have the same
shape and, of the cells where either draws (2 tenths or more), at least
85 % are within 1 tenth (two different pages of the same size fail this:
their panels and arrows are elsewhere; a ring's page against a torus's, both
with a message list under the drawing, agree on 44 %). Reads the
8-bit RGB/RGBA, non-interlaced PNGs headless Chromium writes (zlib only).
"""
import struct
import sys
import zlib

CELL = 50


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit("%s: not a PNG" % path)
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or color not in (2, 6) or interlace:
                raise SystemExit("%s: not 8-bit RGB(A), non-interlaced" % path)
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def grid(path):
    w, h, bpp, rows = read_png(path)
    bg = tuple(rows[0][0:3])  # the page's background, at its corner
    out = []
    for cy in range(h // CELL):
        line = ""
        for cx in range(w // CELL):
            ink = 0
            for y in range(cy * CELL, (cy + 1) * CELL, 2):
                r = rows[y]
                for x in range(cx * CELL, (cx + 1) * CELL, 2):
                    px = r[x * bpp:x * bpp + 3]
                    ink += max(abs(px[0] - bg[0]), abs(px[1] - bg[1]), abs(px[2] - bg[2])) > 24
            line += str(min(9, ink * 10 // ((CELL // 2) ** 2)))
        out.append(line)
    return out


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "grid":
        print("\n".join(grid(sys.argv[2])))
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        got = grid(sys.argv[2])
        want = [l for l in open(sys.argv[3]).read().split("\n") if l]
        if len(got) != len(want) or any(len(a) != len(b) for a, b in zip(got, want)):
            print("layout: %dx%d cells, the reference %dx%d" %
                  (len(got[0]) if got else 0, len(got), len(want[0]) if want else 0, len(want)))
            return 1
        drawn = [(int(a), int(b)) for g, r in zip(got, want) for a, b in zip(g, r)
                 if int(a) >= 2 or int(b) >= 2]
        near = sum(abs(a - b) <= 1 for a, b in drawn)
        if not drawn or near * 100 < len(drawn) * 85:
            print("layout: %d of %d drawn cells within 1 tenth of the reference (85 %% needed)\n%s"
                  % (near, len(drawn), "\n".join(got)))
            return 1
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())

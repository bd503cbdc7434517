#!/usr/bin/env python3
"""report_screenshot.py - counts colours in a PNG screenshot (stdlib only).

    report_screenshot.py FILE.png NAME=#rrggbb [NAME=#rrggbb ...]

Decodes the PNG with zlib (8-bit RGB or RGBA, non-interlaced: what headless
Chromium writes) and prints one JSON object: width, height, the number of
distinct colours, and for each NAME how many pixels are within 6 of that
colour on every channel. tests/api/t_report.sh uses it to tell a page whose
SVG plots were drawn from a blank or unstyled one. Exit 2 on a PNG it
cannot read.
"""
import json
import struct
import sys
import zlib


def decode(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, hdr = 8, [], None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if hdr is None:
        raise ValueError("no IHDR")
    width, height, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError("unsupported PNG: depth %d colour type %d interlace %d"
                         % (depth, ctype, interlace))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    prev = bytearray(stride)
    rows = []
    off = 0
    for _ in range(height):
        ftype = raw[off]
        line = bytearray(raw[off + 1:off + 1 + stride])
        off += 1 + stride
        if ftype == 1:  # Sub
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif ftype == 2:  # Up
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 0xFF
        elif ftype == 3:  # Average
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif ftype == 4:  # Paeth
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        elif ftype != 0:
            raise ValueError("bad filter type %d" % ftype)
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 64
    try:
        width, height, bpp, rows = decode(argv[1])
    except (OSError, ValueError, zlib.error) as e:
        sys.stderr.write("report_screenshot: %s: %s\n" % (argv[1], e))
        return 2
    targets = {}
    for spec in argv[2:]:
        name, _, hexc = spec.partition("=#")
        targets[name] = tuple(int(hexc[i:i + 2], 16) for i in (0, 2, 4))
    counts = dict.fromkeys(targets, 0)
    histogram = {}
    for row in rows:
        for x in range(0, len(row), bpp):
            px = row[x:x + 3]
            histogram[px] = histogram.get(px, 0) + 1
    for px, n in histogram.items():
        for name, (r, g, b) in targets.items():
            if abs(px[0] - r) <= 6 and abs(px[1] - g) <= 6 and abs(px[2] - b) <= 6:
                counts[name] += n
    print(json.dumps({"width": width, "height": height,
                      "colours": len(histogram), "pixels": counts}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Pixel statistics of chromium screenshots, for tests/browser/run.sh. Standard library only.

  png_stats.py count IMAGE X0 Y0 X1 Y1 BG_HEX      pixels in [X0,X1) x [Y0,Y1) farther than 24
                                                   (sum of channel differences) from BG_HEX
  png_stats.py diff IMAGE_A IMAGE_B X0 Y0 X1 Y1    pixels in the rectangle that differ by more than 24
  png_stats.py first IMAGE X0 Y0 X1 Y1 BG_HEX      "X Y" of the first pixel (row by row) unlike BG_HEX
Prints the number. Reads 8-bit RGB or RGBA PNGs without interlacing (what chromium writes)."""
import struct
import sys
import zlib


def load(path):
    with open(path, 'rb') as f:
        data = f.read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        sys.exit('%s: not a PNG' % path)
    pos, idat, width = 8, b'', 0
    while pos < len(data):
        length, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b'IHDR':
            width, height, depth, color, _, _, interlace = struct.unpack('>IIBBBBB', body)
            if depth != 8 or color not in (2, 6) or interlace:
                sys.exit('%s: unsupported PNG layout (depth %d, colour type %d)' % (path, depth, color))
            bpp = 3 if color == 2 else 4
        elif kind == b'IDAT':
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def pixel(img, x, y):
    _, _, bpp, rows = img
    return rows[y][x * bpp:x * bpp + 3]


def main(argv):
    if argv[1] == 'count':
        img = load(argv[2])
        x0, y0, x1, y1 = (int(v) for v in argv[3:7])
        bg = bytes.fromhex(argv[7])
        n = sum(1 for y in range(y0, y1) for x in range(x0, x1)
                if sum(abs(p - q) for p, q in zip(pixel(img, x, y), bg)) > 24)
    elif argv[1] == 'diff':
        a, b = load(argv[2]), load(argv[3])
        if a[:2] != b[:2]:
            sys.exit('the screenshots differ in size')
        x0, y0, x1, y1 = (int(v) for v in argv[4:8])
        n = sum(1 for y in range(y0, y1) for x in range(x0, x1)
                if sum(abs(p - q) for p, q in zip(pixel(a, x, y), pixel(b, x, y))) > 24)
    elif argv[1] == 'first':
        img = load(argv[2])
        x0, y0, x1, y1 = (int(v) for v in argv[3:7])
        bg = bytes.fromhex(argv[7])
        n = next(('%d %d' % (x, y) for y in range(y0, y1) for x in range(x0, x1)
                  if sum(abs(p - q) for p, q in zip(pixel(img, x, y), bg)) > 24), 'none')
    else:
        sys.exit(__doc__)
    print(n)


if __name__ == '__main__':
    main(sys.argv)

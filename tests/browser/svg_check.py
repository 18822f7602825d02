#!/usr/bin/env python3
"""Checks an SVG written by `kiln plot` or `kiln_bench --svg`, for tests/browser/run.sh.

  svg_check.py FILE KIND...

Fails unless FILE parses as XML with an <svg> root and, for every KIND, holds at least one
<g class="series" data-series="KIND"> that draws something: a polyline with two or more points,
circles, or rects (bars) with a positive size. Prints what it found per KIND."""
import sys
import xml.etree.ElementTree as ET

NS = '{http://www.w3.org/2000/svg}'


def drawn(g):
    n = 0
    for el in g.iter():
        tag = el.tag.replace(NS, '')
        if tag == 'polyline' and len(el.get('points', '').split()) >= 2:
            n += 1
        elif tag == 'circle':
            n += 1
        elif tag == 'rect' and float(el.get('width', '0')) > 0 and float(el.get('height', '0')) > 0:
            n += 1
    return n


def main(argv):
    path, kinds = argv[1], argv[2:]
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        print('  FAIL %s: does not parse: %s' % (path, e))
        return 1
    if root.tag != NS + 'svg':
        print('  FAIL %s: the root element is %s, not svg' % (path, root.tag))
        return 1
    bad = 0
    for kind in kinds:
        groups = [g for g in root.iter(NS + 'g') if g.get('class') == 'series' and g.get('data-series') == kind]
        marks = sum(drawn(g) for g in groups)
        if groups and marks:
            print('  ok   %s: series %s: %d groups, %d marks' % (path, kind, len(groups), marks))
        else:
            print('  FAIL %s: series %s: %d groups, %d marks' % (path, kind, len(groups), marks))
            bad = 1
    return bad


if __name__ == '__main__':
    sys.exit(main(sys.argv))

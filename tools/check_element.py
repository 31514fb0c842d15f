#!/usr/bin/env python3
"""Checks that the element's files (gst-plugin/) read in one direction, as the core's
layers do (tools/check_layers.py), run in CI by meson test:

  1. gst-plugin/meson.build lists the element's files bottom first, each with
     `# Uses: a, b` (names without the gstwhisper prefix and .c; `nothing`), and each
     name used is listed before it: the declarations are an order, no circle;
  2. every gst-plugin/*.c but plugin.c is in that list;
  3. with a build directory: every symbol a file's object takes from another file's
     object is defined in a file it declares it uses, so no call runs back up (a step
     never calls the worker, the worker never the pads) and no two files depend on
     each other around a circle;
  4. docs/architecture.md names every .c file under gst-plugin/ (a part's header goes
     with it), every header without one, and no file that is not there.

usage: check_element.py SOURCE_ROOT [BUILD_DIR]
Prints what is wrong and exits 1, or prints the order and the worker's calls and
exits 0.
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_layers import find_cycle, object_symbols  # noqa: E402


def short(f):
    return f[len('gstwhisper'):-len('.c')] or 'gstwhisper'


def declared(meson):
    """[(file, set of short names or None)] in the order meson.build lists them."""
    out = []
    for m in re.finditer(r"^\s*'(gstwhisper\w*\.c)',?\s*(?:#\s*Uses:\s*([^(\n]*))?", meson, re.M):
        f, decl = m.group(1), m.group(2)
        if decl is None:
            out.append((f, None))
            continue
        decl = decl.strip()
        out.append((f, set() if decl.startswith('nothing') else
                    {x.strip() for x in decl.split(',') if x.strip()}))
    return out


def symbols(build):
    """file -> (defined, undefined) global symbols of the element's objects."""
    objs = glob.glob(os.path.join(build, 'gst-plugin', 'libgstwhisper-static.a.p', '*.o'))
    return {os.path.basename(o)[:-len('.o')]: object_symbols(o) for o in objs}


def main():
    root = sys.argv[1]
    build = sys.argv[2] if len(sys.argv) > 2 else None
    el = os.path.join(root, 'gst-plugin')
    errors = []
    order = declared(open(os.path.join(el, 'meson.build')).read())
    names = [short(f) for f, _ in order]
    uses = {}
    for i, (f, u) in enumerate(order):
        if u is None:
            errors.append('gst-plugin/meson.build: %s has no "# Uses:" comment' % f)
            u = set()
        for x in sorted(u):
            if x not in names:
                errors.append('gst-plugin/meson.build: %s uses unknown file %s' % (f, x))
            elif names.index(x) >= i:
                errors.append('gst-plugin/meson.build: %s uses %s, listed after it '
                              '(the list is bottom first)' % (f, x))
        uses[short(f)] = u
    sources = sorted(os.path.basename(p) for p in glob.glob(os.path.join(el, '*.c')))
    for f in sources:
        if f != 'plugin.c' and f not in [g for g, _ in order]:
            errors.append('gst-plugin/%s: not in meson.build\'s ordered list' % f)

    n_edges = 0
    calls = {}
    if build:
        syms = symbols(build)
        if not syms:
            errors.append('%s: no element objects found (build first)' % build)
        owner = {s: f for f, (d, _) in syms.items() for s in d}
        deps = {}
        for f, (_, u) in sorted(syms.items()):
            deps[f] = set()
            for s in sorted(u):
                g = owner.get(s)
                if not g or g == f:
                    continue
                deps[f].add(g)
                calls.setdefault(f, {}).setdefault(g, []).append(s)
                if short(g) not in uses.get(short(f), set()):
                    errors.append('gst-plugin/%s: calls %s (gst-plugin/%s), which it does not '
                                  'declare it uses%s' %
                                  (f, s, g, ' (a call back up)' if short(g) in names and
                                   short(f) in names and names.index(short(g)) >
                                   names.index(short(f)) else ''))
        n_edges = sum(len(v) for v in deps.values())
        c = find_cycle(deps)
        if c:
            errors.append('element files in a circle (through the symbols they call): ' +
                          ' -> '.join(c))

    arch = open(os.path.join(root, 'docs', 'architecture.md')).read()
    files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(el, '*.[ch]')))
    named = set(re.findall(r'`((?:gstwhisper\w*|plugin)\.[ch])`', arch))
    for f in files:
        # a part's header goes with its .c file
        if f.endswith('.h') and f[:-2] + '.c' in files:
            continue
        if f not in named:
            errors.append('docs/architecture.md: does not list gst-plugin/%s' % f)
    for f in sorted(named - set(files)):
        errors.append('docs/architecture.md: lists %s, which is not in gst-plugin/' % f)

    for e in errors:
        print(e)
    if errors:
        print('check_element: %d problems' % len(errors))
        return 1
    print('check_element: %d files bottom first (%s)%s; docs/architecture.md lists all %d' %
          (len(order), ' < '.join(names),
           ', %d file dependencies by symbol, all pointing down, no circle' % n_edges
           if build else '', len(files)))
    w = calls.get('gstwhisperworker.c', {})
    for g in sorted(w, key=lambda g: -names.index(short(g))):
        print('  worker -> %s: %s' % (g, ' '.join(w[g])))
    return 0


if __name__ == '__main__':
    sys.exit(main())

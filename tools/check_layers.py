#!/usr/bin/env python3
"""Checks that the core's folders are its architecture (run in CI by meson test):

  1. every core/<layer>/meson.build says `# Uses: a, b` (or `# Uses: nothing`; the
     word `backends` names every encoder backend of core/meson.build's list), and
     those declarations have no circle;
  2. every #include "x/..." in core/<layer> names its own layer or one it uses;
  3. with a build directory: every symbol an object of core/<layer> takes from another
     object is defined in its own layer or one it uses, and no two files depend on each
     other through symbols, directly or in a longer circle (files that are one module
     belong in one file, or behind one header with one file behind it);
  4. no core file is over 600 lines;
  5. docs/architecture.md names every file under core/ and no file that is not there;
  6. with a build directory: names say what is public: every global symbol of the core
     named wkv_ is declared in include/ (the API); the core's own are named wkv__;
  7. the compute-types table of docs/architecture.md ("## Compute types") names exactly
     the types of include/whisperkv.h's WKV_COMPUTE_TYPES list, in its order.

And that the CLI (cli/) is a program on the public API:
  8. no cli/ file is over 600 lines;
  9. cli/ files include only the public headers (include/), the cues/ headers, their
     own (cli/) and system headers, never the core's private headers nor the element's
     (gst-plugin/), and cli/meson.build links neither the core's internals nor the
     element;
 10. with a build directory (where the CLI is built): no two cli/ files depend on each
     other through symbols, directly or in a longer circle;
 11. docs/architecture.md names every file under cli/ and no file that is not there.

usage: check_layers.py SOURCE_ROOT [BUILD_DIR]
Prints what is wrong and exits 1, or prints a summary and exits 0.
"""
import glob
import os
import re
import subprocess
import sys

MAX_LINES = 600


def backends_of(core):
    """The encoder backends' folders: core/meson.build's `backends = [...]` list."""
    m = re.search(r"^backends = \[(.*)\]", open(os.path.join(core, 'meson.build')).read(), re.M)
    return re.findall(r"'(\w+)'", m.group(1)) if m else []


def layers_of(core):
    """layer -> the layers its meson.build's `# Uses:` names; `backends` there stands
    for every backend's folder (so adding a backend touches no layer's line)."""
    backends = backends_of(core)
    uses = {}
    for mb in sorted(glob.glob(os.path.join(core, '*', 'meson.build'))):
        layer = os.path.basename(os.path.dirname(mb))
        m = re.search(r'^# Uses: (.*)$', open(mb).read(), re.M)
        if not m:
            uses[layer] = None
            continue
        decl = m.group(1).strip()
        uses[layer] = set() if decl.startswith('nothing') else \
            {x.strip() for x in decl.split(',') if x.strip()}
        if 'backends' in uses[layer]:
            uses[layer] = (uses[layer] - {'backends'}) | set(backends)
    return uses


def find_cycle(graph):
    """One circle of graph (dict node -> set of nodes) as a list, or None."""
    state = {}
    stack = []

    def visit(v):
        state[v] = 1
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if state.get(w) == 1:
                return stack[stack.index(w):] + [w]
            if w not in state:
                c = visit(w)
                if c:
                    return c
        stack.pop()
        state[v] = 2
        return None

    for v in sorted(graph):
        if v not in state:
            c = visit(v)
            if c:
                return c
    return None


def object_symbols(o):
    """(defined, undefined) global symbols of one object file."""
    out = subprocess.run(['nm', o], capture_output=True, text=True, check=True).stdout
    d, u = set(), set()
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in 'TDBRi':
            d.add(p[2])
        elif len(p) == 2 and p[0] == 'U':
            u.add(p[1])
    return d, u


def symbols(build, core):
    """file -> (defined, undefined) global symbols, from the shared library's objects."""
    # libwhisperkv*: a sanitized build compiles the kernels in libraries of their own
    # (core/meson.build); a file found twice has the same symbols both times
    objs = glob.glob(os.path.join(build, 'core', 'libwhisperkv*.p', '*.o'))
    res = {}
    for o in objs:
        name = os.path.basename(o)[:-len('.o')]  # e.g. base_util.c
        layer, _, rest = name.partition('_')
        path = os.path.join(layer, rest)
        if not os.path.exists(os.path.join(core, path)):
            continue
        res[path] = object_symbols(o)
    return res


def check_cli(root, build, errors):
    """Rules 8-11 for cli/; returns (files, objects' file dependencies or None)."""
    cli = os.path.join(root, 'cli')
    files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(cli, '*.[ch]')))
    # what a quoted include may name: the API, the cues, cli/ itself
    allowed = {os.path.basename(h) for h in glob.glob(os.path.join(root, 'include', '*.h'))}
    allowed |= {os.path.basename(h) for h in glob.glob(os.path.join(root, 'cues', '*.h'))}
    allowed |= {f for f in files if f.endswith('.h')}
    # the project's headers nobody outside their folder may include, by name
    private = {os.path.basename(h) for h in
               glob.glob(os.path.join(root, 'core', '**', '*.h'), recursive=True) +
               glob.glob(os.path.join(root, 'gst-plugin', '**', '*.h'), recursive=True)}
    for f in files:
        text = open(os.path.join(cli, f)).read()
        lines = text.count('\n')
        if lines > MAX_LINES:
            errors.append('cli/%s: %d lines (at most %d)' % (f, lines, MAX_LINES))
        for m in re.finditer(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', text, re.M):
            kind, inc = m.groups()
            base = os.path.basename(inc)
            if kind == '"' and inc not in allowed:
                errors.append('cli/%s: #include "%s": the CLI includes only include/, '
                              'cues/ and cli/ headers' % (f, inc))
            elif kind == '<' and (base in private or
                                  inc.split('/')[0] in ('core', 'gst-plugin')):
                errors.append('cli/%s: #include <%s>: a private header of core/ or '
                              'gst-plugin/' % (f, inc))
    mb = open(os.path.join(cli, 'meson.build')).read()
    for dep in ('whisperkv_internal_dep', 'gstwhisper_dep'):
        if re.search(r'\b%s\b' % dep, mb):
            errors.append('cli/meson.build: uses %s (the CLI links the public library '
                          'and cues/ only)' % dep)

    deps = None
    pdir = os.path.join(build, 'cli', 'whisperkv-transcribe.p') if build else None
    if pdir and os.path.isdir(pdir):  # else the CLI is not built here (-Dexamples=disabled)
        syms = {}
        for o in glob.glob(os.path.join(pdir, '*.o')):
            src = os.path.basename(o)[:-len('.o')]  # e.g. output.c
            if src in files:
                syms[src] = object_symbols(o)
        if not syms:
            errors.append('%s: no cli objects found (build first)' % pdir)
        owner = {s: f for f, (d, _) in syms.items() for s in d}
        deps = {f: {owner[s] for s in u if owner.get(s, f) != f}
                for f, (_, u) in syms.items()}
        c = find_cycle(deps)
        if c:
            errors.append('cli files in a circle (through the symbols they call): ' +
                          ' -> '.join('cli/' + x for x in c))

    arch = open(os.path.join(root, 'docs', 'architecture.md')).read()
    named = set(re.findall(r'`cli/([A-Za-z0-9_.-]+\.[ch])`', arch))
    for f in files:
        if f not in named:
            errors.append('docs/architecture.md: does not list cli/%s' % f)
    for f in sorted(named - set(files)):
        errors.append('docs/architecture.md: lists cli/%s, which is not in cli/' % f)
    return files, deps


def compute_types_documented(root):
    """Check 7, the doc's table against the header's one list: (problems, types)."""
    header = open(os.path.join(root, 'include', 'whisperkv.h')).read()
    m = re.search(r'#define WKV_COMPUTE_TYPES\(X\)((?:.*\\\n)*.*)', header)
    if not m:
        return ['include/whisperkv.h: no WKV_COMPUTE_TYPES(X) list'], 0
    listed = re.findall(r'\bX\(\s*\w+\s*,\s*"([^"]*)"', m.group(1))
    doc = open(os.path.join(root, 'docs', 'architecture.md')).read()
    sec = re.search(r'^## Compute types\n(.*?)(?=^## )', doc, re.M | re.S)
    if not sec:
        return ['docs/architecture.md: no "## Compute types" section'], 0
    table = re.findall(r'^\| `([^`]+)` \|', sec.group(1), re.M)
    if table != listed:
        return ['docs/architecture.md: the compute-types table names %s; '
                'include/whisperkv.h\'s WKV_COMPUTE_TYPES lists %s' %
                (', '.join(table) or 'none', ', '.join(listed) or 'none')], 0
    return [], len(listed)


def main():
    root = sys.argv[1]
    build = sys.argv[2] if len(sys.argv) > 2 else None
    core = os.path.join(root, 'core')
    errors = []
    uses = layers_of(core)
    for layer, u in uses.items():
        if u is None:
            errors.append('core/%s/meson.build: no "# Uses:" line' % layer)
        else:
            for x in u - set(uses):
                errors.append('core/%s/meson.build: uses unknown layer %s' % (layer, x))
    graph = {k: (v or set()) & set(uses) for k, v in uses.items()}
    c = find_cycle(graph)
    if c:
        errors.append('layers in a circle: ' + ' -> '.join(c))

    files = sorted(os.path.relpath(p, core)
                   for p in glob.glob(os.path.join(core, '*', '*.[ch]')))
    loose = [p for p in glob.glob(os.path.join(core, '*.[ch]'))]
    for p in loose:
        errors.append('%s: a core file outside the layer folders' % p)
    n_includes = 0
    for f in files:
        layer = f.split('/')[0]
        text = open(os.path.join(core, f)).read()
        lines = text.count('\n')
        if lines > MAX_LINES:
            errors.append('core/%s: %d lines (at most %d)' % (f, lines, MAX_LINES))
        for m in re.finditer(r'^#include "([^"]+)"', text, re.M):
            inc = m.group(1)
            if '/' not in inc:
                if inc not in ('whisperkv.h', 'whisperkv_debug.h'):
                    errors.append('core/%s: #include "%s" does not name its layer' % (f, inc))
                continue
            n_includes += 1
            il = inc.split('/')[0]
            if il != layer and il not in (uses.get(layer) or set()):
                errors.append('core/%s: includes %s, but %s does not use %s' %
                              (f, inc, layer, il))

    n_edges = 0
    if build:
        syms = symbols(build, core)
        if not syms:
            errors.append('%s: no core objects found (build first)' % build)
        owner = {}
        for f, (d, _) in syms.items():
            for s in d:
                owner[s] = f
        deps = {}
        for f, (_, u) in syms.items():
            deps[f] = set()
            layer = f.split('/')[0]
            for s in u:
                g = owner.get(s)
                if not g or g == f:
                    continue
                deps[f].add(g)
                gl = g.split('/')[0]
                if gl != layer and gl not in (uses.get(layer) or set()):
                    errors.append('core/%s: calls %s (core/%s), but %s does not use %s' %
                                  (f, s, g, layer, gl))
        n_edges = sum(len(v) for v in deps.values())
        public = set()
        for h in glob.glob(os.path.join(root, 'include', '*.h')):
            public |= set(re.findall(r'\b(wkv_\w+)\b', open(h).read()))
        for f, (d, _) in sorted(syms.items()):
            for s in sorted(d):
                if s.startswith('wkv_') and not s.startswith('wkv__') and s not in public:
                    errors.append('core/%s: %s is not public (include/): name it wkv__%s' %
                                  (f, s, s[4:]))
        c = find_cycle(deps)
        if c:
            errors.append('files in a circle (through the symbols they call): ' +
                          ' -> '.join(c))

    arch = os.path.join(root, 'docs', 'architecture.md')
    named = set(re.findall(r'`((?:%s)/[A-Za-z0-9_]+\.[ch])`' % '|'.join(uses),
                           open(arch).read()))
    for f in files:
        if f not in named:
            errors.append('docs/architecture.md: does not list core/%s' % f)
    for f in sorted(named - set(files)):
        errors.append('docs/architecture.md: lists %s, which is not in core/' % f)

    cli_files, cli_deps = check_cli(root, build, errors)
    type_errors, n_types = compute_types_documented(root)
    errors += type_errors

    for e in errors:
        print(e)
    if errors:
        print('check_layers: %d problems' % len(errors))
        return 1
    order = []
    done = set()
    while len(order) < len(uses):  # the layers, each after those it uses
        for k in sorted(uses):
            if k not in done and graph[k] <= done:
                order.append(k)
                done.add(k)
    print('check_layers: %d layers (%s), %d files, %d layered includes%s; no circle, '
          'none over %d lines, docs/architecture.md lists them all and the %d compute '
          'types%s' %
          (len(uses), ' < '.join(order), len(files), n_includes,
           ', %d file dependencies by symbol' % n_edges if build else '', MAX_LINES,
           n_types,
           ', every wkv_ symbol public' if build else ''))
    print('check_layers: cli/: %d files, none over %d lines, includes only include/, cues/, '
          'cli/ and system headers%s, docs/architecture.md lists them all' %
          (len(cli_files), MAX_LINES,
           ', %d file dependencies by symbol, no circle' % sum(map(len, cli_deps.values()))
           if cli_deps is not None else ' (not built here: no symbol check)'))
    return 0


if __name__ == '__main__':
    sys.exit(main())

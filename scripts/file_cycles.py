#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""File-level call graph of vitalsd's libraries and its cycles.

    scripts/file_cycles.py [--graph] [--expect-cycles] [--expect-up]
                           [--leaf DIR[=BELOW,...]]... BUILDDIR [OBJDIR...]

Reads the objects of each library with nm: file A points at file B when A
uses a function or object that B defines. Prints every strongly connected
component of more than one file (a call cycle) with the symbols behind its
edges. OBJDIR is a library's object folder relative to BUILDDIR (meson
names it <lib>.a.p); the daemon and client libraries by default. Objects
are named after their sources through BUILDDIR/compile_commands.json.

Exits 1 when there is a cycle, 0 when there is none, 2 on a usage or read
error (a missing library is an error: a check that reads nothing proves
nothing). --expect-cycles inverts the verdict, for the checker's own
negative control.

--leaf DIR=BELOW,... says the files under DIR (a path prefix) may point
only at files under DIR or one of the BELOW prefixes: config is a leaf of
the call graph above core (--leaf daemon/config=daemon/core). A file that
points elsewhere is printed with its symbols and fails the check like a
cycle; --expect-up inverts that part, for its negative control."""
import argparse
import json
import os
import subprocess
import sys

LIBS = ("daemon/libvitalsd.a.p", "client/libvitals_client.a.p")

# nm -P kinds that define a symbol other objects can use: text, data,
# bss, read-only, weak, common
DEFINES = set("TDBRVWCGS")


def symbols(path):
    """(defined, used) external symbol names of one object"""
    out = subprocess.run(["nm", "-P", path], check=True,
                         capture_output=True, text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            used.add(name)
        elif kind in DEFINES:
            defined.add(name)
    return defined, used


def source_names(builddir):
    """object path relative to builddir -> source path from the top"""
    path = os.path.join(builddir, "compile_commands.json")
    names = {}
    with open(path) as f:
        for e in json.load(f):
            src = os.path.normpath(os.path.join(e["directory"], e["file"]))
            names[os.path.normpath(e["output"])] = src
    return names


def graph(objects):
    """objects: {name: (defined, used)} -> {a: {b: [symbols]}}"""
    owner = {}
    for name in sorted(objects):
        for s in objects[name][0]:
            owner.setdefault(s, name)
    edges = {}
    for a, (_, used) in objects.items():
        for s in sorted(used):
            b = owner.get(s)
            if b is not None and b != a:
                edges.setdefault(a, {}).setdefault(b, []).append(s)
    return edges


def sccs(nodes, edges):
    """Tarjan's strongly connected components, iterative"""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                out.append(sorted(comp))
    return out


def cycles(objects):
    edges = graph(objects)
    return edges, [c for c in sccs(objects.keys(), edges) if len(c) > 1]


def report(lib, objects, show_graph):
    edges, cyc = cycles(objects)
    if show_graph:
        for a in sorted(edges):
            for b in sorted(edges[a]):
                print(f"{a} -> {b}")
    for c in cyc:
        print(f"cycle ({len(c)} files): " + " ".join(c))
        for a in c:
            for b in sorted(edges.get(a, ())):
                if b in c:
                    print(f"    {a} -> {b}: {' '.join(edges[a][b])}")
    print(f"{lib}: {len(objects)} files, "
          f"{sum(len(v) for v in edges.values())} edges, {len(cyc)} cycles")
    return len(cyc)


def under(name, prefix):
    return name == prefix or name.startswith(prefix.rstrip("/") + "/")


def leaf_breaks(objects, leaves):
    """edges out of each --leaf DIR to files outside DIR and its BELOW"""
    edges = graph(objects)
    n = 0
    for spec in leaves:
        top, _, below = spec.partition("=")
        allowed = [top] + [b for b in below.split(",") if b]
        for a in sorted(edges):
            if not under(a, top):
                continue
            for b in sorted(edges[a]):
                if not any(under(b, p) for p in allowed):
                    print(f"points up from leaf {top}: {a} -> {b}: "
                          f"{' '.join(edges[a][b])}")
                    n += 1
    return n


def load(builddir, lib, names, top):
    objdir = os.path.join(builddir, lib)
    objects = {}
    for o in sorted(os.listdir(objdir)):
        if not o.endswith(".o"):
            continue
        src = names.get(os.path.normpath(os.path.join(lib, o)))
        name = os.path.relpath(src, top) if src else o
        objects[name] = symbols(os.path.join(objdir, o))
    if not objects:
        raise FileNotFoundError(f"{objdir}: no objects")
    return objects


def main():
    ap = argparse.ArgumentParser(usage=__doc__.splitlines()[2].strip())
    ap.add_argument("--graph", action="store_true", help="print every edge")
    ap.add_argument("--expect-cycles", action="store_true",
                    help="succeed only when a cycle is found")
    ap.add_argument("--leaf", action="append", default=[],
                    metavar="DIR[=BELOW,...]",
                    help="files under DIR point only at DIR and BELOW")
    ap.add_argument("--expect-up", action="store_true",
                    help="succeed only when a --leaf points elsewhere")
    ap.add_argument("builddir")
    ap.add_argument("objdirs", nargs="*")
    args = ap.parse_args()
    try:
        names = source_names(args.builddir)
        top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        total = up = 0
        for lib in args.objdirs or LIBS:
            objects = load(args.builddir, lib, names, top)
            total += report(lib, objects, args.graph)
            up += leaf_breaks(objects, args.leaf)
    except (OSError, ValueError, subprocess.CalledProcessError) as e:
        print(f"file_cycles: {e}", file=sys.stderr)
        return 2
    if args.leaf:
        print(f"leaves {' '.join(args.leaf)}: {up} edges point up")
    if args.expect_up:
        return 0 if up else 1
    if args.expect_cycles:
        return 0 if total else 1
    return 1 if total or up else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""
A syntax and consistency check of Android.bp files where no AOSP tree is
at hand (Soong cannot run here). It parses Blueprint as Soong's parser
defines it: `module_type { name: value, ... }` and `var = value` at top
level; values are "strings", integers, true/false, [lists], { maps },
variables and `+` between values of one kind; // and /* */ comments;
trailing commas allowed. Then, per file:

  - every module but package/license-less ones has a unique name;
  - `defaults` found in the file are *_defaults modules (others are left
    to Soong, with a note);
  - files named in srcs, exclude_srcs, init_rc, local_include_dirs,
    export_include_dirs and genrule srcs exist (globs must match one);
  - with --meson-client DIR: the vitals binary's srcs are client/'s
    meson sources plus the vitals executable's, so the two builds cannot drift.

    bp_check.py [--meson-client client/meson.build] Android.bp...
Exit 0: clean; 1: problems, listed.
"""
import glob
import os
import re
import sys


class ParseError(Exception):
    pass


TOKEN = re.compile(r"""
    (?P<ws>\s+) |
    (?P<lcomment>//[^\n]*) |
    (?P<bcomment>/\*.*?\*/) |
    (?P<string>"(?:[^"\\\n]|\\.)*") |
    (?P<int>-?[0-9]+) |
    (?P<ident>[A-Za-z_][A-Za-z0-9_]*) |
    (?P<punct>[{}\[\]:,=+])
""", re.S | re.X)


def tokens(text):
    pos, line = 0, 1
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            raise ParseError("line %d: unexpected %r" % (line, text[pos]))
        kind = m.lastgroup
        val = m.group()
        if kind not in ("ws", "lcomment", "bcomment"):
            yield kind, val, line
        line += val.count("\n")
        pos = m.end()
    yield "eof", "", line


class Parser:
    def __init__(self, text):
        self.toks = list(tokens(text))
        self.i = 0
        self.vars = {}

    def peek(self):
        return self.toks[self.i]

    def take(self, kind=None, val=None):
        t = self.toks[self.i]
        if (kind and t[0] != kind) or (val is not None and t[1] != val):
            raise ParseError("line %d: expected %s, got %r" %
                             (t[2], val or kind, t[1]))
        self.i += 1
        return t

    def file(self):
        mods = []
        while self.peek()[0] != "eof":
            kind, val, line = self.take("ident")
            if self.peek()[1] == "=":
                self.take("punct", "=")
                self.vars[val] = self.value()
            elif self.peek()[1] == "+":
                self.take("punct", "+")
                self.take("punct", "=")
                self.vars[val] = self.add(self.vars.get(val), self.value(),
                                          line)
            else:
                props = self.map()
                mods.append((val, props, line))
        return mods

    def map(self):
        self.take("punct", "{")
        props = {}
        while self.peek()[1] != "}":
            _, key, line = self.take("ident")
            if key in props:
                raise ParseError("line %d: %s given twice" % (line, key))
            self.take("punct", ":")
            props[key] = self.value()
            if self.peek()[1] != ",":
                break
            self.take("punct", ",")
        self.take("punct", "}")
        return props

    def value(self):
        v = self.operand()
        while self.peek()[1] == "+":
            line = self.take("punct", "+")[2]
            v = self.add(v, self.operand(), line)
        return v

    @staticmethod
    def add(a, b, line):
        if type(a) is not type(b) or isinstance(a, (bool, dict)):
            raise ParseError("line %d: + of %s and %s" %
                             (line, type(a).__name__, type(b).__name__))
        return a + b

    def operand(self):
        kind, val, line = self.peek()
        if kind == "string":
            self.take()
            return bytes(val[1:-1], "utf-8").decode("unicode_escape")
        if kind == "int":
            self.take()
            return int(val)
        if kind == "ident":
            self.take()
            if val in ("true", "false"):
                return val == "true"
            if val not in self.vars:
                raise ParseError("line %d: unknown variable %s" %
                                 (line, val))
            return self.vars[val]
        if val == "[":
            self.take()
            out = []
            while self.peek()[1] != "]":
                out.append(self.value())
                if self.peek()[1] != ",":
                    break
                self.take("punct", ",")
            self.take("punct", "]")
            return out
        if val == "{":
            return self.map()
        raise ParseError("line %d: unexpected %r" % (line, val))


FILE_PROPS = ("srcs", "exclude_srcs", "init_rc", "local_include_dirs",
              "export_include_dirs")
NAMELESS = ("package", "soong_namespace")


def check_file(path, problems):
    base = os.path.dirname(os.path.abspath(path))
    with open(path) as f:
        mods = Parser(f.read()).file()
    names = {}
    for mtype, props, line in mods:
        name = props.get("name")
        if mtype in NAMELESS:
            continue
        if not isinstance(name, str) or not name:
            problems.append("%s:%d: %s without a name" % (path, line, mtype))
            continue
        if name in names:
            problems.append("%s:%d: %s defined twice" % (path, line, name))
        names[name] = mtype
    for mtype, props, line in mods:
        for d in props.get("defaults", []):
            if d in names and not names[d].endswith("_defaults"):
                problems.append("%s:%d: defaults %s is a %s" %
                                (path, line, d, names[d]))
            elif d not in names:
                # Soong may know it from another file: said, not failed
                print("%s:%d: note: defaults %s not in this file" %
                      (path, line, d))
        for key in FILE_PROPS:
            vals = props.get(key, [])
            for v in vals if isinstance(vals, list) else [vals]:
                if not isinstance(v, str) or v.startswith(":"):
                    continue  # another module's output
                full = os.path.join(base, v)
                if any(c in v for c in "*?["):
                    if not glob.glob(full):
                        problems.append("%s:%d: %s %s matches nothing" %
                                        (path, line, key, v))
                elif not os.path.exists(full):
                    problems.append("%s:%d: %s %s does not exist" %
                                    (path, line, key, v))
    return {props["name"]: props for _, props, _ in mods
            if isinstance(props.get("name"), str)}


def meson_sources(path):
    """The quoted .c names of the first static_library() in a meson file."""
    with open(path) as f:
        text = f.read()
    m = re.search(r"static_library\((.*?)\)\n", text, re.S)
    return sorted(re.findall(r"'([A-Za-z0-9_./-]+\.c)'", m.group(1))) \
        if m else []


def meson_exe_sources(path, name):
    """The quoted .c names of executable('name', ...) in a meson file."""
    with open(path) as f:
        text = f.read()
    m = re.search(r"executable\('%s',(.*?)\)\n" % re.escape(name), text,
                  re.S)
    return sorted(re.findall(r"'([A-Za-z0-9_./-]+\.c)'", m.group(1))) \
        if m else []


def main(argv):
    problems = []
    meson_client = None
    files = []
    it = iter(argv)
    for a in it:
        if a == "--meson-client":
            meson_client = next(it, None)
        else:
            files.append(a)
    if not files:
        sys.exit(__doc__)
    mods = {}
    for p in files:
        try:
            mods.update(check_file(p, problems))
        except ParseError as e:
            problems.append("%s: %s" % (p, e))
    if meson_client and "vitals" in mods:
        want = sorted(["client/" + s for s in meson_sources(meson_client)] +
                      ["client/" + s for s in
                       meson_exe_sources(meson_client, "vitals")])
        have = sorted(mods["vitals"].get("srcs", []))
        if want != have:
            problems.append("vitals srcs differ from %s: only in meson %s, "
                            "only in Android.bp %s" %
                            (meson_client, sorted(set(want) - set(have)),
                             sorted(set(have) - set(want))))
    for p in problems:
        print(p)
    if not problems:
        print("%d file(s), %d modules: parsed, names unique, files present"
              % (len(files), len(mods)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

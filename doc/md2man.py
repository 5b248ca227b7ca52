#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turn the project's man pages in Markdown (doc/*.md) into roff man pages.

The Markdown files stay the source everyone edits; the build makes the
roff from them (meson, doc/meson.build). Only the subset the pages use is
understood: '#' title 'name(section)', '##' sections, '###' subsections,
paragraphs, '*'/'-' lists, indented or fenced code blocks, pipe tables
(each row becomes a tagged paragraph), `code`, **bold**, *italic* and
[links](target).

  md2man.py page   SRC.md NAME SECTION "SUMMARY" VERSION OUT
  md2man.py conf   FLAGS.md INTRO.md VERSION OUT   (vitalsd.conf(5): the
      intro page, then every table row of FLAGS.md that names a config key)
"""
import re
import sys


def esc(text):
    text = text.replace("\\", "\\e")
    return text


def inline(text):
    """Markdown inline markup to roff, escaping as it goes."""
    out = []
    pos = 0
    pat = re.compile(r"`([^`]*)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|"
                     r"\[([^\]]+)\]\(([^)]*)\)")
    for m in pat.finditer(text):
        out.append(esc(text[pos:m.start()]))
        if m.group(1) is not None:
            out.append("\\fB" + esc(m.group(1)).replace("-", "\\-") + "\\fR")
        elif m.group(2) is not None:
            out.append("\\fB" + esc(m.group(2)) + "\\fR")
        elif m.group(3) is not None:
            out.append("\\fI" + esc(m.group(3)) + "\\fR")
        else:
            out.append(inline(m.group(4)))
        pos = m.end()
    out.append(esc(text[pos:]))
    return "".join(out)


def line_safe(s):
    """A roff text line must not start with '.' or "'"."""
    if s.startswith(".") or s.startswith("'"):
        return "\\&" + s
    return s


def cells(row):
    row = row.strip()
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|"):
        row = row[:-1]
    return [c.strip().replace("\\|", "|")
            for c in re.split(r"(?<!\\)\|", row)]


def is_sep(row):
    return re.fullmatch(r"\s*\|?(\s*:?-+:?\s*\|)*\s*:?-+:?\s*\|?\s*", row)


def table(rows, out):
    """A table as tagged paragraphs: the first cell is the tag, the others
    follow as 'header: value', the last column as the paragraph."""
    head = cells(rows[0])
    for r in rows[2:]:
        c = cells(r)
        c += [""] * (len(head) - len(c))
        out.append(".TP")
        out.append(line_safe(inline(c[0])))
        parts = []
        for h, v in zip(head[1:-1], c[1:-1]):
            if v and v != "—":
                parts.append("%s: %s" % (h, inline(v)))
        last = inline(c[-1]) if len(c) > 1 else ""
        if parts:
            out.append(line_safe("(" + "; ".join(parts) + ")"))
            out.append(".br")
        if last:
            out.append(line_safe(last))


def body(lines, out):
    i = 0
    para = []

    def flush():
        if para:
            out.append(".PP")
            out.append(line_safe(inline(" ".join(para))))
            para.clear()

    while i < len(lines):
        ln = lines[i].rstrip("\n")
        if ln.startswith("### "):
            flush()
            out.append(".SS " + inline(ln[4:].strip()))
        elif ln.startswith("## "):
            flush()
            out.append(".SH " + inline(ln[3:].strip().upper()))
        elif ln.startswith("```"):
            flush()
            out.append(".PP")
            out.append(".RS 4")
            out.append(".nf")
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                out.append(line_safe(esc(lines[i].rstrip("\n"))))
                i += 1
            out.append(".fi")
            out.append(".RE")
        elif ln.startswith("    ") and not para:
            flush()
            out.append(".PP")
            out.append(".RS 4")
            out.append(".nf")
            while i < len(lines) and (lines[i].startswith("    ") or
                                      not lines[i].strip()):
                if not lines[i].strip():
                    # a blank line inside the block, unless it ends it
                    if i + 1 < len(lines) and lines[i + 1].startswith("    "):
                        out.append("")
                        i += 1
                        continue
                    break
                out.append(line_safe(esc(lines[i][4:].rstrip("\n"))))
                i += 1
            out.append(".fi")
            out.append(".RE")
            continue
        elif ln.lstrip().startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(lines[i].rstrip("\n"))
                i += 1
            if len(rows) >= 2 and is_sep(rows[1]):
                table(rows, out)
            else:
                for r in rows:
                    para.append(r)
            continue
        elif re.match(r"^\s*[-*] ", ln):
            flush()
            item = [re.sub(r"^\s*[-*] ", "", ln)]
            i += 1
            while (i < len(lines) and lines[i].strip() and
                   not re.match(r"^\s*[-*] ", lines[i]) and
                   lines[i].startswith("  ")):
                item.append(lines[i].strip())
                i += 1
            out.append(".IP \\(bu 2")
            out.append(line_safe(inline(" ".join(item))))
            continue
        elif not ln.strip():
            flush()
        else:
            para.append(ln.strip())
        i += 1
    flush()


def header(name, section, summary, version, out):
    out.append('.\\" Generated from Markdown by doc/md2man.py; edit the .md')
    out.append('.TH "%s" "%s" "" "vitalsd %s" "vitalsd"' %
               (name.upper(), section, version))
    out.append(".SH NAME")
    out.append("%s \\- %s" % (name.replace("-", "\\-"), esc(summary)))


def strip_title(lines):
    if lines and lines[0].startswith("# "):
        return lines[1:]
    return lines


def page(src, name, section, summary, version, dst):
    with open(src) as f:
        lines = strip_title(f.readlines())
    out = []
    header(name, section, summary, version, out)
    body(lines, out)
    write(dst, out)


def conf(flags_md, intro_md, version, dst):
    with open(intro_md) as f:
        intro = strip_title(f.readlines())
    with open(flags_md) as f:
        flags = f.readlines()
    out = []
    header("vitalsd.conf", "5", "vitalsd configuration file", version, out)
    body(intro, out)
    out.append(".SH KEYS")
    out.append(".PP")
    out.append("Every key, as vitalsd(8) lists it with its flag:")
    i = 0
    seen = 0
    while i < len(flags):
        if flags[i].lstrip().startswith("|") and i + 1 < len(flags) and \
                is_sep(flags[i + 1]):
            head = [h.lower() for h in cells(flags[i])]
            rows = []
            i += 2
            while i < len(flags) and flags[i].lstrip().startswith("|"):
                rows.append(cells(flags[i]))
                i += 1
            if "config key" not in head:
                continue
            k = head.index("config key")
            for c in rows:
                c += [""] * (len(head) - len(c))
                if not c[k] or c[k] == "—":
                    continue
                out.append(".TP")
                out.append(line_safe(inline(c[k])))
                parts = []
                for j, h in enumerate(head):
                    if j in (k, len(head) - 1) or not c[j] or c[j] == "—":
                        continue
                    parts.append("%s: %s" % (h, inline(c[j])))
                if parts:
                    out.append(line_safe("(" + "; ".join(parts) + ")"))
                    out.append(".br")
                out.append(line_safe(inline(c[-1])))
                seen += 1
            continue
        i += 1
    if seen == 0:
        sys.exit("md2man: no config key rows in " + flags_md)
    out.append(".SH SEE ALSO")
    out.append(".PP")
    out.append("vitalsd(8), vitals(1)")
    write(dst, out)


def write(dst, out):
    with open(dst, "w") as f:
        f.write("\n".join(out) + "\n")


def main(argv):
    if len(argv) == 8 and argv[1] == "page":
        page(*argv[2:])
    elif len(argv) == 6 and argv[1] == "conf":
        conf(*argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)

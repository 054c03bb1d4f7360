#!/usr/bin/env python3
"""The shape of src/ in figures, from the text of the sources alone (issue 18's
before/after): files per folder, the longest functions, and the import cycles
between files.

A file depends on another when it calls or names a function (or a global)
that the other defines with external linkage; an import cycle is a strongly
connected set of two or more files in that graph (Tarjan). #include lines
are counted as well, but the library's private headers (doc_internal.h…)
are shared by whole folders, so the call graph is what shows a cycle.

Layers (--check, the `layers` test): the folders of src/ from the lowest up,
LAYERS below. A file may call and #include what its own layer and the layers
below define. The runtime library (core, runtime) stands alone: nothing of
it may reach above it, and it includes only the runtime's public headers. Above
it, a call up a layer is allowed only to a function a public header
(include/tailbone/) declares, and a private header (src/X/...h) only from
its own layer or above. --check prints what breaks this, any import
cycle and any public header that names jansson, and exits 1; the folders of the layout before scripts/relayout.sh
(runtime < offline < cli) are checked by the same rule.

--table BEFORE_DIR prints the markdown table of docs/structure.md
("Measured"): BEFORE_DIR (a tree with src/ and include/, e.g. `git archive`
of the base) against --root.

usage: scripts/structure.py [--root DIR] [--top N] [--json] [--check] [--table BEFORE_DIR]
"""
import argparse
import json
import os
import re
import sys

C_EXT = (".c", ".cc", ".h")
# lowest first; folders not listed are not checked
LAYERS = ["core", "runtime", "gltf", "model", "passes", "synth", "offline", "cli"]
RUNTIME_LIBRARY = {"core", "runtime"}
RUNTIME_PUBLIC = {"tailbone/common.h", "tailbone/runtime.h", "tailbone/spring.h"}
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else"}


def strip_comments_and_strings(text):
    """Blanks comments and string/char literals, keeping newlines."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


FUNC_HEAD = re.compile(r"^[A-Za-z_][\w \*]*?\b([A-Za-z_]\w*)\s*\(", re.M)


def functions(text):
    """(name, first line, line count, static) of each function definition:
    a head at column 0, its body from a '{' to the matching '}'."""
    clean = strip_comments_and_strings(text)
    found = []
    for m in FUNC_HEAD.finditer(clean):
        name = m.group(1)
        if name in KEYWORDS or clean[m.start()] == "#":
            continue
        # the parameter list, then '{' (not ';')
        depth, i = 0, m.end() - 1
        while i < len(clean):
            if clean[i] == "(":
                depth += 1
            elif clean[i] == ")":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        j = i + 1
        while j < len(clean) and clean[j] in " \t\n":
            j += 1
        # __attribute__ and the like between ')' and '{' are rare here: skip them
        if j >= len(clean) or clean[j] != "{":
            continue
        depth, k = 0, j
        while k < len(clean):
            if clean[k] == "{":
                depth += 1
            elif clean[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        first = clean.count("\n", 0, m.start()) + 1
        last = clean.count("\n", 0, k) + 1
        head = clean[m.start():m.end()]
        before = head.split(name)[0]
        # TB__INLINE / CGLM_INLINE expand to static inline
        found.append((name, first, last - first + 1, "static" in before or "INLINE" in before, clean[j:k]))
    return found


def table(before, after):
    """docs/structure.md's before/after rows from two results."""
    def folders(r):
        return ", ".join(f"{k} {v}" for k, v in r["files_per_folder"].items()) + f" ({r['files']})"

    def longest(r):
        f = r["longest"][0]
        return f"`{f['function']}` {f['lines']} lines ({f['file']})"

    def cycles(r):
        return f"{len(r['cycles'])}" + (": " + "; ".join(" ↔ ".join(c) for c in r["cycles"]) if r["cycles"] else "")

    rows = [("files per folder of src/", folders), ("functions over 100 lines", lambda r: str(r["functions_over_100_lines"])),
            ("longest function", longest), ("import cycles between files", cycles),
            ("calls between .c files", lambda r: str(r["call_dependencies"])),
            ("calls up a layer (through public headers / breaking `--check`)",
             lambda r: f"{len(r['up_through_public_headers'])} / {len(r['layer_violations'])}")]
    print("| | before | after |\n| --- | --- | --- |")
    for name, f in rows:
        print(f"| {name} | {f(before)} | {f(after)} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--top", type=int, default=10, help="longest functions listed")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--check", action="store_true", help="exit 1 on a cycle or a dependency up a layer")
    ap.add_argument("--table", metavar="BEFORE_DIR", help="markdown table: BEFORE_DIR against --root")
    a = ap.parse_args()
    result = measure(a.root, a.top)
    if a.table:
        table(measure(a.table, a.top), result)
        return
    sccs, violations, up_public = result["cycles"], result["layer_violations"], result["up_through_public_headers"]
    mutual = result["mutual_pairs"]
    if a.check:
        for v in violations:
            print("structure: " + v)
        print(f"structure: {len(violations)} layer violations, {len(sccs)} import cycles, "
              f"{len(up_public)} calls up a layer through public headers")
        sys.exit(1 if violations else 0)
    if a.json:
        print(json.dumps(result, indent=2))
        return
    report(result)


def measure(root, ntop):
    """The figures of the tree at root (src/, include/tailbone/)."""
    src = os.path.join(root, "src")
    files = {}
    for d, _, names in os.walk(src):
        for f in names:
            if f.endswith(C_EXT):
                p = os.path.relpath(os.path.join(d, f), src)
                with open(os.path.join(d, f), encoding="utf-8", errors="replace") as fh:
                    files[p] = fh.read()

    per_folder = {}
    for p in files:
        folder = os.path.dirname(p) or "."
        per_folder[folder] = per_folder.get(folder, 0) + 1

    funcs, defined = [], {}
    for p, text in files.items():
        if not p.endswith((".c", ".cc")):
            continue
        for name, first, n, static, body in functions(text):
            funcs.append((n, p, first, name))
            if not static and name != "main":
                defined.setdefault(name, set()).add(p)
    funcs.sort(key=lambda f: (-f[0], f[1], f[2]))
    # file-scope data with external linkage ("const float tbs_joint_pos[...] = {")
    data = re.compile(r"^(?!static\b)(?:const\s+)?(?:unsigned\s+|struct\s+)?\w+\s+\**([A-Za-z_]\w*)\s*(?:\[[^\]]*\])*\s*=", re.M)
    for p, text in files.items():
        if p.endswith((".c", ".cc")):
            for m in data.finditer(strip_comments_and_strings(text)):
                if m.group(1) not in KEYWORDS:
                    defined.setdefault(m.group(1), set()).add(p)

    # call graph between .c files
    ident = re.compile(r"\b[A-Za-z_]\w*\b")
    graph = {p: set() for p in files if p.endswith((".c", ".cc"))}
    for p in graph:
        for w in set(ident.findall(strip_comments_and_strings(files[p]))):
            for q in defined.get(w, ()):
                if q != p:
                    graph[p].add(q)

    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

    # Tarjan's strongly connected components
    index, low, on, stack, sccs, counter = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    sccs.sort()

    # which pairs inside a cycle call each other both ways (the cycle's edges)
    mutual = sorted({tuple(sorted((p, q))) for p in graph for q in graph[p] if p in graph[q]})

    include_edges = sum(len(inc.findall(t)) for t in files.values())

    # public declarations: names followed by '(' in include/tailbone/*.h
    public = set()
    inc_dir = os.path.join(root, "include", "tailbone")
    if os.path.isdir(inc_dir):
        for f in os.listdir(inc_dir):
            if f.endswith(".h"):
                with open(os.path.join(inc_dir, f), encoding="utf-8", errors="replace") as fh:
                    public.update(re.findall(r"\b([A-Za-z_]\w*)\s*\(", strip_comments_and_strings(fh.read())))

    def layer(p):
        top = p.split("/")[0] if "/" in p else ""
        return LAYERS.index(top) if top in LAYERS else None

    up_public, violations = [], []
    for p in sorted(graph):
        lp = layer(p)
        if lp is None:
            continue
        words = set(ident.findall(strip_comments_and_strings(files[p])))
        for q in sorted(graph[p]):
            lq = layer(q)
            if lq is None or lq <= lp:
                continue
            names = sorted(w for w in words if q in defined.get(w, ()))
            private = [w for w in names if w not in public]
            if LAYERS[lp] in RUNTIME_LIBRARY:
                violations.append(f"{p} -> {q}: the runtime library calls up ({', '.join(names)})")
            elif private:
                violations.append(f"{p} -> {q}: calls up a layer, not through a public header ({', '.join(private)})")
            else:
                up_public.append(f"{p} -> {q} ({', '.join(names)})")
    for p in sorted(files):
        lp = layer(p)
        if lp is None:
            continue
        for h in inc.findall(files[p]):
            top = h.split("/")[0]
            if h.startswith("tailbone/"):
                if LAYERS[lp] in RUNTIME_LIBRARY and h not in RUNTIME_PUBLIC:
                    violations.append(f"{p}: the runtime library includes {h}")
            elif top in LAYERS and LAYERS.index(top) > lp:
                violations.append(f"{p}: includes {h}, a private header of a higher layer")
    for c in sccs:
        violations.append("import cycle: " + " <-> ".join(c))
    # the public headers need no jansson (reports are C structs, JSON is text)
    if os.path.isdir(inc_dir):
        for f in sorted(os.listdir(inc_dir)):
            if f.endswith(".h"):
                with open(os.path.join(inc_dir, f), encoding="utf-8", errors="replace") as fh:
                    code = strip_comments_and_strings(fh.read())
                if re.search(r"\bjson_t\b|#\s*include\s*<jansson\.h>", code):
                    violations.append(f"include/tailbone/{f}: names jansson (json_t); keep it in a private header")

    result = {
        "files_per_folder": dict(sorted(per_folder.items())),
        "files": len(files),
        "functions": len(funcs),
        "functions_over_100_lines": sum(1 for f in funcs if f[0] > 100),
        "longest": [{"lines": n, "file": p, "line": l, "function": name} for n, p, l, name in funcs[:ntop]],
        "call_dependencies": sum(len(v) for v in graph.values()),
        "include_lines": include_edges,
        "cycles": sccs,
        "mutual_pairs": [list(m) for m in mutual],
        "up_through_public_headers": up_public,
        "layer_violations": violations,
    }
    return result


def report(result):
    sccs, violations, up_public = result["cycles"], result["layer_violations"], result["up_through_public_headers"]
    mutual = result["mutual_pairs"]
    print("files per folder (src/): " + ", ".join(f"{k} {v}" for k, v in result["files_per_folder"].items()) +
          f" ({result['files']} in all)")
    print(f"functions: {result['functions']}, over 100 lines: {result['functions_over_100_lines']}")
    print("longest:")
    for f in result["longest"]:
        print(f"  {f['lines']:4d}  {f['function']}  ({f['file']}:{f['line']})")
    print(f"dependencies between .c files (calls to another file's functions): {result['call_dependencies']}")
    print(f"import cycles (strongly connected files): {len(sccs)}")
    for c in sccs:
        print("  " + " <-> ".join(c))
    print(f"calls up a layer through a public header: {len(up_public)}")
    for u in up_public:
        print("  " + u)
    print(f"layer violations (--check): {len(violations)}")
    for v in violations:
        print("  " + v)
    print(f"pairs of files that call each other: {len(mutual)}")
    for m in mutual:
        print(f"  {m[0]} <-> {m[1]}")


if __name__ == "__main__":
    main()

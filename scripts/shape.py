#!/usr/bin/env python3
"""The tree's shape rules (docs/architecture.md, "Shape rules"):

- no Rust file over 500 lines;
- no function over 100 lines outside tests;
- no import circle between the modules of a crate: at each folder level,
  the sibling modules' `crate::`/`super::` references form no cycle (a
  `crate::Name` the crate root re-exports counts as a reference to the
  module it comes from);
- the crates depend on each other only downwards, in the layers
  docs/architecture.md describes (`LAYERS`), and the runtime's code never
  names a chat platform;
- a type's inherent `impl` blocks stay in the folder of the module that
  defines it (`SPREAD_OK` lists the known exceptions, with why);
- no public function of a library crate returns `Result<_, String>`:
  errors are types there, and strings only where a person reads them.

Prints what breaks a rule and exits 1, or prints a one-line summary.
`--report` prints the longest functions and files even when all is well.
"""

import os
import re
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_FILE = 500
MAX_FN = 100

# Workspace crates by layer: a crate may depend (normal dependencies) only
# on crates of lower layers. Dev-dependencies are free.
LAYERS = {
    "switchboard-core": 0,
    "switchboard-http": 0,
    "switchboard-sandbox": 0,
    "switchboard-telemetry": 0,
    "switchboard-test-support": 0,
    "switchboard-config": 1,
    "switchboard-store": 1,
    "switchboard-channel-local": 1,
    "switchboard-channel-telegram": 1,
    "switchboard-channel-discord": 1,
    "switchboard-channel-matrix": 1,
    "switchboard-mcp": 2,
    "switchboard-runtime": 3,
    "switchboard-gateway": 4,
    "switchboard-bench": 5,
    "switchboard": 6,
}

# Types whose inherent impls are spread beyond their own module's folder,
# on purpose: crate -> type -> why.
SPREAD_OK = {
    "crates/config": {"Config": "one type read by concern: loading, people, the delegation roster, routes"},
    "crates/runtime": {
        "AgentRun": "the agent loop, one file per step of a turn: tool calls, compaction, joins, the last word",
        "Runtime": "cron and /compact are operations of the public face that would otherwise circle with it",
        "Core": "kill.rs stops a run tree; the core cannot name the modules above it",
    },
    "crates/gateway": {"Gateway": "reload/ applies a configuration to a started gateway"},
    "crates/store": {"Sessions": "summaries.rs is the compaction notes of the sessions table"},
    "channels/local": {"LocalHub": "api.rs (requests) and serve.rs (listeners) of one hub"},
}
PLATFORMS = re.compile(r"\b(telegram|discord|matrix)\b", re.IGNORECASE)


def rust_files():
    for top in ("crates", "channels", "src", "tests"):
        base = os.path.join(ROOT, top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if d not in ("target", "node_modules")]
            for name in filenames:
                if name.endswith(".rs"):
                    yield os.path.join(dirpath, name)


def blank_literals(text):
    """The text with comments, strings and char literals blanked (newlines
    kept), so braces and paths can be counted."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = text.find('"' + hashes, i + len(hashes) + 2)
            end = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i:j + 1]))
            i = j + 1
        elif c == "'":
            m = re.match(r"'(\\(x..|u\{[0-9a-fA-F]+\}|.)|[^\\'])'", text[i:i + 12])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def test_spans(code):
    """Line ranges of `#[cfg(test)]` items (usually `mod tests { .. }`)."""
    spans = []
    for m in re.finditer(r"#\[cfg\(test\)\]", code):
        start = code.find("{", m.end())
        semi = code.find(";", m.end())
        if start < 0 or (0 <= semi < start):
            continue
        end = matching(code, start)
        spans.append((code.count("\n", 0, m.start()), code.count("\n", 0, end)))
    return spans


def matching(code, open_at):
    depth = 0
    for j in range(open_at, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(code) - 1


def functions(code):
    """(name, first line, line count) of each function with a body."""
    for m in re.finditer(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)", code):
        j, depth = m.end(), 0
        while j < len(code):
            ch = code[j]
            if ch in "(<[":
                depth += 1
            elif ch in ")>]":
                depth -= 1
            elif ch == ";" and depth <= 0:
                break
            elif ch == "{" and depth <= 0:
                end = matching(code, j)
                first = code.count("\n", 0, m.start())
                yield m.group(1), first + 1, code.count("\n", m.start(), end) + 1
                break
            j += 1


def is_test_file(path):
    rel = os.path.relpath(path, ROOT)
    parts = rel.split(os.sep)
    return parts[0] == "tests" or "tests" in parts[:-1] or "test-support" in parts or parts[-1] == "tests.rs"


def crate_of(path):
    """(crate root dir, module path) for a file under some crate's src/."""
    rel = os.path.relpath(path, ROOT).split(os.sep)
    if "src" not in rel:
        return None
    k = rel.index("src")
    crate = os.sep.join(rel[:k])
    mods = rel[k + 1:]
    last = mods[-1][:-3]
    mods = mods[:-1] + ([] if last in ("lib", "main", "mod") else [last])
    return crate, tuple(mods)


def module_edges(files):
    """Per crate: module path -> set of referenced module paths."""
    modules = defaultdict(set)
    refs = defaultdict(lambda: defaultdict(set))
    for path, code in files:
        found = crate_of(path)
        if not found:
            continue
        crate, mod = found
        if mod and mod[0] in ("bin",):
            continue
        modules[crate].add(mod)
        # Tests may use anything (like the `#[cfg(test)]` spans below).
        if is_test_file(path):
            continue
        body = code
        for span in test_spans(code):
            lines = body.split("\n")
            for k in range(span[0], min(span[1] + 1, len(lines))):
                lines[k] = ""
            body = "\n".join(lines)
        for target in referenced(body, mod):
            refs[crate][mod].add(target)
    for crate, by_mod in refs.items():
        exported = reexports(dict(files), crate)
        own = {m[0] for m in modules[crate] if m}
        # `crate::Name` and `crate::Name::item`, Name re-exported by the
        # root: an arrow to the module Name comes from.
        for mod, targets in by_mod.items():
            by_mod[mod] = {exported[t[0]] if t and t[0] not in own and t[0] in exported else t for t in targets}
    return modules, refs


def reexports(code_of, crate):
    """`Name -> module path` for what the crate root re-exports from its
    own modules (`pub use agent::{Join, Joins};`)."""
    out = {}
    for root in ("lib.rs", "main.rs"):
        path = os.path.join(ROOT, crate, "src", root)
        code = code_of.get(path)
        if code is None:
            continue
        flat = re.sub(r"\s*(::|[{},])\s*", r"\1", re.sub(r"\s+", " ", code))
        for m in re.finditer(r"\bpub(?:\([a-z]+\))? use ([^;]+);", flat):
            for item in split_group(m.group(1)) if "{" in m.group(1) else [m.group(1)]:
                parts = [p for p in item.replace("crate::", "").replace("self::", "").split("::") if p]
                if len(parts) < 2:
                    continue
                name = parts[-1].split(" as ")[-1].strip()
                out[name] = tuple(parts[:-1])
    return out


def referenced(body, mod):
    """Module paths this file names through `crate::`, `super::` or `self::`."""
    out = set()
    flat = re.sub(r"\s*(::|[{},])\s*", r"\1", re.sub(r"\s+", " ", body))
    for m in re.finditer(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)*)(::\{)?", flat):
        head, tail = m.group(1), [p for p in m.group(2).split("::") if p]
        if head == "crate":
            base = []
        elif head == "super":
            base = list(mod[:-1])
            while tail and tail[0] == "super":
                base, tail = base[:-1], tail[1:]
        else:
            base = list(mod)
        if m.group(3):
            inner = group_at(flat, m.end())
            for item in split_group(inner):
                out.add(tuple(base + tail + [p for p in item.split("::") if p and p != "self"]))
        else:
            out.add(tuple(base + tail))
    return out


def group_at(flat, start):
    depth, j = 1, start
    while j < len(flat) and depth:
        depth += {"{": 1, "}": -1}.get(flat[j], 0)
        j += 1
    return flat[start:j - 1]


def split_group(inner):
    items, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        cur += ch
    items.append(cur)
    flat = []
    for item in items:
        if "{" in item:
            head = item[: item.index("{")]
            for sub in split_group(item[item.index("{") + 1: -1]):
                flat.append(head + sub)
        elif item:
            flat.append(item)
    return flat


def cycles(modules, refs):
    """Cycles among siblings: for each folder module P, an edge A -> B
    between two children of P when something in A (or below) names B (or
    below)."""
    found = []
    for crate, mods in modules.items():
        parents = {m[:-1] for m in mods if m}
        for parent in parents:
            kids = {m[len(parent)] for m in mods if len(m) > len(parent) and m[: len(parent)] == parent}
            graph = defaultdict(set)
            for src, targets in refs[crate].items():
                if len(src) <= len(parent) or src[: len(parent)] != parent:
                    continue
                a = src[len(parent)]
                for t in targets:
                    if len(t) > len(parent) and t[: len(parent)] == parent and t[len(parent)] in kids:
                        b = t[len(parent)]
                        if a != b:
                            graph[a].add(b)
            for comp in strongly_connected(kids, graph):
                if len(comp) > 1:
                    found.append((crate, "::".join(parent) or "crate", sorted(comp), graph))
    return found


def strongly_connected(nodes, graph):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
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
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def crate_layers():
    """Problems with the crates' dependencies on each other."""
    problems = []
    manifests = [os.path.join(ROOT, "Cargo.toml")]
    for top in ("crates", "channels"):
        for name in sorted(os.listdir(os.path.join(ROOT, top))):
            manifests.append(os.path.join(ROOT, top, name, "Cargo.toml"))
    for manifest in manifests:
        if not os.path.exists(manifest):
            continue
        text = open(manifest, encoding="utf-8").read()
        name = re.search(r'(?m)^name = "([^"]+)"', text).group(1)
        if name not in LAYERS:
            problems.append(f"{os.path.relpath(manifest, ROOT)}: crate {name} has no layer; add it to LAYERS in scripts/shape.py")
            continue
        deps = re.search(r"(?ms)^\[dependencies\]\n(.*?)(?=^\[|\Z)", text)
        for dep in re.findall(r"(?m)^(switchboard[a-z-]*)\b", deps.group(1) if deps else ""):
            if LAYERS.get(dep, 99) >= LAYERS[name]:
                problems.append(
                    f"{os.path.relpath(manifest, ROOT)}: {name} (layer {LAYERS[name]}) depends on {dep} "
                    f"(layer {LAYERS.get(dep, '?')}); a crate depends only on lower layers (docs/architecture.md)"
                )
    return problems


def platform_names(files):
    """The runtime's code (outside comments and strings) naming a platform."""
    problems = []
    for path, code in files:
        rel = os.path.relpath(path, ROOT)
        if not rel.startswith(os.path.join("crates", "runtime", "src")):
            continue
        for k, line in enumerate(code.split("\n"), 1):
            if PLATFORMS.search(line):
                problems.append(f"{rel}:{k}: the runtime names a platform; it addresses chats only through ChatAddress")
    return problems


# The library crates: everything but the gateway, the bench, the binary
# and the test peers.
LIBRARY_SRC = re.compile(r"^(crates/(core|http|sandbox|store|telemetry|config|mcp|runtime)|channels/[^/]+)/src/")


def public_trait_bodies(code):
    """(start, end) offsets of the bodies of `pub trait` blocks."""
    bodies = []
    for m in re.finditer(r"(?<![\w(])pub\s+trait\s+[A-Za-z_][^{;]*\{", code):
        depth, i = 1, m.end()
        while i < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        bodies.append((m.end(), i))
    return bodies


def string_errors(files):
    """Public functions of library crates, and the methods of their public
    traits, that return `Result<_, String>`."""
    problems = []
    for path, code in files:
        rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
        if not LIBRARY_SRC.match(rel) or is_test_file(path):
            continue
        spans = test_spans(code)
        traits = public_trait_bodies(code)
        for m in re.finditer(r"(?<![\w(])(pub\s+)?(?:async\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)", code):
            in_trait = any(a <= m.start() < b for a, b in traits)
            if not m.group(1) and not in_trait:
                continue
            first = code.count("\n", 0, m.start()) + 1
            if any(a <= first - 1 <= b for a, b in spans):
                continue
            body = re.search(r"[{;]", code[m.end():])
            sig = code[m.end(): m.end() + (body.start() if body else 0)]
            ret = sig.rsplit("->", 1)[1] if "->" in sig else ""
            ret = re.sub(r"\s+", "", ret.split("where")[0])
            if ret.startswith("Result<") and ret.endswith(",String>"):
                what = "a public trait's fn" if in_trait else "pub fn"
                problems.append(f"{rel}:{first}: {what} {m.group(2)} returns Result<_, String>; give it an error type")
    return problems


def spread_impls(files):
    """Inherent impls outside the folder of the module defining the type."""
    defined, impls = {}, defaultdict(set)
    for path, code in files:
        found = crate_of(path)
        if not found or is_test_file(path):
            continue
        crate, mod = found
        spans = test_spans(code)
        folder = os.path.dirname(path) if os.path.basename(path) in ("mod.rs", "lib.rs", "main.rs") else path[:-3]
        for m in re.finditer(r"(?m)^\s*(?:pub(?:\([a-z]+\))? )?(?:struct|enum) ([A-Za-z_][A-Za-z0-9_]*)", code):
            defined.setdefault((crate, m.group(1)), folder)
        for m in re.finditer(r"(?m)^\s*impl(?:<[^>{]*>)? ([A-Za-z_][A-Za-z0-9_]*)(?:<[^{]*>)? ?\{", code):
            line = code.count("\n", 0, m.start())
            if not any(a <= line <= b for a, b in spans):
                impls[(crate, m.group(1))].add(path)
    problems = []
    for (crate, ty), paths in sorted(impls.items()):
        home = defined.get((crate, ty))
        if home is None or ty in SPREAD_OK.get(crate, {}):
            continue
        away = sorted(p for p in paths if not (p == home + ".rs" or p.startswith(home + os.sep)))
        for p in away:
            problems.append(
                f"{os.path.relpath(p, ROOT)}: impl {ty} outside {os.path.relpath(home, ROOT)}; keep a type's impls in its module's folder (or list it in SPREAD_OK with why)"
            )
    return problems


def main():
    report = "--report" in sys.argv
    files, problems, long_fns, sizes = [], [], [], []
    for path in sorted(rust_files()):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        code = blank_literals(text)
        files.append((path, code))
        rel = os.path.relpath(path, ROOT)
        lines = text.count("\n")
        sizes.append((lines, rel))
        if lines > MAX_FILE:
            problems.append(f"{rel}: {lines} lines (at most {MAX_FILE})")
        if is_test_file(path):
            continue
        spans = test_spans(code)
        for name, first, count in functions(code):
            if any(a <= first - 1 <= b for a, b in spans):
                continue
            long_fns.append((count, f"{rel}:{first} {name}"))
            if count > MAX_FN:
                problems.append(f"{rel}:{first}: fn {name} is {count} lines (at most {MAX_FN})")
    modules, refs = module_edges(files)
    for crate, parent, comp, graph in cycles(modules, refs):
        edges = ", ".join(f"{a}->{b}" for a in comp for b in sorted(graph[a]) if b in comp)
        problems.append(f"{crate}: import circle under {parent}: {' '.join(comp)} ({edges})")
    problems += crate_layers() + platform_names(files) + spread_impls(files) + string_errors(files)
    if report:
        for count, where in sorted(long_fns, reverse=True)[:10]:
            print(f"fn {count:4} {where}")
        for lines, rel in sorted(sizes, reverse=True)[:10]:
            print(f"file {lines:4} {rel}")
    for p in problems:
        print(p)
    if problems:
        print(f"shape: {len(problems)} problem(s)")
        return 1
    print(
        f"shape: {len(sizes)} files, {len(long_fns)} functions outside tests, no circles, "
        f"{len(LAYERS)} crates in layers, impls at home, no string errors in public library functions"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Every repository path the README and docs/ name must exist.

Reads README.md and docs/**/*.md and collects
- backticked tokens that start with a top-level folder of the repository
  (`crates/...`, `channels/...`, `config/...`, `migrations/...`,
  `tests/...`, `docs/...`, `deploy/...`, `scripts/...`, `src/...`,
  `.ci/...`) or with a crate's own folder as docs/architecture.md writes
  it (`runtime/src/...`, `gateway/src/...`: taken under crates/), and
- relative markdown links (`[x](operations.md#y)`, `[x](docs/y.md)`),
and checks that each exists (a trailing `/` asks for a folder; `*` is a
glob). Tokens with placeholders (`<alias>`, `{x}`, `...`) and URLs are
skipped. Prints every missing path with its file and line; exits 1 when
one is missing, else prints a one-line summary.
"""

import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP = ("crates/", "channels/", "config/", "migrations/", "tests/", "docs/", "deploy/", "scripts/", "src/", ".ci/")
TICKS = re.compile(r"`([^`\s]+)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def crate_folders():
    return {name + "/" for name in os.listdir(os.path.join(ROOT, "crates"))}


def candidates(line, crates):
    """(path as named, path from the repository root) of each path on `line`."""
    for token in TICKS.findall(line):
        token = token.rstrip(".,;:)")
        # A crate's own folder first (`config/src/...` is the config
        # crate's, not the top-level config/).
        if any(token.startswith(c + "src/") for c in crates):
            yield token, "crates/" + token
        elif token.startswith(TOP):
            yield token, token


def links(line, doc_dir):
    for target in LINK.findall(line):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#")[0]
        if path:
            yield target, os.path.normpath(os.path.join(doc_dir, path))


def skipped(path):
    return any(mark in path for mark in ("<", ">", "{", "}", "...", "$"))


def exists(path):
    full = os.path.join(ROOT, path)
    if "*" in path:
        return bool(glob.glob(full))
    if path.endswith("/"):
        return os.path.isdir(full)
    # `path:line` and `file.rs::item` name a place inside a file.
    full = re.sub(r"(:\d+(-\d+)?|::.*)$", "", full)
    return os.path.exists(full)


def main():
    crates = {c.rstrip("/") + "/" for c in crate_folders()}
    files = [os.path.join(ROOT, "README.md")] + sorted(
        glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True)
    )
    named, missing = 0, []
    for doc in files:
        rel = os.path.relpath(doc, ROOT)
        doc_dir = os.path.dirname(rel)
        in_code = False
        with open(doc, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if line.lstrip().startswith("```"):
                    in_code = not in_code
                    continue
                if in_code:
                    continue
                for shown, path in list(candidates(line, crates)) + list(links(line, doc_dir)):
                    if skipped(path):
                        continue
                    named += 1
                    if not exists(path):
                        missing.append(f"{rel}:{number}: {shown} does not exist")
    for m in missing:
        print(m)
    if missing:
        print(f"docs_paths: {len(missing)} of {named} paths named in {len(files)} files are missing")
        return 1
    print(f"docs_paths: {named} paths named in {len(files)} files, all present")
    return 0


if __name__ == "__main__":
    sys.exit(main())

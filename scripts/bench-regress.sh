#!/usr/bin/env bash
# The regression bench: `./scripts/bench-regress.sh [REV] [compare options]`.
#
# Builds this tree and REV (default: HEAD~1) in release mode with the
# benchmarks, then runs `switchboard bench compare`: both gateways and the
# raw relay (the floor), alternately, against the same loopback peers,
# and prints the table docs/performance.md explains. REV is built first in
# the same target folder (dependencies are shared) and its binary copied
# aside before this tree's build replaces it. Cargo names the project's own
# crates by their path inside the workspace, so the two trees' crates land
# on the same files: each build first cleans them (never the dependencies)
# so that neither reuses the other's.
set -euo pipefail
cd "$(dirname "$0")/.."
rev="${1:-HEAD~1}"
shift || true
target="${CARGO_TARGET_DIR:-$PWD/target}"
work="$(mktemp -d)"
trap 'git worktree remove --force "$work/old" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

# Build the tree in the current folder, its own crates rebuilt from scratch.
build() {
    local members
    members=$(cargo metadata --no-deps --format-version 1 |
        python3 -c 'import json, sys; print(" ".join("-p " + p["name"] for p in json.load(sys.stdin)["packages"]))')
    # shellcheck disable=SC2086
    CARGO_TARGET_DIR="$target" cargo clean --release $members >/dev/null 2>&1 || true
    CARGO_TARGET_DIR="$target" cargo build --release --features bench --bin switchboard
}

echo "==> building $rev (release, --features bench)" >&2
git worktree add --detach "$work/old" "$rev" >/dev/null
(cd "$work/old" && build)
cp "$target/release/switchboard" "$work/switchboard-old"
echo "==> building this tree (release, --features bench)" >&2
build

# A code order written for other symbol names places little together
# (build.rs): say so, as the idle RSS line would only hint at it.
if command -v nm >/dev/null && [ -s scripts/code-order.txt ]; then
    found=$(nm "$target/release/switchboard" 2>/dev/null | awk '{print $NF}' | sort -u |
        comm -12 - <(sort -u scripts/code-order.txt) | wc -l)
    listed=$(wc -l <scripts/code-order.txt)
    echo "==> code order: $found of $listed functions found in this build" >&2
    if [ $((found * 10)) -lt $((listed * 8)) ]; then
        echo "==> fewer than 80%: run scripts/code-order.sh and commit scripts/code-order.txt" >&2
    fi
fi

"$target/release/switchboard" bench compare --old "$work/switchboard-old" --new "$target/release/switchboard" "$@"

#!/usr/bin/env bash
# The first hour, timed as docs/getting-started.md walks it: `git clone`,
# the build `cargo run -- init` makes (cold, in a target folder of its own,
# unless FIRST_HOUR_TARGET names a warm one), then `switchboard init` with
# flags against the Telegram stand-in up to the first answered DM (a
# stranger paired from the ops group and answered; tests/init.rs times and
# prints that part). Compiling the test harness is reported apart: an
# operator does not do it.
#
#   scripts/first-hour.sh [REPO]      (default: this checkout)
set -euo pipefail
repo="${1:-$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
target="${FIRST_HOUR_TARGET:-$work/target}"
now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc; }

t0=$(now)
git clone -q "$repo" "$work/switchboard"
t1=$(now)
cd "$work/switchboard"
CARGO_TARGET_DIR="$target" cargo build -q --bin switchboard
t2=$(now)
CARGO_TARGET_DIR="$target" cargo test -q -p switchboard --test init --no-run 2>/dev/null
t3=$(now)
line=$(CARGO_TARGET_DIR="$target" cargo test -q -p switchboard --test init \
    init_with_flags_checks_the_token_and_what_it_writes_answers_a_dm -- --nocapture 2>&1 | grep "init took")
dm=$(echo "$line" | sed -E 's/.*first answered DM \(pairing included\): ([0-9.]+) s.*/\1/')

echo "first hour, $(nproc) cores, target ${FIRST_HOUR_TARGET:+warm}${FIRST_HOUR_TARGET:-cold}:"
printf '  git clone                      %8.1f s\n' "$(secs "$t0" "$t1")"
printf '  cargo build (switchboard)      %8.1f s\n' "$(secs "$t1" "$t2")"
printf '  init to the first answered DM  %8.2f s   (%s)\n' "$dm" "$line"
printf '  clone to the first DM          %8.1f s\n' "$(echo "$(secs "$t0" "$t2") + $dm" | bc)"
printf '  (the test harness build, not an operator step: %.1f s)\n' "$(secs "$t2" "$t3")"

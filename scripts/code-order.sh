#!/usr/bin/env bash
# Writes scripts/code-order.txt: the functions a running gateway uses, in
# the order they first ran, which the linker places together at the start
# of the binary in release builds (build.rs; docs/performance.md, "Where
# the memory goes"). Run it again after changes that move much code (a
# dependency upgrade, a new channel): a stale list only places fewer
# functions together, it never breaks the build.
#
# Needs valgrind. Builds the release binary with the benchmarks, then runs
# `switchboard bench compare` with the gateway under callgrind (start-up,
# idle, direct messages, two bursts; once with the channel's merge window
# and once without), dumping what ran every 2 s, and keeps the names of the
# binary's own functions in the order they first appeared.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "code-order.sh needs valgrind (apt-get install valgrind)" >&2; exit 1; }
target="${CARGO_TARGET_DIR:-$PWD/target}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cargo build --release --features bench --bin switchboard
bin="$work/switchboard"
cp "$target/release/switchboard" "$bin"

cat >"$work/under-callgrind" <<EOF
#!/usr/bin/env bash
( while sleep 2; do callgrind_control -d \$\$ >/dev/null 2>&1 || exit 0; done ) &
exec valgrind --tool=callgrind --demangle=no --dump-instr=no \\
    --callgrind-out-file="$work/cg.%p" "$bin" "\$@" 2>>"$work/valgrind.log"
EOF
chmod +x "$work/under-callgrind"

for extra in "" "merge_window_ms = 0"; do
    "$bin" bench compare --old "$bin" --new "$work/under-callgrind" --new-extra "$extra" \
        --runs 1 --idle-secs 3 --sequential 5 --burst 20 --big-burst 20 >/dev/null
done

python3 - "$work" "$bin" >scripts/code-order.txt <<'EOF'
# Function names from callgrind's dumps (fn= and cfn= lines, names given
# once per id), kept when they belong to the binary, in first-seen order.
import glob, os, re, sys
work, binary = sys.argv[1], sys.argv[2]
def dump_key(path):
    name = os.path.basename(path)[3:]          # cg.<pid>[.<n>]
    pid, _, n = name.partition(".")
    return (os.path.getmtime(path), int(pid), int(n or 0))
seen, order = set(), []
for path in sorted(glob.glob(os.path.join(work, "cg.*")), key=dump_key):
    names, objects = {}, {}
    ob = cob = None
    for line in open(path, errors="replace"):
        m = re.match(r"^(ob|cob|fn|cfn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if not m:
            continue
        kind, ident, text = m.groups()
        if kind in ("ob", "cob"):
            if text:
                objects[ident] = text
            if kind == "ob":
                ob = objects.get(ident)
            else:
                cob = objects.get(ident)
            continue
        if text:
            names[ident] = text
        obj = (cob or ob) if kind == "cfn" else ob
        if kind == "cfn":
            cob = None
        name = names.get(ident)
        if name and obj == binary and name not in seen:
            seen.add(name)
            order.append(name)
sys.stdout.write("".join(n + "\n" for n in order))
EOF
echo "scripts/code-order.txt: $(wc -l <scripts/code-order.txt) functions" >&2

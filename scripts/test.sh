#!/usr/bin/env bash
# Runs every test layer and stops at the first failure:
#   format, clippy (native and wasm32), native tests, browser tests (headless Chromium, inside
#   a dedicated worker), the npm package and the Tiptap example built from it, the package's
#   node tests, the sync server's tests (Hocuspocus with real Yjs clients and redis-server),
#   end-to-end tests (playwright-core against the dev server and the example; the in-browser
#   model's run SmolLM2-135M-Instruct from www/models/, which `make test`'s setup fetches).
# Ends with one summary line of counts per layer and a total line.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
export WASM_BINDGEN_TEST_TIMEOUT="${WASM_BINDGEN_TEST_TIMEOUT:-120}"
# A clean build gains nothing from incremental caches, which take gigabytes of disk.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
target=wasm32-unknown-unknown
logs=$(mktemp -d)

declare -A passed failed
layers=(native browser package sync e2e)
for l in "${layers[@]}"; do passed[$l]=0; failed[$l]=0; done

summary() {
  local line="summary:" total_p=0 total_f=0
  for l in "${layers[@]}"; do
    line+=" $l ${passed[$l]} passed, ${failed[$l]} failed;"
    total_p=$((total_p + passed[$l])); total_f=$((total_f + failed[$l]))
  done
  echo
  echo "${line%;}"
  echo "total: $total_p passed, $total_f failed"
}

fail() {
  echo
  echo "make test: FAILED at: $1"
  summary
  exit 1
}

step() { # step NAME COMMAND...
  local name=$1; shift
  echo "==> $name"
  "$@" || fail "$name"
}

# Sum "N passed; M failed" from cargo / wasm-bindgen-test-runner result lines.
count_cargo() { # layer logfile
  local p f
  read -r p f < <(awk '/^test result:/ {
      for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i }
    } END { print p + 0, f + 0 }' "$2")
  passed[$1]=$((passed[$1] + p)); failed[$1]=$((failed[$1] + f))
}

node_tests() { # node_tests LAYER LABEL DIR FILES...: node's test runner (TAP), counted into LAYER
  local layer=$1 label=$2 dir=$3; shift 3
  (cd "$dir" && node --test --test-reporter=tap --test-concurrency=1 "$@") 2>&1 | tee "$logs/$layer.log"
  local status=${PIPESTATUS[0]}
  passed[$layer]=$(grep -E '^# pass ' "$logs/$layer.log" | awk '{print $3}' | tail -1)
  failed[$layer]=$(grep -E '^# fail ' "$logs/$layer.log" | awk '{print $3}' | tail -1)
  passed[$layer]=${passed[$layer]:-0}; failed[$layer]=${failed[$layer]:-0}
  [ "$status" = 0 ] || fail "$label"
  [ "${passed[$layer]}" -gt 0 ] || fail "$label (none ran)"
}

step "cargo fmt --check" cargo fmt --all --check
step "clippy (native)" cargo clippy --quiet --workspace --all-targets -- -D warnings
step "clippy (wasm32)" cargo clippy --quiet --workspace --all-targets --target "$target" -- -D warnings

echo "==> native tests"
cargo test --workspace 2>&1 | tee "$logs/native.log"
status=${PIPESTATUS[0]}
count_cargo native "$logs/native.log"
[ "$status" = 0 ] || fail "native tests"

echo "==> browser tests (dedicated worker, headless Chromium)"
# The model-call tests fetch from the dev server's mock LLM.
MOCK_PORT="${MOCK_PORT:-8788}"
export DRAFTSMITH_MOCK_URL="http://127.0.0.1:${MOCK_PORT}/"
node www/server.mjs --port "$MOCK_PORT" --mock > "$logs/mock.log" 2>&1 &
mock_pid=$!
trap 'kill "$mock_pid" 2>/dev/null' EXIT
for _ in $(seq 1 100); do grep -q "draftsmith demo" "$logs/mock.log" && break; sleep 0.1; done
grep -q "draftsmith demo" "$logs/mock.log" || { cat "$logs/mock.log"; fail "starting the mock LLM server on port $MOCK_PORT"; }
web_tests=()
for f in tests/web_*.rs; do web_tests+=(--test "$(basename "$f" .rs)"); done
# Chromium under chromedriver leaves a profile directory (about 80 MB) in $TMPDIR per session
# when the runner ends it: they go in a directory of their own, removed afterwards.
browser_tmp=$(mktemp -d)
TMPDIR="$browser_tmp" cargo test --target "$target" "${web_tests[@]}" 2>&1 | tee "$logs/browser.log"
status=${PIPESTATUS[0]}
rm -rf "$browser_tmp"
count_cargo browser "$logs/browser.log"
[ "$status" = 0 ] || fail "browser tests"
[ "${passed[browser]}" -gt 0 ] || fail "browser tests (none ran)"

step "build wasm for the page" scripts/build-wasm.sh release
step "the core's wasm within its size budget" scripts/size.sh --budget
step "bundle the page (esbuild)" scripts/build-page.sh
step "type-check the JS client's declarations (tsc --noEmit)" www/node_modules/.bin/tsc -p www/types-check/tsconfig.json
step "package (npm pack into packages/)" scripts/package.sh
# npm ci from the tarball, tsc --noEmit over the example (it imports 'draftsmith' by name),
# vite build; the package's node tests and the Tiptap e2e tests use what this installs.
step "build the Tiptap example against the tarball" scripts/build-example.sh

echo "==> package tests (node: change sets, the sync engine against the headless core, the ProseMirror mapping, the packed files)"
node_tests package "package tests" . packages/draftsmith/test/*.test.mjs

echo "==> sync server tests (node: scripts/sync-server.mjs with Yjs clients, SQLite, redis-server)"
node_tests sync "sync server tests" www sync-test/

echo "==> end-to-end tests (playwright-core, /usr/bin/chromium; the in-browser model's with SmolLM2-135M)"
[ -s www/models/SmolLM2-135M-Instruct.Q4_1.gguf ] || fail "the in-browser model is missing from www/models/ (scripts/setup.sh model)"
node_tests e2e "e2e tests" www e2e/

summary

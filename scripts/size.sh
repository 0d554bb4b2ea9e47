#!/usr/bin/env bash
# Prints the size of the release wasm (raw and gzip -9) and of the JS that ships with it.
set -euo pipefail
cd "$(dirname "$0")/.."
row() { printf '%-28s %9s bytes  %9s gzip -9\n' "$1" "$(wc -c <"$2")" "$(gzip -9c "$2" | wc -c)"; }
row "draftsmith_bg.wasm" www/pkg/draftsmith_bg.wasm
row "pkg/draftsmith.js (glue)" www/pkg/draftsmith.js
row "worker.js" packages/draftsmith/worker.js
row "draftsmith.js (client)" packages/draftsmith/draftsmith.js
row "sync.js (sync engine)" packages/draftsmith/sync.js
# Where the bytes go: sections, code by crate, largest functions (from the cargo build's wasm,
# whose name section wasm-bindgen and wasm-opt strip from the shipped one).
raw="${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/release/draftsmith.wasm"
if [ -f "$raw" ]; then
  echo
  node scripts/wasm-breakdown.mjs "$raw" "${SIZE_TOP:-15}"
fi

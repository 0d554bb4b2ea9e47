#!/usr/bin/env bash
# Prints the size of the release wasm (raw, gzip -9, and brotli at its best quality, as a
# server or CDN may send it) and of the JS that ships with it.
set -euo pipefail
cd "$(dirname "$0")/.."
brotli() {
  node -e 'const z = require("zlib"); const b = require("fs").readFileSync(process.argv[1]);
    const p = z.constants; console.log(z.brotliCompressSync(b, { params: {
      [p.BROTLI_PARAM_QUALITY]: 11, [p.BROTLI_PARAM_LGWIN]: 24, [p.BROTLI_PARAM_SIZE_HINT]: b.length } }).length)' "$1"
}
row() {
  printf '%-28s %9s bytes  %9s gzip -9  %9s brotli\n' "$1" "$(wc -c <"$2")" "$(gzip -9c "$2" | wc -c)" "$(brotli "$2")"
}
# The release wasm is two modules (scripts/split-wasm.mjs): the one the worker starts with, and
# the one it loads when an agent, a tool or a model provider first runs (preloaded once ready).
row "draftsmith_bg.wasm (start)" www/pkg/draftsmith_bg.wasm
row "draftsmith_lazy.wasm (later)" www/pkg/draftsmith_lazy.wasm
sum() { echo $(( $("$1" www/pkg/draftsmith_bg.wasm) + $("$1" www/pkg/draftsmith_lazy.wasm) )); }
bytes() { wc -c <"$1"; }
gzipped() { gzip -9c "$1" | wc -c; }
printf '%-28s %9s bytes  %9s gzip -9  %9s brotli\n' "the two, each compressed" "$(sum bytes)" "$(sum gzipped)" "$(sum brotli)"
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
  # The crate's share after wasm-opt: the release passes again with the names kept (about a
  # minute), then each part gzipped alone (scripts/wasm-floor.mjs).
  . scripts/wasm-opt-flags.sh
  named="$(mktemp -d)"
  trap 'rm -rf "$named"' EXIT
  wasm-bindgen --keep-debug --target web --out-dir "$named" "$raw"
  www/node_modules/.bin/wasm-opt -g "${WASM_OPT_PASSES[@]}" "${WASM_OPT_FEATURES[@]}" \
    -o "$named/named.wasm" "$named/draftsmith_bg.wasm"
  node scripts/wasm-floor.mjs "$named/named.wasm" "${SIZE_TOP:-15}"
  # The same for the module the worker starts with: the named module split as the release is
  # (scripts/split-wasm.mjs, names kept), its first part through wasm-floor.mjs.
  echo
  echo "the module the worker starts with (draftsmith_bg.wasm), split from the names-kept module:"
  SPLIT_KEEP_NAMES=1 node scripts/split-wasm.mjs "$named/named.wasm" "$named/start.wasm" "$named/lazy.wasm" "$LAZY_FUNCTIONS"
  node scripts/wasm-floor.mjs "$named/start.wasm" "${SIZE_TOP:-15}"
fi

#!/usr/bin/env bash
# Prints the size of the release wasm (raw, gzip -9, and brotli at quality 11, as a server or
# CDN may send it) against the budget, the JS that ships with it, and where the wasm's bytes go
# by crate (twiggy over the same build with its function names kept).
#   make size   (builds the release wasm first)
#   scripts/size.sh --budget   only checks the built core wasm against the budget (fails over it)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
# Bytes of gzip -9 for the release wasm: 1,500,000 for the core, plus 113,026 for yrs (Yjs,
# for sync), what yrs alone measures in a wasm32 release build with wasm-opt -Os.
BUDGET=1613026

brotli() {
  node -e 'const z = require("zlib"); const b = require("fs").readFileSync(process.argv[1]);
    const p = z.constants; console.log(z.brotliCompressSync(b, { params: {
      [p.BROTLI_PARAM_QUALITY]: 11, [p.BROTLI_PARAM_LGWIN]: 24, [p.BROTLI_PARAM_SIZE_HINT]: b.length } }).length)' "$1"
}
row() {
  printf '%-26s %9s bytes  %9s gzip -9  %9s brotli\n' "$1" "$(wc -c <"$2")" "$(gzip -9c "$2" | wc -c)" "$(brotli "$2")"
}
wasm=www/pkg/draftsmith_bg.wasm
# The core's wasm against the budget: says where it stands, and fails over it.
budget() {
  local gz
  gz=$(gzip -9c "$wasm" | wc -c)
  if [ "$gz" -le "$BUDGET" ]; then
    echo "budget: $gz of $BUDGET bytes gzip -9 ($(( gz * 100 / BUDGET ))%)"
  else
    echo "budget: $gz bytes gzip -9 is OVER the $BUDGET budget" >&2
    return 1
  fi
}
if [ "${1:-}" = --budget ]; then
  budget
  exit
fi
row "draftsmith_bg.wasm" "$wasm"
row "pkg/draftsmith.js (glue)" www/pkg/draftsmith.js
# The worker as the package ships it: its source bundled with the glue.
bundled="$(mktemp -d)"
node www/worker-bundle.mjs "$bundled/worker.js" www/pkg/draftsmith.js >/dev/null
row "worker.js (with the glue)" "$bundled/worker.js"
rm -rf "$bundled"
row "draftsmith.js (client)" packages/draftsmith/draftsmith.js
row "sync.js (sync engine)" packages/draftsmith/sync.js
# Loaded by the worker when research first reads a page, not at its start (not in the budget).
row "draftsmith_reader_bg.wasm" www/pkg/draftsmith_reader_bg.wasm
# The breakdown below is printed over budget too.
budget || true

# By crate: the cargo build's wasm through wasm-bindgen and wasm-opt as the release is, with
# the names kept (-g), then twiggy's size of each function summed by the crate it names.
if ! command -v twiggy >/dev/null; then
  echo "size: installing twiggy (once)"
  cargo install --quiet twiggy --version 0.8.0
fi
named="$(mktemp -d)"
trap 'rm -rf "$named"' EXIT
wasm-bindgen --keep-debug --target web --out-dir "$named" \
  "${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/release/draftsmith.wasm"
www/node_modules/.bin/wasm-opt -g "${WASM_OPT_LEVEL:--Os}" \
  --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-reference-types --enable-multivalue \
  -o "$named/named.wasm" "$named/draftsmith_bg.wasm"
echo
echo "by crate (twiggy top, raw bytes of the release module with names kept):"
twiggy top -n 1000000 --format csv "$named/named.wasm" | node -e '
  // CSV rows: Name,ShallowSize,... (a name with a comma or a quote is quoted, "" inside).
  const rows = require("fs").readFileSync(0, "utf8").trim().split("\n").slice(1);
  const sums = new Map();
  for (const row of rows) {
    const m = row.match(/^("(?:[^"]|"")*"|[^,]*),(\d+),/);
    if (!m) continue;
    const name = m[1].startsWith("\"") ? m[1].slice(1, -1).replace(/""/g, "\"") : m[1];
    // The names kept for this breakdown are not in the shipped module.
    if (/subsection|^custom section/.test(name)) continue;
    const path = name.replace(/^<+/, "").match(/^([A-Za-z_][A-Za-z0-9_]*)::/);
    let crate = path ? path[1] : /^data|^"?data segment/.test(name) ? "(data)" : "(tables, imports, exports, other)";
    if (["core", "alloc", "std"].includes(crate)) crate = "std (core, alloc, std)";
    sums.set(crate, (sums.get(crate) || 0) + Number(m[2]));
  }
  const total = [...sums.values()].reduce((a, b) => a + b, 0);
  for (const [crate, bytes] of [...sums].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
    console.log(`${String(bytes).padStart(10)}  ${(100 * bytes / total).toFixed(1).padStart(5)}%  ${crate}`);
  }'

#!/usr/bin/env bash
# Builds the core for the browser into www/pkg: cargo (wasm32) -> wasm-bindgen --target web
# -> wasm-opt -Oz (release only; binaryen from www/node_modules).
#   scripts/build-wasm.sh [release|dev]
set -euo pipefail
profile="${1:-release}"
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
target=wasm32-unknown-unknown

if [ "$profile" = release ]; then
  cargo build --quiet --lib --release --target "$target"
  dir=release
else
  cargo build --quiet --lib --target "$target"
  dir=debug
fi
wasm-bindgen --target web --out-dir www/pkg "${CARGO_TARGET_DIR:-target}/$target/$dir/draftsmith.wasm"
if [ "$profile" = release ]; then
  # binaryen from npm: Debian's binaryen 108 rewrites externref as the old anyref, which
  # current Chromium rejects when the module instantiates. `-Oz` twice: the second pass
  # finds more after the first. `--low-memory-unused`: the lowest 1 KB of memory is the
  # bottom of Rust's 1 MB stack (wasm32 puts the stack first), which no pointer arithmetic
  # reaches, so constant offsets fold into loads and stores.
  www/node_modules/.bin/wasm-opt -Oz -Oz --low-memory-unused --enable-bulk-memory \
    --enable-nontrapping-float-to-int --enable-sign-ext --enable-reference-types --enable-multivalue \
    -o www/pkg/draftsmith_bg.opt.wasm www/pkg/draftsmith_bg.wasm
  mv www/pkg/draftsmith_bg.opt.wasm www/pkg/draftsmith_bg.wasm
fi
echo "build-wasm: www/pkg ($profile)"

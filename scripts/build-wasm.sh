#!/usr/bin/env bash
# Builds the core for the browser into www/pkg, on the toolchain rust-toolchain.toml pins:
#   cargo build (wasm32) -> wasm-bindgen --target web -> wasm-opt (release only)
#   scripts/build-wasm.sh [release|dev]
# wasm-opt is binaryen's from www/node_modules: Debian's binaryen 108 rewrites wasm-bindgen's
# externref table as `anyref`, which Chromium refuses.
set -euo pipefail
profile="${1:-release}"
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
target=wasm32-unknown-unknown
out=www/pkg

if [ "$profile" = release ]; then
  cargo build --quiet --lib --release --target "$target"
  dir=release
else
  cargo build --quiet --lib --target "$target"
  dir=debug
fi
wasm-bindgen --target web --out-dir "$out" "${CARGO_TARGET_DIR:-target}/$target/$dir/draftsmith.wasm"
if [ "$profile" = release ]; then
  # The features are those rustc's wasm32 target emits by default.
  www/node_modules/.bin/wasm-opt "${WASM_OPT_LEVEL:--Os}" \
    --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-reference-types --enable-multivalue \
    -o "$out/draftsmith_bg.opt.wasm" "$out/draftsmith_bg.wasm"
  mv "$out/draftsmith_bg.opt.wasm" "$out/draftsmith_bg.wasm"
fi
echo "build-wasm: $out ($profile)"

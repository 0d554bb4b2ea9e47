#!/usr/bin/env bash
# Builds the core for the browser into www/pkg, on the toolchain rust-toolchain.toml pins:
#   cargo build (wasm32) -> wasm-bindgen --target web -> wasm-opt (release only), for the core
#   and for the page reader's module
#   scripts/build-wasm.sh [release|dev]
# wasm-opt is binaryen's from www/node_modules: Debian's binaryen 108 rewrites wasm-bindgen's
# externref table as `anyref`, which Chromium refuses.
set -euo pipefail
profile="${1:-release}"
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
target=wasm32-unknown-unknown
out=www/pkg

# Two modules: the core, and the page reader (crates/reader-web) the worker loads when research
# first reads a page. Built one after the other, so that the core's build does not take the
# reader's features.
if [ "$profile" = release ]; then
  flags=(--release)
  dir=release
else
  flags=()
  dir=debug
fi
for crate in draftsmith:draftsmith draftsmith-reader-web:draftsmith_reader; do
  package="${crate%%:*}"
  name="${crate##*:}"
  cargo build --quiet --lib "${flags[@]}" --target "$target" -p "$package"
  # The reader's cdylib is named after its crate; its glue and wasm go out as draftsmith_reader.
  input="${CARGO_TARGET_DIR:-target}/$target/$dir/${package//-/_}.wasm"
  wasm-bindgen --target web --out-dir "$out" --out-name "$name" "$input"
  if [ "$profile" = release ]; then
    # The features are those rustc's wasm32 target emits by default.
    www/node_modules/.bin/wasm-opt "${WASM_OPT_LEVEL:--Os}" \
      --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
      --enable-reference-types --enable-multivalue \
      -o "$out/${name}_bg.opt.wasm" "$out/${name}_bg.wasm"
    mv "$out/${name}_bg.opt.wasm" "$out/${name}_bg.wasm"
  fi
done
echo "build-wasm: $out ($profile)"

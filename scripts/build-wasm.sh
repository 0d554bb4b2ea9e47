#!/usr/bin/env bash
# Builds the core for the browser into www/pkg: cargo (wasm32) -> wasm-bindgen --target web
# -> wasm-opt -Oz (release only; binaryen from www/node_modules).
#   scripts/build-wasm.sh [release|dev]
set -euo pipefail
profile="${1:-release}"
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
target=wasm32-unknown-unknown

# The release build rebuilds std with the crate's profile (`-Zbuild-std`: opt-level "z" and LTO
# reach std too, where the shipped std is built for speed), with std's smaller variants of its
# algorithms (`optimize_for_size`: sorts, formatting) and without panic locations
# (`-Zlocation-detail=none`: a panic still reports its message, not the file and line; the dev
# build keeps them). Both need a nightly toolchain with rust-src and the wasm32 std, which are
# installed here when missing; without them (offline) the build falls back to stable, larger.
# DRAFTSMITH_STABLE=1 forces the stable build.
. scripts/nightly.sh
nightly_ready() {
  [ -z "${DRAFTSMITH_STABLE:-}" ] || return 1
  nightly_with rust-src && rustup target add "$target" --toolchain nightly >/dev/null 2>&1
}

if [ "$profile" = release ]; then
  # A nightly that no longer takes these flags (the channel is not pinned) falls back too.
  if nightly_ready &&
    RUSTFLAGS="${RUSTFLAGS:-} -Zlocation-detail=none -Zunstable-options -Csymbol-mangling-version=legacy" \
      cargo +nightly build --quiet --lib --release --target "$target" -Zbuild-std=std,panic_abort \
      -Zbuild-std-features=optimize_for_size; then
    :
  else
    echo "build-wasm: the release is built on stable (no nightly with rust-src here, its build failed, or DRAFTSMITH_STABLE set): larger, with panic locations" >&2
    cargo build --quiet --lib --release --target "$target"
  fi
  dir=release
else
  cargo build --quiet --lib --target "$target"
  dir=debug
fi
wasm-bindgen --target web --out-dir www/pkg "${CARGO_TARGET_DIR:-target}/$target/$dir/draftsmith.wasm"
if [ "$profile" = release ]; then
  # binaryen from npm: Debian's binaryen 108 rewrites externref as the old anyref, which
  # current Chromium rejects when the module instantiates. `-Oz`, then `--flatten --rereloop`
  # (the control flow rebuilt from a flat form) and `-Oz` twice more: -13 KB raw, -5.7 KB
  # gzip -9 against `-Oz -Oz`, for 26 s more build (measured 2026-11-24, binaryen 132).
  # `--low-memory-unused`: the lowest 1 KB of memory is the
  # bottom of Rust's 1 MB stack (wasm32 puts the stack first), which no pointer arithmetic
  # reaches, so constant offsets fold into loads and stores.
  # First the functions are sorted by their stem (scripts/order-functions.mjs renames them,
  # `--reorder-functions-by-name` sorts), so related code sits within gzip's window: -19 KB
  # gzip -9 for the same code. The names (rank, then the original) are kept (`-g`) for the split.
  # `--one-caller-inline-max-function-size=20`: a function with one caller is inlined into
  # it only when small (binaryen inlines every such function by default). The handlers stay
  # functions of their own, in stem order next to their likes, instead of one 217 KB future
  # with every request handler inside: +10 KB raw, -47.5 KB gzip -9 (measured 2026-11-24;
  # 10-30 are within 1 KB, 0 is -45 KB, 200 only -8.6 KB).
  node scripts/order-functions.mjs www/pkg/draftsmith_bg.wasm www/pkg/draftsmith_bg.ordered.wasm
  . scripts/wasm-opt-flags.sh
  www/node_modules/.bin/wasm-opt -g --reorder-functions-by-name "${WASM_OPT_PASSES[@]}" "${WASM_OPT_FEATURES[@]}" \
    -o www/pkg/draftsmith_bg.opt.wasm www/pkg/draftsmith_bg.ordered.wasm
  # Then the module is split in two (scripts/split-wasm.mjs): what the editor needs stays in
  # draftsmith_bg.wasm, and the agents, their tools, the model providers and what only they
  # call go to draftsmith_lazy.wasm, which the glue loads the first time one of them runs (or
  # before, when the worker preloads it once it is ready).
  node scripts/split-wasm.mjs www/pkg/draftsmith_bg.opt.wasm www/pkg/draftsmith_bg.main.wasm \
    www/pkg/draftsmith_lazy.opt.wasm "$LAZY_FUNCTIONS"
  mv www/pkg/draftsmith_bg.main.wasm www/pkg/draftsmith_bg.opt.wasm
  # Then, in each module, each function is followed by its nearest copy, byte for byte, where
  # one is near (scripts/order-similar.mjs): -6 KB gzip -9 (measured 2026-11-24). This wasm-opt
  # runs no passes; the optimize and shrink levels make it write as the run above does
  # (binaryen optimizes its stack IR when it writes only at those levels: without them, +2 KB
  # raw). It also drops the `producers` and `target_features` custom sections, which no
  # browser reads (-0.2 KB gzip -9).
  for part in bg lazy; do
    node scripts/order-similar.mjs "www/pkg/draftsmith_$part.opt.wasm" "www/pkg/draftsmith_$part.ordered.wasm"
    www/node_modules/.bin/wasm-opt --reorder-functions-by-name --optimize-level=2 --shrink-level=2 \
      --strip-producers --strip-target-features "${WASM_OPT_FEATURES[@]}" \
      -o "www/pkg/draftsmith_$part.wasm" "www/pkg/draftsmith_$part.ordered.wasm" 2>&1 |
      { grep -v '^warning: no passes specified' || true; } >&2
    rm "www/pkg/draftsmith_$part.ordered.wasm" "www/pkg/draftsmith_$part.opt.wasm"
  done
  # Short import names in the wasm and the glue (scripts/minify-imports.mjs): -2.1 KB gzip -9
  # of wasm and -1.7 KB of glue.
  node scripts/minify-imports.mjs www/pkg >/dev/null
  # The glue learns to load the second module (scripts/lazy-glue.mjs).
  node scripts/lazy-glue.mjs www/pkg
else
  rm -f www/pkg/draftsmith_lazy.wasm
fi
echo "build-wasm: www/pkg ($profile)"

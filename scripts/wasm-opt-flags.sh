# Sourced by build-wasm.sh and size.sh: the release build's wasm-opt passes (build-wasm.sh says
# why each) and the wasm features the module uses.
WASM_OPT_PASSES=(--one-caller-inline-max-function-size=20 -Oz --flatten --rereloop -Oz -Oz --low-memory-unused)
WASM_OPT_FEATURES=(--enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext
  --enable-reference-types --enable-multivalue)

#!/usr/bin/env bash
# Builds the npm package from packages/draftsmith/ (make package): the wasm and its glue from
# www/pkg/ (scripts/build-wasm.sh release; `make package` builds the release wasm first) are copied
# into packages/draftsmith/pkg/, the worker (packages/draftsmith/src/worker.js bundled with that
# glue by www/worker-bundle.mjs) is written to packages/draftsmith/worker.js, wllama (the
# in-browser model's runtime: its ES module, its wasm and its licence) is copied from
# www/node_modules/@wllama/wllama into packages/draftsmith/wllama/, the MCP SDK's client
# (bundled with esbuild by www/mcp-sdk.mjs, with the SDK's licence) into packages/draftsmith/mcp/,
# then `npm pack` writes packages/draftsmith-<version>.tgz and the copy
# examples/tiptap/draftsmith.tgz that the Tiptap example installs.
set -euo pipefail
cd "$(dirname "$0")/.."
pkg=packages/draftsmith
for f in draftsmith.js draftsmith.d.ts draftsmith_bg.wasm draftsmith_bg.wasm.d.ts draftsmith_reader.js draftsmith_reader_bg.wasm; do
  [ -f "www/pkg/$f" ] || { echo "package: www/pkg/$f is missing: run scripts/build-wasm.sh release (or make wasm) first" >&2; exit 1; }
done
rm -rf "$pkg/pkg"
mkdir -p "$pkg/pkg"
cp www/pkg/draftsmith.js www/pkg/draftsmith.d.ts www/pkg/draftsmith_bg.wasm www/pkg/draftsmith_bg.wasm.d.ts \
  www/pkg/draftsmith_reader.js www/pkg/draftsmith_reader_bg.wasm "$pkg/pkg/"
# The worker: its source bundled with the glue just copied.
node www/worker-bundle.mjs "$pkg/worker.js" "$pkg/pkg/draftsmith.js"
wllama=www/node_modules/@wllama/wllama
for f in esm/index.js esm/wasm/wllama.wasm LICENCE; do
  [ -f "$wllama/$f" ] || { echo "package: $wllama/$f is missing: run scripts/setup.sh demo (npm ci in www/) first" >&2; exit 1; }
done
rm -rf "$pkg/wllama"
mkdir -p "$pkg/wllama"
cp "$wllama/esm/index.js" "$wllama/esm/wasm/wllama.wasm" "$wllama/LICENCE" "$pkg/wllama/"
[ -f www/node_modules/@modelcontextprotocol/sdk/package.json ] || { echo "package: the MCP SDK is missing from www/node_modules: run scripts/setup.sh demo (npm ci in www/) first" >&2; exit 1; }
rm -rf "$pkg/mcp"
node www/mcp-sdk.mjs "$pkg/mcp/sdk.js"
echo "package: $pkg/mcp/sdk.js is $(gzip -9c "$pkg/mcp/sdk.js" | wc -c) bytes gzipped"
tarball=$(cd "$pkg" && npm pack --silent --pack-destination .. 2>/dev/null | tail -1)
cp "packages/$tarball" examples/tiptap/draftsmith.tgz
size=$(wc -c < "packages/$tarball")
unpacked=$(tar -xzOf "packages/$tarball" | wc -c)
echo "package: packages/$tarball ($size bytes packed, $unpacked unpacked), copied to examples/tiptap/draftsmith.tgz"

#!/usr/bin/env bash
# Bundles the demo page (www/src/app.js with CodeMirror 6) into www/dist/app.js with esbuild.
set -euo pipefail
cd "$(dirname "$0")/../www"
node_modules/.bin/esbuild src/app.js --bundle --format=esm --target=es2022 --minify --sourcemap \
  --outfile=dist/app.js --log-level=warning
echo "build-page: www/dist/app.js ($(wc -c < dist/app.js) bytes)"

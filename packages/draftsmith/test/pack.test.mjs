// The package as npm packs it (after scripts/package.sh): exactly the files meant to ship,
// every `exports` target among them, its version the crate's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const PACKAGE = fileURLToPath(new URL('../', import.meta.url));
const manifest = JSON.parse(readFileSync(`${PACKAGE}package.json`, 'utf8'));

const SHIPPED = [
  'README.md',
  'package.json',
  'draftsmith.js',
  'draftsmith.d.ts',
  'protocol.d.ts',
  'worker.js',
  'local-model.js',
  'local-model.d.ts',
  'wllama/index.js',
  'wllama/wllama.wasm',
  'wllama/LICENCE',
  'mcp-client.js',
  'mcp-client.d.ts',
  'mcp/sdk.js',
  'mcp/LICENSE',
  'sync.js',
  'sync.d.ts',
  'codemirror.js',
  'codemirror.d.ts',
  'prosemirror.js',
  'prosemirror.d.ts',
  'pkg/draftsmith.js',
  'pkg/draftsmith.d.ts',
  'pkg/draftsmith_bg.wasm',
  'pkg/draftsmith_bg.wasm.d.ts',
  'pkg/draftsmith_reader.js',
  'pkg/draftsmith_reader_bg.wasm',
].sort();

test('npm pack --dry-run lists exactly the files meant to ship', () => {
  const [packed] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--loglevel=error'], { cwd: PACKAGE, encoding: 'utf8' }));
  assert.deepEqual(packed.files.map((f) => f.path).sort(), SHIPPED);
  assert.equal(packed.name, 'draftsmith');
});

test('every export, the types and the entry points are files that ship', () => {
  const targets = [];
  const walk = (value) => {
    if (typeof value === 'string') targets.push(value);
    else for (const v of Object.values(value)) walk(v);
  };
  walk(manifest.exports);
  targets.push(manifest.types, manifest.main, manifest.module);
  for (const target of targets) assert.ok(SHIPPED.includes(target.replace(/^\.\//, '')), `${target} ships`);
  for (const name of ['.', './sync', './codemirror', './prosemirror', './local-model', './mcp-client']) {
    assert.ok(manifest.exports[name].types, `${name} has types`);
  }
  assert.equal(manifest.sideEffects, false);
  assert.equal(manifest.type, 'module');
});

test('the package version is the crate version', () => {
  const toml = readFileSync(new URL('../../../Cargo.toml', import.meta.url), 'utf8');
  assert.equal(manifest.version, toml.match(/^version\s*=\s*"([^"]+)"/m)[1]);
});

test('wllama ships beside the worker, where the in-browser model imports it, with its licence', () => {
  const wllama = `${PACKAGE}../../www/node_modules/@wllama/wllama/`;
  const same = (shipped, original) => assert.ok(readFileSync(`${PACKAGE}${shipped}`).equals(readFileSync(`${wllama}${original}`)), `${shipped} is wllama's ${original}`);
  same('wllama/index.js', 'esm/index.js');
  same('wllama/wllama.wasm', 'esm/wasm/wllama.wasm');
  same('wllama/LICENCE', 'LICENCE');
  assert.match(readFileSync(`${PACKAGE}wllama/LICENCE`, 'utf8'), /MIT License/);
  const bridge = readFileSync(`${PACKAGE}local-model.js`, 'utf8');
  assert.ok(bridge.includes("new URL('./wllama/index.js', import.meta.url)"));
  assert.ok(bridge.includes("new URL('./wllama/wllama.wasm', import.meta.url)"));
  assert.match(readFileSync(`${PACKAGE}worker.js`, 'utf8'), /import\(["']\.\/local-model\.js["']\)/);
});

test('the MCP SDK client ships beside the worker as one browser module, with its licence', async () => {
  const bundle = readFileSync(`${PACKAGE}mcp/sdk.js`, 'utf8');
  // Only the client: nothing of the SDK's node servers and processes.
  for (const nodeOnly of ['cross-spawn', 'express', 'child_process', '@hono/node-server', 'from"node:', "from 'node:"]) {
    assert.ok(!bundle.includes(nodeOnly), `the bundle holds ${nodeOnly}`);
  }
  const sdk = await import(`${PACKAGE}mcp/sdk.js`);
  assert.deepEqual(Object.keys(sdk).sort(), ['Client', 'StreamableHTTPClientTransport']);
  const client = new sdk.Client({ name: 'pack-test', version: '1' });
  assert.equal(typeof client.callTool, 'function');
  const sdkLicense = `${PACKAGE}../../www/node_modules/@modelcontextprotocol/sdk/LICENSE`;
  assert.ok(readFileSync(`${PACKAGE}mcp/LICENSE`).equals(readFileSync(sdkLicense)), 'mcp/LICENSE is the SDK licence');
  const bridge = readFileSync(`${PACKAGE}mcp-client.js`, 'utf8');
  assert.ok(bridge.includes("new URL('./mcp/sdk.js', import.meta.url)"));
  assert.match(readFileSync(`${PACKAGE}worker.js`, 'utf8'), /import\(["']\.\/mcp-client\.js["']\)/);
});

test('the page reader ships beside the core as a module of its own, and reads a page', async () => {
  const reader = await import(`${PACKAGE}pkg/draftsmith_reader.js`);
  reader.initSync({ module: readFileSync(`${PACKAGE}pkg/draftsmith_reader_bg.wasm`) });
  const page = '<html><head><title>A longer page about the keeper and the lamp | Keepers</title></head><body><nav><p>Home, About, Contact</p></nav>'
    + '<article><p>The keeper trimmed the wick at dusk, and the lens turned all night, sending its beam, '
    + 'white and steady, over the rocks.</p></article></body></html>';
  const read = JSON.parse(reader.readPage(page));
  assert.equal(read.Ok.title, 'A longer page about the keeper and the lamp');
  assert.match(read.Ok.text, /^The keeper trimmed the wick at dusk/);
  assert.deepEqual(JSON.parse(reader.readPage('<div>'.repeat(300))), { Err: { TooDeep: 300 } });
  const worker = readFileSync(`${PACKAGE}worker.js`, 'utf8');
  assert.match(worker, /new URL\(["']\.\/pkg\/draftsmith_reader\.js["'], import\.meta\.url\)/);
  assert.match(worker, /new URL\(["']\.\/pkg\/draftsmith_reader_bg\.wasm["'], import\.meta\.url\)/);
});

test('worker.js is the worker source bundled with the glue it ships beside', async () => {
  const { bundleWorker } = await import(`${PACKAGE}../../www/worker-bundle.mjs`);
  const worker = readFileSync(`${PACKAGE}worker.js`, 'utf8');
  assert.equal(worker, await bundleWorker(`${PACKAGE}pkg/draftsmith.js`), 'worker.js is out of date: run scripts/package.sh');
  // The glue is in it: its first start imports nothing but the bridges, on first use.
  assert.match(worker, /WorkerCore = class/);
  assert.doesNotMatch(worker, /^import /m);
  assert.match(worker, /new URL\(["']\.\/pkg\/draftsmith\.js["'], import\.meta\.url\)/, 'the glue of a core restarted after a panic');
});

// How the worker (worker.js) gets the core's wasm from a server that is not the usual one: a
// wasm the server fails to send fails the start with the reason, and one served without the
// application/wasm type is compiled from its bytes. src/worker.js runs unbundled, from a copy
// beside a fake wasm glue.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWorker } from './worker-harness.mjs';

// The glue keeps the wasm module it was given.
const FAKE_GLUE = `
export default async function init({ module_or_path }) {
  globalThis.modules.push(await module_or_path);
}
export class WorkerCore {
  static version() { return '0.0.0-test'; }
  static async open() { return new WorkerCore(); }
  handle_for() { return Promise.resolve('{}'); }
  handle() { return Promise.resolve('{}'); }
  client_count() { return 0; }
  has_idle_work() { return false; }
  idle() {}
}
`;

// The smallest wasm module.
const WASM = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
const modules = [];
const posted = [];
let stop = () => {};
after(() => stop());

// A message the worker posted, read from its JSON text if it came as text.
const read = (m) => (typeof m === 'string' ? JSON.parse(m) : m);
const events = (type) =>
  posted.map(read).flatMap((m) => (m && m.kind === 'batch' ? m.messages.map(read) : [m])).filter((m) => m && m.kind === 'event' && m.type === type);
const waitFor = async (what) => {
  const since = Date.now();
  while (!what() && Date.now() - since < 30_000) await new Promise((resolve) => setImmediate(resolve));
  assert.ok(what(), 'waited too long');
};

test('a wasm the server fails to send fails the start with the reason', async () => {
  globalThis.modules = modules;
  globalThis.indexedDB = { open: () => ({}) };
  const fetch = async () => new Response('gone', { status: 503, statusText: 'Service Unavailable' });
  stop = await startWorker({ glue: FAKE_GLUE, db: 'wasm-fail', postMessage: (message) => posted.push(message), fetch });
  await waitFor(() => events('fatal').length === 1);
  assert.match(events('fatal')[0].data.message, /could not load the draftsmith core: .*503 Service Unavailable/);
  assert.equal(modules.length, 0);
  stop();
});

test('a wasm served without the application/wasm type is compiled from its bytes', async () => {
  posted.length = 0;
  const fetch = async () => new Response(WASM, { headers: { 'Content-Type': 'application/octet-stream' } });
  stop = await startWorker({ glue: FAKE_GLUE, db: 'wasm-type', postMessage: (message) => posted.push(message), fetch });
  await waitFor(() => events('ready').length === 1);
  assert.equal(modules.length, 1);
  assert.ok(modules[0] instanceof WebAssembly.Module, `the glue got ${modules[0]}`);
});

test('a glue that fails to load fails the start with the reason', async () => {
  stop();
  posted.length = 0;
  const fetch = async () => new Response(WASM, { headers: { 'Content-Type': 'application/wasm' } });
  // The glue is imported as soon as worker.js runs; its failure is the start's.
  const broken = `throw new Error('the glue is broken');\n${FAKE_GLUE}`;
  stop = await startWorker({ glue: broken, db: 'glue-fail', postMessage: (message) => posted.push(message), fetch });
  await waitFor(() => events('fatal').length === 1);
  assert.match(events('fatal')[0].data.message, /could not load the draftsmith core: the glue is broken/);
  assert.equal(events('ready').length, 0);
});

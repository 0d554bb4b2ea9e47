// The core's compiled wasm, lent from one worker to the next through the page (worker.js): a
// worker that compiled it posts it to the page once, and a worker started for a lent module
// (named so) takes it from its first message and fetches nothing. A first message that is not
// a module is served as the request it is, and the worker fetches the wasm itself. src/worker.js
// runs unbundled, from a copy beside a fake wasm glue.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWorker } from './worker-harness.mjs';

// The glue keeps the wasm module it was given; its core answers every request with `{}`.
const FAKE_GLUE = `
export default async function init({ module_or_path }) {
  globalThis.modules.push(await module_or_path);
}
export class WorkerCore {
  static version() { return '0.0.0-test'; }
  static async open(emit) { globalThis.emitEvent = emit; return new WorkerCore(); }
  handle_for() { return Promise.resolve('{"kind":"response","id":1,"ok":true,"result":{}}'); }
  handle() { return Promise.resolve('{}'); }
  client_count() { return 0; }
  has_idle_work() { return false; }
  idle() {}
}
`;

// The smallest wasm module.
const WASM = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
const LENT_NAME = 'draftsmith (compiled)';
let modules = [];
let posted = [];
let fetches = 0;
let listeners = [];
let stop = () => {};
after(() => stop());

globalThis.indexedDB = { open: () => ({}) };
const fetch = async () => {
  fetches += 1;
  return new Response(WASM, { headers: { 'Content-Type': 'application/wasm' } });
};
// The worker's message listeners, and a message from the page to them.
const addEventListener = (type, listener, options) => listeners.push({ type, listener, once: options?.once === true });
function fromPage(data) {
  for (const entry of listeners.filter((l) => l.type === 'message')) {
    if (entry.once) listeners = listeners.filter((l) => l !== entry);
    entry.listener({ data });
  }
}
// A message the worker posted, read from its JSON text if it came as text.
const read = (m) => (typeof m === 'string' ? JSON.parse(m) : m);
const flat = () => posted.map(read).flatMap((m) => (m && m.kind === 'batch' ? m.messages.map(read) : [m]));
const events = (type) => flat().filter((m) => m && m.kind === 'event' && m.type === type);
const lent = () => flat().filter((m) => m && m.kind === 'wasm');
const waitFor = async (what) => {
  const since = Date.now();
  while (!what() && Date.now() - since < 30_000) await new Promise((resolve) => setImmediate(resolve));
  assert.ok(what(), 'waited too long');
};

function fresh() {
  stop();
  modules = [];
  posted = [];
  fetches = 0;
  listeners = [];
  globalThis.modules = modules;
}

test('a worker that compiled the wasm lends it to the page once', async () => {
  fresh();
  stop = await startWorker({ glue: FAKE_GLUE, db: 'lend', postMessage: (m) => posted.push(m), addEventListener, fetch });
  await waitFor(() => events('ready').length === 1);
  assert.equal(fetches, 1);
  assert.equal(lent().length, 1);
  assert.ok(lent()[0].module instanceof WebAssembly.Module);
  assert.equal(lent()[0].module, modules[0], 'the module the core was started with');
  // A start after a panic reuses it, and does not lend it again.
  globalThis.emitEvent(JSON.stringify({ kind: 'event', type: 'panic', data: { message: 'test' } }));
  await waitFor(() => events('ready').length === 2);
  assert.equal(modules.length, 2);
  assert.equal(modules[1], modules[0]);
  assert.equal(fetches, 1);
  assert.equal(lent().length, 1);
});

test('a worker started for a lent module takes it from its first message and fetches nothing', async () => {
  fresh();
  const module = await WebAssembly.compile(WASM);
  stop = await startWorker({ glue: FAKE_GLUE, db: 'borrow', postMessage: (m) => posted.push(m), addEventListener, fetch, name: LENT_NAME });
  fromPage({ kind: 'wasm', module });
  await waitFor(() => events('ready').length === 1);
  assert.equal(fetches, 0);
  assert.deepEqual(modules, [module]);
  // Neither lent back nor taken for a request.
  assert.equal(lent().length, 0);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(flat().filter((m) => typeof m === 'string' || m?.kind === 'response'), []);
});

test('a worker started for a lent module that gets a request first fetches the wasm and serves it', async () => {
  fresh();
  stop = await startWorker({ glue: FAKE_GLUE, db: 'no-loan', postMessage: (m) => posted.push(m), addEventListener, fetch, name: LENT_NAME });
  fromPage({ id: 1, type: 'hello' });
  await waitFor(() => events('ready').length === 1 && posted.some((m) => typeof m === 'string'));
  assert.equal(fetches, 1);
  assert.ok(modules[0] instanceof WebAssembly.Module);
  assert.deepEqual(posted.filter((m) => typeof m === 'string').map((m) => JSON.parse(m).id), [1]);
  assert.equal(lent().length, 1, 'compiled here: lent to the page');
});

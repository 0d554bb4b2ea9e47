// The worker's start (worker.js) opens its IndexedDB database while the wasm downloads and
// compiles: the connection is asked for before the core's wasm is ready, closed once the core
// has its own, never creates a database that does not exist yet, and gives way at once to an
// upgrade. The wasm is fetched once and compiled as it streams in, before the glue starts, and
// every start (the later ones after a panic) is given that compiled module. src/worker.js runs
// unbundled, from a copy beside a fake wasm glue whose start waits for the test, on a fake
// `indexedDB`; a panic of the fake core makes the worker start again.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWorker } from './worker-harness.mjs';

// The glue: its start waits for `compiled`, keeps the wasm module it was given, and it logs
// when the core opens.
const FAKE_GLUE = `
export default async function init({ module_or_path }) {
  globalThis.log.push('compile');
  globalThis.modules.push(await module_or_path);
  await globalThis.compiled.promise;
  globalThis.log.push('compiled');
}
export class WorkerCore {
  static version() { return '0.0.0-test'; }
  static async open(emit, database, localModel, mcp, reader, schema) {
    globalThis.log.push('core opens ' + database);
    globalThis.emitEvent = emit;
    globalThis.schemas.push(await schema);
    return new WorkerCore();
  }
  handle_for() { return Promise.resolve('{}'); }
  handle() { return Promise.resolve('{}'); }
  client_count() { return 0; }
  has_idle_work() { return false; }
  idle() {}
}
`;

const log = [];
const requests = [];
// The schema version each start handed the core, as read on its early connection.
const schemas = [];
// The wasm modules the glue was given, the worker's fetches of the wasm, and whether each
// streaming compile began before the glue's start.
const modules = [];
let fetches = 0;
const streamedEarly = [];
// The smallest wasm module.
const WASM = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
const posted = [];
let stop = () => {};

// A gate the fake glue's start waits at.
function gate() {
  let open;
  const promise = new Promise((resolve) => (open = resolve));
  return { promise, open };
}

// A fake connection, logging when it closes; with `schema`, its database has the `meta`
// table, whose schema record holds that version.
function connection(name, schema) {
  return {
    onversionchange: null,
    objectStoreNames: { contains: (table) => schema !== undefined && table === 'meta' },
    transaction(table, mode) {
      assert.deepEqual([table, mode], ['meta', 'readonly']);
      return {
        onabort: null,
        objectStore: () => ({
          get(key) {
            const read = { result: undefined, onsuccess: null, onerror: null };
            setImmediate(() => {
              read.result = key === 'db:schema' ? { id: key, version: schema } : undefined;
              read.onsuccess();
            });
            return read;
          },
        }),
      };
    },
    close() {
      log.push(`close ${name}`);
    },
  };
}

const waitFor = async (what) => {
  const since = Date.now();
  while (!what() && Date.now() - since < 30_000) await new Promise((resolve) => setImmediate(resolve));
  assert.ok(what(), 'waited too long');
};
// A message the worker posted, read from its JSON text if it came as text.
const read = (m) => (typeof m === 'string' ? JSON.parse(m) : m);
// The `ready` events the page got (alone, or in a batch with the events before them).
const readies = () =>
  posted.map(read).flatMap((m) => (m && m.kind === 'batch' ? m.messages.map(read) : [m])).filter((m) => m && m.kind === 'event' && m.type === 'ready').length;

// A panic of the core makes the worker start again; resolves once the new start compiles,
// to its early open request, which has opened the existing database (connection `name`,
// whose schema record holds `schema`, if given).
async function restart(name, schema) {
  log.length = 0;
  globalThis.compiled = gate();
  globalThis.emitEvent(JSON.stringify({ kind: 'event', type: 'panic', data: { message: 'test' } }));
  await waitFor(() => log.includes('compile'));
  const request = requests.at(-1);
  request.result = connection(name, schema);
  request.onsuccess();
  return request;
}

after(() => stop());

test('the database opens while the wasm compiles, without creating it, and gives way to the core', async () => {
  globalThis.log = log;
  globalThis.modules = modules;
  globalThis.schemas = schemas;
  const compileStreaming = WebAssembly.compileStreaming;
  WebAssembly.compileStreaming = (response) => {
    streamedEarly.push(!log.includes('compile'));
    return compileStreaming(response);
  };
  after(() => (WebAssembly.compileStreaming = compileStreaming));
  const fetch = async () => {
    fetches += 1;
    return new Response(WASM, { headers: { 'Content-Type': 'application/wasm' } });
  };
  globalThis.compiled = gate();
  globalThis.indexedDB = {
    open(name, version) {
      log.push(`open ${name}${version === undefined ? '' : ` v${version}`}`);
      const request = { onupgradeneeded: null, onsuccess: null, onerror: null, transaction: null, result: null };
      requests.push(request);
      return request;
    },
  };

  // First start: the database does not exist yet.
  stop = await startWorker({ glue: FAKE_GLUE, db: 'boot-test', postMessage: (message) => posted.push(message), fetch });
  await waitFor(() => log.includes('compile'));
  assert.deepEqual(log, ['open boot-test', 'compile'], 'asked for before the wasm is compiled, at its current version');
  const [first] = requests;
  first.transaction = { abort: () => log.push('abort creation') };
  first.onupgradeneeded();
  let prevented = false;
  first.onerror({ preventDefault: () => (prevented = true) });
  assert.ok(prevented);
  globalThis.compiled.open();
  await waitFor(() => readies() === 1);
  assert.deepEqual(log, ['open boot-test', 'compile', 'abort creation', 'compiled', 'core opens boot-test']);

  // A panic starts the core again: the database exists now, and is held until the core opened.
  // Its schema record, read on that connection, is handed to the core.
  await restart('early', 7);
  assert.equal(requests.length, 2);
  assert.deepEqual(log, ['open boot-test', 'compile']);
  globalThis.compiled.open();
  await waitFor(() => readies() === 2);
  assert.deepEqual(log, ['open boot-test', 'compile', 'compiled', 'core opens boot-test', 'close early']);

  // Another start: an upgrade asked for meanwhile (another tab's) closes it at once.
  const third = await restart('early again');
  assert.equal(requests.length, 3);
  third.result.onversionchange();
  assert.deepEqual(log, ['open boot-test', 'compile', 'close early again']);
  globalThis.compiled.open();
  await waitFor(() => readies() === 3);
  // Closed once.
  assert.deepEqual(log, ['open boot-test', 'compile', 'close early again', 'compiled', 'core opens boot-test']);

  // The core of the first start was told no schema version (the database was new), the
  // second the version its record held, the third none (no `meta` table to read it from).
  assert.deepEqual(schemas, [null, 7, null]);

  // The wasm was fetched once, compiled as it streamed in before the glue started, and every
  // start was given that compiled module.
  assert.equal(fetches, 1);
  assert.deepEqual(streamedEarly, [true]);
  assert.equal(modules.length, 3);
  assert.ok(modules[0] instanceof WebAssembly.Module, `the glue got ${modules[0]}`);
  assert.ok(modules.every((module) => module === modules[0]));
});

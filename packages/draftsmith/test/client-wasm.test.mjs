// The client's side of lending the core's compiled wasm (draftsmith.js): the module a worker
// lends is kept for its script, and the next worker started from that script is named for it
// and gets it as its first message. Another script gets none, and a start that failed with a
// lent module does not lend it again. The workers are fakes that record what they are sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Draftsmith } from '../draftsmith.js';

const workers = [];
class FakeWorker {
  constructor(url, options) {
    this.url = String(url);
    this.options = options;
    this.sent = [];
    this.listeners = [];
    workers.push(this);
  }
  postMessage(message) {
    this.sent.push(message);
  }
  addEventListener(type, listener) {
    this.listeners.push([type, listener]);
  }
  removeEventListener(type, listener) {
    this.listeners = this.listeners.filter(([, l]) => l !== listener);
  }
  terminate() {
    this.terminated = true;
  }
  // A message from the worker to the page.
  emit(data) {
    for (const [type, listener] of this.listeners) if (type === 'message') listener({ data });
  }
}
globalThis.Worker = FakeWorker;

const SCRIPT = 'https://example.test/app/worker.js';
const OTHER = 'https://example.test/other/worker.js';
const start = (workerUrl) => {
  const client = Draftsmith.launch({ workerUrl, persist: false });
  return { client, worker: workers.at(-1) };
};
const ready = (worker) => worker.emit({ kind: 'event', type: 'ready', data: { version: 'test', instance: 1 } });

test('the module a worker lends goes to the next worker started from its script', async () => {
  const module = await WebAssembly.compile(new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]));

  // The first start: nothing to lend yet.
  const first = start(`${SCRIPT}?db=one`);
  assert.equal(first.worker.options.name, 'draftsmith');
  assert.deepEqual(first.worker.sent, []);
  first.worker.emit({ kind: 'wasm', module });
  ready(first.worker);
  await first.client.ready;
  first.client.close();

  // The same script (another database): named for the module, which is its first message.
  const second = start(`${SCRIPT}?db=two`);
  assert.equal(second.worker.options.name, 'draftsmith (compiled)');
  assert.equal(second.worker.sent.length, 1);
  assert.equal(second.worker.sent[0].kind, 'wasm');
  assert.equal(second.worker.sent[0].module, module);
  ready(second.worker);
  await second.client.ready;
  second.client.close();

  // Another script: none.
  const other = start(OTHER);
  assert.equal(other.worker.options.name, 'draftsmith');
  assert.deepEqual(other.worker.sent, []);
  other.client.close();

  // A start with the lent module that fails: the next start fetches and compiles its own.
  const failed = start(SCRIPT);
  assert.equal(failed.worker.options.name, 'draftsmith (compiled)');
  failed.worker.emit({ kind: 'event', type: 'fatal', data: { message: 'the module did not instantiate' } });
  await assert.rejects(failed.client.ready, /did not instantiate/);
  const after = start(SCRIPT);
  assert.equal(after.worker.options.name, 'draftsmith');
  assert.deepEqual(after.worker.sent, []);
  after.client.close();
});

test('a lent value that is not a compiled module is not kept', () => {
  const first = start('https://example.test/third/worker.js');
  first.worker.emit({ kind: 'wasm', module: { not: 'a module' } });
  first.client.close();
  const next = start('https://example.test/third/worker.js');
  assert.equal(next.worker.options.name, 'draftsmith');
  next.client.close();
});

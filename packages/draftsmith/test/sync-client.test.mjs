// The client's sync API over a stand-in worker: `sync.connect/disconnect/status` send the
// core's requests with only the parameters given, and the page's `offline`/`online` events
// reach the core as `sync_network` (a browser may keep a dead WebSocket open, so the core
// cannot find out by itself).
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { Draftsmith } from '../draftsmith.js';

/** A worker that records what it is sent and answers every request with `{ok: true}`. */
function fakeWorker() {
  const target = new EventTarget();
  const sent = [];
  return {
    sent,
    addEventListener: (...a) => target.addEventListener(...a),
    removeEventListener: (...a) => target.removeEventListener(...a),
    terminate() {},
    postMessage(posted) {
      // The client posts a request's JSON text, its id and type beside it.
      assert.equal(posted.kind, 'request');
      const message = JSON.parse(posted.text);
      assert.equal(posted.id, message.id);
      assert.equal(posted.type, message.type);
      sent.push(message);
      queueMicrotask(() => {
        const event = new Event('message');
        event.data = { kind: 'response', id: message.id, ok: true, result: { type: message.type, params: message.params } };
        target.dispatchEvent(event);
      });
    },
  };
}

afterEach(() => {
  delete globalThis.window;
  delete globalThis.navigator;
});

test('sync.connect, disconnect and status send the core requests with the given parameters', async () => {
  const worker = fakeWorker();
  const ds = new Draftsmith(worker);
  await ds.sync.connect({ url: 'ws://127.0.0.1:1234', token: 't' });
  await ds.sync.connect({ url: 'ws://h', token: 't', project: 'p-1', name: 'Ann' });
  await ds.sync.status();
  await ds.sync.status('p-1');
  await ds.sync.disconnect();
  await ds.sync.disconnect('p-1');
  assert.deepEqual(
    worker.sent.map((m) => [m.type, m.params]),
    [
      ['sync_connect', { url: 'ws://127.0.0.1:1234', token: 't' }],
      ['sync_connect', { url: 'ws://h', token: 't', project: 'p-1', name: 'Ann' }],
      ['sync_status', {}],
      ['sync_status', { project: 'p-1' }],
      ['sync_disconnect', {}],
      ['sync_disconnect', { project: 'p-1' }],
    ],
  );
  ds.close();
});

test("the page's offline and online events reach the core as sync_network", async () => {
  globalThis.window = new EventTarget();
  globalThis.navigator = { onLine: true };
  const worker = fakeWorker();
  const ds = new Draftsmith(worker);
  assert.equal(worker.sent.length, 0, 'nothing is said while the device is online');
  globalThis.navigator.onLine = false;
  globalThis.window.dispatchEvent(new Event('offline'));
  globalThis.navigator.onLine = true;
  globalThis.window.dispatchEvent(new Event('online'));
  assert.deepEqual(
    worker.sent.map((m) => [m.type, m.params]),
    [
      ['sync_network', { online: false }],
      ['sync_network', { online: true }],
    ],
  );
  ds.close();
  globalThis.window.dispatchEvent(new Event('offline'));
  assert.equal(worker.sent.length, 2, 'a closed client no longer listens');
});

test('a client started while the device is offline tells the core at once', () => {
  globalThis.window = new EventTarget();
  globalThis.navigator = { onLine: false };
  const worker = fakeWorker();
  const ds = new Draftsmith(worker);
  assert.deepEqual(worker.sent.map((m) => [m.type, m.params]), [['sync_network', { online: false }]]);
  ds.close();
});

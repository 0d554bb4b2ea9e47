// What the client posts for a request: the request's JSON text, with its id and type beside it
// for the worker. Params JSON cannot carry are refused as `malformed` before anything is
// posted: a function or a symbol (which JSON.stringify would drop without a word), a BigInt,
// a cycle. Values JSON writes as something else cross as JSON writes them, and lone
// surrogates become U+FFFD.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { Draftsmith } from '../draftsmith.js';

/** A worker that records what it is posted and answers each request with its params. */
function fakeWorker() {
  const target = new EventTarget();
  const posted = [];
  return {
    posted,
    addEventListener: (...a) => target.addEventListener(...a),
    removeEventListener: (...a) => target.removeEventListener(...a),
    terminate() {},
    postMessage(message) {
      posted.push(message);
      const request = JSON.parse(message.text);
      queueMicrotask(() => {
        const event = new Event('message');
        event.data = JSON.stringify({ kind: 'response', id: request.id, ok: true, result: request.params ?? null });
        target.dispatchEvent(event);
      });
    },
  };
}

let client = null;
afterEach(() => {
  client?.close();
  client = null;
  delete globalThis.Worker;
});

function start() {
  const worker = fakeWorker();
  globalThis.Worker = function Worker() {
    return worker;
  };
  client = Draftsmith.launch({ workerUrl: 'https://example.test/worker.js', persist: false });
  return worker;
}

test('a request crosses as its JSON text, its id and type beside it', async () => {
  const worker = start();
  const result = await client.request('apply_user_change', { chapter: 'c1', baseVersion: 3, changes: [{ retain: 2 }, { insert: 'x' }], tag: 'k1' });
  assert.deepEqual(result, { chapter: 'c1', baseVersion: 3, changes: [{ retain: 2 }, { insert: 'x' }], tag: 'k1' });
  const [message] = worker.posted;
  assert.deepEqual(Object.keys(message).sort(), ['id', 'kind', 'text', 'type']);
  assert.equal(message.kind, 'request');
  assert.equal(message.type, 'apply_user_change');
  assert.equal(typeof message.text, 'string');
  const request = JSON.parse(message.text);
  assert.equal(request.id, message.id);
  assert.equal(request.type, 'apply_user_change');
  // A request without params has none in its text.
  await client.request('hello');
  assert.deepEqual(Object.keys(JSON.parse(worker.posted[1].text)).sort(), ['id', 'type']);
});

test('params JSON cannot carry are refused as malformed, and nothing is posted', async () => {
  const worker = start();
  const refused = async (params) => {
    const error = await client.request('hello', params).then(
      () => assert.fail('sent'),
      (e) => e,
    );
    assert.equal(error.name, 'DraftsmithError');
    assert.equal(error.code, 'malformed');
    return error.message;
  };
  assert.match(await refused({ f: () => 1 }), /params\.f is a function/);
  assert.match(await refused({ notes: [{ text: 'a' }, { text: 'b', tags: ['x', Symbol('y')] }] }), /params\.notes\[1\]\.tags\[1\] is a symbol/);
  assert.match(await refused({ n: 1n }), /request 'hello' cannot be sent/);
  const cycle = { a: {} };
  cycle.a.back = cycle;
  assert.match(await refused(cycle), /request 'hello' cannot be sent/);
  assert.equal(worker.posted.length, 0);
  // The client goes on serving.
  assert.deepEqual(await client.request('hello', { ok: true }), { ok: true });
});

test('values JSON writes as something else cross as JSON writes them', async () => {
  start();
  const at = new Date(Date.UTC(2026, 10, 30, 4, 5, 6));
  const result = await client.request('echo', { at, skipped: undefined, list: [undefined, NaN], custom: { toJSON: () => 'as-json', f: () => 1 } });
  // A Date by its toJSON, undefined left out (null in an array), NaN as null; an object with
  // a toJSON stands for what it returns, whatever else it holds.
  assert.deepEqual(result, { at: '2026-11-30T04:05:06.000Z', list: [null, null], custom: 'as-json' });
});

test('lone surrogates become U+FFFD, and a backslash in the text is kept', async () => {
  start();
  const result = await client.request('echo', { text: 'a\uD800b', escaped: '\\ud800 stays', pair: '\uD83D\uDE00' });
  assert.deepEqual(result, { text: 'a\uFFFDb', escaped: '\\ud800 stays', pair: '\uD83D\uDE00' });
});

test('a client closed before its worker started: ready rejects with closed at once', async () => {
  start();
  const closing = client;
  closing.close();
  const error = await closing.ready.then(
    () => assert.fail('ready resolved'),
    (e) => e,
  );
  assert.equal(error.code, 'closed');
  assert.match(error.message, /closed before its worker started/);
});

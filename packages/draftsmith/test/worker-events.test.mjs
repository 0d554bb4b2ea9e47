// The worker's event queue (worker.js), on a fake core and node's fake timers: the events a
// request emits reach the page in the same message as its answer; a request that takes longer
// lets them go after a frame (16 ms); an event outside any request goes at the end of the task;
// progress goes at once; an answer the core gives ahead of its save goes when the save lands.
// src/worker.js runs unbundled, from a copy beside a fake wasm glue.
import { test, before, after, mock } from 'node:test';
import assert from 'node:assert/strict';
import { startWorker } from './worker-harness.mjs';

// The glue's surface the worker uses; the core's answers and events come from `fakeCore`.
const FAKE_GLUE = `
export default async function init() {}
export class WorkerCore {
  static version() { return '0.0.0-test'; }
  static async open(emit) { globalThis.fakeCore.emit = emit; return new WorkerCore(); }
  handle_for(_client, text, _project, ahead) { return globalThis.fakeCore.handle(JSON.parse(text), ahead); }
  handle(text) { return globalThis.fakeCore.handle(JSON.parse(text)); }
  client_count() { return 0; }
  has_idle_work() { return globalThis.fakeCore.idleWork > 0; }
  idle() { globalThis.fakeCore.idled.push(globalThis.fakeCore.idleWork); globalThis.fakeCore.idleWork = 0; }
}
`;

const PROJECT = 'p1';
const posted = [];
const listeners = new Map();
let stop;
const fakeCore = {
  emit: null,
  // Work the core left for when it is idle (how many edits to mirror), and what each of the
  // worker's calls of `idle` found.
  idleWork: 0,
  idled: [],
  handle: async () => {
    throw new Error('no handler set');
  },
};

// The response text the core writes for request `id`.
const response = (id, result) => JSON.stringify({ kind: 'response', id, ok: true, result });
// An event of this page's project, as the core emits it (JSON text).
const emit = (type, data = {}) => fakeCore.emit(JSON.stringify({ kind: 'event', type, project: PROJECT, data }));
// A message from the page.
const send = (message) => listeners.get('message')({ data: message });
// Let the worker's promises run (setImmediate is not faked).
// The core's next request emits `type`, then runs until `finish()` is called, and answers.
// Resolves to `finish`, once the request has started.
function slowRequest(type) {
  return new Promise((started) => {
    fakeCore.handle = (request) => {
      emit(type);
      return new Promise((resolve) => started(() => resolve(response(request.id, {}))));
    };
  });
}
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};
// What the page got: each message as its list of parts (a batch's messages, or the one), each
// part read from its JSON text if it came as text.
const read = (m) => (typeof m === 'string' ? JSON.parse(m) : m);
const messages = () => posted.splice(0).map((m) => (read(m)?.kind === 'batch' ? read(m).messages : [m]).map(read));
const kinds = (parts) => parts.map((p) => (p.kind === 'event' ? p.type : `response ${p.id}`));

before(async () => {
  globalThis.fakeCore = fakeCore;
  // Its timeouts are fake too.
  stop = await startWorker({
    glue: FAKE_GLUE,
    db: 'worker-events',
    postMessage: (message) => posted.push(message),
    addEventListener: (type, listener) => listeners.set(type, listener),
    timers: ['setTimeout', 'Date'],
  });
  // The worker imports the glue from disk before it is ready.
  const since = Date.now();
  while (posted.length === 0 && Date.now() - since < 30_000) await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(messages().map(kinds), [['ready']]);
  // The page shows PROJECT (the worker follows it from the answer to open_project).
  fakeCore.handle = async (request) => response(request.id, { id: PROJECT });
  send({ id: 1, type: 'open_project', params: { id: PROJECT } });
  await settle();
  assert.deepEqual(messages().map(kinds), [['response 1']]);
});

after(() => stop());

test("a keystroke's events go in one message with its answer", async () => {
  fakeCore.handle = async (request) => {
    emit('edit', { version: 2 });
    emit('history_changed');
    emit('saved', { changed: true });
    return response(request.id, { version: 2 });
  };
  send({ id: 2, type: 'apply_user_change', params: {} });
  await settle();
  assert.deepEqual(messages().map(kinds), [['edit', 'history_changed', 'saved', 'response 2']]);
  // No timer was left to send anything more.
  mock.timers.tick(100);
  await settle();
  assert.deepEqual(messages(), []);
});

// A keystroke as the core serves it when it gives its answer ahead: its events, then the
// answer with the promise of its save's transaction, then (the test says when) the core's own
// bookkeeping of the save and its answer. Returns the controls of the save and of the core.
function keystrokeAhead(id) {
  const save = {};
  const landing = new Promise((resolve, reject) => Object.assign(save, { land: resolve, abort: () => reject(new Error('AbortError')) }));
  fakeCore.handle = (request, ahead) => {
    assert.equal(typeof ahead, 'function', 'a page request may be answered ahead');
    emit('edit', { version: id });
    emit('history_changed');
    ahead(response(request.id, { version: id }), landing);
    return new Promise((resolve) => {
      save.coreDone = (event) => {
        emit(event);
        resolve(response(request.id, { version: id }));
      };
    });
  };
  send({ id, type: 'apply_user_change', params: {} });
  return save;
}

test('an answer given ahead goes when its save lands, before the core is done, and once', async () => {
  const save = keystrokeAhead(20);
  await settle();
  assert.deepEqual(messages(), [], 'nothing before the save lands');
  save.land();
  await settle();
  assert.deepEqual(messages().map(kinds), [['edit', 'history_changed', 'response 20']]);
  save.coreDone('saved');
  await settle();
  // The core's `saved` goes at once, alone: the answer is not sent again.
  assert.deepEqual(messages().map(kinds), [['saved']]);
  mock.timers.tick(100);
  await settle();
  assert.deepEqual(messages(), []);
});

test('an answer given ahead of a save that fails goes once, after the failure', async () => {
  const save = keystrokeAhead(21);
  await settle();
  save.abort();
  await settle();
  assert.deepEqual(messages(), [], 'nothing goes when the save aborts');
  save.coreDone('storage_error');
  await settle();
  assert.deepEqual(messages().map(kinds), [['edit', 'history_changed', 'storage_error', 'response 21']]);
});

test('an answer the core returned before its save was heard of goes once', async () => {
  const save = keystrokeAhead(22);
  await settle();
  save.coreDone('saved');
  await settle();
  assert.deepEqual(messages().map(kinds), [['edit', 'history_changed', 'saved', 'response 22']]);
  save.land();
  await settle();
  assert.deepEqual(messages(), [], 'not sent again when the save lands');
});

test('the events of a request that takes longer go after a frame, its answer later', async () => {
  let finish;
  fakeCore.handle = (request) => {
    emit('run_started');
    return new Promise((resolve) => {
      finish = () => resolve(response(request.id, { done: true }));
    });
  };
  send({ id: 3, type: 'run_agent', params: {} });
  await settle();
  mock.timers.tick(15);
  await settle();
  assert.deepEqual(messages(), [], 'held for up to a frame');
  mock.timers.tick(1);
  assert.deepEqual(messages().map(kinds), [['run_started']]);
  emit('text_delta');
  finish();
  await settle();
  assert.deepEqual(messages().map(kinds), [['text_delta', 'response 3']]);
});

test('an event outside any request goes at the end of the task', async () => {
  emit('memory_changed');
  emit('saved', { changed: false });
  assert.deepEqual(messages(), [], 'not at once');
  mock.timers.tick(0);
  assert.deepEqual(messages().map(kinds), [['memory_changed', 'saved']]);
});

test('progress goes at once, with the events before it', async () => {
  let finish;
  fakeCore.handle = (request) => {
    emit('analysis_started');
    emit('progress', { task: 'run_analysis', done: 1, total: 4 });
    return new Promise((resolve) => {
      finish = () => resolve(response(request.id, {}));
    });
  };
  send({ id: 4, type: 'call_tool', params: {} });
  await settle();
  assert.deepEqual(messages().map(kinds), [['analysis_started', 'progress']]);
  finish();
  await settle();
  assert.deepEqual(messages().map(kinds), [['response 4']]);
});

test("another project's events do not reach the page", async () => {
  fakeCore.handle = async (request) => {
    fakeCore.emit(JSON.stringify({ kind: 'event', type: 'saved', project: 'other', data: {} }));
    emit('saved');
    return response(request.id, {});
  };
  send({ id: 5, type: 'save_now', params: {} });
  await settle();
  const got = messages();
  assert.deepEqual(got.map(kinds), [['saved', 'response 5']]);
  assert.equal(got[0][0].project, PROJECT);
});

test("a frame's timer left from an earlier request does not cut a later one's events from its answer", async () => {
  const running = slowRequest('run_started');
  send({ id: 6, type: 'run_agent', params: {} });
  const finishRun = await running;
  await settle();
  mock.timers.tick(10);
  finishRun();
  await settle();
  assert.deepEqual(messages().map(kinds), [['run_started', 'response 6']]);
  // The next request's event comes 12 ms after the first one's: the timer set then (due at
  // 16 ms) finds it, and waits until it is due.
  mock.timers.tick(2);
  const editing = slowRequest('edit');
  send({ id: 7, type: 'apply_user_change', params: {} });
  const finishEdit = await editing;
  await settle();
  mock.timers.tick(8);
  await settle();
  assert.deepEqual(messages(), [], 'held a frame from its own event');
  finishEdit();
  await settle();
  assert.deepEqual(messages().map(kinds), [['edit', 'response 7']]);
  mock.timers.tick(100);
  assert.deepEqual(messages(), []);
});

test("events the core describes go to the page as its text, with the answer's, in one string", async () => {
  const event = (type, project, data) => JSON.stringify({ kind: 'event', type, project, data });
  fakeCore.handle = async (request) => {
    fakeCore.emit(event('edit', PROJECT, { version: 3 }), 'edit', PROJECT, undefined);
    // Another project's, told by its project argument.
    fakeCore.emit(event('saved', 'other', {}), 'saved', 'other', undefined);
    fakeCore.emit(event('saved', PROJECT, { project: PROJECT }), 'saved', PROJECT, undefined);
    return response(request.id, { version: 3 });
  };
  send({ id: 8, type: 'apply_user_change', params: {} });
  await settle();
  assert.equal(typeof posted[0], 'string');
  assert.deepEqual(messages().map(kinds), [['edit', 'saved', 'response 8']]);
});

test('the core does what it left for later once the answer is posted, or before the next request', async () => {
  fakeCore.handle = async (request) => {
    fakeCore.idleWork += 1;
    return response(request.id, {});
  };
  send({ id: 20, type: 'apply_user_change', params: {} });
  await settle();
  assert.deepEqual(messages().map(kinds), [['response 20']]);
  assert.deepEqual(fakeCore.idled, [], 'not in the task that answers');
  mock.timers.tick(0);
  assert.deepEqual(fakeCore.idled, [1], 'in a task of its own');
  // A request that comes before that task: the work is done before it is served.
  const seen = [];
  fakeCore.handle = async (request) => {
    seen.push(fakeCore.idleWork);
    fakeCore.idleWork += 1;
    return response(request.id, {});
  };
  send({ id: 21, type: 'apply_user_change', params: {} });
  await settle();
  send({ id: 22, type: 'apply_user_change', params: {} });
  await settle();
  assert.deepEqual(seen, [0, 0], 'each request finds the last one\'s work done');
  assert.deepEqual(fakeCore.idled, [1, 1]);
  mock.timers.tick(0);
  assert.deepEqual(fakeCore.idled, [1, 1, 1]);
  // A request that left nothing arms nothing.
  fakeCore.handle = async (request) => response(request.id, {});
  send({ id: 23, type: 'hello' });
  await settle();
  mock.timers.tick(100);
  assert.deepEqual(fakeCore.idled, [1, 1, 1]);
  messages();
});

// draftsmith worker bootstrap (a module worker).
//
// Loads the wasm core (built by `wasm-bindgen --target web` into ./pkg) and serves the
// request/response protocol described in src/protocol.rs:
//   page -> worker  {id, type, params?}
//   worker -> page  {kind: "response", id, ok, result | error: {code, message}}
//   worker -> page  {kind: "event", type, data}
//
// Every request gets exactly one response, whatever it contains. If the core panics, the
// page gets a `panic` event, every request in flight gets an `internal` error, and a fresh
// core instance is loaded, so the worker never dies silently.

const GLUE_URL = new URL('./pkg/draftsmith.js', import.meta.url).href;
// The IndexedDB database: `draftsmith`, or the worker URL's `?db=` (tests and embedders that
// keep several libraries apart).
const DATABASE = new URL(self.location.href).searchParams.get('db') || 'draftsmith';

// Tabs of one origin share the database; workers tell each other what they saved so that
// none keeps a stale copy of a project (and none overwrites another's work).
const CHANNEL = typeof BroadcastChannel === 'function' ? new BroadcastChannel(`draftsmith:${DATABASE}`) : null;
const INSTANCE = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
// Events other tabs hear too (with `remote: true`): approvals are decided once, in any tab.
const SHARED_EVENTS = new Set(['saved', 'projects_changed', 'memory_changed', 'approvals_changed', 'approval_decided']);

let core = null;
let generation = 0;
let ready = null;
let bootError = null;
// In-flight requests of the current core instance: local sequence number -> request id.
let inFlight = new Map();
let sequence = 0;

function post(message) {
  self.postMessage(message);
}

function postEvent(type, data) {
  post({ kind: 'event', type, data });
}

function errorResponse(id, code, message) {
  return { kind: 'response', id, ok: false, error: { code, message } };
}

function usableId(id) {
  return (typeof id === 'number' && Number.isFinite(id)) || (typeof id === 'string' && id !== '');
}

// Lone UTF-16 surrogates cannot cross into Rust as text; replace them with U+FFFD so that
// nothing a writer typed is rejected for one stray code unit.
function wellFormed(_key, value) {
  return typeof value === 'string' && !value.isWellFormed() ? value.toWellFormed() : value;
}

function onCoreEvent(json) {
  let event;
  try {
    event = JSON.parse(json);
  } catch (err) {
    return;
  }
  post(event);
  if (CHANNEL && SHARED_EVENTS.has(event.type)) {
    CHANNEL.postMessage({ from: INSTANCE, type: event.type, data: event.data });
  }
  if (event.type === 'panic') {
    recoverFromPanic(event.data && event.data.message);
  }
}

function recoverFromPanic(message) {
  const failed = inFlight;
  inFlight = new Map();
  core = null;
  for (const id of failed.values()) {
    if (id !== null) {
      post(errorResponse(id, 'internal', `the core failed unexpectedly: ${message}`));
    }
  }
  ready = boot();
}

async function boot() {
  generation += 1;
  try {
    // A fresh URL gives a fresh module instance, and so a fresh wasm instance after a panic.
    const url = generation === 1 ? GLUE_URL : `${GLUE_URL}?instance=${generation}`;
    const glue = await import(url);
    await glue.default();
    core = await glue.WorkerCore.open(onCoreEvent, DATABASE);
    bootError = null;
    postEvent('ready', { version: glue.WorkerCore.version(), instance: generation });
  } catch (err) {
    bootError = String((err && err.message) || err);
    postEvent('fatal', { message: `could not load the draftsmith core: ${bootError}` });
  }
}

async function serve(message) {
  const id = message !== null && typeof message === 'object' && usableId(message.id) ? message.id : null;
  let text;
  try {
    text = JSON.stringify(message, wellFormed);
  } catch (err) {
    post(errorResponse(id, 'malformed', `message cannot be encoded as JSON: ${err.message}`));
    return;
  }
  if (text === undefined) {
    post(errorResponse(id, 'malformed', `message cannot be encoded as JSON (got ${typeof message})`));
    return;
  }
  await ready;
  if (core === null) {
    post(errorResponse(id, 'internal', `the draftsmith core is not loaded: ${bootError}`));
    return;
  }
  const seq = ++sequence;
  const instance = inFlight;
  instance.set(seq, id);
  let response;
  try {
    response = JSON.parse(await core.handle(text));
  } catch (err) {
    // A trap that surfaced here instead of through the panic event.
    if (instance.delete(seq)) {
      post(errorResponse(id, 'internal', `the core failed unexpectedly: ${err && err.message}`));
    }
    return;
  }
  if (!instance.delete(seq)) {
    return; // already answered by recoverFromPanic
  }
  if (response.id === null && id !== null) {
    response.id = id;
  }
  post(response);
}

self.addEventListener('message', (event) => {
  serve(event.data);
});

// A request of the worker's own, whose response goes nowhere.
let internalId = 0;
async function internal(type, params) {
  await ready;
  if (core === null) return;
  try {
    await core.handle(JSON.stringify({ id: `internal-${++internalId}`, type, params }));
  } catch (err) {
    // A panic is reported through the panic event.
  }
}

if (CHANNEL) {
  CHANNEL.onmessage = (event) => {
    const message = event.data;
    if (!message || message.from === INSTANCE) return;
    // An audit-only save (a read-only tool call) changes nothing another tab shows.
    if (message.type === 'saved' && message.data && message.data.project && message.data.changed !== false) {
      internal('reload_project', { id: message.data.project });
    } else if (message.type === 'projects_changed') {
      postEvent('projects_changed', { remote: true });
    } else if (message.type === 'memory_changed' || message.type === 'approvals_changed' || message.type === 'approval_decided') {
      postEvent(message.type, { ...message.data, remote: true });
    }
  };
}

self.addEventListener('messageerror', () => {
  post(errorResponse(null, 'malformed', 'a message could not be deserialized'));
});

// After a panic the dead instance's scheduled work throws; that is already reported.
self.addEventListener('error', (event) => {
  if (core === null) {
    event.preventDefault();
  }
});

ready = boot();

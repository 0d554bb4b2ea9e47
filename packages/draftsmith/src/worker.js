// draftsmith worker bootstrap (a module worker).
//
// The source of the package's `worker.js`, which www/worker-bundle.mjs makes of it with the
// core's glue bundled in (one script to load at every start). Its URLs are relative to that
// `worker.js`, at the package's root: the package's node tests run this file from a copy there.
//
// Loads the wasm core (built by `wasm-bindgen --target web` into ./pkg) and serves the
// request/response protocol described in src/protocol.rs:
//   page -> worker  {kind: "request", id, type, text} (the client: `text` the request's JSON),
//                   or the request itself, {id, type, params?}
//   worker -> page  {kind: "response", id, ok, result | error: {code, message}}, or its JSON text
//   worker -> page  {kind: "event", type, data, project?}
//
// Every request gets exactly one response, whatever it contains. If the core panics, the
// page gets a `panic` event, every request in flight gets an `internal` error, and a fresh
// core instance is loaded, so the worker never dies silently.
//
// One writer per database. Tabs of one origin share the IndexedDB database, and exactly one
// worker (the *writer*) applies and saves changes: the one holding the Web Lock
// `draftsmith:<db>:writer`. Every other worker is a *follower*: it relays its page's requests
// to the writer over the BroadcastChannel `draftsmith:<db>` and passes the writer's events for
// its page's project back to its page, so every tab sees every change live and no two copies
// of a project are ever saved over each other. One writer for the whole database (not one per
// project) because global notes, settings and the project list are shared by all projects.
// When the writing tab closes, its lock is released and the next worker in the lock's queue
// becomes the writer; requests relayed to the old writer that it never received are sent
// again, a writer's change that may have been applied is sent again too (the core applies a
// tagged change once), and any other request that was running fails with `interrupted`.
// Without Web Locks or BroadcastChannel every worker writes for itself and reloads a project
// when another tab saved it.

import { firstGlue } from './first-glue.js';

// Both resolved relative to this module (not to the page), in a form bundlers follow: Vite
// copies the glue and the wasm and rewrites these URLs; unbundled, they are the files beside.
const GLUE_URL = new URL('./pkg/draftsmith.js', import.meta.url).href;
const WASM_URL = new URL('./pkg/draftsmith_bg.wasm', import.meta.url).href;
// The page reader's own module (Readability on html5ever), loaded when research first reads
// a page: every start of the worker is spared its download and compilation.
const READER_GLUE_URL = new URL('./pkg/draftsmith_reader.js', import.meta.url).href;
const READER_WASM_URL = new URL('./pkg/draftsmith_reader_bg.wasm', import.meta.url).href;
// The glue of the first start (see first-glue.js), bundled in; a failure to import it is
// reported by `boot`.
firstGlue.catch(() => {});
// The IndexedDB database: `draftsmith`, or the worker URL's `?db=` (tests and embedders that
// keep several libraries apart).
const DATABASE = new URL(self.location.href).searchParams.get('db') || 'draftsmith';
// The database's first connection, asked for now: the browser opens its files while the glue
// and the wasm load, and the core's own connections then find it open. Closed once the core
// has opened (see `openDatabaseEarly`).
let earlyDatabase = openDatabaseEarly();

const CHANNEL = typeof BroadcastChannel === 'function' ? new BroadcastChannel(`draftsmith:${DATABASE}`) : null;
const LOCKS = CHANNEL && typeof navigator !== 'undefined' && navigator.locks ? navigator.locks : null;
const WRITER_LOCK = `draftsmith:${DATABASE}:writer`;
const INSTANCE = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
// Without a writer lock: events other tabs hear too (with `remote: true`).
const SHARED_EVENTS = new Set(['saved', 'projects_changed', 'memory_changed', 'approvals_changed', 'approval_decided']);
// Events about this worker itself, never relayed.
const LOCAL_EVENTS = new Set(['ready', 'fatal']);

// The in-browser model (the `local` provider): one per worker, kept across core restarts so a
// loaded model stays loaded. wllama itself is imported on the first load. It and its own
// workers end with this worker when the tab closes.
let localModel = null;
// The MCP tool servers of the settings' `mcpServers` (the core connects and calls them): one
// set per worker, kept across core restarts. The MCP SDK is imported on the first connection.
let mcpClients = null;

// Both are imported on first use (the core's first call to either, or `worker_status`), not
// while the worker starts, where their loading held back the glue's. A failed import is tried
// again at the next use.
let bridges = null;
// The MCP clients' name and version, once the core has loaded.
let clientInfo = null;
function loadBridges() {
  bridges ??= Promise.all([import('./local-model.js'), import('./mcp-client.js')]).then(
    ([{ LocalModel }, { McpClients }]) => {
      localModel ??= new LocalModel();
      mcpClients ??= new McpClients();
      if (clientInfo !== null) mcpClients.clientInfo = clientInfo;
    },
    (err) => {
      bridges = null;
      throw err;
    },
  );
  return bridges;
}

// The bridges as the core is given them: each method it calls (every one returns a promise)
// imports the bridges first.
function lazyBridge(bridge, methods) {
  return Object.fromEntries(methods.map((name) => [name, (...args) => loadBridges().then(() => bridge()[name](...args))]));
}
const localModelBridge = lazyBridge(() => localModel, ['load', 'chat', 'list', 'remove']);
const mcpBridge = lazyBridge(() => mcpClients, ['connect', 'call', 'close']);

// Reads research pages for the core: the reader's module is imported the first time, and
// again (a fresh instance) after it failed, which may have left its instance unusable.
let readerLoads = 0;
const pageReader = {
  module: null,
  read(html) {
    if (this.module === null) {
      readerLoads += 1;
      const url = readerLoads === 1 ? READER_GLUE_URL : `${READER_GLUE_URL}?instance=${readerLoads}`;
      this.module = import(/* @vite-ignore */ url).then(async (reader) => {
        await reader.default({ module_or_path: READER_WASM_URL });
        return reader;
      });
    }
    const module = this.module;
    return module.then((reader) => reader.readPage(html)).catch((err) => {
      if (this.module === module) this.module = null;
      throw err;
    });
  },
};

let core = null;
let generation = 0;
let ready = null;
let bootError = null;
// In-flight requests of the current core instance: local sequence number -> reply function.
let inFlight = new Map();
let sequence = 0;

// `writer` or `follower`; settled by `elected`.
let role = LOCKS ? 'electing' : 'writer';
let elected = null;
// The project this worker's page shows (requests of the page are served in it).
let pageProject = null;
// Follower: requests sent to the writer, by relay sequence number.
const relayed = new Map();
let relaySeq = 0;
// Writer: relayed requests already taken (so a resent one is not run twice).
const taken = new Set();

// One message to the page: with the events queued before it, as one `batch` (one postMessage
// instead of one per event: each costs a structured clone and a hop to the page's thread).
function post(message) {
  const messages = takePageEvents();
  messages.push(message);
  send(messages);
}

// Post messages to the page: one as it is, several as one `batch`. Messages that are all
// JSON text (the core's events and answer, as it wrote them) go as the JSON text of their
// batch: a string is cloned as one copy, and the page parses it once.
function send(messages) {
  if (messages.length === 1) self.postMessage(messages[0]);
  else if (messages.length > 1) {
    self.postMessage(
      messages.every((m) => typeof m === 'string')
        ? `{"kind":"batch","messages":[${messages.join(',')}]}`
        : { kind: 'batch', messages },
    );
  }
}

// The core emits a request's events as it runs. Anything posted to the page posts the queued
// events first, in the same message, so the page hears events and answers in the order they
// happened. While one of this page's requests is served, its events wait for its answer (a
// keystroke's `edit`, `history_changed` and `saved` go with its response: one postMessage, not
// two), or a frame at most for a request that takes longer, such as an agent's run. Otherwise
// they go at the end of the current task.
const HOLD_EVENTS_MS = 16;
let pageRequests = 0;
let pageEvents = [];

// A timer that calls `fire` once the time it was set to (`Date.now()`) has passed. Set later,
// it is not set anew: when it fires early it waits again for what is left, so that work done
// a millisecond apart (each keystroke's events, each save) does not set and clear a timer
// each. Set earlier, it is set anew; cancelled, it fires without calling `fire`.
class LazyTimer {
  constructor(fire) {
    this.fire = fire;
    this.due = Infinity;
    this.handle = null;
    this.at = Infinity;
  }

  set(due) {
    this.due = due;
    if (this.handle !== null && this.at <= due) return;
    clearTimeout(this.handle);
    this.arm();
  }

  cancel() {
    this.due = Infinity;
  }

  // Fire now if set (the timer then fires without calling `fire`).
  fireNow() {
    if (this.due === Infinity) return;
    this.due = Infinity;
    this.fire();
  }

  arm() {
    this.at = this.due;
    this.handle = setTimeout(() => this.fired(), Math.max(0, this.due - Date.now()));
  }

  fired() {
    this.handle = null;
    if (this.due === Infinity) return;
    if (this.due > Date.now()) {
      this.arm();
      return;
    }
    this.due = Infinity;
    this.fire();
  }
}

// Sends the queued events when the oldest is due, if nothing else takes them first. Whatever
// takes them cancels it, so that it never cuts a later request's events from their answer.
const pageTimer = new LazyTimer(flushPageEvents);
function deliverSoon(event) {
  pageEvents.push(event);
  // Progress of long work goes at once (with what was queued before it): the page shows it
  // while the work goes on, even while the core computes without a pause.
  if (event.type === 'progress') flushPageEvents();
  else if (pageEvents.length === 1) pageTimer.set(Date.now() + (pageRequests > 0 ? HOLD_EVENTS_MS : 0));
}

// The core's work that waits until it is idle (mirroring edits into the project's Yjs
// document): in a task of its own, after the request's answer has gone to the page, or before
// the next request if that comes first (so each request finds the last one's work done).
const idleTimer = new LazyTimer(() => {
  try {
    core?.idle();
  } catch {
    // A panic: reported by the core's panic event, which restarts it.
  }
});

function hasIdleWork() {
  try {
    return core !== null && core.has_idle_work();
  } catch {
    // A panic: reported by the core's panic event, which restarts it.
    return false;
  }
}

function flushPageEvents() {
  send(takePageEvents());
}

// The queued events this page is to get, in order (see `forPage`).
function takePageEvents() {
  pageTimer.cancel();
  if (pageEvents.length === 0) return [];
  const queued = pageEvents;
  pageEvents = [];
  const events = [];
  for (const event of queued) {
    const delivered = forPage(event);
    if (delivered) events.push(delivered);
  }
  return events;
}

// Events for other tabs wait for the end of the current task (they go out while this worker
// waits for IndexedDB, or right after its own page's answer), so that the writer's page is not
// kept waiting for them. Anything else sent on the channel sends them first, in the same
// `batch` message (one postMessage, not one per event): every tab hears events and answers in
// the order they happened.
let broadcasts = [];
function broadcast(message) {
  broadcasts.push(message);
  flushBroadcasts();
}

function broadcastSoon(message) {
  broadcasts.push(message);
  if (broadcasts.length === 1) setTimeout(flushBroadcasts, 0);
}

function flushBroadcasts() {
  if (broadcasts.length === 0) return;
  const queued = broadcasts;
  broadcasts = [];
  CHANNEL.postMessage(queued.length === 1 ? queued[0] : { t: 'batch', messages: queued });
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

// A message as JSON text for the core. JSON.stringify writes a lone surrogate as an escape
// (`\ud800`); only when the text holds something like one (rare: a lone surrogate, or a
// backslash followed by such letters) is the message encoded again with the replacer, which
// is slower (a call per value).
function encode(message) {
  const text = JSON.stringify(message);
  return text !== undefined && /\\ud[89a-f]/.test(text) ? JSON.stringify(message, wellFormed) : text;
}

// A request as the client posts it: `{kind: 'request', id, type, text}`, `text` the request's
// JSON text (well-formed: the client replaced lone surrogates), `id` and `type` what the
// worker reads of it without parsing it. Anything else posted is a request object, encoded
// here.
function isRequestText(posted) {
  return posted !== null && typeof posted === 'object' && posted.kind === 'request' && typeof posted.text === 'string' && typeof posted.type === 'string';
}

// Follow which project the page shows, from its requests' responses and the events it hears.
function track(request, response) {
  if (!response || !response.ok || !request) return;
  const result = response.result || {};
  if (['open_project', 'create_project', 'import_project'].includes(request.type) && typeof result.id === 'string') {
    pageProject = result.id;
  } else if (request.type === 'delete_project' && result.deleted === pageProject) {
    pageProject = null;
  }
}

// An event: what the worker reads of it (its type, the project it concerns, the client whose
// request caused it), and the event itself, as the JSON text the core wrote (parsed only if
// the worker needs more of it) or as an object (an event from the writer, over the channel).
class CoreEvent {
  constructor(type, project, client, json, event) {
    this.type = type;
    this.project = project;
    this.client = client;
    this.json = json;
    this.event = event;
  }

  static of(event) {
    return new CoreEvent(event.type, event.project, event.client, null, event);
  }

  get parsed() {
    this.event ??= JSON.parse(this.json);
    return this.event;
  }
}

// An event as this page gets it (its JSON text, or an object), or null if it concerns
// another project. An event caused by another tab's request says `remote: true` in its data.
function forPage(event) {
  const mine = role === 'follower' ? event.client === INSTANCE : !event.client;
  let delivered = event.json ?? event.event;
  if (!mine) {
    const parsed = event.parsed;
    if (parsed.data && typeof parsed.data === 'object' && !Array.isArray(parsed.data)) {
      delivered = { ...parsed, data: { ...parsed.data, remote: true } };
    }
  }
  if (event.type === 'project_deleted' && event.parsed.data && event.parsed.data.id === pageProject) {
    pageProject = null;
    return delivered;
  }
  // The progress of this page's own request, such as opening a project it does not show yet.
  if (event.type === 'progress' && mine) return delivered;
  return !event.project || event.project === pageProject ? delivered : null;
}

// The core's emit: an event's JSON text, then its type, project and client (a caller that
// gives the text alone has it read).
function onCoreEvent(json, type, project, client) {
  let event;
  try {
    event =
      typeof type === 'string'
        ? new CoreEvent(type, project ?? undefined, client ?? undefined, json, undefined)
        : CoreEvent.of(JSON.parse(json));
  } catch (err) {
    return;
  }
  deliverSoon(event);
  if (CHANNEL && role === 'writer' && LOCKS) {
    if (peers === null || peers.size > 0) {
      broadcastSoon({ t: 'event', event: event.parsed });
      if (event.type === 'progress') flushBroadcasts();
    }
  } else if (CHANNEL && !LOCKS && SHARED_EVENTS.has(event.type)) {
    broadcastSoon({ t: 'shared', from: INSTANCE, type: event.type, data: event.parsed.data });
  }
  if (event.type === 'saved' && role === 'writer' && !checkpointing && event.project) {
    scheduleCheckpoint(event.project);
  }
  if (event.type === 'panic') {
    recoverFromPanic(event.parsed.data && event.parsed.data.message);
  }
}

// The writer checkpoints a project's chapters (their whole text, so that loading needs no
// long replay of changes) once nothing was saved in it for two seconds.
const CHECKPOINT_IDLE_MS = 2000;
// By project: the timer of its checkpoint, which each save sets later.
const checkpointTimers = new Map();
let checkpointing = false;
function scheduleCheckpoint(project) {
  let timer = checkpointTimers.get(project);
  if (timer === undefined) {
    timer = new LazyTimer(async () => {
      checkpointing = true;
      try {
        await internal('checkpoint', { id: project });
      } finally {
        checkpointing = false;
      }
    });
    checkpointTimers.set(project, timer);
  }
  timer.set(Date.now() + CHECKPOINT_IDLE_MS);
}

function recoverFromPanic(message) {
  const failed = inFlight;
  inFlight = new Map();
  core = null;
  for (const reply of failed.values()) {
    reply(null, `the core failed unexpectedly: ${message}`);
  }
  ready = boot();
}

// IndexedDB opens the database's files while the wasm downloads and compiles: a connection
// made at once and held until the core has opened its own, which then finds them open. It
// gives way at once to an upgrade of the database (the core's, or another tab's), and a
// database that does not exist yet is not created here: the core creates it with its tables.
//
// On it, the schema version the data was migrated to is read meanwhile (the `meta` table's
// record `SCHEMA_RECORD`, see src/store/mod.rs): the core, which opens its own connection in
// the same time, then need not read it after. Returns `close`, which closes the connection,
// and `schema`, the promise of that version: null when the database is new or the record
// could not be read. It always settles: when the open fails, or when the read ends.
function openDatabaseEarly() {
  const none = { close: () => {}, schema: Promise.resolve(null) };
  if (typeof indexedDB === 'undefined') return none;
  let db = null;
  let closed = false;
  let request;
  try {
    request = indexedDB.open(DATABASE);
  } catch {
    return none;
  }
  let settle;
  const schema = new Promise((resolve) => {
    settle = resolve;
  });
  request.onupgradeneeded = () => request.transaction.abort();
  request.onsuccess = () => {
    db = request.result;
    db.onversionchange = () => close();
    if (closed) {
      close();
      settle(null);
    } else {
      readSchemaVersion(db, settle);
    }
  };
  // The aborted creation of a database that did not exist, or storage unavailable: the core
  // opens it and says what failed.
  request.onerror = (event) => {
    event.preventDefault();
    settle(null);
  };
  function close() {
    closed = true;
    if (db !== null) db.close();
    db = null;
  }
  return { close, schema };
}

// Read the schema version on an open connection; `settle` gets it, or null.
function readSchemaVersion(db, settle) {
  try {
    if (!db.objectStoreNames.contains('meta')) return settle(null);
    const tx = db.transaction('meta', 'readonly');
    const read = tx.objectStore('meta').get('db:schema');
    // The core checks the value (see `WorkerCore::open`).
    read.onsuccess = () => settle(read.result?.version ?? null);
    read.onerror = (event) => {
      event.preventDefault();
      settle(null);
    };
    tx.onabort = () => settle(null);
  } catch {
    // The connection closed meanwhile.
    return settle(null);
  }
}

// The core's wasm, compiled as it downloads (streaming, which lets the browser keep the code
// it compiled with the cached response, for a later start), and kept for a start after a
// panic: a module holds no state, and each start instantiates it anew. A server that does not
// send it as application/wasm has it compiled from its bytes.
//
// The compiled module is also lent to the page (a `wasm` message), which hands it to the next
// worker it starts from the same script: that worker is named `WASM_FROM_PAGE` and takes the
// module from its first message instead of fetching and compiling the wasm again. A module
// shares its compiled code across the workers of a page, so that start compiles nothing.
const WASM_FROM_PAGE = 'draftsmith (compiled)';
let compiledWasm = null;
// The module this worker compiled itself, until it is lent.
let toLend = null;
let wasmFromPage = null;
if (self.name === WASM_FROM_PAGE) {
  // Resolved by the page's first message; anything else there means no module came.
  wasmFromPage = new Promise((resolve) => {
    self.addEventListener('message', (event) => resolve(event.data?.kind === 'wasm' ? event.data.module : null), { once: true });
  });
}
function compileWasm() {
  compiledWasm ??= wasmFromPage
    ? wasmFromPage.then((module) => (module instanceof WebAssembly.Module ? module : fetchWasm()))
    : fetchWasm();
  return compiledWasm;
}

function fetchWasm() {
  return fetch(WASM_URL)
    .then((response) => {
      if (!response.ok) throw new Error(`failed to fetch ${WASM_URL}: ${response.status} ${response.statusText}`);
      const type = (response.headers.get('Content-Type') || '').split(';')[0].trim();
      return type === 'application/wasm'
        ? WebAssembly.compileStreaming(response)
        : response.arrayBuffer().then((bytes) => WebAssembly.compile(bytes));
    })
    .then((module) => (toLend = module));
}

// Lend the page the module this worker compiled, once its core has started (so the module is
// known to work), before `ready`: see `compileWasm`.
function lendWasm() {
  if (toLend === null) return;
  const module = toLend;
  toLend = null;
  try {
    self.postMessage({ kind: 'wasm', module });
  } catch {
    // A page in another agent cluster cannot take it: it starts its next worker as it did.
  }
}

async function boot() {
  generation += 1;
  const early = earlyDatabase ?? openDatabaseEarly();
  earlyDatabase = null;
  try {
    // The wasm downloads and compiles while the glue is imported.
    const wasm = compileWasm();
    wasm.catch(() => {}); // reported by the glue's init, which awaits it
    // A fresh URL gives a fresh module instance, and so a fresh wasm instance after a panic.
    const glue = await (generation === 1 ? firstGlue : import(/* @vite-ignore */ `${GLUE_URL}?instance=${generation}`));
    await glue.default({ module_or_path: wasm });
    clientInfo = { name: 'draftsmith', version: glue.WorkerCore.version() };
    if (mcpClients !== null) mcpClients.clientInfo = clientInfo;
    core = await glue.WorkerCore.open(onCoreEvent, DATABASE, localModelBridge, mcpBridge, pageReader, early.schema);
    if (soleWriter) core.set_sole_writer(true);
    early.close();
    bootError = null;
    lendWasm();
    const ready = { version: glue.WorkerCore.version(), instance: generation };
    postEvent('ready', ready);
    if (generation > 1 && CHANNEL && role === 'writer' && LOCKS) {
      broadcast({ t: 'event', event: { kind: 'event', type: 'core_restarted', data: ready } });
    }
    if (generation > 1) postEvent('core_restarted', ready);
  } catch (err) {
    early.close();
    bootError = String((err && err.message) || err);
    postEvent('fatal', { message: `could not load the draftsmith core: ${bootError}` });
  }
}

// Run one request's JSON text on this worker's core, for this page (`client` null) or another
// tab's. Resolves to the response's JSON text, or null with a message when the core failed.
// With `ahead` (see `answerAhead`), an answer the core gives before its save lands is posted
// as soon as the save lands; `posted` then says it went.
async function runOnCore(text, client, project, type, ahead) {
  // A core is only set once it has booted; a new writer restores what the old one held first.
  if (core === null) await ready;
  if (restoring !== null) await restoring;
  if (core === null) {
    return { text: null, failure: `the draftsmith core is not loaded: ${bootError}` };
  }
  const seq = ++sequence;
  const instance = inFlight;
  let answered = null;
  let wake = null;
  const settle = (answer) => {
    if (answered !== null) return;
    answered = answer;
    wake?.();
  };
  // Settled by recoverFromPanic if the core dies first.
  instance.set(seq, (_text, failure) => settle({ text: null, failure }));
  try {
    // The answer's JSON text when the core answered at once, else a promise of it.
    const handled = core.handle_for(client ?? undefined, text, project ?? undefined, ahead?.give);
    if (typeof handled === 'string') settle({ text: handled, failure: null });
    else handled.then((responseText) => settle({ text: responseText, failure: null }), (err) => settle(trapped(err)));
  } catch (err) {
    settle(trapped(err));
  }
  if (answered === null) await new Promise((resolve) => (wake = resolve));
  instance.delete(seq);
  if (answered.text !== null && role === 'writer') noteSecrets(text, answered.text, type);
  return { ...answered, posted: ahead?.settle() ?? false };
}

// A trap that surfaced as an exception instead of through the panic event.
function trapped(err) {
  const message = String((err && err.message) || err);
  return { text: null, failure: `the core failed unexpectedly: ${message}` };
}

// A page request's answer, posted as soon as the save it waits for lands: the core gives the
// answer and the promise of its IndexedDB transaction (`give`) before that transaction
// completes, and the answer goes to the page when it does, while the core does its own
// bookkeeping of the save. If the transaction aborts, nothing goes: the core then reports the
// failure (`storage_error`) and its answer is posted as any other. `settle` is called once the
// core has returned its answer; it says whether the answer went ahead (an answer that would
// go ahead only after it can never go).
function answerAhead() {
  let state = 'waiting';
  return {
    give(answer, landing) {
      landing.then(
        () => {
          if (state !== 'waiting') return;
          state = 'posted';
          post(answer);
        },
        () => {},
      );
    },
    settle() {
      if (state === 'waiting') state = 'late';
      return state === 'posted';
    },
  };
}

// Called once a request's answer is posted: the core does what it left for later in a task
// of its own (the timer is set after the answer went, not before: setting it takes time the
// answer would wait for).
function idleSoon() {
  if (hasIdleWork()) idleTimer.set(Date.now());
}

// The key and extra headers the writer holds in memory only (not remembered): shared with
// the other tabs' workers, so that when the writing tab closes, the tab that takes over
// still has them, for the same provider and base URL only (a key never follows a change
// of either, as in the core).
let secrets = null;
// While a new writer puts them back: the promise of that (requests wait for it).
let restoring = null;

function noteSecrets(text, responseText, type) {
  // Every request passes here (keystrokes too): only settings changes are parsed. The type is
  // known but for a request relayed by a tab whose worker did not send it.
  if (type === undefined ? !text.includes('"type":"set_settings"') : type !== 'set_settings') return;
  let request, response;
  try {
    request = JSON.parse(text);
    response = JSON.parse(responseText);
  } catch {
    return;
  }
  if (!request || request.type !== 'set_settings' || !response || response.ok !== true) return;
  const params = request.params || {};
  const now = response.result || {};
  const next = { ...(secrets || {}) };
  if ('apiKey' in params) next.apiKey = params.apiKey;
  if ('extraHeaders' in params) next.extraHeaders = params.extraHeaders;
  if (!now.hasKey) delete next.apiKey;
  if (!(now.extraHeaderNames || []).length) delete next.extraHeaders;
  next.provider = now.provider;
  next.baseUrl = now.baseUrl;
  secrets = !now.rememberKey && (next.apiKey || next.extraHeaders) ? next : null;
  if (CHANNEL) broadcast({ t: 'secrets', secrets });
}

// Taking over: put back what the old writer held in memory, unless the settings moved on.
async function restoreSecrets() {
  const held = secrets;
  if (!held) return;
  const now = await internal('get_settings', {});
  if (!now || now.hasKey || now.rememberKey) return;
  if (now.provider !== held.provider || now.baseUrl !== held.baseUrl) return;
  const patch = {};
  if (held.apiKey) patch.apiKey = held.apiKey;
  if (held.extraHeaders) patch.extraHeaders = held.extraHeaders;
  await internal('set_settings', patch);
}

// Each worker holds a lock named after itself for its life; the writer waits on the lock of
// each other tab (those it serves, those that said hello, those whose locks it found on
// taking over) and, once that tab is gone, drops the core's client for it.
const TAB_PREFIX = `draftsmith:${DATABASE}:tab:`;
const TAB_LOCK = (instance) => `${TAB_PREFIX}${instance}`;
const watchedTabs = new Set();
// Writer: the other tabs' workers, which hear its events over the channel; when there are
// none, events are not broadcast (a postMessage per keystroke that nobody reads). `null`
// while not known yet: events are broadcast.
let peers = null;
async function findPeers() {
  peers = null;
  try {
    const { held = [], pending = [] } = await LOCKS.query();
    for (const lock of [...held, ...pending]) {
      const name = lock.name || '';
      if (name.startsWith(TAB_PREFIX) && name !== TAB_LOCK(INSTANCE)) watchTab(name.slice(TAB_PREFIX.length));
    }
    if (role === 'writer') peers = watchedTabs;
  } catch {
    // Not known: go on broadcasting.
  }
}
function watchTab(instance) {
  if (!LOCKS || watchedTabs.has(instance)) return;
  watchedTabs.add(instance);
  LOCKS.request(TAB_LOCK(instance), () => {
    watchedTabs.delete(instance);
    if (core !== null) core.forget_client(instance);
  }).catch(() => watchedTabs.delete(instance));
}

async function serve(posted) {
  idleTimer.fireNow();
  let message = posted;
  let text;
  if (isRequestText(posted)) {
    // The client's way: the request's JSON text, its id and type beside it.
    text = posted.text;
    message = { id: posted.id, type: posted.type };
  }
  const id = message !== null && typeof message === 'object' && usableId(message.id) ? message.id : null;
  if (text === undefined) {
    try {
      text = encode(message);
    } catch (err) {
      post(errorResponse(id, 'malformed', `message cannot be encoded as JSON: ${err.message}`));
      return;
    }
  }
  if (text === undefined) {
    post(errorResponse(id, 'malformed', `message cannot be encoded as JSON (got ${typeof message})`));
    return;
  }
  if (role === 'electing') await elected;
  if (message.type === 'worker_status') {
    // This worker, not the core: whether it writes, for how many other tabs, and its
    // in-browser model (the one the core runs in the writing tab).
    await ready;
    try {
      await loadBridges();
    } catch (err) {
      post(errorResponse(id, 'internal', `the draftsmith worker could not load its in-browser model bridge: ${err.message}`));
      return;
    }
    const clients = role === 'writer' && core !== null ? core.client_count() : 0;
    post({ kind: 'response', id, ok: true, result: { role, soleWriter, clients, localModel: localModel.status() } });
    return;
  }
  if (role === 'follower') {
    relay({ id, text, message });
    return;
  }
  pageRequests += 1;
  try {
    // Only an answer posted as the core wrote it goes ahead (see `answer`).
    const ahead = id !== null && !TRACKED.has(message.type) ? answerAhead() : undefined;
    const { text: responseText, failure, posted } = await runOnCore(text, null, pageProject, message.type, ahead);
    // Gone ahead: what the core said since (its `saved` event) goes now.
    if (posted) flushPageEvents();
    else answer(id, message, responseText, failure);
    idleSoon();
  } finally {
    pageRequests -= 1;
  }
}

// The requests whose answers the worker reads (they change the project the page shows).
const TRACKED = new Set(['open_project', 'create_project', 'import_project', 'delete_project']);

// Post a response to this page (and follow the page's project).
function answer(id, message, responseText, failure) {
  if (responseText === null) {
    post(errorResponse(id, 'internal', failure));
    return;
  }
  // Events of the request go first, to the project the page showed when they were emitted,
  // in the same message.
  const messages = takePageEvents();
  // The answer goes to the page as the JSON text the core wrote: a string is cloned as one
  // copy (an object would be cloned field by field, after a parse here), and the client
  // parses it. An answer the worker reads, or whose id the core could not read, is parsed.
  const unreadId = id !== null && responseText.startsWith('{"kind":"response","id":null');
  if (!unreadId && !TRACKED.has(message?.type)) {
    messages.push(responseText);
    send(messages);
    return;
  }
  let response;
  try {
    response = JSON.parse(responseText);
  } catch (err) {
    messages.push(errorResponse(id, 'internal', `the core sent an unreadable response: ${err.message}`));
    send(messages);
    return;
  }
  if (response.id === null && id !== null) {
    response.id = id;
  }
  track(message, response);
  messages.push(response);
  send(messages);
}

// Follower: send a page request to the writer.
function relay(entry) {
  const seq = ++relaySeq;
  entry.acked = false;
  relayed.set(seq, entry);
  sendRelayed(seq, entry);
}

function sendRelayed(seq, entry) {
  entry.sent = Date.now();
  broadcast({ t: 'request', from: INSTANCE, seq, text: entry.text, project: pageProject, type: entry.message && entry.message.type });
}

// A relayed request no writer took within two seconds is sent again (the writer takes each
// once), so a request posted while the writer was changing is not left waiting.
setInterval(() => {
  if (role !== 'follower') return;
  const now = Date.now();
  for (const [seq, entry] of relayed) {
    if (!entry.acked && now - entry.sent > 2000) sendRelayed(seq, entry);
  }
}, 1000);

// A new writer (`writer`) took over: what was relayed to the old one is sent again or failed.
function writerChanged(writer) {
  for (const [seq, entry] of relayed) {
    const type = entry.message && entry.message.type;
    if (entry.acked === writer) continue; // the new writer has it
    if (!entry.acked || type === 'apply_user_change') {
      entry.acked = false;
      if (role === 'writer') {
        relayed.delete(seq);
        runOnCore(entry.text, null, pageProject, entry.message && entry.message.type).then(({ text, failure }) => {
          answer(entry.id, entry.message, text, failure);
          idleSoon();
        });
      } else {
        sendRelayed(seq, entry);
      }
    } else {
      relayed.delete(seq);
      post(errorResponse(entry.id, 'interrupted', 'the tab that was saving your work closed while this request ran; it may or may not have been applied: check, then try again'));
    }
  }
  postEvent('writer_changed', { writer: role === 'writer' ? 'this tab' : 'another tab' });
}

// Writer: serve a request relayed by another tab's worker.
async function serveRelayed(message) {
  const key = `${message.from}:${message.seq}`;
  if (taken.has(key)) return;
  taken.add(key);
  broadcast({ t: 'ack', to: message.from, by: INSTANCE, seq: message.seq });
  watchTab(message.from);
  const { text, failure } = await runOnCore(message.text, message.from, message.project || null, message.type);
  broadcast({ t: 'response', to: message.from, seq: message.seq, text, failure });
  idleSoon();
  // Answered: the requester forgets it, so it is never sent again.
  taken.delete(key);
}

// Whether this worker holds the writer lock: then no other worker writes the database, and
// its core's saves skip their checks for another writer (`set_sole_writer`). A worker that
// writes for its tab alone (no Web Locks) is not the sole writer.
let soleWriter = false;

function becomeWriter() {
  const was = role;
  role = 'writer';
  soleWriter = true;
  if (core !== null) core.set_sole_writer(true);
  if (CHANNEL) broadcast({ t: 'writer', from: INSTANCE });
  if (LOCKS) findPeers();
  if (was === 'follower') {
    restoring = restoreSecrets()
      .catch(() => {})
      .then(() => {
        restoring = null;
      });
    writerChanged(INSTANCE);
  }
}

function elect() {
  if (!LOCKS) return Promise.resolve();
  return new Promise((resolve) => {
    const hold = () => new Promise(() => {}); // held until this worker ends
    LOCKS.request(WRITER_LOCK, { ifAvailable: true }, (lock) => {
      if (lock) {
        becomeWriter();
        resolve();
        return hold();
      }
      role = 'follower';
      if (CHANNEL) broadcast({ t: 'hello', from: INSTANCE });
      resolve();
      LOCKS.request(WRITER_LOCK, () => {
        becomeWriter();
        return hold();
      });
      return null;
    }).catch(() => {
      // Locks refused (an opaque origin, say): write for this tab alone.
      role = 'writer';
      resolve();
    });
  });
}

self.addEventListener('message', (event) => {
  // The page's compiled module (see `compileWasm`), not a request.
  if (event.data?.kind === 'wasm') return;
  serve(event.data);
});

// A request of the worker's own, whose response goes nowhere.
let internalId = 0;
async function internal(type, params) {
  await ready;
  if (core === null) return;
  try {
    const response = JSON.parse(await core.handle(JSON.stringify({ id: `internal-${++internalId}`, type, params })));
    return response && response.ok ? response.result : undefined;
  } catch (err) {
    // A panic is reported through the panic event.
    return undefined;
  }
}

if (CHANNEL) {
  CHANNEL.onmessage = (event) => heard(event.data);
}

// A message from another tab's worker (a `batch` holds several, in order).
function heard(message) {
  if (!message || typeof message !== 'object') return;
  switch (message.t) {
    case 'batch':
      if (Array.isArray(message.messages)) message.messages.forEach(heard);
      break;
    case 'request':
      if (role === 'writer') serveRelayed(message);
      else if (role === 'electing') elected.then(() => role === 'writer' && serveRelayed(message));
      break;
    case 'ack':
      if (message.to === INSTANCE && relayed.has(message.seq)) relayed.get(message.seq).acked = message.by;
      break;
    case 'response': {
      if (message.to !== INSTANCE) break;
      const entry = relayed.get(message.seq);
      if (!entry) break;
      relayed.delete(message.seq);
      answer(entry.id, entry.message, message.text, message.failure);
      break;
    }
    case 'event':
      if (role === 'follower' && message.event) deliverSoon(CoreEvent.of(message.event));
      break;
    case 'writer':
      if (role === 'follower' && message.from !== INSTANCE) writerChanged(message.from);
      break;
    case 'secrets':
      if (role !== 'writer') secrets = message.secrets || null;
      break;
    case 'hello':
      if (role === 'writer' && message.from !== INSTANCE) {
        watchTab(message.from);
        if (secrets) broadcast({ t: 'secrets', secrets });
      }
      break;
    case 'shared': {
      // No writer lock: every tab writes; reload what another tab saved.
      if (LOCKS || message.from === INSTANCE) break;
      // An audit-only save (a read-only tool call) changes nothing another tab shows.
      if (message.type === 'saved' && message.data && message.data.project && message.data.changed !== false) {
        internal('reload_project', { id: message.data.project });
      } else if (message.type === 'projects_changed') {
        postEvent('projects_changed', { remote: true });
      } else if (message.type === 'memory_changed' || message.type === 'approvals_changed' || message.type === 'approval_decided') {
        postEvent(message.type, { ...message.data, remote: true });
      }
      break;
    }
    default:
      break;
  }
}

// The device's network (where the browser tells workers): sync links drop their connections
// while it is gone, and connect again at once when it is back.
self.addEventListener('offline', () => internal('sync_network', { online: false }));
self.addEventListener('online', () => internal('sync_network', { online: true }));

self.addEventListener('messageerror', () => {
  post(errorResponse(null, 'malformed', 'a message could not be deserialized'));
});

// After a panic the dead instance's scheduled work throws; that is already reported.
self.addEventListener('error', (event) => {
  if (core === null) event.preventDefault();
});

ready = boot();
elected = elect();
// Held for this worker's life: the writer learns from it when this tab is gone.
if (LOCKS) LOCKS.request(TAB_LOCK(INSTANCE), () => new Promise(() => {})).catch(() => {});

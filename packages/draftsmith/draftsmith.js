// draftsmith JS client: wraps the worker protocol in Promises and typed events.
// Types: ./draftsmith.d.ts.

/** An error from draftsmith, with a stable `code` (see draftsmith.d.ts for the list). */
export class DraftsmithError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'DraftsmithError';
    this.code = code;
  }
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** `sync.connect` may fetch a project from the server, which the core waits 30 s for. */
const SYNC_CONNECT_TIMEOUT_MS = 45_000;

/** The run events after which a run's iteration stops. */
const RUN_END = new Set(['run_finished', 'run_failed', 'run_aborted', 'run_paused']);

/**
 * The core's compiled wasm by worker script (its URL without query or fragment), as the
 * first worker started from it lent it: see `Draftsmith.launch`.
 * @type {Map<string, WebAssembly.Module>}
 */
const compiledCores = new Map();

/** A worker script's key in `compiledCores`, or null if its URL cannot be resolved. */
function scriptKey(url) {
  try {
    const resolved = new URL(String(url), globalThis.location?.href);
    resolved.search = '';
    resolved.hash = '';
    return resolved.href;
  } catch {
    return null;
  }
}

/**
 * A request as the JSON text the core reads. Throws (the request is refused as `malformed`)
 * when its params hold what JSON cannot carry: a BigInt or a cycle, which `JSON.stringify`
 * refuses, and a function or a symbol, which it would drop without a word (see `unsendable`).
 * Lone UTF-16 surrogates, which cannot cross into Rust as text, become U+FFFD, so nothing a
 * writer typed is refused for one stray code unit.
 */
function requestText(message) {
  const text = JSON.stringify(message);
  const found = unsendable(message.params);
  if (found !== null) throw new TypeError(`params${found.keys.join('')} is a ${found.kind}, which JSON cannot carry`);
  // JSON.stringify writes a lone surrogate as an escape (`\ud800`); only when the text holds
  // something like one (rare: a lone surrogate, or a backslash followed by such letters) is
  // the message encoded again with a replacer, which is slower (a call per value).
  return /\\ud[89a-f]/.test(text) ? JSON.stringify(message, wellFormed) : text;
}

function wellFormed(_key, value) {
  return typeof value === 'string' && !value.isWellFormed() ? value.toWellFormed() : value;
}

/**
 * The first function or symbol among the values `JSON.stringify` reads of `value` (an
 * object's own enumerable properties, an array's items; an object with a `toJSON`, such as a
 * Date, stands for what that returns and is not looked into), as its kind and the keys that
 * lead to it (innermost last), or null. Called once `JSON.stringify` has succeeded, so there
 * is no cycle to follow.
 */
function unsendable(value) {
  const kind = typeof value;
  if (kind === 'function' || kind === 'symbol') return { kind, keys: [] };
  if (kind !== 'object' || value === null || typeof value.toJSON === 'function') return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unsendable(value[i]);
      if (found !== null) {
        found.keys.unshift(`[${i}]`);
        return found;
      }
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    const found = unsendable(value[key]);
    if (found !== null) {
      found.keys.unshift(`.${key}`);
      return found;
    }
  }
  return null;
}

export class Draftsmith {
  /**
   * Start a worker and resolve once its core is ready.
   * @param {import('./draftsmith').StartOptions} [options]
   */
  static start(options = {}) {
    const client = Draftsmith.launch(options);
    return client.ready.then(() => client);
  }

  /**
   * Start a worker and return its client at once, before the core is ready: requests sent
   * meanwhile wait in the worker and run in order once it is (so a page can show the writer's
   * chapter and take typing while the wasm loads). `client.ready` resolves when the core is
   * ready, and rejects (the client closed) if it fails to start.
   * @param {import('./draftsmith').StartOptions} [options]
   */
  static launch(options = {}) {
    const workerUrl = options.workerUrl ?? 'worker.js';
    // A worker this page started from the same script lent it the core's compiled wasm: the
    // new worker, named for it, takes that module as its first message and compiles nothing.
    const script = scriptKey(options.workerUrl ?? new URL('./worker.js', import.meta.url));
    const compiled = compiledCores.get(script);
    const name = compiled ? 'draftsmith (compiled)' : 'draftsmith';
    // The default worker is written out, with literal options, so that bundlers (Vite) see it
    // beside this module and bundle it.
    let worker;
    if (options.workerUrl) worker = new Worker(options.workerUrl, { type: 'module', name });
    else if (compiled) worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'draftsmith (compiled)' });
    else worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'draftsmith' });
    if (compiled) worker.postMessage({ kind: 'wasm', module: compiled });
    const client = new Draftsmith(worker, options);
    client._script = script;
    const startTimeoutMs = options.startTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    client.ready = new Promise((resolve, reject) => {
      const fail = (error) => {
        // A start that failed with a lent module does not lend it again.
        if (compiled && compiledCores.get(script) === compiled) compiledCores.delete(script);
        cleanup();
        client.close();
        reject(error);
      };
      const timer = setTimeout(() => fail(new DraftsmithError('timeout', `the draftsmith worker did not start within ${startTimeoutMs} ms`)), startTimeoutMs);
      const offReady = client.on('ready', async () => {
        cleanup();
        if (options.persist !== false) await client.requestPersistence();
        resolve(client);
      });
      // A client closed before its worker started: `ready` rejects at once.
      client._abandonStart = () => fail(new DraftsmithError('closed', 'the draftsmith client was closed before its worker started'));
      const offFatal = client.on('fatal', (data) => fail(new DraftsmithError('internal', data?.message ?? 'the draftsmith worker failed to start')));
      const onError = (event) => fail(new DraftsmithError('internal', `the draftsmith worker failed to load: ${event.message ?? workerUrl}`));
      worker.addEventListener('error', onError, { once: true });
      function cleanup() {
        clearTimeout(timer);
        client._abandonStart = null;
        offReady();
        offFatal();
        worker.removeEventListener('error', onError);
      }
    });
    // Whoever holds the client may not wait for `ready`: its failure is reported there, and
    // through the requests that were waiting (they reject with `closed`).
    client.ready.catch(() => {});
    return client;
  }

  constructor(worker, options = {}) {
    this._worker = worker;
    this._timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this._nextId = 1;
    this._pending = new Map();
    this._deadlineTimer = null;
    // Set by `launch` until the worker has started (see `close`).
    this._abandonStart = null;
    this._deadlineAt = Infinity;
    this._handlers = new Map();
    this._closed = false;
    /** This client's worker script, as a key of `compiledCores` (see `launch`). */
    this._script = null;
    /** Resolves once the core is ready (see `launch`). */
    this.ready = Promise.resolve(this);
    /** Whether the browser agreed to keep storage (after start). */
    this.persisted = false;
    worker.addEventListener('message', (event) => this._receive(event.data));
    // A browser may keep a WebSocket open when the network goes, so the page tells the core.
    this._network = () => {
      const online = globalThis.navigator?.onLine !== false;
      this.request('sync_network', { online }).catch(() => {});
    };
    if (typeof globalThis.window?.addEventListener === 'function') {
      globalThis.window.addEventListener('online', this._network);
      globalThis.window.addEventListener('offline', this._network);
      if (globalThis.navigator?.onLine === false) this._network();
    }
  }

  /** Send one request; resolves with its result or rejects with a DraftsmithError. */
  request(type, params, options = {}) {
    if (this._closed) {
      return Promise.reject(new DraftsmithError('closed', 'the draftsmith client is closed'));
    }
    const id = this._nextId++;
    const timeoutMs = options.timeoutMs ?? this._timeoutMs;
    return new Promise((resolve, reject) => {
      const entry = { resolve, reject, type, timeoutMs, deadline: Infinity };
      if (timeoutMs > 0 && Number.isFinite(timeoutMs)) {
        entry.deadline = performance.now() + timeoutMs;
        this._watchDeadline(entry.deadline);
      }
      this._pending.set(id, entry);
      try {
        // The request crosses as the JSON text the core reads, with its id and type beside it
        // for the worker (see `requestText`).
        const text = requestText(params === undefined ? { id, type } : { id, type, params });
        this._worker.postMessage({ kind: 'request', id, type, text });
      } catch (err) {
        this._settle(id);
        reject(new DraftsmithError('malformed', `request '${type}' cannot be sent: ${err.message}`));
      }
    });
  }

  /** Version, build profile and capabilities of the core. */
  hello(options) {
    return this.request('hello', undefined, options);
  }

  /**
   * Ask the browser to keep this origin's storage (not evicted under pressure). Only a page
   * can ask (workers cannot), so the client does it on start unless `persist: false`.
   * Resolves to true when storage is persistent.
   */
  async requestPersistence() {
    const storage = globalThis.navigator?.storage;
    if (!storage?.persist) return (this.persisted = false);
    try {
      this.persisted = (await storage.persisted?.()) || (await storage.persist());
    } catch {
      this.persisted = false;
    }
    return this.persisted;
  }

  /** Storage use and quota in bytes, as the browser estimates them. */
  storageEstimate(options) {
    return this.request('storage_estimate', {}, options);
  }

  /** Every stored project, most recently changed first. */
  listProjects(options) {
    return this.request('list_projects', {}, options);
  }

  /** Rename a project (the open one by default). */
  renameProject(name, id, options) {
    return this.request('rename_project', id === undefined ? { name } : { id, name }, options);
  }

  /** Delete a project and everything in it. */
  deleteProject(id, options) {
    return this.request('delete_project', { id }, options);
  }

  /** The project (the open one by default) as one JSON document. */
  exportProject(id, options) {
    return this.request('export_project', id === undefined ? {} : { id }, options);
  }

  /** Import an exported document; refused (and nothing changes) if it is malformed. */
  importProject(document, options) {
    return this.request('import_project', { document }, options);
  }

  /** The manuscript as Markdown. */
  exportMarkdown(id, options) {
    return this.request('export_markdown', id === undefined ? {} : { id }, options);
  }

  /**
   * Checkpoint a project (the open one by default): write the whole text of each chapter
   * that changed since its last checkpoint, and what waits to be saved lazily (the cursor and
   * selection), so that loading it replays no changes. The worker does this by itself once
   * the writer has been idle for two seconds. Resolves to the chapters checkpointed (by id)
   * and whether the save committed (`saved: false` after a failed save, which is also
   * reported as a `storage_error` event; what it held stays pending).
   */
  checkpoint(id, options) {
    return this.request('checkpoint', id === undefined ? {} : { id }, options);
  }

  /**
   * This tab's worker (not the core): `role` is `writer` when it applies and saves the
   * projects for every tab, `follower` when it relays to the tab that does; `soleWriter` is
   * true when it writes holding the database's writer lock (a writer without Web Locks
   * writes for its tab alone, and checks each save for another tab's writes); `clients` is
   * how many other tabs a writer serves (a closed tab's client is dropped).
   */
  workerStatus(options) {
    return this.request('worker_status', {}, options);
  }

  /** Create a project and make it the open one. */
  createProject(name, chapters, options) {
    return this.request('create_project', chapters ? { name, chapters } : { name }, options);
  }

  /** Make an existing project the open one. */
  openProject(id, options) {
    return this.request('open_project', { id }, options);
  }

  /**
   * A chapter's text and version: by id, number or title; the active one by default. With
   * `since` (a version), also the changes made after it (`changes`, or null when the core
   * no longer has them all).
   */
  getChapter(chapter, { since, ...options } = {}) {
    const params = chapter === undefined ? {} : { chapter };
    if (since !== undefined) params.since = since;
    return this.request('get_chapter', params, options);
  }

  /** Run one tool call; resolves with its ToolResult (whose status may be 'error'). */
  execute(tool, args = {}, { origin, callId, ...options } = {}) {
    const params = { tool, args };
    if (origin !== undefined) params.origin = origin;
    if (callId !== undefined) params.callId = callId;
    return this.request('execute', params, options);
  }

  /**
   * Send the writer's change, made on `baseVersion` of a chapter. `tag` comes back in the
   * change's `edit` event, so an editor can recognise its own change.
   */
  applyUserChange(chapter, baseVersion, changes, { tag, ...options } = {}) {
    const params = { chapter, baseVersion, changes };
    if (tag !== undefined) params.tag = tag;
    return this.request('apply_user_change', params, options);
  }

  /** Projects: list, create, open, rename, delete, export, import (and Markdown). */
  get projects() {
    return {
      list: (options) => this.listProjects(options),
      create: (name, chapters, options) => this.createProject(name, chapters, options),
      open: (id, options) => this.openProject(id, options),
      rename: (name, id, options) => this.renameProject(name, id, options),
      delete: (id, options) => this.deleteProject(id, options),
      export: (id, options) => this.exportProject(id, options),
      import: (document, options) => this.importProject(document, options),
      markdown: (id, options) => this.exportMarkdown(id, options),
    };
  }

  /** The open project's chapters: get, add, rename, move (to a 1-based position), delete. */
  get chapters() {
    const drop = (o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
    return {
      get: (chapter, options) => this.getChapter(chapter, options),
      add: ({ title, text, after } = {}, options) => this.request('add_chapter', drop({ title, text, after }), options),
      rename: (chapter, title, options) => this.request('rename_chapter', { chapter, title }, options),
      move: (chapter, to, options) => this.request('move_chapter', { chapter, to }, options),
      delete: (chapter, options) => this.request('delete_chapter', { chapter }, options),
    };
  }

  /**
   * The editor-context block a run's prompt gets (`{block}`): the project, the active chapter,
   * the cursor, the selection, the paragraph at the cursor, the bible and the toolset.
   */
  editorContext({ toolset, budget, ...options } = {}) {
    const params = {};
    if (toolset !== undefined) params.toolset = toolset;
    if (budget !== undefined) params.budget = budget;
    return this.request('editor_context', params, options);
  }

  /**
   * The agent's memory: list (bedside note, goals, watched, notes), search, context, write;
   * delete (the writer's delete: soft, restorable for 30 days), trash (the deleted notes that
   * can still be restored) and restore.
   */
  get memory() {
    return {
      list: (options) => this.request('memory', {}, options),
      search: (query, { limit, ...options } = {}) =>
        this.execute('search_memory', limit === undefined ? { query } : { query, limit }, options),
      context: (request, budget, options) =>
        this.request('memory_context', budget === undefined ? { request } : { request, budget }, options),
      write: (notes, options) => this.request('write_memory_notes', { notes }, options),
      delete: (id, options) => this.execute('delete_memory_note', { id }, options),
      trash: (options) => this.request('memory_trash', {}, options),
      restore: (id, options) => this.request('memory_restore', { id }, options),
    };
  }

  /**
   * Suggestions of the proactive memory (the watched-entity monitor, the idle thinker):
   * `list({all?})` (pending ones, newest first; with `all`, the decided ones too),
   * `accept(id)` (it becomes a goal or a note, by its kind), `dismiss(id)`. New and changed
   * ones arrive as `suggestion` events.
   */
  get suggestions() {
    return {
      list: ({ all, ...options } = {}) => this.request('suggestions', all ? { all: true } : {}, options),
      accept: (id, options) => this.request('accept_suggestion', { id }, options),
      dismiss: (id, options) => this.request('dismiss_suggestion', { id }, options),
    };
  }

  /**
   * Tell the core the writer has stopped typing (the page sends it after the idle time of the
   * `idleThinking` settings): the idle thinker may propose suggestions. Resolves with
   * `{thought, reason?, suggestions, callsToday, maxCallsPerDay}`.
   */
  writerIdle(idleMs, options) {
    return this.request('writer_idle', idleMs === undefined ? {} : { idleMs }, options);
  }

  /**
   * The open project's story bible: `list(kind?)` (every kind, or one), `save(kind, fields,
   * {id?, baseVersion?})` (create without `id`, its id made from the name; update with it:
   * the writer's fields get origin `human`; with `baseVersion`, a changed entity rejects
   * with code `conflict` and nothing changes), `delete(kind, id, {baseVersion?})`,
   * `revisions(kind, id, {field?})` (the fields' writes from every device, newest first: a
   * value that lost to one written at the same time elsewhere is there to restore with `save`).
   */
  get bible() {
    return {
      list: (kind, options) => this.request('bible_list', kind === undefined ? {} : { kind }, options),
      save: (kind, fields, { id, baseVersion, ...options } = {}) => {
        const params = { kind, fields };
        if (id !== undefined && id !== null) params.id = id;
        if (baseVersion !== undefined && baseVersion !== null) params.baseVersion = baseVersion;
        return this.request('bible_save', params, options);
      },
      delete: (kind, id, { baseVersion, ...options } = {}) => {
        const params = { kind, id };
        if (baseVersion !== undefined && baseVersion !== null) params.baseVersion = baseVersion;
        return this.request('bible_delete', params, options);
      },
      revisions: (kind, id, { field, ...options } = {}) => {
        const params = { kind, id };
        if (field !== undefined && field !== null) params.field = field;
        return this.request('bible_revisions', params, options);
      },
    };
  }

  /**
   * Calls waiting for the writer's approval: `list({runId?})` gives the open project's
   * waiting calls as cards (also after a reload) and its paused runs; `approve(...)` is
   * `Draftsmith.approve`.
   */
  get approvals() {
    return {
      list: ({ runId, ...options } = {}) => this.request('list_approvals', runId === undefined ? {} : { runId }, options),
      approve: (callId, decision, options) => this.approve(callId, decision, options),
    };
  }

  /**
   * Decide a call waiting for approval: `decision` 'approve' (optionally with the writer's
   * edited `args`) or 'reject' (with an optional `reason`, which the model reads). An approved
   * call runs (a `conflict` result if its entity changed since the writer saw it); a rejected
   * one gets a `denied` result. If it was the last waiting call of a paused run, the run
   * resumes: its events arrive through `on('run', ...)` under the same run id (starting with
   * `run_resumed`), and this resolves when the resumed run ends (or pauses again), with its
   * result under `run`. No timeout by default. Deciding a call twice (here or in another tab)
   * rejects with code `conflict`. Pass the card's `digest` so that only the card the writer saw
   * can be decided (another call waiting under the same id rejects with `conflict`).
   */
  approve(callId, decision, { args, reason, runId, digest, ...options } = {}) {
    const params = { callId, decision };
    if (digest !== undefined && digest !== null) params.digest = digest;
    if (args !== undefined) params.args = args;
    if (reason !== undefined) params.reason = reason;
    if (runId !== undefined && runId !== null) params.runId = runId;
    return this.request('approve', params, { timeoutMs: 0, ...options });
  }

  /**
   * The agents a run can start with or reach: the presets (`quill`, `dungeon_master`,
   * `textcraft`, each with its entry agent and its agents) and every agent (the presets'
   * and the ones this project defines), each with its whole toolbox and routing tools.
   */
  listAgents(options) {
    return this.request('list_agents', {}, options);
  }

  /**
   * Define (or replace) an agent of the open project: `spec` is an AgentSpec (name,
   * systemPrompt, toolset/tools, subAgents, delegation, model, maxSteps, tokenBudget,
   * talksToWriter). Rejects with `invalid_params`, and nothing changes, for an unknown tool,
   * a missing sub-agent, a cycle or a preset agent's name.
   */
  defineAgent(spec, options) {
    return this.request('define_agent', { agent: spec }, options);
  }

  /** Delete an agent the open project defined (not a preset's, nor another's sub-agent). */
  deleteAgent(name, options) {
    return this.request('delete_agent', { name }, options);
  }

  /** The agents: `list()`, `define(spec)`, `delete(name)`. */
  get agents() {
    return {
      list: (options) => this.listAgents(options),
      define: (spec, options) => this.defineAgent(spec, options),
      delete: (name, options) => this.deleteAgent(name, options),
    };
  }

  /**
   * Start a background job on the open project: `{kind: 'pipeline', phases?, scope?,
   * allowOverwrite?, concurrency?}` (rentl's pipelines: the context, translation and editing
   * phases over the story bible's scenes, run by single-purpose subagents) or `{kind: 'run',
   * prompt, agent?, preset?}` (one agent run in the background) or `{kind: 'research', urls,
   * concurrency?}` (web pages read into research notes). Resolves at once with the
   * job (JobView); its progress arrives as `job_progress` events, its end as `job_finished`.
   * A job is saved: after a reload, a new worker resumes it from its first unit not done.
   */
  startJob(params, options) {
    return this.request('start_job', params, options);
  }

  /** A job with its units (JobView with `units`). */
  jobStatus(job, options) {
    return this.request('job_status', { job }, options);
  }

  /** The open project's jobs, newest first (without their units). */
  listJobs(options) {
    return this.request('list_jobs', {}, options);
  }

  /**
   * Pause a job: no new unit starts until `resumeJob`; the running ones finish (the job stays
   * `running` until they have, then is `paused`).
   */
  pauseJob(job, options) {
    return this.request('pause_job', { job }, options);
  }

  /** Resume a job paused by the writer. */
  resumeJob(job, options) {
    return this.request('resume_job', { job }, options);
  }

  /**
   * Cancel a job: running units are aborted (what they wrote stays), calls waiting for approval
   * are no longer asked, queued units never start. The job ends `cancelled` (`job_finished`).
   */
  cancelJob(job, options) {
    return this.request('cancel_job', { job }, options);
  }

  /**
   * One unit of a job and its transcript (its task, the model's messages and tool calls, each
   * call's result), saved when the unit ends or waits for approval (empty before).
   */
  jobUnit(job, unit, options) {
    return this.request('job_unit', { job, unit }, options);
  }

  /**
   * The open project's research notes (web pages read by its agents with `research_url` and
   * by the writer with research jobs), newest first: `{notes, count, bytes, limits}`; each
   * note has its title, url, a 500-character preview, `askedBy` (`agent:<name>` or `human`)
   * and `source` (`agent` or `human`). Changes arrive as `research_changed` events.
   */
  researchList(options) {
    return this.request('research_list', {}, options);
  }

  /** Delete a research note. */
  researchDelete(id, options) {
    return this.request('research_delete', { id }, options);
  }

  /**
   * Read web pages into research notes, as the writer, in the background: a job of kind
   * `research` with one unit per URL (`startJob({kind: 'research', urls})`).
   */
  researchUrls(urls, { concurrency, ...options } = {}) {
    const params = concurrency === undefined ? { kind: 'research', urls } : { kind: 'research', urls, concurrency };
    return this.request('start_job', params, options);
  }

  /** Research: `list`, `delete`, `start` (a research job). */
  get research() {
    return {
      list: (options) => this.researchList(options),
      delete: (id, options) => this.researchDelete(id, options),
      start: (urls, options) => this.researchUrls(urls, options),
    };
  }

  /** Background jobs: `start`, `status`, `list`, `pause`, `resume`, `cancel`, `unit`. */
  get jobs() {
    return {
      start: (params, options) => this.startJob(params, options),
      status: (job, options) => this.jobStatus(job, options),
      list: (options) => this.listJobs(options),
      pause: (job, options) => this.pauseJob(job, options),
      resume: (job, options) => this.resumeJob(job, options),
      cancel: (job, options) => this.cancelJob(job, options),
      unit: (job, unit, options) => this.jobUnit(job, unit, options),
    };
  }

  /**
   * Sync through a Yjs server (Hocuspocus) with other devices and co-authors.
   * `connect({url, token, name?})` shares the open project; `connect({url, token, project})`
   * fetches a project that exists only on the server, then opens it (rejects with code
   * `no_project` when the server refuses the token or does not have it). The link then stays
   * up: offline, edits are kept and sent on reconnect; a refused token makes it
   * `unauthorized`. `disconnect(project?)` stops sharing (the project stays here),
   * `status(project?)` says how it stands (`disconnected`, `connecting`, `connected`,
   * `offline` with `unsent` updates, `unauthorized` with the server's `reason`) and who else
   * is connected (`peers`, each with its chapter and cursor). Changes arrive as
   * `sync_status` events; co-authors' edits as `edit` events of origin `remote:<name>`.
   */
  get sync() {
    return {
      connect: ({ url, token, project, name } = {}, options) => {
        const params = { url, token };
        if (project !== undefined && project !== null) params.project = project;
        if (name !== undefined && name !== null) params.name = name;
        return this.request('sync_connect', params, { timeoutMs: SYNC_CONNECT_TIMEOUT_MS, ...options });
      },
      disconnect: (project, options) =>
        this.request('sync_disconnect', project === undefined ? {} : { project }, options),
      status: (project, options) => this.request('sync_status', project === undefined ? {} : { project }, options),
    };
  }

  /**
   * The model files the browser keeps for the `local` provider (a model running in the page,
   * chosen with `settings.set({provider: 'local', model: '<URL of a .gguf>'})`).
   * `list()` gives them with their sizes and which one is loaded, `load()` downloads (unless
   * kept) and loads the model the settings name (`model_progress` events meanwhile), and
   * `delete(url)` deletes one.
   */
  get localModels() {
    return {
      list: (options) => this.request('local_models', {}, options),
      load: (options) => this.request('load_local_model', {}, { timeoutMs: 0, ...options }),
      delete: (url, options) => this.request('delete_local_model', { url }, options),
    };
  }

  /**
   * The MCP tool servers the settings list (`settings.set({mcpServers: [{name, url,
   * headers?}]})`): `servers()` gives each one's connection (`connecting`, `ready`, `failed`
   * with `error`) and tools, `connect(name)` connects one again and lists its tools anew.
   * Changes arrive as `mcp_changed` events. Agents call the tools as `mcp__<server>__<tool>`,
   * each call approved by the writer unless `approvalPolicies` relaxes it.
   */
  get mcp() {
    return {
      servers: (options) => this.request('mcp_servers', {}, options),
      connect: (name, options) => this.request('mcp_connect', { name }, options),
    };
  }

  /** Undo the newest group, or with `origin` ('agent', 'agent:<name>', 'user') the newest of that origin. */
  undo({ origin, ...options } = {}) {
    return this.request('undo', origin === undefined ? {} : { origin }, options);
  }

  /** Redo the last undone group. */
  redo(options) {
    return this.request('redo', {}, options);
  }

  /** End the writer's current undo group: the next change starts a new one. */
  closeGroup(options) {
    return this.request('close_group', {}, options);
  }

  /** The undo history, newest first. */
  history(options) {
    return this.request('history', {}, options);
  }

  /** The tool catalog: format 'openai' | 'anthropic' | 'gemini' (default: neutral definitions). */
  tools({ format, toolset, ...options } = {}) {
    const params = {};
    if (format !== undefined) params.format = format;
    if (toolset !== undefined) params.toolset = toolset;
    return this.request('list_tools', params, options);
  }

  /**
   * The model settings: `get()` (the key is never returned: `hasKey` says whether one is set)
   * and `set(patch)` (fields left out keep their value; `apiKey: null` forgets the key;
   * `rememberKey: true` stores it on this device). Bad input rejects and changes nothing.
   */
  get settings() {
    return {
      get: (options) => this.request('get_settings', {}, options),
      set: (patch, options) => this.request('set_settings', patch, options),
    };
  }

  /**
   * Start an agent run on the open project. Returns a RunHandle at once: iterate it
   * (`for await (const event of handle)`) for the run's events until its last one
   * (`run_finished`, `run_failed`, `run_aborted`, or `run_paused` when calls wait for the
   * writer's approval); `handle.result` resolves with how it ended (status `paused` with the
   * waiting calls under `pending`: `approve()` them to resume the run, whose further events
   * arrive through `on('run', ...)`); `handle.abort()` or the `signal` option stops it (an edit in progress completes,
   * nothing after it runs). A run that cannot start (no model, another run going on, bad
   * options) rejects `result` and throws from the iteration.
   *
   * `preset` ('quill', 'dungeon_master', 'textcraft') starts with the preset's entry agent;
   * `agent` names an agent that talks to the writer (a preset's or a defined one, see
   * `listAgents()`), or is `{name, systemPrompt}`: the quill assistant under another name
   * and prompt. A run is a tree: the events of sub-agents carry `agent`, `path` and
   * `session`, between `session_started` and `session_ended` (or `session_paused`).
   */
  run(prompt, { preset, agent, toolset, mode, maxSteps, tokenBudget, newConversation, toolChoice, output, signal, runId } = {}) {
    const id = runId ?? `run-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
    const params = { prompt, runId: id };
    if (preset !== undefined) params.preset = preset;
    if (agent !== undefined) params.agent = agent;
    if (toolset !== undefined) params.toolset = toolset;
    if (mode !== undefined) params.mode = mode;
    if (maxSteps !== undefined) params.maxSteps = maxSteps;
    if (tokenBudget !== undefined) params.tokenBudget = tokenBudget;
    if (newConversation !== undefined) params.newConversation = newConversation;
    if (toolChoice !== undefined) params.toolChoice = toolChoice;
    if (output !== undefined) params.output = output;
    const queue = [];
    let wake = null;
    let done = false;
    let failure = null;
    const push = () => {
      if (wake) {
        const w = wake;
        wake = null;
        w();
      }
    };
    const off = this.on('run', (data) => {
      if (data?.run !== id) return;
      queue.push(data);
      push();
    });
    const abort = () => {
      if (!done) this.request('abort_run', { runId: id }).catch(() => {});
    };
    const onAbort = () => abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    // Offline, only a model running in the browser can answer.
    const offline = globalThis.navigator?.onLine === false;
    const ready = offline
      ? this.request('get_settings', {}).then((settings) => {
          if (settings.provider !== 'local') {
            throw new DraftsmithError('offline', 'You are offline: the agent needs the network to reach its model. Your writing is still saved on this device.');
          }
        })
      : Promise.resolve();
    const result = ready.then(() => this.request('run', params, { timeoutMs: 0 })).then(
      (value) => value,
      (err) => {
        failure = err;
        throw err;
      },
    );
    result
      .catch(() => {})
      .finally(() => {
        done = true;
        off();
        signal?.removeEventListener('abort', onAbort);
        push();
      });
    if (signal?.aborted) abort();
    return {
      id,
      result,
      abort,
      async *[Symbol.asyncIterator]() {
        for (;;) {
          if (queue.length) {
            const event = queue.shift();
            yield event;
            if (RUN_END.has(event.type)) return;
            continue;
          }
          if (done) {
            if (failure) throw failure;
            return;
          }
          await new Promise((resolve) => (wake = resolve));
        }
      },
    };
  }

  /**
   * Listen to events of one type (`'*'` for all). Returns a function that stops listening.
   */
  on(type, handler) {
    if (!this._handlers.has(type)) this._handlers.set(type, new Set());
    this._handlers.get(type).add(handler);
    return () => this._handlers.get(type)?.delete(handler);
  }

  /** Stop the worker; pending requests reject with code `closed`. */
  close() {
    if (this._closed) return;
    this._closed = true;
    this._abandonStart?.();
    if (typeof globalThis.window?.removeEventListener === 'function') {
      globalThis.window.removeEventListener('online', this._network);
      globalThis.window.removeEventListener('offline', this._network);
    }
    this._worker.terminate();
    clearTimeout(this._deadlineTimer);
    this._deadlineTimer = null;
    for (const [id, entry] of this._pending) {
      this._settle(id);
      entry.reject(new DraftsmithError('closed', 'the draftsmith client was closed'));
    }
  }

  _settle(id) {
    const entry = this._pending.get(id);
    if (entry) this._pending.delete(id);
    return entry;
  }

  // Requests' time limits: one timer, for the earliest deadline of the pending requests (a
  // request does not set and clear a timer of its own). Once it fires, the requests past
  // their deadline fail, and it waits for the next deadline.
  _watchDeadline(deadline) {
    if (this._deadlineTimer !== null && this._deadlineAt <= deadline) return;
    clearTimeout(this._deadlineTimer);
    this._deadlineAt = deadline;
    this._deadlineTimer = setTimeout(() => this._deadlinesPassed(), Math.max(0, deadline - performance.now()));
  }

  _deadlinesPassed() {
    this._deadlineTimer = null;
    const now = performance.now();
    let next = Infinity;
    for (const [id, entry] of this._pending) {
      if (entry.deadline <= now) {
        this._pending.delete(id);
        entry.reject(new DraftsmithError('timeout', `request '${entry.type}' got no response within ${entry.timeoutMs} ms`));
      } else {
        next = Math.min(next, entry.deadline);
      }
    }
    if (next !== Infinity) this._watchDeadline(next);
  }

  _receive(message) {
    // A response may come as its JSON text (cheaper to post than an object).
    if (typeof message === 'string') {
      try {
        message = JSON.parse(message);
      } catch {
        return;
      }
    }
    if (message === null || typeof message !== 'object') return;
    if (message.kind === 'wasm') {
      // The core's compiled wasm, for the next worker started from this script.
      if (this._script !== null && message.module instanceof WebAssembly.Module) compiledCores.set(this._script, message.module);
      return;
    }
    if (message.kind === 'response') {
      const entry = this._settle(message.id);
      if (!entry) {
        // A response we cannot match (its id was unreadable): surface it as an event.
        this._dispatch('error', message.error ?? { code: 'malformed', message: 'unmatched response' });
        return;
      }
      if (message.ok) entry.resolve(message.result);
      else entry.reject(new DraftsmithError(message.error?.code ?? 'internal', message.error?.message ?? 'unknown error'));
    } else if (message.kind === 'event') {
      this._dispatch(message.type, message.data);
    } else if (message.kind === 'batch' && Array.isArray(message.messages)) {
      // Several messages in one (events and the response that follows them), in order.
      for (const inner of message.messages) this._receive(inner);
    }
  }

  _dispatch(type, data) {
    for (const key of [type, '*']) {
      for (const handler of this._handlers.get(key) ?? []) {
        try {
          handler(data, type);
        } catch (err) {
          console.error(`draftsmith: a '${type}' event handler threw`, err);
        }
      }
    }
  }
}

export default Draftsmith;

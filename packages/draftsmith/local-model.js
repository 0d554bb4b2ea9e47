// The in-browser model: a bridge between the core's `local` provider and wllama (llama.cpp
// compiled to WebAssembly), which runs a GGUF model on the CPU in a worker of its own.
//
// The worker constructs one `LocalModel` and hands it to the core; the core calls `load`,
// `chat`, `list`, `remove` and `status`. Construction is cheap: wllama (about 9 MB of wasm) is
// imported only when a model is first loaded, from the files shipped beside this module
// (`./wllama/index.js` and `./wllama/wllama.wasm`), never from another origin.
//
// Model files are kept in wllama's own storage (the Origin Private File System): the first
// load downloads the file, later loads (offline too) open the stored copy.

const WLLAMA_MODULE = new URL('./wllama/index.js', import.meta.url).href;
const WLLAMA_WASM = new URL('./wllama/wllama.wasm', import.meta.url).href;

const DEFAULT_CONTEXT = 2048;
const MIN_CONTEXT = 64;
const MAX_CONTEXT = 131072;
const MAX_THREADS = 8;
// wllama's own workers (and so the model's memory) are freed by `exit()`; a generation still
// running when another model replaces this one is given this long to end first.
const DRAIN_MS = 30_000;

// wllama's own log lines (download steps, thread counts) are not the embedder's business;
// warnings and errors still reach the console.
const QUIET_LOGGER = {
  debug() {},
  log() {},
  warn: (...args) => console.warn('[wllama]', ...args),
  error: (...args) => console.error('[wllama]', ...args),
};

const encoder = new TextEncoder();

function global() {
  return typeof self !== 'undefined' ? self : globalThis;
}

function isolated() {
  return global().crossOriginIsolated === true && typeof SharedArrayBuffer === 'function';
}

function defaultThreads() {
  if (!isolated()) return 1;
  const cores = Number(global().navigator?.hardwareConcurrency) || 1;
  return Math.max(1, Math.min(cores, MAX_THREADS));
}

function abortError() {
  return new DOMException('the request was aborted', 'AbortError');
}

function isAbort(err) {
  return !!err && (err.name === 'AbortError' || err.message === 'Operation aborted');
}

function message(err) {
  return String((err && err.message) || err || 'unknown error');
}

/** An Error whose message is for the writer, with the HTTP status the core should see. */
class ModelError extends Error {
  constructor(text, status = 500, type = 'server_error') {
    super(text);
    this.name = 'LocalModelError';
    this.status = status;
    this.type = type;
  }
}

/** `spec` checked and completed: `{url (absolute), contextSize, threads}`; throws a ModelError. */
function normalize(spec) {
  if (!spec || typeof spec !== 'object') throw new ModelError('the model to load must be given as {url, contextSize?, threads?}', 400, 'invalid_request_error');
  // Absent or null: the default.
  const url = spec.url;
  const contextSize = spec.contextSize ?? DEFAULT_CONTEXT;
  const threads = spec.threads ?? defaultThreads();
  if (typeof url !== 'string' || url.trim() === '') throw new ModelError('the model needs the URL of a .gguf file', 400, 'invalid_request_error');
  let absolute;
  try {
    absolute = new URL(url.trim(), global().location?.href);
  } catch {
    throw new ModelError(`"${url}" is not a URL`, 400, 'invalid_request_error');
  }
  if (absolute.protocol !== 'http:' && absolute.protocol !== 'https:') {
    throw new ModelError(`the model URL must be http or https: ${absolute.href}`, 400, 'invalid_request_error');
  }
  if (!/\.gguf$/i.test(absolute.pathname)) {
    throw new ModelError(`not a .gguf model file: ${absolute.href}`, 400, 'invalid_request_error');
  }
  if (!Number.isInteger(contextSize) || contextSize < MIN_CONTEXT || contextSize > MAX_CONTEXT) {
    throw new ModelError(`the context size must be a whole number from ${MIN_CONTEXT} to ${MAX_CONTEXT} (got ${JSON.stringify(contextSize)})`, 400, 'invalid_request_error');
  }
  if (!Number.isInteger(threads) || threads < 1 || threads > 64) {
    throw new ModelError(`the thread count must be a whole number from 1 to 64 (got ${JSON.stringify(threads)})`, 400, 'invalid_request_error');
  }
  return { url: absolute.href, contextSize, threads };
}

/** A load failure as a message the writer understands. */
function loadFailure(err, url, stored) {
  if (err instanceof ModelError) return err;
  const text = message(err);
  const http = text.match(/HTTP (\d{3})/);
  if (http) {
    const status = Number(http[1]);
    return new ModelError(`could not download the model ${url}: the server answered HTTP ${status}`, status >= 400 && status < 500 ? 400 : 500, 'download_error');
  }
  if (!stored && (err instanceof TypeError || /fetch|network/i.test(text))) {
    const offline = global().navigator?.onLine === false;
    return new ModelError(
      `the model ${url} is not stored in this browser and could not be downloaded${offline ? ': you are offline' : ` (${text})`}`,
      500,
      'download_error',
    );
  }
  if (/ends? with "\.gguf"/.test(text)) return new ModelError(`not a .gguf model file: ${url}`, 400, 'invalid_request_error');
  return new ModelError(`could not load the model ${url}: ${text}`, 500, 'load_error');
}

/** A generation failure: a request the model cannot take is the request's fault (400). */
function generationFailure(err) {
  const text = message(err);
  if (/context|exceed|too long|n_ctx/i.test(text)) return new ModelError(text, 400, 'context_length_exceeded');
  if (/invalid|parse|grammar/i.test(text)) return new ModelError(text, 400, 'invalid_request_error');
  return new ModelError(text, 500, 'server_error');
}

function errorResponse(err) {
  const payload = JSON.stringify({ error: { message: err.message, type: err.type } });
  return {
    status: err.status,
    body: new ReadableStream({
      start(controller) {
        controller.enqueue(encoder.encode(payload));
        controller.close();
      },
    }),
  };
}

function sse(value) {
  return encoder.encode(`data: ${typeof value === 'string' ? value : JSON.stringify(value)}\n\n`);
}

export class LocalModel {
  /**
   * @param {{wllamaModule?: string, wasmUrl?: string}} [options] where wllama's module and
   *   wasm are (by default the files beside this module).
   */
  constructor(options = {}) {
    this.wllamaModule = options.wllamaModule ?? WLLAMA_MODULE;
    this.wasmUrl = options.wasmUrl ?? WLLAMA_WASM;
    this.imported = null;
    // The loaded model: {key, info, wllama, running: Set<Promise>}.
    this.current = null;
    // Loads under way, by spec key: {promise, listeners: Set<onProgress>}.
    this.pending = new Map();
    // Loads and unloads run one after another.
    this.queue = Promise.resolve();
  }

  /** What a load would use (or the loaded model uses). Synchronous. */
  status() {
    const info = this.current?.info;
    return {
      runtime: (info ? info.multiThread : defaultThreads() > 1) ? 'multi-thread' : 'single-thread',
      crossOriginIsolated: isolated(),
      loaded: info ? info.url : null,
      threads: info ? info.threads : defaultThreads(),
    };
  }

  /**
   * Download (or open the stored copy of) a model and load it. `onProgress(loaded, total)`
   * hears the download's bytes, or once (size, size) when the model comes from storage.
   */
  load(spec, onProgress) {
    let normal;
    try {
      normal = normalize(spec);
    } catch (err) {
      return Promise.reject(err);
    }
    const key = JSON.stringify([normal.url, normal.contextSize, normal.threads]);
    const listener = typeof onProgress === 'function' ? onProgress : null;
    const pending = this.pending.get(key);
    if (pending) {
      if (listener) pending.listeners.add(listener);
      return pending.promise;
    }
    if (this.current?.key === key) return Promise.resolve(this.current.info);
    const entry = { listeners: new Set(listener ? [listener] : []) };
    entry.promise = this.serially(() => (this.current?.key === key ? this.current.info : this.open(normal, key, entry.listeners)));
    this.pending.set(key, entry);
    const forget = () => this.pending.get(key) === entry && this.pending.delete(key);
    entry.promise.then(forget, forget);
    return entry.promise;
  }

  /**
   * Run an OpenAI chat-completions request (JSON text with `model`, the model's URL, and
   * `load: {contextSize?, threads?}`) and stream the answer as server-sent events.
   */
  async chat(body, signal) {
    if (signal?.aborted) throw abortError();
    let request;
    try {
      request = JSON.parse(body);
    } catch (err) {
      return errorResponse(new ModelError(`the request is not JSON: ${message(err)}`, 400, 'invalid_request_error'));
    }
    if (!request || typeof request !== 'object' || !Array.isArray(request.messages)) {
      return errorResponse(new ModelError('the request needs a list of messages', 400, 'invalid_request_error'));
    }
    const { model, load, ...rest } = request;
    let info;
    try {
      info = await this.load({ ...(load && typeof load === 'object' ? load : {}), url: model });
    } catch (err) {
      return errorResponse(err instanceof ModelError ? err : loadFailure(err, String(model), false));
    }
    if (signal?.aborted) throw abortError();
    const loaded = this.current;
    if (!loaded || loaded.info !== info) {
      return errorResponse(new ModelError(`another model was loaded while this request waited for ${info.url}; try again`, 500, 'server_error'));
    }
    return this.generate(loaded, rest, signal);
  }

  /** The models stored in this browser: `[{url, size}]` (complete ones only). */
  async list() {
    const wllama = await this.instance();
    const models = await wllama.modelManager.getModels();
    return models.map((model) => ({ url: model.url, size: model.size }));
  }

  /** Delete a stored model (unloading it first if it is loaded); false if none was stored. */
  async remove(url) {
    let absolute;
    try {
      absolute = new URL(String(url), global().location?.href).href;
    } catch {
      return false;
    }
    return this.serially(async () => {
      if (this.current?.info.url === absolute) await this.unload();
      const wllama = await this.instance();
      const models = await wllama.modelManager.getModels({ includeInvalid: true });
      const model = models.find((m) => m.url === absolute);
      if (!model) return false;
      await model.remove();
      return true;
    });
  }

  /** Unload the model, freeing its memory and wllama's workers. */
  exit() {
    return this.serially(() => this.unload());
  }

  // --- internals -------------------------------------------------------------------------

  // Resolves at the first chunk (or the failure before it) with the stream of the rest.
  generate(loaded, params, signal) {
    // wllama's own signal: the caller's abort, or the reader cancelling the stream.
    const stop = new AbortController();
    return new Promise((resolve, reject) => {
      let started = false;
      let closed = false;
      let controller;
      const body = new ReadableStream({
        start(c) {
          controller = c;
        },
        cancel() {
          closed = true;
          stop.abort();
        },
      });
      const emit = (bytes) => {
        if (!closed) controller.enqueue(bytes);
      };
      const close = () => {
        if (closed) return;
        closed = true;
        try {
          controller.close();
        } catch {
          // already closed by the reader
        }
      };
      const begin = () => {
        if (started) return;
        started = true;
        resolve({ status: 200, body });
      };
      // Aborting ends the stream at once; wllama stops at its next token.
      const onAbort = () => {
        stop.abort();
        close();
        if (!started) {
          started = true;
          reject(abortError());
        }
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      let run;
      try {
        run = loaded.wllama.createChatCompletion({
          ...params,
          stream: true,
          abortSignal: stop.signal,
          onData: (chunk) => {
            begin();
            emit(sse(chunk));
          },
        });
      } catch (err) {
        run = Promise.reject(err);
      }
      const settled = run.then(
        () => {
          begin();
          emit(sse('[DONE]'));
          close();
        },
        (err) => {
          if (stop.signal.aborted || isAbort(err)) {
            close();
            return;
          }
          if (!started) {
            started = true;
            resolve(errorResponse(generationFailure(err)));
            return;
          }
          emit(sse({ error: { message: message(err) } }));
          close();
        },
      );
      loaded.running.add(settled);
      settled.finally(() => {
        loaded.running.delete(settled);
        signal?.removeEventListener('abort', onAbort);
      });
    });
  }


  serially(task) {
    const next = this.queue.then(task);
    this.queue = next.catch(() => {});
    return next;
  }

  async wllamaClass() {
    if (!this.imported) {
      this.imported = import(/* @vite-ignore */ this.wllamaModule).catch((err) => {
        this.imported = null;
        throw new ModelError(`could not load the in-browser model runtime (${this.wllamaModule}): ${message(err)}`, 500, 'load_error');
      });
    }
    return (await this.imported).Wllama;
  }

  async create() {
    const Wllama = await this.wllamaClass();
    const wllama = new Wllama({ default: this.wasmUrl }, { suppressNativeLog: true, logger: QUIET_LOGGER, allowOffline: true });
    // Never the compatibility build from a CDN: everything comes from this origin.
    wllama.setCompat(null);
    return wllama;
  }

  // An instance for storage only (listing, deleting): the loaded one, or one that loads nothing.
  async instance() {
    if (this.current) return this.current.wllama;
    if (!this.storage) this.storage = this.create();
    return this.storage;
  }

  async unload() {
    const old = this.current;
    if (!old) return;
    this.current = null;
    const drained = Promise.allSettled([...old.running]);
    await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, DRAIN_MS))]);
    await old.wllama.exit().catch(() => {});
  }

  async open(spec, key, listeners) {
    await this.unload();
    const wllama = await this.create();
    const models = await wllama.modelManager.getModels();
    const stored = models.some((m) => m.url === spec.url);
    const progress = ({ loaded, total }) => {
      for (const listener of listeners) {
        try {
          listener(loaded, total);
        } catch {
          // a listener's failure is its own
        }
      }
    };
    try {
      await wllama.loadModelFromUrl(spec.url, {
        n_ctx: spec.contextSize,
        n_threads: spec.threads,
        n_gpu_layers: 0,
        progressCallback: progress,
      });
    } catch (err) {
      await wllama.exit().catch(() => {});
      throw loadFailure(err, spec.url, stored);
    }
    const size = (await wllama.modelManager.getModels()).find((m) => m.url === spec.url)?.size ?? 0;
    const info = {
      url: spec.url,
      size,
      contextSize: spec.contextSize,
      threads: wllama.getNumThreads(),
      multiThread: wllama.isMultithread(),
      toolTemplate: /\btools\b/.test(wllama.getChatTemplate() ?? ''),
    };
    this.current = { key, info, wllama, running: new Set() };
    return info;
  }
}

export default LocalModel;

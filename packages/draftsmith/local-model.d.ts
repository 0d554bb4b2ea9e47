/** Which model to load: the URL of a `.gguf` file (relative to the worker's location). */
export interface LocalModelSpec {
  url: string;
  /** Tokens of context (64 to 131072; llama.cpp uses at least 256). Default 2048. */
  contextSize?: number;
  /**
   * Threads (1 to 64). Default: min(hardwareConcurrency, 8) on a cross-origin isolated page,
   * else 1. More than one needs cross-origin isolation (COOP same-origin + COEP require-corp).
   */
  threads?: number;
}

/** What `load` resolves with. */
export interface LocalModelInfo {
  /** The model's absolute URL (also its key in the browser's storage). */
  url: string;
  /** Bytes of the stored file (all parts of a split model). */
  size: number;
  contextSize: number;
  /** Threads in use (1 when single-threaded). */
  threads: number;
  multiThread: boolean;
  /** Whether the model's chat template handles tools itself. */
  toolTemplate: boolean;
}

export interface LocalModelStatus {
  /** What the loaded model runs on, or what a load would use. */
  runtime: 'multi-thread' | 'single-thread';
  crossOriginIsolated: boolean;
  /** The loaded model's URL, or null. */
  loaded: string | null;
  threads: number;
}

export interface StoredModel {
  url: string;
  size: number;
}

export interface LocalModelOptions {
  /** wllama's ES module (default: `./wllama/index.js` beside this module). */
  wllamaModule?: string;
  /** wllama's wasm (default: `./wllama/wllama.wasm` beside this module). */
  wasmUrl?: string;
}

/**
 * The in-browser model (wllama, llama.cpp in WebAssembly) as the core's `local` provider uses
 * it. One per worker; wllama is imported on the first load.
 */
export class LocalModel {
  constructor(options?: LocalModelOptions);
  /**
   * Download (or open the stored copy of) a model and load it. `onProgress(loaded, total)`
   * hears the download in bytes, or once `(size, size)` when the model comes from storage.
   * Loading the loaded spec resolves at once; another spec unloads the current model first;
   * concurrent loads of one spec share one. Rejects with an Error whose message is for the
   * writer (and `status`: 400 for a bad spec or a refused download, else 500).
   */
  load(spec: LocalModelSpec, onProgress?: (loaded: number, total: number) => void): Promise<LocalModelInfo>;
  /**
   * Run an OpenAI chat-completions request given as JSON text, with `model` (the model's URL)
   * and `load: {contextSize?, threads?}`; other fields (messages, max_tokens, temperature,
   * tools, tool_choice, grammar, ...) go to wllama. Resolves at the first chunk with a stream
   * of server-sent events (`data: <chunk>\n\n` ... `data: [DONE]\n\n`), or with status 400
   * (bad request, context overflow) / 500 and a body `{"error": {"message", "type"}}`. A
   * failure after the first chunk ends the stream with `data: {"error": {...}}`. Aborting
   * closes the stream at once (and rejects with an `AbortError` before the first chunk).
   */
  chat(body: string, signal?: AbortSignal): Promise<{ status: number; body: ReadableStream<Uint8Array> }>;
  /** The models stored in this browser (complete ones). */
  list(): Promise<StoredModel[]>;
  /** Delete a stored model, unloading it if loaded; false if it was not stored. */
  remove(url: string): Promise<boolean>;
  status(): LocalModelStatus;
  /** Unload the model and free its memory and workers. */
  exit(): Promise<void>;
}

export default LocalModel;

// Type declarations for the draftsmith JS client (./draftsmith.js).

/** Stable error codes. */
export type ErrorCode =
  | 'malformed'
  | 'unknown_request'
  | 'invalid_params'
  | 'internal'
  | 'timeout'
  | 'closed';

/** An error from draftsmith. */
export declare class DraftsmithError extends Error {
  readonly name: 'DraftsmithError';
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string);
}

export interface StartOptions {
  /** URL of worker.js; defaults to the worker.js beside this module. */
  workerUrl?: string | URL;
  /** Default per-request timeout in milliseconds (30 000). 0 or Infinity: none. */
  timeoutMs?: number;
  /** How long to wait for the core to load (30 000 ms). */
  startTimeoutMs?: number;
}

export interface RequestOptions {
  /** This request's timeout in milliseconds; overrides StartOptions.timeoutMs. */
  timeoutMs?: number;
}

export interface Hello {
  name: 'draftsmith';
  version: string;
  profile: 'debug' | 'release';
  protocol: number;
  /** The request types the core serves. */
  capabilities: string[];
}

/** Events pushed by the worker, by type. */
export interface EventMap {
  /** The core (re)loaded; `instance` counts loads in this worker. */
  ready: { version: string; instance: number };
  /** The core could not be loaded. */
  fatal: { message: string };
  /** The core panicked; requests in flight failed with `internal`, and a new core is loading. */
  panic: { message: string };
  /** A response that matched no request (its id was unreadable). */
  error: { code: ErrorCode; message: string };
}

export type EventHandler<K extends keyof EventMap> = (data: EventMap[K], type: K) => void;

export declare class Draftsmith {
  /** Start a worker and resolve once its core is ready. */
  static start(options?: StartOptions): Promise<Draftsmith>;
  /** Send a request by type; resolves with its result. */
  request<T = unknown>(type: string, params?: Record<string, unknown>, options?: RequestOptions): Promise<T>;
  /** Version, build profile and capabilities of the core. */
  hello(options?: RequestOptions): Promise<Hello>;
  /** Listen to one event type; returns a function that stops listening. */
  on<K extends keyof EventMap>(type: K, handler: EventHandler<K>): () => void;
  /** Listen to every event. */
  on(type: '*', handler: (data: unknown, type: string) => void): () => void;
  /** Stop the worker; pending requests reject with code `closed`. */
  close(): void;
}

export default Draftsmith;

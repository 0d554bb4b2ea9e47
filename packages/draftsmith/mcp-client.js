// MCP tool servers: a bridge between the core and remote MCP servers reached over Streamable
// HTTP, built on the official SDK's client (`@modelcontextprotocol/sdk`).
//
// The worker constructs one `McpClients` and hands it to the core; the core calls `connect`
// for each server in its settings, `call` for each approved tool call, and `close` when a
// server is removed. Construction is cheap: the SDK (bundled as `./mcp/sdk.js` beside this
// module) is imported on the first `connect`, so a worker without MCP servers never loads it.
//
// Errors are for the writer: each names the server, its URL, and what failed.

const SDK_URL = new URL('./mcp/sdk.js', import.meta.url).href;

// The core imposes its own tool timeout by aborting the call's signal; the SDK's default (60 s)
// would otherwise cut a long call short.
const CALL_TIMEOUT_MS = 24 * 3600 * 1000;
// Ending a session (HTTP DELETE) is a courtesy to the server: a server that does not answer
// within this long is closed without it.
const END_SESSION_MS = 2000;
// A server that pages `tools/list` without end is refused after this many pages.
const MAX_TOOL_PAGES = 100;
// The SDK's code for a connection that closed (JSON-RPC -32000).
const CONNECTION_CLOSED = -32000;

function message(err) {
  return String((err && err.message) || err || 'unknown error');
}

function abortError(signal) {
  const reason = signal && signal.reason;
  if (reason && reason.name === 'AbortError') return reason;
  return new DOMException(reason === undefined ? 'the tool call was aborted' : `the tool call was aborted: ${message(reason)}`, 'AbortError');
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** `spec` checked: `{name, url (absolute http(s)), headers}`; throws an Error naming what is wrong. */
function normalize(spec) {
  if (!spec || typeof spec !== 'object' || Array.isArray(spec)) {
    throw new TypeError('an MCP server must be given as {name, url, headers?}');
  }
  const { name, url, headers = {} } = spec;
  if (typeof name !== 'string' || name.trim() === '') throw new TypeError('an MCP server needs a name');
  if (typeof url !== 'string' || url.trim() === '') throw new TypeError(`MCP server "${name}" needs the URL of its endpoint`);
  let absolute;
  try {
    absolute = new URL(url.trim(), globalThis.location?.href);
  } catch {
    throw new TypeError(`MCP server "${name}": "${url}" is not a URL`);
  }
  if (absolute.protocol !== 'http:' && absolute.protocol !== 'https:') {
    throw new TypeError(`MCP server "${name}": the URL must be http or https: ${absolute.href}`);
  }
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) {
    throw new TypeError(`MCP server "${name}": headers must be an object of names to text values`);
  }
  for (const [key, value] of Object.entries(headers)) {
    if (typeof value !== 'string') throw new TypeError(`MCP server "${name}": the header "${key}" must be text (got ${typeof value})`);
  }
  return { name, url: absolute.href, headers: { ...headers } };
}

/** The ids of the JSON-RPC requests in a POST body (text), or [] when it holds none. */
function requestIds(body) {
  if (typeof body !== 'string') return [];
  let parsed;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  return messages.filter((m) => m && typeof m.method === 'string' && m.id !== undefined && m.id !== null).map((m) => m.id);
}

/**
 * `body` passed through as it is; once it ended (`err` null) or broke off, `onEnd(err)` runs
 * after what was read has reached the reader.
 */
function watchStream(body, onEnd) {
  const reader = body.getReader();
  const ended = (err) => setTimeout(() => onEnd(err), 0);
  return new ReadableStream({
    async pull(controller) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (err) {
        controller.error(err);
        ended(err);
        return;
      }
      if (chunk.done) {
        controller.close();
        ended(null);
      } else {
        controller.enqueue(chunk.value);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/**
 * fetch for a transport: when an answer streamed as server-sent events ends, or breaks off
 * (the server went down mid-call), without answering all its requests, those are settled
 * with an error at once; the SDK would otherwise wait for an answer that can no longer come.
 * `watch`: `{transport, watched (ids whose answers stream in), answered (those answered)}`.
 */
async function fetchWatchingAnswers(watch, input, init) {
  const response = await fetch(input, init);
  const ids = init && init.method === 'POST' ? requestIds(init.body) : [];
  const type = response.headers.get('content-type') || '';
  if (ids.length === 0 || !response.body || !type.toLowerCase().startsWith('text/event-stream')) return response;
  for (const id of ids) watch.watched.add(id);
  const body = watchStream(response.body, (err) => {
    for (const id of ids) {
      watch.watched.delete(id);
      if (watch.answered.delete(id)) continue;
      const why = err ? `the connection broke off before the answer (${message(err)})` : 'the server ended its answer without a result';
      watch.transport?.onmessage?.({ jsonrpc: '2.0', id, error: { code: CONNECTION_CLOSED, message: why } });
    }
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** Whether `err` says the server no longer knows the session (HTTP 404). */
function sessionLost(err) {
  return !!err && err.code === 404 && /^Streamable HTTP error/.test(message(err));
}

/** One connected server. */
class Connection {
  constructor(spec, onTools) {
    this.spec = spec;
    this.onTools = onTools;
    this.client = null;
    this.transport = null;
    this.connected = false;
    this.error = null;
    // Re-listing after `list_changed`: one at a time; a notification during one runs another after it.
    this.relisting = null;
    this.relistAgain = false;
    // A new session being made after the server forgot this one (see `McpClients.call`).
    this.reopening = null;
    // Calls in flight by client, and the clients of forgotten sessions to close after theirs.
    this.inFlight = new Map();
    this.retiring = new Set();
  }

  get label() {
    return `MCP server "${this.spec.name}" at ${this.spec.url}`;
  }

  async open(sdk, clientInfo) {
    const { Client, StreamableHTTPClientTransport } = sdk;
    const client = new Client(clientInfo, {
      capabilities: {},
      listChanged: { tools: { autoRefresh: false, onChanged: () => this.client === client && this.relist() } },
    });
    this.client = client;
    // What a client of a forgotten session reports (see `retire`) is no longer news.
    client.onerror = (err) => {
      // Answers to requests already settled are no failure.
      if (this.client !== client || /unknown message ID/.test(message(err))) return;
      this.error = message(err);
    };
    client.onclose = () => {
      if (this.client === client) this.connected = false;
    };
    const watch = { transport: null, watched: new Set(), answered: new Set() };
    this.transport = new StreamableHTTPClientTransport(new URL(this.spec.url), {
      requestInit: { headers: this.spec.headers },
      fetch: (input, init) => fetchWatchingAnswers(watch, input, init),
    });
    watch.transport = this.transport;
    // Note which watched requests were answered; the SDK's client calls this before handling
    // each message.
    this.transport.onmessage = (msg) => {
      if (msg && watch.watched.has(msg.id) && ('result' in msg || 'error' in msg)) watch.answered.add(msg.id);
    };
    await this.client.connect(this.transport);
    const tools = await this.listTools();
    this.connected = true;
    this.error = null;
    return tools;
  }

  /** Every page of `tools/list`. */
  async listTools() {
    const tools = [];
    const seen = new Set();
    let cursor;
    for (let page = 0; ; page++) {
      if (page >= MAX_TOOL_PAGES) throw new Error(`tools/list went on for more than ${MAX_TOOL_PAGES} pages`);
      const result = await this.client.listTools(cursor === undefined ? undefined : { cursor });
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (cursor === undefined || cursor === null) break;
      if (seen.has(cursor)) throw new Error(`tools/list repeated the cursor ${JSON.stringify(cursor)}`);
      seen.add(cursor);
    }
    // The SDK keeps the output schemas of the last page listed only: keep all of them.
    this.client.cacheToolMetadata(tools);
    return tools;
  }

  relist() {
    if (this.relisting) {
      this.relistAgain = true;
      return;
    }
    this.relisting = (async () => {
      do {
        this.relistAgain = false;
        let tools;
        try {
          tools = await this.listTools();
        } catch (err) {
          if (this.client) console.warn(`${this.label}: could not list its tools again after it said they changed: ${message(err)}`);
          continue;
        }
        if (!this.client) return;
        try {
          this.onTools?.(tools);
        } catch (err) {
          console.warn(`${this.label}: the tool list handler failed: ${message(err)}`);
        }
      } while (this.relistAgain && this.client);
    })().finally(() => {
      this.relisting = null;
    });
  }

  /** A new session after the server forgot this one (it restarted); resolves to the tools. */
  async reopen(sdk, clientInfo) {
    this.retire(this.client);
    let tools;
    try {
      tools = await this.open(sdk, clientInfo);
    } catch (err) {
      this.connected = false;
      throw err;
    }
    try {
      this.onTools?.(tools);
    } catch (err) {
      console.warn(`${this.label}: the tool list handler failed: ${message(err)}`);
    }
    return tools;
  }

  /** `client` has a call in flight. */
  hold(client) {
    this.inFlight.set(client, (this.inFlight.get(client) ?? 0) + 1);
  }

  /** A call of `client` ended; a retired client is closed after its last call. */
  release(client) {
    const left = (this.inFlight.get(client) ?? 1) - 1;
    if (left > 0) {
      this.inFlight.set(client, left);
      return;
    }
    this.inFlight.delete(client);
    if (this.retiring.delete(client)) client.close().catch(() => {});
  }

  /**
   * Close a client of a session the server forgot, once its calls in flight have ended:
   * closing it at once would fail them, though the server refuses each unrun (and each is
   * then sent again on the new session).
   */
  retire(client) {
    if (!client) return;
    if (this.inFlight.has(client)) this.retiring.add(client);
    else client.close().catch(() => {});
  }

  async close() {
    const { client, transport } = this;
    this.client = null;
    this.connected = false;
    for (const retired of this.retiring) retired.close().catch(() => {});
    this.retiring.clear();
    if (!client) return;
    if (transport && transport.sessionId) {
      await Promise.race([transport.terminateSession().catch(() => {}), sleep(END_SESSION_MS)]);
    }
    await client.close().catch(() => {});
  }

  /** What failed, as the writer reads it (without the server's name). */
  describe(err) {
    const text = message(err);
    if (err instanceof TypeError && /fetch|network|load failed/i.test(text)) {
      return `could not reach it (${text}): it is down, the URL is wrong, or it does not allow this page's origin (CORS)`;
    }
    const http = text.match(/^Streamable HTTP error: (.*)$/s);
    if (http && typeof err.code === 'number' && err.code > 0) {
      const detail = http[1].replace(/^Error POSTing to endpoint: ?/, '').trim();
      return `it answered HTTP ${err.code}${detail ? `: ${detail.slice(0, 300)}` : ''}`;
    }
    if (http) return `not an MCP server (${http[1]})`;
    if (err && err.name === 'McpError') return `it answered with an error: ${text.replace(/^MCP error -?\d+: /, '')}`;
    if (err instanceof SyntaxError || (err && err.name === 'ZodError') || /invalid_(type|union|literal)|Unexpected token|is not valid JSON/.test(text)) {
      return `not an MCP server (its answer is not MCP: ${text.slice(0, 200)})`;
    }
    return text;
  }
}

/**
 * The MCP servers of one worker: connects them, lists their tools, calls them. See
 * `mcp-client.d.ts`.
 */
export class McpClients {
  constructor(options = {}) {
    this.sdkUrl = options.sdkModule ?? SDK_URL;
    /** What the client tells servers it is (`initialize`'s clientInfo). */
    this.clientInfo = options.clientInfo ?? { name: 'draftsmith', version: '0' };
    this.sdk = null;
    this.connections = new Map();
  }

  loadSdk() {
    if (!this.sdk) {
      this.sdk = import(/* @vite-ignore */ this.sdkUrl).catch((err) => {
        this.sdk = null;
        throw new Error(`could not load the MCP client (${this.sdkUrl}): ${message(err)}`);
      });
    }
    return this.sdk;
  }

  async connect(spec, onTools) {
    const checked = normalize(spec);
    await this.close(checked.name);
    const connection = new Connection(checked, onTools);
    this.connections.set(checked.name, connection);
    const current = () => this.connections.get(checked.name) === connection;
    try {
      const tools = await connection.open(await this.loadSdk(), this.clientInfo);
      if (!current()) throw new Error('closed or replaced meanwhile');
      return tools;
    } catch (err) {
      const replaced = !current();
      if (!replaced) this.connections.delete(checked.name);
      await connection.close();
      throw new Error(`${connection.label}: ${replaced ? 'the connection was closed or replaced before it was ready' : connection.describe(err)}`);
    }
  }

  async call(server, tool, args, signal) {
    let connection = this.connections.get(server);
    if (connection && connection.reopening) await connection.reopening.catch(() => {});
    connection = this.connections.get(server);
    if (!connection || !connection.connected) throw new Error(`MCP server "${server}" is not connected`);
    if (signal && signal.aborted) throw abortError(signal);
    const options = { signal, timeout: CALL_TIMEOUT_MS, resetTimeoutOnProgress: true };
    const params = { name: tool, arguments: args ?? {} };
    const send = async (client) => {
      connection.hold(client);
      try {
        return await client.callTool(params, undefined, options);
      } finally {
        connection.release(client);
      }
    };
    const client = connection.client;
    try {
      try {
        return await send(client);
      } catch (err) {
        if (!sessionLost(err) || (signal && signal.aborted)) throw err;
        // The server forgot the session (it restarted) and refused the call unrun: a new
        // session (one for all the calls it refused), then the call once more.
        if (connection.client === client && !connection.reopening) {
          connection.reopening = this.loadSdk()
            .then((sdk) => connection.reopen(sdk, this.clientInfo))
            .finally(() => (connection.reopening = null));
        }
        if (connection.reopening) await connection.reopening;
        if (signal && signal.aborted) throw abortError(signal);
        if (!connection.connected) throw err;
        return await send(connection.client);
      }
    } catch (err) {
      if (signal && signal.aborted) throw abortError(signal);
      if (err && err.name === 'McpError' && err.code === CONNECTION_CLOSED) {
        throw new Error(`${connection.label}: the call of "${tool}" failed: ${message(err).replace(/^MCP error -?\d+: /, '')}`);
      }
      throw new Error(`${connection.label}: the call of "${tool}" failed: ${connection.describe(err)}`);
    }
  }

  async close(name) {
    const connection = this.connections.get(name);
    if (!connection) return false;
    this.connections.delete(name);
    await connection.close();
    return true;
  }

  /** Close every server (the worker is ending). */
  async closeAll() {
    await Promise.all([...this.connections.keys()].map((name) => this.close(name)));
  }

  status() {
    const status = {};
    for (const [name, connection] of this.connections) {
      status[name] = { url: connection.spec.url, connected: connection.connected };
      if (connection.error) status[name].error = connection.error;
    }
    return status;
  }
}

export default McpClients;

// A real MCP tool server for the tests and the demo, written with the official SDK
// (`@modelcontextprotocol/sdk`): Streamable HTTP on node's `http`, stateful (one transport and
// one McpServer per session, so that it can tell its sessions when its tools change), with
// CORS for any page's origin.
//
//   node www/e2e/mcp-server.mjs [--port 8790]   listens on 127.0.0.1 and prints its MCP URL
//   startMcpServer({port, log})                 the same for tests: {url, calls(), stop(), ...}
//
// Tools:
//   check_house_style {text}   the house style's violations in a text (structured too)
//   lookup_term {term}         a definition from a small glossary; an error result if none
//   count_words {text}         only after POST /add-tool, which tells every session
// Other endpoints (for tests):
//   GET /calls       every tools/call received, in order: [{tool, arguments, session,
//                    authorization, time}]
//   POST /add-tool   registers count_words (sessions get notifications/tools/list_changed)
//   POST /slow       tool calls from now on wait until POST /fast (or until cancelled)
//   POST /fast       tool calls run at once again; waiting ones go on
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const MAX_BODY = 1024 * 1024;

/** The house style: each rule a pattern and what to write instead. */
export const HOUSE_STYLE = [
  { rule: "use 'OK', not 'okay'", pattern: /\bokay\b/gi },
  { rule: 'no double spaces', pattern: / {2,}/g },
  { rule: "use 'toward', not 'towards'", pattern: /\btowards\b/gi },
];

/** The glossary lookup_term answers from (keys in lower case). */
export const GLOSSARY = {
  kenning: 'A compound expression in Old English and Old Norse poetry with metaphorical meaning, such as "whale-road" for the sea.',
  'em dash': 'A long dash (\u2014) that sets off a break in thought; the house style sets it closed, without spaces.',
  widow: 'The last line of a paragraph left alone at the top of a page or column.',
  orphan: 'The first line of a paragraph left alone at the bottom of a page or column.',
  'point of view': 'The perspective a story is told from: first person, close third, omniscient.',
};

/** The house style's violations in `text`: [{rule, at, excerpt}], in text order. */
export function houseStyleViolations(text) {
  const found = [];
  for (const { rule, pattern } of HOUSE_STYLE) {
    for (const match of text.matchAll(pattern)) {
      const at = match.index;
      found.push({ rule, at, excerpt: text.slice(Math.max(0, at - 15), at + match[0].length + 15) });
    }
  }
  return found.sort((a, b) => a.at - b.at);
}

function cors(req) {
  return {
    'Access-Control-Allow-Origin': req.headers.origin || '*',
    'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
    'Access-Control-Allow-Headers': 'content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id',
    'Access-Control-Expose-Headers': 'mcp-session-id, mcp-protocol-version',
    Vary: 'Origin',
  };
}

function readJson(req) {
  return new Promise((resolvePromise, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(Object.assign(new Error('request body too large'), { status: 413 }));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      try {
        resolvePromise(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(Object.assign(new Error('the body is not JSON'), { status: 400 }));
      }
    });
    req.on('error', reject);
  });
}

/**
 * Start the server; resolves to `{url (the /mcp endpoint), origin, calls(), sessions(), stop()}`.
 * `pageSize`: list the tools in pages of that many (`nextCursor`); `log(line)` hears what it
 * does (nothing by default).
 */
export async function startMcpServer({ port = 0, host = '127.0.0.1', pageSize = null, log = () => {} } = {}) {
  // Session id -> {transport, server}.
  const sessions = new Map();
  const calls = [];
  let countWords = false;
  let slow = false;
  // Calls waiting for POST /fast: their resume functions.
  const waiting = new Set();

  // Log the call, then wait while the server is slow (until /fast, or until the client
  // cancels the request).
  async function received(tool, args, extra) {
    const headers = extra.requestInfo?.headers ?? {};
    calls.push({ tool, arguments: args, session: extra.sessionId ?? null, authorization: headers.authorization ?? null, time: new Date().toISOString() });
    log(`tools/call ${tool} ${JSON.stringify(args)}`);
    if (!slow) return;
    await new Promise((go, stop) => {
      const resume = () => {
        waiting.delete(resume);
        go();
      };
      waiting.add(resume);
      extra.signal.addEventListener('abort', () => {
        waiting.delete(resume);
        stop(new Error('cancelled'));
      });
    });
  }

  const text = (value) => ({ type: 'text', text: value });

  // The tools: name, config (zod shapes, as McpServer.registerTool takes them) and behaviour.
  const TOOLS = {
    check_house_style: {
      config: {
        title: 'Check the house style',
        description: "Lists where a text breaks the publisher's house style (spelling choices, spacing, punctuation), with the rule and an excerpt for each.",
        inputSchema: { text: z.string().describe('The text to check, as the writer wrote it.') },
        outputSchema: {
          violations: z
            .array(
              z.object({
                rule: z.string().describe('The rule broken.'),
                at: z.number().int().describe('Offset of the violation in the text (UTF-16 code units).'),
                excerpt: z.string().describe('The text around it.'),
              }),
            )
            .describe('The violations, in text order; empty when the text follows the house style.'),
        },
        annotations: { readOnlyHint: true },
      },
      run: ({ text: body }) => {
        const violations = houseStyleViolations(body);
        const lines = violations.length === 0 ? 'No house style violations.' : violations.map((v) => `- ${v.rule}: "${v.excerpt}"`).join('\n');
        return { content: [text(lines)], structuredContent: { violations } };
      },
    },
    lookup_term: {
      config: {
        title: 'Look up a term',
        description: "Looks a term up in the publisher's glossary of writing and typesetting terms.",
        inputSchema: { term: z.string().describe('The term to look up, e.g. "widow" or "em dash".') },
        annotations: { readOnlyHint: true },
      },
      run: ({ term }) => {
        const definition = GLOSSARY[term.trim().toLowerCase()];
        if (!definition) {
          return { content: [text(`no entry for "${term}" in the glossary; known terms: ${Object.keys(GLOSSARY).join(', ')}`)], isError: true };
        }
        return { content: [text(`${term}: ${definition}`)] };
      },
    },
    count_words: {
      config: {
        title: 'Count words',
        description: 'Counts the words in a text (runs of letters, digits and apostrophes).',
        inputSchema: { text: z.string().describe('The text to count the words of.') },
        annotations: { readOnlyHint: true },
      },
      run: ({ text: body }) => {
        const words = body.match(/[\p{L}\p{N}'\u2019]+/gu) ?? [];
        return { content: [text(`${words.length} words`)], structuredContent: { words: words.length } };
      },
    },
  };
  const active = () => ['check_house_style', 'lookup_term', ...(countWords ? ['count_words'] : [])];

  function register(server, name) {
    server.registerTool(name, TOOLS[name].config, async (args, extra) => {
      await received(name, args, extra);
      return TOOLS[name].run(args);
    });
  }

  // tools/list in pages of `pageSize` tools (the cursor: the index of the page's first tool).
  function listInPages(server) {
    const json = (shape) => z.toJSONSchema(z.object(shape));
    server.server.setRequestHandler(ListToolsRequestSchema, ({ params }) => {
      const start = params?.cursor === undefined ? 0 : Number(params.cursor);
      const names = active();
      const tools = names.slice(start, start + pageSize).map((name) => {
        const { title, description, inputSchema, outputSchema, annotations } = TOOLS[name].config;
        return { name, title, description, inputSchema: json(inputSchema), ...(outputSchema ? { outputSchema: json(outputSchema) } : {}), annotations };
      });
      return start + pageSize < names.length ? { tools, nextCursor: String(start + pageSize) } : { tools };
    });
  }

  function newServer() {
    const server = new McpServer({ name: 'draftsmith-test-mcp', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
    for (const name of active()) register(server, name);
    if (pageSize) listInPages(server);
    return server;
  }

  async function serveMcp(req, res) {
    const sessionId = req.headers['mcp-session-id'];
    const known = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    const rpcError = (status, message) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
    };
    if (req.method === 'POST') {
      const body = await readJson(req);
      if (known) return known.transport.handleRequest(req, res, body);
      if (sessionId) return rpcError(404, `Session not found: ${sessionId}`);
      if (!isInitializeRequest(body)) return rpcError(400, 'Bad Request: no session; send initialize first');
      const server = newServer();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, { transport, server });
          log(`session ${id} opened`);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await server.connect(transport);
      return transport.handleRequest(req, res, body);
    }
    if (req.method === 'GET' || req.method === 'DELETE') {
      if (!known) return rpcError(sessionId ? 404 : 400, sessionId ? `Session not found: ${sessionId}` : 'Bad Request: no session');
      return known.transport.handleRequest(req, res);
    }
    res.writeHead(405, { Allow: 'GET, POST, DELETE, OPTIONS' });
    res.end();
  }

  const json = (res, status, value) => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(value));
  };

  const http = createServer((req, res) => {
    for (const [name, value] of Object.entries(cors(req))) res.setHeader(name, value);
    const { pathname } = new URL(req.url, 'http://localhost');
    if (req.method === 'OPTIONS') {
      res.writeHead(204);
      return res.end();
    }
    const fail = (err) => {
      if (res.headersSent) return res.destroy();
      json(res, err.status ?? 500, { error: String(err.message ?? err) });
    };
    if (pathname === '/mcp') return serveMcp(req, res).catch(fail);
    if (pathname === '/calls' && req.method === 'GET') return json(res, 200, calls);
    if (pathname === '/add-tool' && req.method === 'POST') {
      if (!countWords) {
        countWords = true;
        // Registering tells each session (notifications/tools/list_changed on its GET stream).
        for (const { server } of sessions.values()) register(server, 'count_words');
      }
      return json(res, 200, { tools: ['check_house_style', 'lookup_term', 'count_words'] });
    }
    if (pathname === '/slow' && req.method === 'POST') {
      slow = true;
      return json(res, 200, { slow });
    }
    if (pathname === '/fast' && req.method === 'POST') {
      slow = false;
      for (const resume of [...waiting]) resume();
      return json(res, 200, { slow });
    }
    json(res, 404, { error: `not found: ${req.method} ${pathname}` });
  });

  await new Promise((resolvePromise, reject) => {
    http.once('error', reject);
    http.listen(port, host, resolvePromise);
  });
  const origin = `http://${host}:${http.address().port}`;
  return {
    url: `${origin}/mcp`,
    origin,
    /** Every tools/call received, in order. */
    calls: () => calls.map((call) => ({ ...call })),
    /** How many sessions are open. */
    sessions: () => sessions.size,
    /** Stop at once, as a server that goes down: open connections are cut, not answered. */
    async stop() {
      const closed = new Promise((done) => http.close(() => done()));
      http.closeAllConnections();
      await closed;
      await Promise.all([...sessions.values()].map(({ transport }) => transport.close().catch(() => {})));
      sessions.clear();
    },
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const flag = process.argv.indexOf('--port');
  const port = Number(flag >= 0 ? process.argv[flag + 1] : (process.env.PORT ?? 8790));
  const verbose = process.argv.includes('--verbose');
  startMcpServer({ port, log: verbose ? (line) => console.log(line) : undefined })
    .then(({ url }) => console.log(`MCP test server (check_house_style, lookup_term): ${url}`))
    .catch((err) => {
      console.error(`could not start the MCP server: ${err.message}`);
      process.exit(1);
    });
}

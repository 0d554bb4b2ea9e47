// Dev server for the demo page and the tests: static files from www/ with the right MIME
// types (application/wasm included), on 127.0.0.1.
//
//   node www/server.mjs [--port 8080] [--mock] [--root DIR]   (PORT env also works; port 0
//   picks a free one; --root serves another folder, e.g. examples/tiptap/dist)
//
// Also serves the offline demo model (same origin as the page, no CORS), the in-browser
// model's runtime at /wllama/ (from node_modules/@wllama/wllama) and any GGUF model file placed
// in www/models/ at /models/<name>.gguf, and the MCP SDK's client at /mcp/sdk.js (bundled from
// node_modules on the first request, as scripts/package.sh ships it). Every response carries COOP/COEP, so the page is
// cross-origin isolated (the in-browser model runs multi-threaded). The scriptable mock
// LLM and the machine-translation mock (llm-fixtures.mjs) are for tests only: they are served
// only with `--mock` (or `startServer({mock: true})`), and only they send
// `Access-Control-Allow-Origin: *` (the browser tests' page runs on another port). Without the
// flag, as under `make demo`, no other origin can queue what this origin serves.
//
// Research fetch proxy (`researchProxy: "http://127.0.0.1:8080/proxy?url={url}"`), GET
// /proxy?url=<http(s) URL>: the worker cannot read most sites itself (no CORS headers), so
// this server reads the page for it. It is not an open proxy:
//   - only this origin's own pages may use it (`Sec-Fetch-Site: same-origin`, which browsers
//     send and no page can forge); any other caller (another site's page, a navigation) gets
//     403. With --mock (tests only) another origin may use it, with CORS, but only for pages
//     of this server itself;
//   - only http(s) URLs without credentials; a host that resolves to a loopback, private,
//     link-local or otherwise non-public address is refused unless it is this server itself
//     (its demo and test pages); each redirect (at most 5) is checked the same way;
//   - the answer is never a page of this origin: it is served as text/plain with nosniff and
//     a sandboxing CSP, the page's own type in `X-Proxy-Content-Type`; at most 2 MiB, 20 s.
import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lookup } from 'node:dns/promises';
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { handleModelRoute, readBody } from './llm-fixtures.mjs';

const HERE = fileURLToPath(new URL('.', import.meta.url));

// The embeddable package's sources (packages/draftsmith/), served where the demo page, its
// service worker, the benchmarks and the tests load them: the client, its types and the
// bridges. The worker is served as the package ships it, bundled with the glue (see
// `workerBundle`); it loads the wasm from ./pkg/, www/pkg/ here.
const PACKAGE = fileURLToPath(new URL('../packages/draftsmith/', import.meta.url));
const HERE_ROOT = resolve(HERE);
const FROM_PACKAGE = new Map(
  ['/draftsmith.js', '/draftsmith.d.ts', '/local-model.js', '/local-model.d.ts', '/mcp-client.js', '/mcp-client.d.ts'].map((p) => [
    p,
    join(PACKAGE, p.slice(1)),
  ]),
);
// The MCP SDK's client as the package ships it beside the worker (./mcp/sdk.js): bundled from
// node_modules with esbuild on the first request, then kept in memory.
const MCP_SDK_PATH = '/mcp/sdk.js';
let mcpSdk = null;
function mcpSdkBundle() {
  mcpSdk ??= import('./mcp-sdk.mjs')
    .then(({ bundleMcpSdk }) => bundleMcpSdk())
    .catch((err) => {
      mcpSdk = null;
      throw err;
    });
  return mcpSdk;
}
// The worker: its source (packages/draftsmith/src/) bundled with the glue in www/pkg/ by
// www/worker-bundle.mjs, as `make package` makes the package's worker.js. Bundled again when
// either has changed since (a rebuilt wasm, an edited worker), then kept in memory.
const WORKER_PATH = '/worker.js';
const GLUE = fileURLToPath(new URL('./pkg/draftsmith.js', import.meta.url));
let worker = null;
async function workerBundle() {
  const bundler = await import('./worker-bundle.mjs');
  const inputs = await Promise.all([bundler.WORKER_SOURCE, bundler.FIRST_GLUE_SOURCE, GLUE].map((file) => stat(file)));
  const key = inputs.map((info) => `${info.size}-${info.mtimeMs}`).join('/');
  if (worker?.key !== key) {
    const made = { key, text: bundler.bundleWorker(GLUE) };
    worker = made;
    made.text.catch(() => {
      if (worker === made) worker = null;
    });
  }
  const current = worker;
  const text = await current.text;
  current.etag ??= `"${createHash('sha256').update(text).digest('hex').slice(0, 32)}"`;
  return { text, etag: current.etag };
}
// wllama (the in-browser model's runtime), where the package ships it: beside the worker.
const WLLAMA = fileURLToPath(new URL('./node_modules/@wllama/wllama/esm/', import.meta.url));
const FROM_WLLAMA = new Map([
  ['/wllama/index.js', join(WLLAMA, 'index.js')],
  ['/wllama/wllama.wasm', join(WLLAMA, 'wasm', 'wllama.wasm')],
]);
// Model files (GGUF) placed in www/models/, served at /models/<name>.gguf.
const MODELS = fileURLToPath(new URL('./models/', import.meta.url));

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.ts': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
};

const COMMON_HEADERS = {
  'Cache-Control': 'no-cache',
  'X-Content-Type-Options': 'nosniff',
};

// Only the test mocks are open to other origins.
const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Headers': '*',
  'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
};


// Every response makes the page cross-origin isolated (COOP + COEP): the in-browser model
// then runs multi-threaded (SharedArrayBuffer), and the benchmarks get a 5 µs
// `performance.now()` instead of a 100 µs one. Everything the page loads is same-origin, and
// the test mocks it calls on another port answer with CORS, which isolation allows.
const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

// A file's validator: its size and modification time. With it, the browser keeps the file
// in its HTTP cache and revalidates it (`no-cache`) with a 304 when unchanged.
function etagOf(info) {
  return `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
}

// Answer 304 when the request names the validator in `headers` (its `ETag`); says whether it did.
function notModified(req, res, headers) {
  if (req?.headers['if-none-match'] !== headers.ETag) return false;
  res.writeHead(304, headers);
  res.end();
  return true;
}

async function serveStatic(root, pathname, res, req) {
  let path;
  try {
    path = decodeURIComponent(pathname);
  } catch {
    return send(res, 400, 'bad path');
  }
  if (path.includes('\0')) return send(res, 400, 'bad path');
  const file = normalize(join(root, path));
  if (file !== root && !file.startsWith(root + sep)) return send(res, 403, 'forbidden');
  if (root === HERE_ROOT && path === MCP_SDK_PATH) {
    let bundle;
    try {
      bundle = await mcpSdkBundle();
    } catch (err) {
      return send(res, 500, `could not bundle the MCP SDK (run scripts/setup.sh demo): ${err.message}`);
    }
    res.writeHead(200, { ...COMMON_HEADERS, 'Content-Type': MIME['.js'] });
    return res.end(bundle);
  }
  if (root === HERE_ROOT && path === WORKER_PATH) {
    let bundle;
    try {
      bundle = await workerBundle();
    } catch (err) {
      return send(res, 500, `could not bundle the worker (run scripts/build-wasm.sh first): ${err.message}`);
    }
    const headers = { ...COMMON_HEADERS, 'Content-Type': MIME['.js'], ETag: bundle.etag };
    if (notModified(req, res, headers)) return;
    res.writeHead(200, headers);
    return res.end(bundle.text);
  }
  let target = (root === HERE_ROOT && (FROM_PACKAGE.get(path) || FROM_WLLAMA.get(path))) || file;
  try {
    let info = await stat(target);
    if (info.isDirectory()) {
      target = join(target, 'index.html');
      info = await stat(target);
    }
    const etag = etagOf(info);
    const headers = { ...COMMON_HEADERS, 'Content-Type': MIME[extname(target)] ?? 'application/octet-stream', ETag: etag };
    if (notModified(req, res, headers)) return;
    const body = await readFile(target);
    res.writeHead(200, headers);
    res.end(body);
  } catch {
    send(res, 404, `not found: ${pathname}`);
  }
}

// A model file from www/models/, streamed (they are tens to thousands of MB): only plain
// `<name>.gguf` names (the parts of a split model too), nothing outside the folder.
async function serveModel(pathname, req, res) {
  let name;
  try {
    name = decodeURIComponent(pathname.slice('/models/'.length));
  } catch {
    return send(res, 400, 'bad path');
  }
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*\.gguf$/i.test(name) || name.includes('..')) {
    return send(res, 404, `not found: ${pathname} (only .gguf files are served from /models/)`);
  }
  const file = join(MODELS, name);
  let info;
  try {
    info = await stat(file);
  } catch {
    return send(res, 404, `not found: ${pathname} (place the file in www/models/, or run scripts/setup.sh model)`);
  }
  if (!info.isFile()) return send(res, 404, `not found: ${pathname}`);
  res.writeHead(200, {
    ...COMMON_HEADERS,
    'Content-Type': 'application/octet-stream',
    'Content-Length': info.size,
    ETag: etagOf(info),
  });
  if (req.method === 'HEAD') return res.end();
  const stream = createReadStream(file);
  stream.on('error', () => res.destroy());
  res.on('close', () => stream.destroy());
  stream.pipe(res);
}

// A deterministic LibreTranslate-compatible machine-translation mock for the tests:
// POST /mock/mtl/translate {q, source, target, format} answers {translatedText: "[<target>] <q>"}.
async function serveMockMtl(req, res) {
  let body;
  try {
    body = JSON.parse(await readBody(req, 1024 * 1024));
  } catch (err) {
    if (err.status) throw err;
    body = null;
  }
  const json = (status, value) => {
    res.writeHead(status, { ...COMMON_HEADERS, ...CORS_HEADERS, 'Content-Type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(value));
  };
  if (!body || typeof body.q !== 'string' || typeof body.target !== 'string') {
    return json(400, { error: "expected a JSON body with string 'q' and 'target'" });
  }
  return json(200, { translatedText: `[${body.target}] ${body.q}` });
}

// --- the research fetch proxy ----------------------------------------------------------------

const PROXY_MAX_BYTES = 2 * 1024 * 1024;
const PROXY_TIMEOUT_MS = 20_000;

/** Whether an IP address (v4 or v6 text) is loopback, private, link-local or otherwise not public. */
export function privateAddress(ip) {
  let v4 = isIP(ip) === 4 ? ip : null;
  if (!v4 && isIP(ip) === 6) {
    const lower = ip.toLowerCase();
    const mapped = lower.match(/^(?:0*:)*:?ffff:(\d+\.\d+\.\d+\.\d+)$/) ?? lower.match(/^::(\d+\.\d+\.\d+\.\d+)$/);
    if (mapped) v4 = mapped[1];
    else if (/^::ffff:/.test(lower) || lower === '::' || lower === '::1') return true;
    else return /^(?:f[cd]|fe[89ab]|fe[c-f]|ff|64:ff9b:|2002:|2001:db8:)/.test(lower) || /^0*:0*:0*:0*:0*:0*:0*:[01]$/.test(lower);
  }
  if (!v4) return true;
  const [a, b] = v4.split('.').map(Number);
  return a === 0 || a === 10 || a === 127 || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 192 && b === 0) ||
    (a === 198 && (b === 18 || b === 19)) || a >= 224;
}

/** Why `target` may not be fetched (a message), or null. `self` is this server's host:port. */
async function proxyRefusal(target, self, crossOrigin) {
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return 'only http and https pages can be read';
  if (target.username || target.password) return 'no credentials in the URL';
  if (target.host === self) return null;
  if (crossOrigin) return 'another origin may only read pages of this server (and only with --mock)';
  const host = target.hostname.replace(/^\[|\]$/g, '');
  let addresses;
  try {
    addresses = isIP(host) ? [{ address: host }] : await lookup(host, { all: true, verbatim: true });
  } catch (err) {
    return `cannot resolve ${host}: ${err.code ?? err.message}`;
  }
  if (!addresses.length || addresses.some((a) => privateAddress(a.address))) {
    return `${host} is not a public address`;
  }
  return null;
}

async function serveProxy(req, res, url, mock) {
  const site = req.headers['sec-fetch-site'];
  const crossOrigin = site !== 'same-origin';
  const cors = mock && crossOrigin ? { ...CORS_HEADERS, 'Access-Control-Expose-Headers': 'X-Proxy-Content-Type' } : {};
  const refuse = (status, text) => send(res, status, text, cors);
  if (req.method !== 'GET') return refuse(405, 'the proxy only reads (GET)');
  if (crossOrigin && !mock) return refuse(403, 'the research proxy serves only this origin\'s own pages');
  const self = req.headers.host ?? '';
  let target;
  try {
    target = new URL(url.searchParams.get('url') ?? '');
  } catch {
    return refuse(400, 'give the page as ?url=<http(s) URL>');
  }
  const signal = AbortSignal.timeout(PROXY_TIMEOUT_MS);
  let upstream;
  for (let hop = 0; ; hop++) {
    const why = await proxyRefusal(target, self, crossOrigin);
    if (why) return refuse(403, `refused: ${why}`);
    try {
      upstream = await fetch(target, { redirect: 'manual', signal, headers: { accept: 'text/html,application/xhtml+xml,text/plain;q=0.8', 'user-agent': 'draftsmith-research-proxy' } });
    } catch (err) {
      return refuse(502, `could not read the page: ${err.cause?.code ?? err.message}`);
    }
    const location = upstream.headers.get('location');
    if (upstream.status < 300 || upstream.status >= 400 || !location) break;
    if (hop >= 5) return refuse(502, 'too many redirects');
    target = new URL(location, target);
    await upstream.body?.cancel();
  }
  const chunks = [];
  let size = 0;
  try {
    for await (const chunk of upstream.body ?? []) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= PROXY_MAX_BYTES) break;
    }
  } catch (err) {
    return refuse(502, `the page broke off: ${err.message}`);
  }
  const body = Buffer.concat(chunks).subarray(0, PROXY_MAX_BYTES);
  res.writeHead(upstream.status, {
    ...COMMON_HEADERS,
    ...cors,
    'Cache-Control': 'no-store',
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Security-Policy': "sandbox; default-src 'none'",
    'X-Proxy-Content-Type': upstream.headers.get('content-type') ?? 'application/octet-stream',
  });
  res.end(body);
}

function send(res, status, text, extra = {}) {
  res.writeHead(status, { ...COMMON_HEADERS, ...extra, 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(text);
}

const isMockPath = (pathname) => pathname === '/mock' || pathname.startsWith('/mock/');

/**
 * Start the server; resolves to `{server, url, port, close()}`. `mock: true` turns on the
 * test mocks under /mock/ (never for the demo).
 */
export function startServer({ port = 8080, host = '127.0.0.1', root = HERE, mock = false } = {}) {
  const absRoot = resolve(root);
  const server = createServer((req, res) => {
    for (const [name, value] of Object.entries(ISOLATION_HEADERS)) res.setHeader(name, value);
    const url = new URL(req.url, 'http://localhost');
    const mockPath = isMockPath(url.pathname);
    const fail = (err) => {
      if (res.headersSent) return res.destroy();
      if (err?.status === 413) return send(res, 413, err.message, mockPath && mock ? CORS_HEADERS : {});
      send(res, 500, String(err));
    };
    if (mockPath && !mock) {
      // Drain nothing, answer at once: the mocks do not exist on this server.
      return send(res, 404, 'not found: the test mocks are off (start the dev server with --mock for tests)');
    }
    if (req.method === 'OPTIONS') {
      const open = mockPath || (mock && url.pathname === '/proxy');
      res.writeHead(204, open ? { ...COMMON_HEADERS, ...CORS_HEADERS } : COMMON_HEADERS);
      return res.end();
    }
    if (url.pathname === '/proxy') {
      serveProxy(req, res, url, mock).catch(fail);
      return;
    }
    if (url.pathname === '/mock/mtl/translate' && req.method === 'POST') {
      serveMockMtl(req, res).catch(fail);
      return;
    }
    handleModelRoute(req, res, url.pathname, { mock })
      .then((handled) => {
        if (handled) return;
        if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed');
        if (absRoot === HERE_ROOT && url.pathname.startsWith('/models/')) return serveModel(url.pathname, req, res);
        return serveStatic(absRoot, url.pathname, res, req);
      })
      .catch(fail);
  });
  return new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const actual = server.address().port;
      resolvePromise({
        server,
        port: actual,
        url: `http://${host}:${actual}/`,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const flag = process.argv.indexOf('--port');
  const port = Number(flag >= 0 ? process.argv[flag + 1] : process.env.PORT ?? 8080);
  const mock = process.argv.includes('--mock');
  const rootFlag = process.argv.indexOf('--root');
  const root = rootFlag >= 0 ? resolve(process.argv[rootFlag + 1]) : HERE;
  startServer({ port, mock, root })
    .then(({ url }) => console.log(`draftsmith demo: ${url}${mock ? ' (test mocks on under /mock/)' : ''}`))
    .catch((err) => {
      console.error(`could not start the dev server: ${err.message}`);
      process.exit(1);
    });
}

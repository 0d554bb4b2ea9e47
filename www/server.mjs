// Dev server for the demo page and the tests: static files from www/ with the right MIME
// types (application/wasm included), on 127.0.0.1.
//
//   node www/server.mjs [--port 8080] [--mock]   (PORT env also works; port 0 picks a free one)
//
// Also serves the offline demo model (same origin as the page, no CORS). The scriptable mock
// LLM and the machine-translation mock (llm-fixtures.mjs) are for tests only: they are served
// only with `--mock` (or `startServer({mock: true})`), and only they send
// `Access-Control-Allow-Origin: *` (the browser tests' page runs on another port). Without the
// flag, as under `make demo`, no other origin can queue what this origin serves.
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { handleModelRoute, readBody } from './llm-fixtures.mjs';

const HERE = fileURLToPath(new URL('.', import.meta.url));

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


// The benchmark pages (and what they load, the worker among it) are cross-origin isolated,
// which gives them a 5 µs `performance.now()` instead of a 100 µs one: the raw IndexedDB put
// the keystroke benchmark compares against takes about half a millisecond.
const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

function forBenchmark(req, url) {
  if (url.pathname.startsWith('/bench/')) return true;
  try {
    const referer = new URL(req.headers.referer ?? '');
    return referer.host === req.headers.host && referer.pathname.startsWith('/bench/');
  } catch {
    return false;
  }
}

async function serveStatic(root, pathname, res, isolated = false) {
  let path;
  try {
    path = decodeURIComponent(pathname);
  } catch {
    return send(res, 400, 'bad path');
  }
  if (path.includes('\0')) return send(res, 400, 'bad path');
  const file = normalize(join(root, path));
  if (file !== root && !file.startsWith(root + sep)) return send(res, 403, 'forbidden');
  let target = file;
  try {
    if ((await stat(target)).isDirectory()) target = join(target, 'index.html');
    const body = await readFile(target);
    res.writeHead(200, {
      ...COMMON_HEADERS,
      ...(isolated ? ISOLATION_HEADERS : {}),
      'Content-Type': MIME[extname(target)] ?? 'application/octet-stream',
    });
    res.end(body);
  } catch {
    send(res, 404, `not found: ${pathname}`);
  }
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
      res.writeHead(204, mockPath ? { ...COMMON_HEADERS, ...CORS_HEADERS } : COMMON_HEADERS);
      return res.end();
    }
    if (url.pathname === '/mock/mtl/translate' && req.method === 'POST') {
      serveMockMtl(req, res).catch(fail);
      return;
    }
    handleModelRoute(req, res, url.pathname, { mock })
      .then((handled) => {
        if (handled) return;
        if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed');
        return serveStatic(absRoot, url.pathname, res, forBenchmark(req, url));
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
  startServer({ port, mock })
    .then(({ url }) => console.log(`draftsmith demo: ${url}${mock ? ' (test mocks on under /mock/)' : ''}`))
    .catch((err) => {
      console.error(`could not start the dev server: ${err.message}`);
      process.exit(1);
    });
}

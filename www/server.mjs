// Dev server for the demo page and the tests: static files from www/ with the right MIME
// types (application/wasm included) and CORS headers, on 127.0.0.1.
//
//   node www/server.mjs [--port 8080]     (PORT env also works; port 0 picks a free one)
//
// Also serves the offline demo model and the scriptable mock LLM (llm-fixtures.mjs).
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { handleModelRoute } from './llm-fixtures.mjs';

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
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Headers': '*',
  'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
  'Cache-Control': 'no-cache',
};

async function serveStatic(root, pathname, res) {
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
    res.writeHead(200, { ...COMMON_HEADERS, 'Content-Type': MIME[extname(target)] ?? 'application/octet-stream' });
    res.end(body);
  } catch {
    send(res, 404, `not found: ${pathname}`);
  }
}

// A deterministic LibreTranslate-compatible machine-translation mock for the tests:
// POST /mock/mtl/translate {q, source, target, format} answers {translatedText: "[<target>] <q>"}.
async function serveMockMtl(req, res) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  let body;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    body = null;
  }
  const json = (status, value) => {
    res.writeHead(status, { ...COMMON_HEADERS, 'Content-Type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(value));
  };
  if (!body || typeof body.q !== 'string' || typeof body.target !== 'string') {
    return json(400, { error: "expected a JSON body with string 'q' and 'target'" });
  }
  return json(200, { translatedText: `[${body.target}] ${body.q}` });
}

function send(res, status, text) {
  res.writeHead(status, { ...COMMON_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(text);
}

/** Start the server; resolves to `{server, url, port, close()}`. */
export function startServer({ port = 8080, host = '127.0.0.1', root = HERE } = {}) {
  const absRoot = resolve(root);
  const server = createServer((req, res) => {
    if (req.method === 'OPTIONS') {
      res.writeHead(204, COMMON_HEADERS);
      return res.end();
    }
    const url = new URL(req.url, 'http://localhost');
    if (url.pathname === '/mock/mtl/translate' && req.method === 'POST') {
      serveMockMtl(req, res).catch((err) => {
        if (!res.headersSent) send(res, 500, String(err));
        else res.destroy();
      });
      return;
    }
    handleModelRoute(req, res, url.pathname)
      .then((handled) => {
        if (handled) return;
        if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed');
        return serveStatic(absRoot, url.pathname, res);
      })
      .catch((err) => {
        if (!res.headersSent) send(res, 500, String(err));
        else res.destroy();
      });
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
  startServer({ port })
    .then(({ url }) => console.log(`draftsmith demo: ${url}`))
    .catch((err) => {
      console.error(`could not start the dev server: ${err.message}`);
      process.exit(1);
    });
}

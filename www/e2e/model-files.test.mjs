// The dev server's model files and wllama: /models/<name>.gguf streamed from www/models/
// (nothing else from there, nothing outside it), /wllama/ from node_modules, and COOP/COEP on
// every response, so that the page is cross-origin isolated.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { request } from 'node:http';
import { startServer } from '../server.mjs';

const MODEL = 'SmolLM2-135M-Instruct.Q4_1.gguf';

let server;
before(async () => {
  server = await startServer({ port: 0 });
});
after(async () => {
  await server?.close();
});

/** A raw request (no URL normalisation, unlike fetch): status, headers and body length. */
function raw(method, path) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, method, path }, (res) => {
      let bytes = 0;
      res.on('data', (chunk) => (bytes += chunk.length));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, bytes }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('a .gguf in www/models/ is streamed with its length, HEAD too', async () => {
  const size = statSync(new URL(`../models/${MODEL}`, import.meta.url)).size;
  const head = await raw('HEAD', `/models/${MODEL}`);
  assert.equal(head.status, 200);
  assert.equal(Number(head.headers['content-length']), size);
  assert.equal(head.bytes, 0);
  const get = await raw('GET', `/models/${MODEL}`);
  assert.equal(get.status, 200);
  assert.equal(get.bytes, size);
  assert.equal(get.headers['content-type'], 'application/octet-stream');
});

test('only .gguf names directly in www/models/ are served', async () => {
  for (const path of ['/models/%2e%2e%2fserver.mjs', '/models/..%2Fserver.mjs', '/models/notes.txt', '/models/', '/models/sub/x.gguf', '/models/missing.gguf']) {
    const res = await raw('GET', path);
    assert.ok(res.status === 404 || res.status === 400 || res.status === 403, `${path}: ${res.status}`);
    assert.ok(res.bytes < 1000, `${path} served ${res.bytes} bytes`);
  }
});

test('wllama is served beside the worker, and every response isolates the page', async () => {
  for (const [path, type] of [
    ['/wllama/index.js', 'text/javascript; charset=utf-8'],
    ['/wllama/wllama.wasm', 'application/wasm'],
    ['/local-model.js', 'text/javascript; charset=utf-8'],
  ]) {
    const res = await raw('GET', path);
    assert.equal(res.status, 200, path);
    assert.equal(res.headers['content-type'], type, path);
  }
  for (const path of ['/', '/worker.js', `/models/${MODEL}`, '/no-such-file', '/mock/v1/chat/completions']) {
    const res = await raw(path.endsWith('.gguf') ? 'HEAD' : 'GET', path);
    assert.equal(res.headers['cross-origin-opener-policy'], 'same-origin', path);
    assert.equal(res.headers['cross-origin-embedder-policy'], 'require-corp', path);
  }
});

// The dev server's caching of static files and of the worker it bundles, over real HTTP (no
// browser): each has a validator, and a request that names the current one is answered 304
// without the body, so that a browser keeps the core's wasm (and the code it compiled from it)
// between starts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../server.mjs';

// A folder of its own to serve, with a file standing in for the core's wasm.
const root = mkdtempSync(join(tmpdir(), 'draftsmith-server-'));
const file = join(root, 'core.wasm');
writeFileSync(file, Buffer.alloc(4096, 7));

let server;
before(async () => {
  server = await startServer({ port: 0, root });
});
after(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

// A request naming the current validator `etag` of `url` is answered 304, without a body.
async function assertNotModified(url, etag) {
  const again = await fetch(url, { headers: { 'If-None-Match': etag } });
  assert.equal(again.status, 304);
  assert.equal(again.headers.get('etag'), etag);
  assert.equal((await again.arrayBuffer()).byteLength, 0);
}

test('a static file is revalidated: 304 while it is unchanged, 200 with its body once it changes', async () => {
  const first = await fetch(`${server.url}core.wasm`);
  assert.equal(first.status, 200);
  assert.equal(first.headers.get('cache-control'), 'no-cache');
  assert.equal(first.headers.get('content-type'), 'application/wasm');
  const etag = first.headers.get('etag');
  assert.match(etag ?? '', /^"[0-9a-f]+-[0-9a-f]+"$/);
  const bytes = (await first.arrayBuffer()).byteLength;
  assert.ok(bytes > 0);

  await assertNotModified(`${server.url}core.wasm`, etag);

  // A validator the file no longer has gets the whole file.
  const stale = await fetch(`${server.url}core.wasm`, { headers: { 'If-None-Match': '"0-0"' } });
  assert.equal(stale.status, 200);
  assert.equal((await stale.arrayBuffer()).byteLength, bytes);

  // A file changed since (here, its modification time) has a new validator: the old one gets
  // the whole file again.
  const { atime, mtime } = statSync(file);
  utimesSync(file, atime, new Date(mtime.getTime() + 5_000));
  const changed = await fetch(`${server.url}core.wasm`, { headers: { 'If-None-Match': etag } });
  assert.equal(changed.status, 200);
  assert.notEqual(changed.headers.get('etag'), etag);
  assert.equal((await changed.arrayBuffer()).byteLength, bytes);
});

test('files that are not there are 404 whatever validator is sent', async () => {
  const missing = await fetch(`${server.url}nothing-here.wasm`, { headers: { 'If-None-Match': '"1-1"' } });
  assert.equal(missing.status, 404);
});

test('the worker is served bundled with the glue, and revalidated like a file', async () => {
  const site = await startServer({ port: 0 });
  try {
    const first = await fetch(`${site.url}worker.js`);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('cache-control'), 'no-cache');
    assert.equal(first.headers.get('content-type'), 'text/javascript; charset=utf-8');
    const text = await first.text();
    // The package's worker.js is made the same way from the same files.
    const { bundleWorker } = await import('../worker-bundle.mjs');
    assert.equal(text, await bundleWorker(fileURLToPath(new URL('../pkg/draftsmith.js', import.meta.url))));
    // The glue is in it: nothing imported at its start.
    assert.match(text, /WorkerCore = class/);
    assert.doesNotMatch(text, /^import /m);
    const etag = first.headers.get('etag');
    assert.match(etag ?? '', /^"[0-9a-f]{32}"$/);

    await assertNotModified(`${site.url}worker.js`, etag);

    const stale = await fetch(`${site.url}worker.js`, { headers: { 'If-None-Match': '"0-0"' } });
    assert.equal(stale.status, 200);
    assert.equal(await stale.text(), text);
  } finally {
    await site.close();
  }
});

// The worker (src/worker.js), run in node for the tests of its own logic: copied beside a fake wasm
// glue (`pkg/draftsmith.js`), with a dedicated worker's globals in one tab (no
// BroadcastChannel: no other tab to tell) and its resend interval faked (a real one would keep
// node running).
import { mock } from 'node:test';
import { mkdtempSync, copyFileSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Import the worker beside `glue` (the fake glue's source), on the database `db`; what it posts
 * goes to `postMessage`, its listeners to `addEventListener`. `timers`: more of node's timer
 * APIs to fake; `fetch`: what the worker's fetches get (an empty response by default); `name`:
 * the worker's name (`self.name`).
 * Resolves, once imported, to the function that undoes it all.
 */
export async function startWorker({
  glue,
  db,
  postMessage,
  addEventListener = () => {},
  timers = [],
  fetch = async () => new Response(''),
  name = 'draftsmith',
}) {
  const dir = mkdtempSync(join(tmpdir(), 'draftsmith-worker-'));
  const pkg = fileURLToPath(new URL('..', import.meta.url));
  // The worker's source, unbundled (its first glue imported from the fake glue), where the
  // package's worker.js is.
  for (const file of ['worker.js', 'first-glue.js']) copyFileSync(join(pkg, 'src', file), join(dir, file));
  for (const file of ['local-model.js', 'mcp-client.js']) copyFileSync(join(pkg, file), join(dir, file));
  mkdirSync(join(dir, 'pkg'));
  writeFileSync(join(dir, 'pkg', 'draftsmith.js'), glue);
  globalThis.self = globalThis;
  globalThis.location = { href: `http://localhost/worker.js?db=${db}` };
  globalThis.postMessage = postMessage;
  globalThis.addEventListener = addEventListener;
  globalThis.fetch = fetch;
  globalThis.name = name;
  globalThis.BroadcastChannel = undefined;
  mock.timers.enable({ apis: ['setInterval', ...timers] });
  await import(pathToFileURL(join(dir, 'worker.js')).href);
  return () => {
    mock.timers.reset();
    rmSync(dir, { recursive: true, force: true });
  };
}

// The page reader's own wasm module (Readability on html5ever, `pkg/draftsmith_reader_bg.wasm`):
// the worker starts without it and loads it the first time research reads a page. When it
// cannot load, that page's read fails and says why, nothing is kept, and the next page loads
// it again and is read.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openReady } from './harness.mjs';

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

const READER = /\/pkg\/draftsmith_reader_bg\.wasm$/;

/** Read `urls` as a research job of the open project; resolves to its units once it ended. */
function research(page, urls) {
  return page.evaluate(async (urls) => {
    const client = window.draftsmith;
    const started = await client.researchUrls(urls);
    return new Promise((resolve) => {
      const check = async () => {
        const job = await client.request('job_status', { job: started.id });
        if (['done', 'failed', 'cancelled'].includes(job.state)) {
          off();
          resolve(job.units.map((u) => ({ state: u.state, error: u.error ?? null, title: u.result?.title ?? null })));
        }
      };
      const off = client.on('job_finished', check);
      check();
    });
  }, urls);
}

test('the reader module loads on the first page read, and again after it failed to load', async () => {
  // Without the demo's service worker, which caches the reader for offline use (its own
  // fetches are not the worker's), and would answer the worker's from that cache.
  const page = await env.newPage({ serviceWorkers: 'block' });
  const fetched = [];
  let refuse = true;
  // Requests of the page's worker pass through its context's routes.
  await page.context().route(READER, async (route) => {
    fetched.push(route.request().url());
    if (refuse) await route.abort('connectionrefused');
    else await route.continue();
  });
  await openReady(env, page);
  await page.evaluate(async (origin) => {
    await window.draftsmith.settings.set({ researchProxy: `${origin}/proxy?url={url}`, researchAllowPrivate: true });
    await window.draftsmith.createProject('Reader', [{ title: 'One', text: 'The lamp was dark.' }]);
  }, env.url.replace(/\/$/, ''));
  // Started, a project made and opened: the reader was never asked for.
  assert.deepEqual(fetched, []);

  // The module cannot be fetched: the page is not read, and the unit says why.
  const lighthouse = `${env.url}e2e/fixtures/research/lighthouse.html`;
  const failed = await research(page, [lighthouse]);
  assert.equal(fetched.length, 1);
  assert.equal(failed.length, 1);
  assert.equal(failed[0].state, 'failed');
  assert.match(failed[0].error, /page reader could not run/);
  assert.equal((await page.evaluate(() => window.draftsmith.researchList())).count, 0);

  // It can be fetched again: the next read loads it and reads the page.
  refuse = false;
  const read = await research(page, [lighthouse]);
  assert.equal(fetched.length, 2);
  assert.deepEqual(read, [{ state: 'done', error: null, title: 'How a lighthouse lamp works' }]);
  // Loaded once: a second page is read by the same module.
  const gulls = await research(page, [`${env.url}e2e/fixtures/research/gulls.html`]);
  assert.equal(gulls[0].state, 'done');
  assert.equal(fetched.length, 2);
  assert.equal((await page.evaluate(() => window.draftsmith.researchList())).count, 2);
});

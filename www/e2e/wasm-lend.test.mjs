// The core's compiled wasm is fetched and compiled once per page: the first worker lends the
// module to the page, and a worker the page starts later from the same script takes it and
// fetches none (`Draftsmith.launch`, worker.js). The later worker serves the same database.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch } from './harness.mjs';

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

const CORE_WASM = /\/pkg\/draftsmith_bg\.wasm$/;

test('a worker the page starts later takes the compiled wasm of the first and fetches none', async () => {
  const page = await env.newPage({ serviceWorkers: 'block' });
  const fetched = [];
  // Requests of the page's workers pass through its context's routes.
  await page.context().route(CORE_WASM, async (route) => {
    fetched.push(route.request().url());
    await route.continue();
  });
  await page.goto(`${env.url}e2e/fixtures/blank.html`);
  const result = await page.evaluate(async () => {
    const { Draftsmith } = await import('/draftsmith.js');
    const workerUrl = new URL(`/worker.js?db=lend-${Date.now()}`, location.href);
    const first = await Draftsmith.start({ workerUrl, persist: false });
    await first.createProject('Lent', [{ title: 'One', text: 'The lamp was lit.' }]);
    first.close();
    const second = await Draftsmith.start({ workerUrl, persist: false });
    const { projects } = await second.listProjects();
    const opened = await second.openProject(projects[0].id);
    second.close();
    return { names: projects.map((p) => p.name), chapters: opened.chapters.map((c) => c.title) };
  });
  assert.deepEqual(result.names, ['Lent']);
  assert.deepEqual(result.chapters, ['One']);
  assert.equal(fetched.length, 1, `the core's wasm was fetched ${fetched.length} times`);
});

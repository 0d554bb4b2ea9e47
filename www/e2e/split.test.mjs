// The release wasm in two (scripts/split-wasm.mjs): the worker starts with the editor's module,
// and the writer's editing needs nothing more; the second module (the agents, their tools, the
// model providers) is preloaded once the core is ready, or loaded there and then by the first
// call that needs it. When it cannot be had, that call fails with a clear error and a fresh
// core takes over, with nothing the writer typed lost. (Every other e2e test runs its agents,
// jobs and tools on the same two modules.)
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

/**
 * The client alone, on a page of the server's origin with no demo UI (which would ask for
 * agents and tools as it draws): `window.client`, on its own database.
 */
async function bareClient(page, db) {
  await page.goto(`${env.url}no-page-here`);
  await page.evaluate(async (db) => {
    const { Draftsmith } = await import('/draftsmith.js');
    window.client = await Draftsmith.start({ workerUrl: `/worker.js?db=${db}`, persist: false });
  }, db);
}

test('without the second module, starting, opening a saved project and editing work; a tool call fails clearly and a fresh core keeps what was typed', async () => {
  const page = await env.newPage();
  // As when the network is gone before the second module was ever fetched.
  let asked = 0;
  await page.context().route('**/draftsmith_lazy.wasm', (route) => {
    asked += 1;
    return route.fulfill({ status: 404, body: 'gone' });
  });
  await bareClient(page, 'split-one');
  const first = await page.evaluate(async () => {
    const client = window.client;
    const project = await client.createProject('Split', [{ title: 'One', text: 'The lamp was dark.' }]);
    const chapter = await client.getChapter();
    await client.applyUserChange(chapter.id, chapter.version, [{ insert: 'Night. ' }]);
    await client.checkpoint();
    return { id: project.id, status: (await client.workerStatus()).secondModule };
  });
  // A fresh worker on the same database: the way a writer comes back to their work.
  await bareClient(page, 'split-one');
  const again = await page.evaluate(async (id) => {
    const client = window.client;
    const restarted = new Promise((resolve) => client.on('core_restarted', resolve));
    await client.openProject(id);
    const chapter = await client.getChapter();
    await client.applyUserChange(chapter.id, chapter.version, [{ retain: 7 }, { insert: 'Rain. ' }]);
    await client.undo();
    await client.redo();
    const typed = (await client.getChapter()).text;
    const status = (await client.workerStatus()).secondModule;
    // A tool call: the tools' code is in the second module.
    const failed = await client.execute('read_chapter', {}).then((r) => ({ ok: r }), (e) => ({ code: e.code, message: e.message }));
    await restarted;
    // The fresh core opens the project again from what was saved.
    return { typed, status, failed, text: (await client.getChapter()).text };
  }, first.id);
  assert.equal(first.status, 'waiting');
  assert.equal(again.typed, 'Night. Rain. The lamp was dark.');
  assert.equal(again.status, 'waiting');
  assert.ok(asked >= 3, `the second module was asked for ${asked} times`); // two preloads, one call
  assert.equal(again.failed.code, 'internal', JSON.stringify(again.failed));
  assert.match(again.failed.message, /could not load draftsmith_lazy\.wasm: 404/);
  assert.equal(again.text, 'Night. Rain. The lamp was dark.');
});

test('a tool call before the preload has finished loads the second module there and then, and works', async () => {
  const page = await env.newPage();
  // The background preload is held back; the request the tool call makes goes through.
  let held = false;
  await page.context().route('**/draftsmith_lazy.wasm', async (route) => {
    if (!held) {
      held = true;
      await new Promise((resolve) => setTimeout(resolve, 4000));
    }
    await route.continue();
  });
  await bareClient(page, 'split-two');
  const result = await page.evaluate(async () => {
    const client = window.client;
    const atStart = (await client.workerStatus()).secondModule;
    await client.createProject('Sync', [{ title: 'One', text: 'The lamp was dark.' }]);
    const read = await client.execute('read_chapter', {});
    return { atStart, read, after: (await client.workerStatus()).secondModule };
  });
  assert.equal(held, true);
  assert.equal(result.atStart, 'waiting');
  assert.equal(result.after, 'loaded');
  assert.ok(JSON.stringify(result.read).includes('The lamp was dark.'), JSON.stringify(result.read));
});

test('the worker preloads the second module once ready, and tools then run from it', async () => {
  const page = await env.newPage();
  await bareClient(page, 'split-three');
  const result = await page.evaluate(async () => {
    const client = window.client;
    let status = (await client.workerStatus()).secondModule;
    for (let i = 0; i < 100 && status !== 'loaded'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await client.workerStatus()).secondModule;
    }
    await client.createProject('Preloaded', [{ title: 'One', text: 'The lamp was dark.' }]);
    return { status, read: await client.execute('read_chapter', {}) };
  });
  assert.equal(result.status, 'loaded');
  assert.ok(JSON.stringify(result.read).includes('The lamp was dark.'), JSON.stringify(result.read));
});

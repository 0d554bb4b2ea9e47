// The release wasm in two (scripts/split-wasm.mjs): the worker starts with the editor's module,
// the writer's editing needs nothing more, and the first tool call loads the second module
// (the agents, their tools, the model providers) and works. (Every other e2e test runs its
// agents, jobs and tools on the same two modules.) When the second
// module cannot be had, the call that needed it fails with a clear error and a fresh core
// takes over, with nothing the writer typed lost.
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

test('starting, opening a saved project and editing need only the first module; a tool call loads the second and works', async () => {
  const page = await env.newPage();
  await bareClient(page, 'split-one');
  const first = await page.evaluate(async () => {
    const client = window.client;
    const atStart = (await client.workerStatus()).secondModule;
    const project = await client.createProject('Split', [{ title: 'One', text: 'The lamp was dark.' }]);
    const chapter = await client.getChapter();
    await client.applyUserChange(chapter.id, chapter.version, [{ insert: 'Night. ' }]);
    await client.checkpoint();
    return { id: project.id, atStart, afterEditing: (await client.workerStatus()).secondModule };
  });
  // A fresh worker on the same database: the way a writer comes back to their work.
  await bareClient(page, 'split-one');
  const again = await page.evaluate(async (id) => {
    const client = window.client;
    await client.openProject(id);
    const chapter = await client.getChapter();
    await client.applyUserChange(chapter.id, chapter.version, [{ retain: 7 }, { insert: 'Rain. ' }]);
    await client.undo();
    await client.redo();
    const typed = (await client.getChapter()).text;
    const afterReopening = (await client.workerStatus()).secondModule;
    // A tool call: the tools' code is in the second module.
    const read = await client.execute('read_chapter', {});
    return { typed, afterReopening, read, afterTool: (await client.workerStatus()).secondModule };
  }, first.id);
  assert.equal(first.atStart, 'waiting');
  assert.equal(first.afterEditing, 'waiting');
  assert.equal(again.typed, 'Night. Rain. The lamp was dark.');
  assert.equal(again.afterReopening, 'waiting');
  assert.equal(again.afterTool, 'loaded');
  assert.ok(JSON.stringify(again.read).includes('Night. Rain. The lamp was dark.'), JSON.stringify(again.read));
});

test('without the second module, the call that needs it fails clearly and a fresh core keeps what was typed', async () => {
  const page = await env.newPage();
  // As when the network is gone before the second module was ever fetched.
  await page.context().route('**/draftsmith_lazy.wasm', (route) => route.fulfill({ status: 404, body: 'gone' }));
  await bareClient(page, 'split-two');
  const result = await page.evaluate(async () => {
    const client = window.client;
    const restarted = new Promise((resolve) => client.on('core_restarted', resolve));
    await client.createProject('Offline', [{ title: 'One', text: 'The lamp was dark.' }]);
    const chapter = await client.getChapter();
    await client.applyUserChange(chapter.id, chapter.version, [{ insert: 'Night. ' }]);
    const failed = await client.execute('read_chapter', {}).then((r) => ({ ok: r }), (e) => ({ code: e.code, message: e.message }));
    await restarted;
    // The fresh core opens the project again from what was saved.
    return { failed, status: (await client.workerStatus()).secondModule, text: (await client.getChapter()).text };
  });
  assert.equal(result.failed.code, 'internal', JSON.stringify(result.failed));
  assert.match(result.failed.message, /could not load draftsmith_lazy\.wasm: 404/);
  assert.equal(result.status, 'waiting');
  assert.equal(result.text, 'Night. The lamp was dark.');
});

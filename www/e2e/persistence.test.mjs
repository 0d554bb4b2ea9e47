// Persistence through the page: a reload finds the project, and two tabs on one database
// keep each other current instead of overwriting each other.
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

test('a project survives a page reload (a new worker), with its history and memory', async () => {
  const page = await env.newPage();
  await openReady(env, page);
  const id = await page.evaluate(async () => {
    const c = window.draftsmith;
    const p = await c.createProject('Survivor', [{ title: 'One', text: 'The lamp was dark.' }]);
    await c.execute('update_manuscript', { searchText: 'dark', replacementText: 'lit' }, { origin: 'agent:ed' });
    await c.execute('write_memory_note', { text: 'The lamp matters in act two.', type: 'plan', topicTags: ['lamp'] });
    await c.execute('create_goal', { title: 'Finish chapter one', progress: 30 });
    return p.id;
  });
  await page.reload();
  await openReady(env, page);
  const after = await page.evaluate(async (id) => {
    const c = window.draftsmith;
    const list = await c.request('list_projects');
    await c.openProject(id);
    const text = (await c.getChapter()).text;
    const memory = await c.request('memory');
    await c.undo();
    return { names: list.projects.map((p) => p.name), text, undone: (await c.getChapter()).text, memory };
  }, id);
  assert.ok(after.names.includes('Survivor'));
  assert.equal(after.text, 'The lamp was lit.');
  assert.equal(after.undone, 'The lamp was dark.');
  assert.equal(after.memory.notes[0].text, 'The lamp matters in act two.');
  assert.deepEqual(after.memory.goals.map((g) => [g.title, g.progress]), [['Finish chapter one', 30]]);
  assert.ok(after.memory.bedside, 'the bedside note exists');
});

test('client.checkpoint() writes the changed chapter whole to IndexedDB, then has nothing left to do', async () => {
  const page = await env.newPage();
  await openReady(env, page);
  const result = await page.evaluate(async () => {
    const c = window.draftsmith;
    await c.createProject('Checkpoints', [{ title: 'One', text: 'The lamp was dark.' }, { title: 'Two', text: 'Dawn.' }]);
    const one = await c.getChapter('One');
    await c.applyUserChange(one.id, one.version, [{ retain: 18 }, { insert: ' It burned all night.' }], { tag: 'e2e-cp-1' });
    // What the store holds of the chapter: its record (the checkpoint) in the page's database.
    const stored = () =>
      new Promise((resolve, reject) => {
        const open = indexedDB.open('draftsmith');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const get = open.result.transaction('chapters').objectStore('chapters').get(one.id);
          get.onsuccess = () => {
            open.result.close();
            resolve({ text: get.result.text, version: get.result.version });
          };
          get.onerror = () => reject(get.error);
        };
      });
    const before = await stored();
    const first = await c.checkpoint();
    const after = await stored();
    const second = await c.checkpoint();
    return { chapter: one.id, version: (await c.getChapter('One')).version, before, first, after, second };
  });
  assert.equal(result.before.text, 'The lamp was dark.', 'a keystroke writes its change, not the chapter');
  assert.deepEqual(result.first, { checkpointed: [result.chapter], saved: true });
  assert.deepEqual(result.after, { text: 'The lamp was dark. It burned all night.', version: result.version });
  assert.deepEqual(result.second, { checkpointed: [], saved: true });
});

test('two tabs on one project see each other\'s edits live and keep both', async () => {
  const context = await env.browser.newContext();
  const [a, b] = [await context.newPage(), await context.newPage()];
  for (const page of [a, b]) {
    page.consoleLog = [];
    await openReady(env, page);
  }
  const id = await a.evaluate(async () => {
    const p = await window.draftsmith.createProject('Shared', [{ title: 'One', text: 'Start.' }]);
    return p.id;
  });
  for (const page of [a, b]) {
    await page.evaluate(async (id) => {
      window.edits = [];
      window.draftsmith.on('edit', (data) => window.edits.push(data));
      await window.draftsmith.openProject(id);
    }, id);
  }
  await a.evaluate(() => window.draftsmith.execute('append_to_manuscript', { text: 'From A.' }));
  await b.waitForFunction(() => window.edits.length > 0, null, { timeout: 10_000 });
  const seenByB = await b.evaluate(async () => (await window.draftsmith.getChapter()).text);
  assert.equal(seenByB, 'Start.\n\nFrom A.');
  // B edits on top; A hears it and sees both.
  await b.evaluate(() => window.draftsmith.execute('append_to_manuscript', { text: 'From B.' }));
  await a.waitForFunction(() => window.edits.length > 1, null, { timeout: 10_000 });
  const seenByA = await a.evaluate(async () => (await window.draftsmith.getChapter()).text);
  assert.equal(seenByA, 'Start.\n\nFrom A.\n\nFrom B.');
  await context.close();
});

// The manuscript core through the page's client: a project, an agent edit pushed as an edit
// event, the writer's stale change rebased, undo by origin.
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

test('agent edits arrive as events, writer changes are rebased, undo-agent keeps typing', async () => {
  const page = await env.newPage();
  await openReady(env, page);
  const result = await page.evaluate(async () => {
    const client = window.draftsmith;
    const events = [];
    client.on('*', (data, type) => events.push({ type, data }));
    const project = await client.createProject('Lighthouse', [{ title: 'The Stair', text: 'Mara climbed the stair. The lamp was dark.' }]);
    const chapter = project.chapters[0].id;
    const edit = await client.execute('update_manuscript', { searchText: 'dark', replacementText: 'lit' }, { origin: 'agent:editor', callId: 'call-1' });
    // The writer typed on version 0, before the agent's edit reached the page.
    const typed = await client.applyUserChange(chapter, 0, [{ retain: 42 }, { insert: ' She waited.' }]);
    const afterTyping = (await client.getChapter()).text;
    await client.undo({ origin: 'agent' });
    const afterUndoAgent = (await client.getChapter()).text;
    const history = await client.history();
    const catalog = await client.tools({ format: 'openai', toolset: 'quick' });
    const notFound = await client.execute('update_manuscript', { searchText: 'zzz', replacementText: 'y' });
    return { edit, typed, afterTyping, afterUndoAgent, history, catalogNames: catalog.map((t) => t.function.name), notFound, events };
  });
  assert.equal(result.edit.status, 'success');
  assert.equal(result.typed.rebased, true);
  assert.equal(result.afterTyping, 'Mara climbed the stair. The lamp was lit. She waited.');
  assert.equal(result.afterUndoAgent, 'Mara climbed the stair. The lamp was dark. She waited.');
  assert.equal(result.history.entries[0].kind.type, 'revert');
  assert.ok(result.catalogNames.includes('update_manuscript'));
  assert.equal(result.notFound.status, 'error');
  assert.equal(result.notFound.data.code, 'not_found');
  const edits = result.events.filter((e) => e.type === 'edit');
  assert.deepEqual(edits.map((e) => e.data.origin), ['agent:editor', 'user', 'user']);
  assert.deepEqual(edits[0].data.changeset, [{ retain: 37 }, { insert: 'lit' }, { delete: 4 }, { retain: 1 }]);
  assert.ok(result.events.some((e) => e.type === 'history_changed'));
});

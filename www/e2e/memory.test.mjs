// The Memory view: notes with their authors, Delete (softly: into "Recently deleted"), and
// Restore; what the writer did there survives a reload.
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

const WRITERS = 'Mara is afraid of the dark.';
const AGENTS = 'The storm scene needs a second beat.';

/** The Memory view's live note and its trashed copy, by text. */
function note(page, text) {
  return page.getByTestId('memory-notes').getByTestId('memory-note').filter({ hasText: text });
}
function trashed(page, text) {
  return page.getByTestId('memory-trash').getByTestId('memory-deleted').filter({ hasText: text });
}

test('the Memory view deletes a note into Recently deleted and restores it, and a reload keeps both', async () => {
  const page = await env.newPage();
  await openReady(env, page);
  // One note by the writer (from the page) and one by an agent (a tool call of its own).
  await page.evaluate(
    async ({ writers, agents }) => {
      const c = window.draftsmith;
      await c.memory.write([{ text: writers, noteType: 'fact', tags: ['mara'] }]);
      const result = await c.execute('write_memory_note', { text: agents, type: 'issue' }, { origin: 'agent:scout' });
      if (result.status !== 'success') throw new Error(JSON.stringify(result));
    },
    { writers: WRITERS, agents: AGENTS },
  );
  await page.locator('[data-tab="memory"]').click();
  await note(page, WRITERS).waitFor();
  await note(page, AGENTS).waitFor();
  assert.equal(await note(page, WRITERS).getByTestId('origin-badge').getAttribute('data-origin'), 'human');
  assert.equal(await note(page, AGENTS).getByTestId('origin-badge').getAttribute('data-origin'), 'agent:scout');
  assert.equal(await page.getByTestId('memory-trash').count(), 0, 'nothing deleted yet');
  // Empty sections (goals, watched, the trash) are left out, not shown as "null".
  assert.doesNotMatch(await page.getByTestId('memory-content').textContent(), /null/);

  // Delete the writer's note: it leaves the notes for Recently deleted, restorable.
  await note(page, WRITERS).getByTestId('memory-delete').click();
  await trashed(page, WRITERS).waitFor();
  await note(page, WRITERS).waitFor({ state: 'detached' });
  assert.match(await trashed(page, WRITERS).textContent(), /deleted by you; restorable until/);
  // ... and the agent's, which stays deleted.
  await note(page, AGENTS).getByTestId('memory-delete').click();
  await trashed(page, AGENTS).waitFor();
  await note(page, AGENTS).waitFor({ state: 'detached' });

  // Restore the writer's note: back among the notes, still the writer's, gone from the trash.
  await trashed(page, WRITERS).getByTestId('memory-restore').click();
  await note(page, WRITERS).waitFor();
  await trashed(page, WRITERS).waitFor({ state: 'detached' });
  assert.equal(await note(page, WRITERS).getByTestId('origin-badge').getAttribute('data-origin'), 'human');
  await trashed(page, AGENTS).waitFor();

  // A reload (a new worker, everything read back from IndexedDB) shows the same.
  await page.reload();
  await openReady(env, page);
  await page.locator('[data-tab="memory"]').click();
  await note(page, WRITERS).waitFor();
  await trashed(page, AGENTS).waitFor();
  assert.equal(await note(page, AGENTS).count(), 0, 'the deleted note stays deleted');
  assert.equal(await trashed(page, WRITERS).count(), 0, 'the restored note is not in the trash');
  const listed = await page.evaluate(() => window.draftsmith.memory.list());
  const restored = listed.notes.find((n) => n.text === WRITERS);
  assert.deepEqual([restored.noteType, restored.author, restored.tags], ['fact', 'user', ['mara']]);
  await page.context().close();
});

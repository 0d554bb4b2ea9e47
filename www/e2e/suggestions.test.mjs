// Proactive memory on the demo page: a demo run sets a goal and the bedside note's status
// shows it; the writer watches a character, types a misspelling of its name in the editor,
// sees the suggestion appear in the memory panel with its chapter and line, accepts it and
// sees the note. Also the demo model's answers to the idle thinker and the bedside plan.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openReady } from './harness.mjs';
import { decide } from '../llm-fixtures.mjs';

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

const editor = (page) => page.locator('[data-testid="editor"] .cm-content');

async function ask(page, prompt) {
  await page.getByTestId('chat-input').fill(prompt);
  await page.getByTestId('chat-send').click();
}

/** Poll the core's memory until `check` holds (or fail after `ms`). */
async function memoryUntil(page, check, what, ms = 20_000) {
  const until = Date.now() + ms;
  let memory;
  while (Date.now() < until) {
    memory = await page.evaluate(() => window.draftsmith.memory.list());
    if (check(memory)) return memory;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`${what}: ${JSON.stringify(memory).slice(0, 2000)}`);
}

test('the demo model answers the idle thinker and the bedside plan from their prompts', () => {
  const thinker = (prompt) =>
    JSON.parse(decide({ messages: [{ role: 'system', content: 'You are the proactive thinker of a writing assistant. ...' }, { role: 'user', content: prompt }] }).text);
  const prompt = (goals, observations) =>
    `Project: Gull Rock\n\nBedside note:\nNo plan yet.\n\nActive goals:\n${goals}\n\nWatched entities:\n- Ines (character): keep her name\n\nRecent observations:\n${observations}\n\nPending suggestions (do not repeat):\n(none)\n\nDismissed suggestions (do not repeat):\n(none)\n\nPropose your suggestions as a JSON array.`;
  assert.deepEqual(thinker(prompt('- Relight the lamp: 20%', '(none)'))[0].title, 'Next step for Relight the lamp');
  const note = thinker(prompt('(none)', '- “Inez” in chapter 1 may be a misspelling of Ines'))[0];
  assert.equal(note.kind, 'note');
  assert.match(note.title, /^Follow up: “Inez”/);
  assert.equal(thinker(prompt('(none)', '(none)'))[0].title, 'Keep an eye on Ines');
  // It does not repeat a pending one.
  const again = prompt('- Relight the lamp: 20%', '(none)').replace('Pending suggestions (do not repeat):\n(none)', 'Pending suggestions (do not repeat):\n- Next step for Relight the lamp');
  assert.deepEqual(thinker(again), []);
  const plan = decide({
    messages: [
      { role: 'system', content: "You keep a novelist's bedside note: ..." },
      { role: 'user', content: 'Project: G\n\nThe current plan:\nNo plan yet.\n\n## Status (kept up to date automatically)\nActive goals (1):\n- Relight the lamp: 20%\n\nWrite the next steps.' },
    ],
  });
  assert.equal(plan.text, '- Work on Relight the lamp.');
});

test('a watched name misspelt in the editor becomes a suggestion with its line, accepted as a note; the bedside note follows a demo run', async () => {
  const page = await env.newPage();
  await openReady(env, page);

  // A demo run (from the chat) sets a goal; when the run ends, the bedside note's status lists it.
  const goal = 'Relight the lamp before the inspector comes';
  await ask(page, `goal: ${goal}`);
  const memory = await memoryUntil(page, (m) => m.bedside?.text.includes(`- ${goal}: 0%`), 'the bedside note takes the goal');
  assert.match(memory.bedside.text, /## Status \(kept up to date automatically\)\nActive goals \(1\):/);
  assert.ok(memory.bedside.previous.length >= 1, 'the earlier text is kept as a version');

  // The writer asks to watch Ines (a demo run with watch_entity).
  await ask(page, 'watch Ines');
  await memoryUntil(page, (m) => m.watched.some((w) => w.name === 'Ines'), 'Ines is watched');
  // The memory panel shows the bedside note's status.
  await page.locator('[data-tab="memory"]').click();
  await page.getByTestId('bedside-note').filter({ hasText: `${goal}: 0%` }).waitFor();

  // The writer types a misspelling of her name at the end of chapter 1.
  await editor(page).click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('\n\nInez lit the lamp.');
  const item = page.locator('[data-testid="suggestion"][data-finding="misspelling"]');
  await item.first().waitFor({ timeout: 20_000 });
  const lines = await page.evaluate(() => window.draftsmithApp.view.state.doc.lines);
  const place = await item.first().getByTestId('suggestion-place').textContent();
  assert.match(place, new RegExp(`^Chapter 1, line ${lines}`), place);
  // The line as it reads now in the editor.
  await item.first().getByTestId('suggestion-line').filter({ hasText: 'Inez lit the lamp.' }).waitFor();
  assert.match(await item.first().getByTestId('suggestion-title').textContent(), /“Inez” may be a misspelling of Ines/);
  const listed = await page.evaluate(() => window.draftsmith.suggestions.list());
  const found = listed.suggestions.find((s) => s.finding === 'misspelling');
  assert.deepEqual([found.chapterNumber, found.line, found.word], [1, lines, 'Inez']);

  // Accept: it leaves the list and the note shows among the notes (the writer's).
  await item.first().getByTestId('suggestion-accept').click();
  await item.first().waitFor({ state: 'detached' });
  const notes = page.getByTestId('memory-notes').getByTestId('memory-note').filter({ hasText: '“Inez” in chapter 1' });
  await notes.first().waitFor();
  const after = await page.evaluate(() => window.draftsmith.memory.list());
  const kept = after.notes.find((n) => n.author === 'user' && n.text.includes('“Inez”'));
  assert.equal(kept.noteType, 'issue');
  // The monitor's own observation note is there too.
  assert.ok(after.notes.some((n) => n.author === 'agent:monitor' && n.noteType === 'observation' && n.text.includes('Inez')));
  await page.context().close();
});

// The story-bible panel and approvals as a writer uses them: the writer's entries carry the
// `human` origin; an agent (the offline demo model) that would overwrite them asks first with
// a card in the chat; rejecting keeps the writer's words (also after a reload), approving
// applies the change with the agent's origin; a card survives a reload and the paused run
// resumes when it is approved; a save based on a stale version is shown as a conflict and
// nothing is lost. Screenshots in artifacts/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openReady, ARTIFACTS } from './harness.mjs';

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

const panel = (page) => page.getByTestId('bible-panel');
const item = (page, name) => panel(page).getByTestId('bible-item').filter({ hasText: name });
const field = (page, name, f) => item(page, name).locator(`[data-field="${f}"]`);
const cards = (page) => page.getByTestId('approval-card');

async function ask(page, prompt) {
  await page.getByTestId('chat-send').and(page.locator(':not([disabled])')).waitFor();
  await page.getByTestId('chat-input').fill(prompt);
  await page.getByTestId('chat-send').click();
}

/** The notes of a character as the core has them. */
const coreNotes = (page, id) =>
  page.evaluate(async (id) => {
    const listing = await window.draftsmith.bible.list('character');
    const c = listing.kinds.character.find((e) => e.id === id);
    return c ? { notes: c.notes, origin: c.notes_origin, version: c.version } : null;
  }, id);

async function waitForNotes(page, name, text) {
  await field(page, name, 'notes').getByTestId('bible-value').filter({ hasText: text }).waitFor();
}

test('the writer adds a character; an agent asks before overwriting its notes: reject keeps them, approve changes them', async () => {
  const page = await env.newPage({ viewport: { width: 1280, height: 800 } });
  await openReady(env, page);
  const mine = 'Fears the dark; keeps a lamp lit.';
  const theirs = 'Loves the sea and sleeps by the window.';

  // The writer adds Mara in the panel.
  await page.getByTestId('bible-add-character').click();
  await page.getByTestId('bible-edit-name_src').fill('Mara');
  await page.getByTestId('bible-edit-notes').fill(mine);
  await page.getByTestId('bible-save').click();
  await waitForNotes(page, 'Mara', mine);
  assert.equal(await field(page, 'Mara', 'notes').getByTestId('origin-badge').textContent(), 'human');
  assert.equal(await field(page, 'Mara', 'name_src').getByTestId('origin-badge').textContent(), 'human');
  // Versions come from one counter per story bible, so the new entry's is whatever came next.
  const created = (await coreNotes(page, 'mara')).version;
  assert.deepEqual(await coreNotes(page, 'mara'), { notes: mine, origin: 'human', version: created });

  // The agent would overwrite them: a card shows what is there and what it proposes.
  await ask(page, `set notes of Mara to "${theirs}"`);
  const card = cards(page).first();
  await card.waitFor();
  assert.equal(await card.getByTestId('approval-tool').textContent(), 'character_update_notes');
  assert.match(await card.getByTestId('approval-entity').textContent(), /character “Mara”/);
  const current = card.locator('[data-field="notes"]').getByTestId('approval-current');
  assert.match(await current.textContent(), new RegExp(mine.replace(/[.;]/g, '\\$&')));
  assert.equal(await current.getByTestId('origin-badge').textContent(), 'human');
  assert.match(await card.locator('[data-field="notes"]').getByTestId('approval-proposed').textContent(), new RegExp(theirs.replace(/\./g, '\\.')));
  await page.locator('.tool-card[data-status="pending"]').filter({ hasText: 'character_update_notes' }).waitFor();
  await page.locator('.chat-log .note').filter({ hasText: 'waits for your approval' }).waitFor();
  // Nothing changed while it waits.
  assert.equal((await coreNotes(page, 'mara')).notes, mine);
  await page.screenshot({ path: `${ARTIFACTS}bible-approval-pending-1280x800.png` });

  // Rejected: the card goes, the model is told, the writer's notes stay.
  await card.getByTestId('approval-reject').click();
  await page.locator('.chat-log .assistant').filter({ hasText: 'declined' }).waitFor();
  await cards(page).first().waitFor({ state: 'detached' });
  await page.locator('.tool-card[data-status="denied"]').waitFor();
  await waitForNotes(page, 'Mara', mine);
  assert.deepEqual(await coreNotes(page, 'mara'), { notes: mine, origin: 'human', version: created }, 'a rejection changes nothing');
  await page.reload();
  await openReady(env, page);
  await waitForNotes(page, 'Mara', mine);
  assert.equal(await field(page, 'Mara', 'notes').getByTestId('origin-badge').textContent(), 'human');
  assert.equal(await cards(page).count(), 0);

  // Asked again and approved: the notes change, with the agent's origin.
  await ask(page, `set notes of Mara to "${theirs}"`);
  await cards(page).first().waitFor();
  await cards(page).first().getByTestId('approval-approve').click();
  await waitForNotes(page, 'Mara', theirs);
  await cards(page).first().waitFor({ state: 'detached' });
  assert.match(await field(page, 'Mara', 'notes').getByTestId('origin-badge').textContent(), /^agent:assistant$/);
  assert.equal(await field(page, 'Mara', 'name_src').getByTestId('origin-badge').textContent(), 'human');
  const after = await coreNotes(page, 'mara');
  assert.equal(after.notes, theirs);
  assert.match(after.origin, /^agent:assistant:\d{4}-\d\d-\d\d$/);
  await page.locator('.chat-log .assistant').filter({ hasText: 'Done.' }).waitFor();
  await page.getByTestId('chat-send').and(page.locator(':not([disabled])')).waitFor();
  await page.screenshot({ path: `${ARTIFACTS}bible-approvals-1280x800.png` });
  await page.context().close();
});

test('a card waiting for approval survives a reload, and approving it resumes the run', async () => {
  const page = await env.newPage({ viewport: { width: 390, height: 844 } });
  await openReady(env, page);
  // Written through the API by the writer's page: the panel follows bible_changed live.
  await page.evaluate(() => window.draftsmith.bible.save('character', { name_src: 'Ansel', notes: 'Keeps the light.' }));
  await waitForNotes(page, 'Ansel', 'Keeps the light.');
  await ask(page, 'set notes of Ansel to "Left the island."');
  await cards(page).first().waitFor();
  await page.locator('.chat-log .note').filter({ hasText: 'waits for your approval' }).waitFor();

  await page.reload();
  await openReady(env, page);
  const card = cards(page).first();
  await card.waitFor();
  assert.equal(await cards(page).count(), 1);
  assert.match(await card.getByTestId('approval-current').textContent(), /Keeps the light\./);
  assert.match(await card.getByTestId('approval-proposed').textContent(), /Left the island\./);
  await card.screenshot({ path: `${ARTIFACTS}bible-approval-card-after-reload.png` });
  await card.getByTestId('approval-approve').click();
  await waitForNotes(page, 'Ansel', 'Left the island.');
  await page.locator('.chat-log .note').filter({ hasText: 'The agent goes on' }).waitFor();
  await page.locator('.chat-log .assistant').filter({ hasText: 'Done.' }).waitFor();
  assert.equal(await cards(page).count(), 0);
  assert.match(await field(page, 'Ansel', 'notes').getByTestId('origin-badge').textContent(), /^agent:/);
  const listing = await page.evaluate(() => window.draftsmith.approvals.list());
  assert.deepEqual([listing.approvals.length, listing.pausedRuns.length], [0, 0]);
  await page.screenshot({ path: `${ARTIFACTS}bible-phone-390x844.png`, fullPage: true });
  await page.context().close();
});

test('a save based on a stale version is a conflict: shown, reloaded, and the writer’s text kept', async () => {
  const page = await env.newPage({ viewport: { width: 1280, height: 800 } });
  await openReady(env, page);
  const first = await page.evaluate(() => window.draftsmith.bible.save('location', { name_src: 'The Stair', description: 'Narrow and steep.' }));
  await page.locator('[data-bible-tab="location"]').click();
  await item(page, 'The Stair').getByTestId('bible-edit').click();
  await page.getByTestId('bible-edit-description').fill('Wide, with a rope rail.');
  // Meanwhile the entry changes elsewhere (another tab, an agent).
  await page.evaluate(async () => {
    const { kinds } = await window.draftsmith.bible.list('location');
    await window.draftsmith.bible.save('location', { description: 'Crumbling.' }, { id: 'the-stair', baseVersion: kinds.location.find((l) => l.id === 'the-stair').version });
  });
  await page.getByTestId('bible-stale').filter({ hasText: 'Changed meanwhile' }).waitFor();
  await page.getByTestId('bible-save').click();
  const conflict = page.getByTestId('bible-conflict');
  await conflict.filter({ hasText: 'conflict' }).waitFor();
  assert.match(await conflict.textContent(), /Wide, with a rope rail\./);
  // The form shows the current entry now; nothing of the writer's was saved over it.
  assert.equal(await page.getByTestId('bible-edit-description').inputValue(), 'Crumbling.');
  assert.equal(await page.evaluate(async () => (await window.draftsmith.bible.list('location')).kinds.location.find((l) => l.id === 'the-stair').description), 'Crumbling.');
  await page.screenshot({ path: `${ARTIFACTS}bible-conflict-1280x800.png` });
  // The writer puts their text back and saves on the new version.
  await page.getByTestId('bible-use-mine').click();
  await page.getByTestId('bible-save').click();
  await item(page, 'The Stair').locator('[data-field="description"]').getByTestId('bible-value').filter({ hasText: 'Wide, with a rope rail.' }).waitFor();
  const saved = await page.evaluate(async () => (await window.draftsmith.bible.list('location')).kinds.location.find((l) => l.id === 'the-stair'));
  assert.equal(saved.description, 'Wide, with a rope rail.');
  // Two changes since it was created: the other save, then the writer's.
  assert.ok(saved.version > first.version + 1, `${saved.version} after ${first.version}`);
  await page.context().close();
});

test('QA records, glossary entries and scenes are listed with their origins', async () => {
  const page = await env.newPage({ viewport: { width: 1280, height: 800 } });
  await openReady(env, page);
  // The demo project comes with scenes of its own: count the one added here.
  const scenesBefore = await page.evaluate(async () => {
    const b = window.draftsmith.bible;
    const before = (await b.list('scene')).kinds.scene.length;
    await b.save('qa', { check: 'line_length', scene: 's1', line: 4, severity: 'warning', message: 'Line 4 is too long.' });
    await b.save('glossary', { term_src: 'lamp', term_tgt: 'lampe' });
    await b.save('scene', { chapter: '1', span: { start: 0, end: 24 }, summary: 'Mara climbs.', primary_characters: ['mara'] });
    return before;
  });
  await page.locator('[data-bible-tab="qa"]').click();
  const qa = page.getByTestId('qa-list').getByTestId('bible-item').filter({ hasText: 'Line 4 is too long.' });
  await qa.waitFor();
  assert.match(await qa.textContent(), /warning: line_length/);
  assert.equal(await qa.locator('[data-field="message"]').getByTestId('origin-badge').textContent(), 'human');
  await page.locator('[data-bible-tab="glossary"]').click();
  await item(page, 'lamp').filter({ hasText: 'lampe' }).waitFor();
  await page.locator('[data-bible-tab="scene"]').click();
  const scene = panel(page).getByTestId('bible-item').filter({ hasText: 'Mara climbs.' });
  await scene.waitFor();
  assert.match(await scene.locator('[data-field="span"]').textContent(), /0–24/);
  // A required field left empty is refused in the form, with nothing sent.
  await page.getByTestId('bible-add-scene').click();
  await page.getByTestId('bible-edit-summary').fill('No chapter given.');
  await page.getByTestId('bible-edit-chapter').evaluate((input) => input.removeAttribute('required'));
  await page.getByTestId('bible-save').click();
  await page.getByTestId('bible-form-error').filter({ hasText: 'Chapter is required' }).waitFor();
  await page.getByTestId('bible-cancel').click();
  assert.equal(await page.evaluate(async () => (await window.draftsmith.bible.list('scene')).kinds.scene.length), scenesBefore + 1);
  await page.context().close();
});

test('two tabs: a card shows in both, the other tab approves, and both follow', async () => {
  const a = await env.newPage({ viewport: { width: 1280, height: 800 } });
  await openReady(env, a);
  await a.evaluate(() => window.draftsmith.bible.save('character', { name_src: 'Tomas', notes: 'Rows every morning.' }));
  await waitForNotes(a, 'Tomas', 'Rows every morning.');
  const b = await a.context().newPage();
  b.consoleLog = [];
  await openReady(env, b);
  await waitForNotes(b, 'Tomas', 'Rows every morning.');

  await ask(a, 'set notes of Tomas to "Sold his boat."');
  await cards(a).first().waitFor();
  // The other tab hears of it (approvals_changed) and shows the same card.
  const card = cards(b).first();
  await card.waitFor();
  assert.match(await card.getByTestId('approval-proposed').textContent(), /Sold his boat\./);
  await card.getByTestId('approval-approve').click();
  // The run resumes in the tab that approved; the first tab's card goes, and both show the
  // new notes.
  await b.locator('.chat-log .assistant').filter({ hasText: 'Done.' }).waitFor();
  await cards(a).first().waitFor({ state: 'detached' });
  await waitForNotes(b, 'Tomas', 'Sold his boat.');
  await waitForNotes(a, 'Tomas', 'Sold his boat.');
  assert.match(await field(a, 'Tomas', 'notes').getByTestId('origin-badge').textContent(), /^agent:/);
  await a.context().close();
});

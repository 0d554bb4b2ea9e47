// Agents as data in the page: the chat's preset and agent picker, a run as a tree of
// sub-agents shown as nested groups under their routing calls' cards (name, path, status,
// their own tool cards and text), the demo model playing each preset offline, and the
// approval card of a sub-agent naming that agent.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openReady, ARTIFACTS, waitUntil } from './harness.mjs';

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

/** Pick a preset or agent (`preset:<name>` / `agent:<name>`) and send a message. */
async function send(page, choice, prompt) {
  await page.getByTestId('chat-agent').selectOption(choice);
  await page.getByTestId('chat-input').fill(prompt);
  await page.getByTestId('chat-send').click();
}

/** Wait until the chat is idle again (the run ended or paused). */
async function idle(page) {
  await page.waitForFunction(() => !document.querySelector('[data-testid="chat-send"]').disabled && !!document.querySelector('[data-testid="chat-log"] li'), null, { timeout: 60_000 });
}

/** The group of a sub-agent, by its path from the agent the run started with. */
const group = (page, path) => page.locator(`.sub-run[data-path="${path}"]`);

/** The tool cards directly in a log (not those of nested groups). */
async function cardNames(log) {
  return log.evaluate((node) => [...node.querySelectorAll(':scope > .tool-card > div > .name')].map((n) => n.textContent));
}

test('the Dungeon Master preset: "I attack the goblin" runs player interface › root › rules lawyer, then narrative, shown nested, and the narration comes back', async () => {
  const page = await env.newPage({ viewport: { width: 1280, height: 900 } });
  await openReady(env, page);
  const picker = page.getByTestId('chat-agent');
  // The picker lists the presets from list_agents, and agents that talk to the writer.
  const options = await picker.locator('option').evaluateAll((os) => os.map((o) => o.value));
  for (const want of ['preset:quill', 'preset:dungeon_master', 'preset:textcraft', 'agent:character_creation']) assert.ok(options.includes(want), options.join());
  assert.equal(await picker.inputValue(), 'preset:quill');

  await send(page, 'preset:dungeon_master', 'I attack the goblin');
  assert.match(await page.getByTestId('chat-agent-about').textContent(), /player_interface → root/);
  const root = group(page, 'player_interface › root');
  const rules = group(page, 'player_interface › root › rules_lawyer');
  const narrative = group(page, 'player_interface › root › narrative');
  await narrative.and(page.locator('[data-status="finished"]')).waitFor({ timeout: 60_000 });
  await root.and(page.locator('[data-status="finished"]')).waitFor({ timeout: 60_000 });
  await idle(page);

  // player_interface's routing card holds root's group; root's log holds its routing cards,
  // in the seed's combat order, each holding its sub-agent's group.
  const top = page.locator('.chat-log > .tool-card').filter({ hasText: 'route_action_to_root_agent' });
  assert.equal(await top.getAttribute('data-status'), 'success');
  assert.match(await top.locator(':scope > .summary').textContent(), /^combat: “I attack the goblin” → goblin$/);
  assert.equal(await top.locator(':scope > .sub-run').getAttribute('data-agent'), 'root');
  const rootLog = root.locator(':scope > .sub-log');
  assert.deepEqual(await cardNames(rootLog), ['route_to_rules_lawyer_agent', 'route_to_narrative_agent', 'route_to_player_interface_agent']);
  const rulesCard = rootLog.locator(':scope > .tool-card').filter({ hasText: 'route_to_rules_lawyer_agent' });
  assert.equal(await rulesCard.locator(':scope > .sub-run').getAttribute('data-agent'), 'rules_lawyer');
  const narrativeCard = rootLog.locator(':scope > .tool-card').filter({ hasText: 'route_to_narrative_agent' });
  assert.match(await narrativeCard.locator(':scope > .summary').textContent(), /^combat_description:/);

  // Each group shows its agent's name, status and path, its own tool cards and text.
  for (const [node, name] of [[root, 'root'], [rules, 'rules_lawyer'], [narrative, 'narrative']]) {
    assert.equal(await node.locator(':scope > summary [data-testid="sub-run-agent"]').textContent(), name);
    assert.equal(await node.locator(':scope > summary [data-testid="sub-run-status"]').textContent(), 'finished');
  }
  assert.equal(await rules.locator(':scope > summary [data-testid="sub-run-path"]').textContent(), 'player_interface › root › rules_lawyer');
  const rulesLog = rules.locator(':scope > .sub-log');
  assert.deepEqual(await cardNames(rulesLog), ['query_lore', 'send_response_to_root_agent']);
  assert.match(await rulesLog.locator(':scope > .assistant').first().textContent(), /Checking the rules/);
  const verdict = await rulesLog.locator(':scope > .tool-card').filter({ hasText: 'send_response_to_root_agent' }).locator(':scope > .summary').getAttribute('title');
  assert.match(verdict, /Attack roll: d20/);

  // The final narration, in the chat itself (not in a group), says what the agents decided.
  const final = page.locator('.chat-log > li.assistant').last();
  const narration = await final.textContent();
  assert.match(narration, /goblin/);
  assert.match(narration, /Attack roll: d20 \(\d+\) \+ 5 = \d+/);
  const hit = /a hit/.test(narration);
  assert.match(narration, hit ? /blade (bites|cuts)/ : /ducks under/);
  await page.screenshot({ path: `${ARTIFACTS}agents-dungeon-master-1280x900.png` });

  // The groups fold: a click on the name hides the sub-agent's cards.
  await rules.locator(':scope > summary').click();
  assert.equal(await rules.evaluate((n) => n.open), false);
  assert.equal(await rulesLog.isVisible(), false);

  // Another turn of the same game: a greeting goes to the NPC agent.
  await send(page, 'preset:dungeon_master', 'Hello blacksmith');
  await group(page, 'player_interface › root › npc').and(page.locator('[data-status="finished"]')).waitFor({ timeout: 60_000 });
  await idle(page);
  assert.match(await page.locator('.chat-log > li.assistant').last().textContent(), /^\[Blacksmith\] Well met/);
  assert.deepEqual(page.consoleLog.filter((l) => l.startsWith('pageerror')), []);
});

test('TextCraft: "plan chapter 3 and draft it" writes plans/ch3.md, the narrator drafts chapter 3 and the editor fixes a phrase', async () => {
  const page = await env.newPage({ viewport: { width: 1280, height: 900 } });
  await openReady(env, page);
  await page.evaluate(() =>
    window.draftsmith.createProject('Storm', [
      { title: 'Arrival', text: 'Mara came to the island.' },
      { title: 'The Keeper', text: 'The keeper said nothing.' },
      { title: 'The Storm', text: '(to be written)' },
    ]),
  );
  await page.getByTestId('chapter-list').getByText('The Storm').waitFor();
  await send(page, 'preset:textcraft', 'plan chapter 3 and draft it');
  await group(page, 'architect › editor').and(page.locator('[data-status="finished"]')).waitFor({ timeout: 60_000 });
  await idle(page);
  const file = 'manuscripts/03-the-storm.md';
  assert.equal(await group(page, 'architect › narrator').getAttribute('data-status'), 'finished');
  const narratorLog = group(page, 'architect › narrator').locator(':scope > .sub-log');
  assert.deepEqual(await cardNames(narratorLog), ['read_file', 'write_file']);
  const editorLog = group(page, 'architect › editor').locator(':scope > .sub-log');
  assert.deepEqual(await cardNames(editorLog), ['edit_file']);
  assert.match(await editorLog.locator(':scope > .assistant').last().textContent(), /replaced “very dark” with “pitch-black”/);
  assert.deepEqual(await cardNames(page.locator('.chat-log')), ['list_files', 'write_file', 'assign_task', 'read_file', 'assign_task']);
  const summary = await page.locator('.chat-log > li.assistant').last().textContent();
  assert.match(summary, /^Done\. The plan for chapter 3 is in plans\/ch3\.md/);
  assert.ok(summary.includes(file), summary);

  const state = await page.evaluate(async (path) => {
    const c = window.draftsmith;
    const plan = await c.execute('read_file', { path: 'plans/ch3.md' });
    const draft = await c.execute('read_file', { path });
    return { plan: plan.data.content, draft: draft.data.content, chapter: (await c.getChapter('3')).text };
  }, file);
  assert.match(state.plan, /^# Chapter 3: The Storm/);
  assert.match(state.draft, /pitch-black/);
  assert.ok(!state.draft.includes('very dark'), state.draft);
  assert.equal(state.chapter, state.draft);

  await page.screenshot({ path: `${ARTIFACTS}agents-textcraft-chat-1280x900.png` });

  // The Files panel shows the plan and the chapter's file.
  await page.locator('[data-tab="files"]').click();
  await page.getByTestId('files-tree').getByText('ch3.md').waitFor();
  await page.getByTestId('files-tree').getByText('03-the-storm.md').waitFor();
  await page.screenshot({ path: `${ARTIFACTS}agents-textcraft-1280x900.png` });

  // The whole tree was one undo group: one plain undo takes back the architect's plan, the
  // narrator's draft and the editor's fix together.
  await page.getByTestId('undo').click();
  await waitUntil(page, async () => (await window.draftsmith.getChapter('3')).text === '(to be written)', null, { timeout: 10_000 });
  await waitUntil(page, async () => (await window.draftsmith.execute('read_file', { path: 'plans/ch3.md' })).status === 'error', null, { timeout: 10_000 });
  const history = await page.evaluate(() => window.draftsmith.history());
  assert.deepEqual([...new Set(history.redo.map((e) => e.origin))].sort(), ['agent:architect', 'agent:editor', 'agent:narrator']);
  assert.equal(new Set(history.redo.map((e) => e.group)).size, 1);
  assert.deepEqual(page.consoleLog.filter((l) => l.startsWith('pageerror')), []);
});

test('an agent the app defines is in the picker; its sub-agent asks for approval, and the card names that sub-agent', async () => {
  const page = await env.newPage();
  await openReady(env, page);
  const notes = 'Keeps the light; never leaves the island.';
  await page.evaluate(async (notes) => {
    const c = window.draftsmith;
    await c.createProject('Lighthouse', [{ title: 'One', text: 'The keeper waits.' }]);
    await c.bible.save('character', { name_src: 'Tomas', notes });
    await c.defineAgent({ name: 'archivist', description: 'Keeps the story bible.', systemPrompt: 'You are the Archivist Agent. You update the story bible. Done when the change is made and answered.', tools: ['character_update_notes'] });
    await c.defineAgent({ name: 'keeper', description: 'Talks to the writer; hands bible work to the archivist.', systemPrompt: 'You are the Keeper. Hand every story-bible change to the archivist. Done when you have told the writer.', subAgents: [{ agent: 'archivist' }], talksToWriter: true });
  }, notes);
  const picker = page.getByTestId('chat-agent');
  await picker.locator('option[value="agent:keeper"]').waitFor({ state: 'attached' });
  assert.equal(await picker.locator('option[value="agent:archivist"]').count(), 0, 'an agent that does not talk to the writer is not offered');

  await send(page, 'agent:keeper', 'set notes of Tomas to "Left the island."');
  const card = page.getByTestId('approval-card');
  await card.waitFor({ timeout: 60_000 });
  assert.equal(await card.getByTestId('approval-agent').textContent(), 'archivist');
  assert.equal(await card.getByTestId('approval-tool').textContent(), 'character_update_notes');
  const archivist = group(page, 'keeper › archivist');
  await archivist.and(page.locator('[data-status="paused"]')).waitFor();
  await card.getByTestId('approval-approve').click();
  await archivist.and(page.locator('[data-status="finished"]')).waitFor({ timeout: 60_000 });
  await page.locator('.chat-log > li.assistant').filter({ hasText: 'Done.' }).waitFor({ timeout: 60_000 });
  const after = await page.evaluate(() => window.draftsmith.bible.list('character'));
  const tomas = after.kinds.character[0];
  assert.equal(tomas.notes, 'Left the island.');
  assert.match(tomas.notes_origin, /^agent:archivist:/);
  assert.deepEqual(page.consoleLog.filter((l) => l.startsWith('pageerror')), []);
});

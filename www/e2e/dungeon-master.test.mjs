// The Dungeon Master's campaign in the page, played offline by the demo model: a campaign
// created through route_to_campaign_creation_agent (the record and the outline file), a
// fight whose verdict changes the party's hit points in the record, a reload after which the
// root still knows the game, and character creation in its own chat recording the character
// once the writer approves.
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

/** Pick a preset or agent (`preset:<name>` / `agent:<name>`), send a message, wait for the run's end. */
async function play(page, choice, prompt) {
  const before = await page.locator('.chat-log > li.assistant').count();
  await page.getByTestId('chat-agent').selectOption(choice);
  await page.getByTestId('chat-input').fill(prompt);
  await page.getByTestId('chat-send').click();
  await page.waitForFunction((n) => document.querySelectorAll('.chat-log > li.assistant').length > n && !document.querySelector('[data-testid="chat-send"]').disabled, before, { timeout: 60_000 });
  return (await page.locator('.chat-log > li.assistant').last().textContent()).trim();
}

const campaign = (page) => page.evaluate(async () => (await window.draftsmith.bible.list('campaign')).kinds.campaign[0]);

test('the Dungeon Master keeps a campaign offline: created, hit by a verdict, remembered after a reload; a character recorded', async () => {
  const page = await env.newPage({ viewport: { width: 1280, height: 900 } });
  await openReady(env, page);

  const started = await play(page, 'preset:dungeon_master', 'Start a campaign for Aria, 14 hit points');
  const created = await campaign(page);
  assert.ok(created, `${started}\n${await page.locator('.chat-log').textContent()}`);
  assert.equal(created.name, 'The Drowned Crown');
  assert.deepEqual(created.party, [{ name: 'Aria', hp: 14, max_hp: 14 }]);
  assert.match(created.name_origin, /^agent:campaign_creation:/);
  const outline = await page.evaluate(() => window.draftsmith.execute('read_file', { path: 'plans/campaign.md' }));
  assert.equal(outline.status, 'success');

  const fight = await play(page, 'preset:dungeon_master', 'I attack the goblin');
  const hurt = await campaign(page);
  assert.ok(hurt.party[0].hp < 14, JSON.stringify(hurt.party));
  assert.match(hurt.party_origin, /^agent:root:/);
  assert.ok(fight.includes(`Party: Aria ${hurt.party[0].hp}/14 HP.`), fight);

  // A new worker: the root's conversation still holds the campaign, so it reads the record.
  await page.reload();
  await openReady(env, page);
  const status = await play(page, 'preset:dungeon_master', 'How many hit points do I have?');
  assert.ok(status.includes(`Party: Aria ${hurt.party[0].hp}/14 HP.`), status);

  // Character creation in its own chat: the writer approves, the character is recorded.
  await page.getByTestId('chat-agent').selectOption('agent:character_creation');
  await page.getByTestId('chat-input').fill('Create a new character named Bram, a dwarf cleric.');
  await page.getByTestId('chat-send').click();
  const card = page.getByTestId('approval-card');
  await card.waitFor({ timeout: 60_000 });
  assert.equal(await card.getByTestId('approval-tool').textContent(), 'character_create_entry');
  await card.getByTestId('approval-approve').click();
  await page.locator('.chat-log > li.assistant').filter({ hasText: 'Recorded in the story bible.' }).waitFor({ timeout: 60_000 });
  const bram = await page.evaluate(async () => (await window.draftsmith.bible.list('character')).kinds.character.find((c) => c.name_src === 'Bram'));
  assert.equal(bram?.notes, 'A dwarf cleric.');
  assert.match(bram.name_src_origin, /^agent:character_creation:/);
  // Bram joins the campaign's party (agents set it, so no approval is asked).
  await page.locator('.chat-log > li.assistant').filter({ hasText: 'Bram joins the party' }).waitFor();
  assert.deepEqual((await campaign(page)).party.map((m) => m.name), ['Aria', 'Bram']);
  await page.screenshot({ path: `${ARTIFACTS}dungeon-master-campaign-1280x900.png` });
  assert.deepEqual(page.consoleLog.filter((l) => l.startsWith('pageerror')), []);
});

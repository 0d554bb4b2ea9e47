// Research in the page (issue 18): the writer types a page's address in the Research panel,
// a background research job reads it through the dev server's fetch proxy (its progress bar
// reaches 100 %), and the note appears in the list, marked as the writer's; then the demo
// agent, asked to search the research, calls search_research and cites the note's title and
// address in its answer, and a note the agent reads itself shows in the same list, marked as
// the agent's; deleting a note takes it out of the list.
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

/** Wait until the chat is idle again (its run ended). */
async function idle(page) {
  await page.waitForFunction(() => !document.querySelector('[data-testid="chat-send"]').disabled, null, { timeout: 60_000 });
}

test('research a page from the panel, then the demo agent finds it and cites it', async () => {
  const page = await env.newPage();
  await openReady(env, page);
  // The fixture pages are served by the dev server itself (loopback): the writer allows
  // private addresses, and the proxy is the page's own origin's.
  await page.evaluate(async (origin) => {
    await window.draftsmith.settings.set({ researchProxy: `${origin}/proxy?url={url}`, researchAllowPrivate: true });
    await window.draftsmith.createProject('Research', [{ title: 'One', text: 'The lamp was dark.' }]);
  }, env.url.replace(/\/$/, ''));
  await page.getByTestId('research-empty').waitFor({ state: 'attached' });
  await page.getByRole('tab', { name: 'Research' }).click();
  // The settings form shows the research settings.
  assert.equal(await page.getByTestId('settings-research-private').isChecked(), true);

  const address = `${env.url}e2e/fixtures/research/lighthouse.html`;
  await page.getByTestId('research-url').fill(address);
  await page.getByTestId('research-start').click();
  const job = page.getByTestId('research-job').first();
  await job.waitFor({ timeout: 30_000 });
  await page.waitForFunction(
    () => document.querySelector('[data-testid="research-job"]')?.dataset.state === 'done',
    null,
    { timeout: 30_000 },
  );
  assert.equal(await job.getByTestId('research-job-progress').getAttribute('aria-valuenow'), '100');
  assert.match(await job.getByTestId('research-job-state').textContent(), /1 of 1 pages read/);
  assert.match(await job.getByTestId('research-job-unit').textContent(), /read “How a lighthouse lamp works”/);

  const note = page.getByTestId('research-note').filter({ hasText: 'How a lighthouse lamp works' });
  await note.waitFor({ timeout: 10_000 });
  assert.equal(await note.getAttribute('data-source'), 'human');
  assert.equal(await note.getByTestId('research-source').textContent(), 'you');
  assert.equal(await note.getByTestId('research-url').textContent(), address);
  const preview = await note.getByTestId('research-preview').textContent();
  assert.match(preview, /^A lighthouse lamp is small, but the Fresnel lens/);
  assert.ok(!/tracking code|Subscribe|Copyright/.test(preview), preview);

  // The demo agent searches the research and cites the source.
  await page.getByRole('tab', { name: 'Chat' }).click();
  await page.getByTestId('chat-input').fill('Search the research for Fresnel lens beam');
  await page.getByTestId('chat-send').click();
  const answer = page.locator('.chat-log > li.assistant').filter({ hasText: 'According to' });
  await answer.waitFor({ timeout: 30_000 });
  await idle(page);
  const said = await answer.textContent();
  assert.ok(said.includes('"How a lighthouse lamp works"'), said);
  assert.ok(said.includes(`(${address})`), said);
  assert.ok(await page.locator('.chat-log .tool-card').filter({ hasText: 'search_research' }).count() >= 1);

  // A page the agent reads itself joins the same list, marked as the agent's, live.
  const gulls = `${env.url}e2e/fixtures/research/gulls.html`;
  await page.getByTestId('chat-input').fill(`research ${gulls}`);
  await page.getByTestId('chat-send').click();
  await page.locator('.chat-log > li.assistant').filter({ hasText: 'Gulls of the coast' }).waitFor({ timeout: 30_000 });
  await idle(page);
  await page.getByRole('tab', { name: 'Research' }).click();
  const agentNote = page.getByTestId('research-note').filter({ hasText: 'Gulls of the coast' });
  await agentNote.waitFor({ timeout: 10_000 });
  assert.equal(await agentNote.getAttribute('data-source'), 'agent');
  assert.match(await agentNote.getByTestId('research-source').textContent(), /^agent /);
  await page.screenshot({ path: `${ARTIFACTS}research-panel.png`, fullPage: true });

  // Delete: the note leaves the list (and the core).
  await note.getByTestId('research-delete').click();
  await note.waitFor({ state: 'detached', timeout: 10_000 });
  const left = await page.evaluate(async () => (await window.draftsmith.researchList()).notes.map((n) => n.title));
  assert.deepEqual(left, ['Gulls of the coast']);
});

test('a refused address says why and starts nothing', async () => {
  const page = await env.newPage();
  await openReady(env, page);
  await page.evaluate(() => window.draftsmith.settings.set({ researchAllowPrivate: false }));
  await page.getByRole('tab', { name: 'Research' }).click();
  await page.getByTestId('research-url').fill('http://127.0.0.1:9/secret');
  await page.getByTestId('research-start').click();
  await page.getByTestId('research-message').filter({ hasText: 'loopback' }).waitFor({ timeout: 10_000 });
  assert.equal(await page.getByTestId('research-job').count(), 0);
});

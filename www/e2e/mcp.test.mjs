// MCP tool servers from the page, against a real server written with the official SDK
// (www/e2e/mcp-server.mjs, Streamable HTTP with CORS, started here): the writer adds it in the
// Settings panel and its tools appear; an agent's call waits for the writer's approval and
// reaches the server exactly once when approved; a rejected call never reaches it (its call
// log shows it); the server going down while a run waits gives the call a clear error, the run
// finishes and the server shows as failed. The demo model decides from the tools offered (it
// picks the tool whose description speaks of style) and the results it is given.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openReady, ARTIFACTS } from './harness.mjs';
import { startMcpServer } from './mcp-server.mjs';

let env;
let server;
before(async () => {
  env = await launch();
  server = await startMcpServer();
});
after(async () => {
  await server?.stop();
  await env?.close();
});

const cards = (page) => page.getByTestId('approval-card');
const TOOL = 'mcp__house__check_house_style';

async function ask(page, prompt) {
  await idle(page);
  await page.getByTestId('chat-input').fill(prompt);
  await page.getByTestId('chat-send').click();
}

/** Wait until the chat can send again: the run has ended (or waits for a decision). */
const idle = (page) => page.getByTestId('chat-send').and(page.locator(':not([disabled])')).waitFor({ timeout: 60_000 });

/** The calls the server received of `tool`. */
const received = (tool) => server.calls().filter((c) => c.tool === tool);

test('the writer adds a tool server; an agent call waits for approval, runs once when approved, never when rejected; the server going down mid-run gives a clear error', async () => {
  const page = await env.newPage({ viewport: { width: 1280, height: 900 } });
  await openReady(env, page);

  // The writer adds the server in Settings; it connects and its tools appear.
  await page.locator('[data-tab="settings"]').click();
  await page.getByTestId('mcp-name').fill('house');
  await page.getByTestId('mcp-url').fill(server.url);
  await page.getByTestId('mcp-auth').fill('Bearer house-token-123');
  await page.getByTestId('mcp-add-submit').click();
  const entry = page.locator('.mcp-server[data-name="house"]');
  await entry.and(page.locator('[data-status="ready"]')).waitFor({ timeout: 30_000 });
  const tools = await entry.locator('.mcp-tool').evaluateAll((nodes) => nodes.map((n) => n.dataset.tool));
  assert.deepEqual(tools.sort(), ['mcp__house__check_house_style', 'mcp__house__lookup_term']);
  await entry.screenshot({ path: `${ARTIFACTS}mcp-server-ready.png` });
  // The header's value stays in the worker: the page's settings name it only.
  const settings = await page.evaluate(() => window.draftsmith.settings.get());
  assert.deepEqual(settings.mcpServers.map((s) => [s.name, s.headerNames]), [['house', ['Authorization']]]);
  assert.ok(!JSON.stringify(settings).includes('house-token-123'));

  // An agent that may use the server's tools, picked in the chat.
  await page.evaluate(() =>
    window.draftsmith.request('define_agent', {
      agent: { name: 'copyeditor', systemPrompt: 'You check passages against the house style with the tools you have.', talksToWriter: true, tools: ['mcp__house__*'] },
    }),
  );
  await page.locator('[data-tab="chat"]').click();
  await page.getByTestId('chat-agent').locator('option[value="agent:copyeditor"]').waitFor({ state: 'attached' });
  await page.getByTestId('chat-agent').selectOption('agent:copyeditor');

  // Approved: the call reaches the server once, with the header, and the model reads its answer.
  await ask(page, 'check "It is okay,  she said." against the house style');
  const card = cards(page).first();
  await card.waitFor();
  assert.equal(await card.getByTestId('approval-tool').textContent(), TOOL);
  assert.equal(await card.getByTestId('approval-entity').textContent(), 'the MCP server “house”');
  assert.match(await card.getByTestId('approval-args').textContent(), /textIt is okay, {2}she said\./);
  assert.equal(received('check_house_style').length, 0, 'nothing is sent before the writer decides');
  await card.screenshot({ path: `${ARTIFACTS}mcp-approval-card.png` });
  await card.getByTestId('approval-approve').click();
  const answer = page.locator('.chat-log .assistant').filter({ hasText: 'The style checker says:' });
  await answer.waitFor({ timeout: 30_000 });
  // The answer streams in: read it once the run has ended.
  await idle(page);
  assert.match(await answer.textContent(), /use 'OK', not 'okay'/);
  assert.match(await answer.textContent(), /no double spaces/);
  const sent = received('check_house_style');
  assert.equal(sent.length, 1, 'an approved call runs exactly once');
  assert.deepEqual(sent[0].arguments, { text: 'It is okay,  she said.' });
  assert.equal(sent[0].authorization, 'Bearer house-token-123');
  await cards(page).first().waitFor({ state: 'detached' });

  // Rejected: the card goes, the model is told, the server never hears of it.
  await ask(page, 'check "Walking towards the sea." against the house style');
  await cards(page).first().waitFor();
  await cards(page).first().getByTestId('approval-reject').click();
  await page.locator('.chat-log .assistant').filter({ hasText: 'declined' }).waitFor({ timeout: 30_000 });
  await page.locator('.tool-card[data-status="denied"]').waitFor();
  assert.equal(received('check_house_style').length, 1, 'a rejected call never reaches the server');
  assert.ok(!server.calls().some((c) => JSON.stringify(c.arguments).includes('towards')));

  // The server goes down while the run waits for approval: the approved call gets a clear
  // error, the run finishes, and the server shows as failed.
  await ask(page, 'check "An okay plan." against the house style');
  await cards(page).first().waitFor();
  await server.stop();
  await cards(page).first().getByTestId('approval-approve').click();
  const failed = page.locator('.chat-log .assistant').filter({ hasText: 'That did not work' });
  await failed.waitFor({ timeout: 60_000 });
  await idle(page);
  assert.match(await failed.textContent(), /MCP server 'house' could not run mcp__house__check_house_style/);
  await page.locator('[data-tab="settings"]').click();
  await entry.and(page.locator('[data-status="failed"]')).waitFor({ timeout: 30_000 });
  assert.ok((await entry.locator('.mcp-error').textContent()).length > 0);
  await page.screenshot({ path: `${ARTIFACTS}mcp-server-down.png` });
  server = null;
});

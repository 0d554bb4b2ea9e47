// The Tiptap example (examples/tiptap), built by Vite against the packed package installed from
// its tarball (scripts/package.sh, scripts/build-example.sh): a writer types, asks the demo
// model for a replace, undoes it with the shared history, reloads; types during an agent run
// and loses nothing; an agent's scroll and navigation scroll the editor. And the installed
// package as plain ESM from a static server: its worker and wasm are found beside the module,
// with no bundler and no workerUrl.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { launch } from './harness.mjs';
import { startServer } from '../server.mjs';

const EXAMPLE = fileURLToPath(new URL('../../examples/tiptap/', import.meta.url));
const DIST = `${EXAMPLE}dist`;
const INSTALLED = `${EXAMPLE}node_modules/draftsmith`;

let env;
let example;
before(async () => {
  if (!existsSync(`${DIST}/index.html`) || !existsSync(`${INSTALLED}/package.json`)) {
    throw new Error('examples/tiptap is not built: run scripts/package.sh and scripts/build-example.sh');
  }
  env = await launch();
  // The built example on its own static server (with the demo model and the test mocks).
  example = await startServer({ port: 0, root: DIST, mock: true });
});
after(async () => {
  await example?.close();
  await env?.close();
});

const editor = (page) => page.locator('[data-testid="editor"] .ProseMirror');
/** What the editor shows: its paragraphs as lines (hard breaks as U+2028), read from the DOM. */
const editorText = (page) =>
  page.evaluate(() =>
    [...document.querySelectorAll('[data-testid="editor"] .ProseMirror > p')]
      .map((p) => [...p.childNodes].map((n) => (n.nodeName === 'BR' ? (n.classList.contains('ProseMirror-trailingBreak') ? '' : '\u2028') : n.textContent)).join(''))
      .join('\n'),
  );
const coreText = (page) => page.evaluate(async () => (await window.draftsmith.getChapter()).text);

async function openExample(page) {
  await page.goto(example.url);
  try {
    await page.getByTestId('status').filter({ hasText: 'core ready' }).waitFor({ timeout: 30_000 });
  } catch (err) {
    throw new Error(`the example never became ready; console:\n${page.consoleLog.join('\n')}\n${err.message}`);
  }
}

/** Wait until everything typed is applied and the core agrees with the editor. */
async function settled(page) {
  await page.waitForFunction(() => window.example?.sync.synced);
  const [a, b] = [await editorText(page), await coreText(page)];
  assert.equal(a, b, 'the editor and the core agree');
  return a;
}

async function freshProject(page, text) {
  await openExample(page);
  await page.evaluate(async (t) => {
    await window.draftsmith.projects.create('Tiptap test', [{ title: 'One', text: t }]);
  }, text);
  await page.reload();
  await openExample(page);
  assert.equal(await editorText(page), text);
}

async function ask(page, prompt) {
  await page.getByTestId('chat-input').fill(prompt);
  await page.getByTestId('chat-send').click();
}

const chunk = (delta, finish = null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}`;

function toolCall(id, name, args) {
  const pieces = JSON.stringify(args).match(/.{1,6}/gs);
  return [
    chunk({ tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }] }),
    ...pieces.map((p) => chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] })),
    chunk({}, 'tool_calls'),
    'data: [DONE]',
  ];
}

test('Tiptap example from the tarball: type a paragraph, the demo model replaces, Ctrl-Z undoes it in the shared history, a reload keeps the text', async () => {
  const page = await env.newPage();
  await freshProject(page, 'Mara climbed the stair. The lamp was dark.');
  await editor(page).click();
  await page.keyboard.press('Control+End');
  await page.keyboard.press('Enter');
  await page.keyboard.type('She lit a match. Ünïcödé 🐉 stays whole.');
  assert.equal(await settled(page), 'Mara climbed the stair. The lamp was dark.\nShe lit a match. Ünïcödé 🐉 stays whole.');

  await ask(page, 'replace "The lamp was dark." with "The lamp was lit."');
  await page.getByTestId('tool-card').filter({ hasText: 'update_manuscript: success' }).waitFor();
  await page.getByTestId('chat-send').and(page.locator(':not([disabled])')).waitFor();
  assert.equal(await settled(page), 'Mara climbed the stair. The lamp was lit.\nShe lit a match. Ünïcödé 🐉 stays whole.');

  // Undo is the core's: the agent's change goes, the writer's paragraph stays.
  await editor(page).click();
  await page.keyboard.press('Control+z');
  await page.waitForFunction(() => document.querySelector('.ProseMirror').textContent.includes('The lamp was dark.'));
  const undone = await settled(page);
  assert.equal(undone, 'Mara climbed the stair. The lamp was dark.\nShe lit a match. Ünïcödé 🐉 stays whole.');
  const history = await page.evaluate(() => window.draftsmith.history());
  assert.ok(history.redo.some((e) => e.origin.startsWith('agent:')), 'the agent\u2019s change waits to be redone');

  await page.reload();
  await openExample(page);
  assert.equal(await editorText(page), undone);
  assert.deepEqual(page.consoleLog.filter((l) => l.startsWith('pageerror')), []);
  await page.context().close();
});

test('Tiptap example: typing while the agent streams loses nothing', async () => {
  const page = await env.newPage();
  await freshProject(page, 'Mara climbed the stair. The lamp was dark.');
  const name = `tt-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const base = example.url.replace(/\/$/, '');
  const queued = await fetch(`${base}/mock/${name}/responses`, {
    method: 'POST',
    body: JSON.stringify([
      { events: toolCall('c1', 'update_manuscript', { searchText: 'The lamp was dark.', replacementText: 'The lamp was lit.' }), gapMs: 150 },
      { events: [chunk({ content: 'Done.' }), chunk({}, 'stop'), 'data: [DONE]'] },
    ]),
  });
  assert.equal(queued.status, 204);
  await page.evaluate((url) => window.draftsmith.settings.set({ provider: 'openai', baseUrl: url, model: 'mock' }), `${base}/mock/${name}/v1`);
  await ask(page, 'light the lamp');
  // The writer types at the start while the call's arguments stream in.
  await page.locator('#chat-log .user').waitFor();
  await editor(page).click();
  await page.keyboard.press('Control+Home');
  await page.keyboard.type('Night fell. ');
  await page.getByTestId('chat-send').and(page.locator(':not([disabled])')).waitFor({ timeout: 20_000 });
  await page.waitForFunction(() => document.querySelector('.ProseMirror').textContent.includes('lit'));
  assert.equal(await settled(page), 'Night fell. Mara climbed the stair. The lamp was lit.');
  await page.context().close();
});

test('Tiptap example: an agent\u2019s scroll_to_position and navigate_to_text scroll the editor (the binding reads ui.reveal)', async () => {
  const page = await env.newPage({ viewport: { width: 1200, height: 700 } });
  const lines = Array.from({ length: 300 }, (_, i) => (i === 280 ? 'The keeper hid the brass key under the third stair.' : `Paragraph ${i + 1}: the sea went on.`));
  const text = lines.join('\n');
  await freshProject(page, text);
  const scrollTop = () => page.evaluate(() => document.querySelector('[data-testid="editor"]').scrollTop);
  /** Whether the paragraph holding `t` is inside the editor's visible box. */
  const inView = (t) =>
    page.evaluate((needle) => {
      const box = document.querySelector('[data-testid="editor"]').getBoundingClientRect();
      const p = [...document.querySelectorAll('.ProseMirror > p')].find((n) => n.textContent.includes(needle));
      const at = p?.getBoundingClientRect();
      return Boolean(at) && at.bottom > box.top && at.top < box.bottom;
    }, t);
  assert.equal(await scrollTop(), 0);
  const execute = (tool, args) => page.evaluate(([t, a]) => window.draftsmith.execute(t, a, { origin: 'agent:quill' }), [tool, args]);

  const end = await execute('scroll_to_position', { position: [...text].length });
  assert.equal(end.status, 'success', JSON.stringify(end));
  await page.waitForFunction(() => document.querySelector('[data-testid="editor"]').scrollTop > 2000);
  assert.ok(await inView('Paragraph 300:'), 'the last paragraph shows');
  assert.equal(await inView('Paragraph 1:'), false);

  // The writer scrolls back up; the agent finds a passage: scrolled to it and selected.
  await page.evaluate(() => (document.querySelector('[data-testid="editor"]').scrollTop = 0));
  await page.waitForFunction(() => document.querySelector('[data-testid="editor"]').scrollTop === 0);
  const found = await execute('navigate_to_text', { query: 'brass key' });
  assert.equal(found.status, 'success', JSON.stringify(found));
  await page.waitForFunction(() => document.querySelector('[data-testid="editor"]').scrollTop > 2000);
  assert.ok(await inView('brass key'));
  const selected = await page.evaluate(() => {
    const { state } = window.example.editor.view;
    return state.doc.textBetween(state.selection.from, state.selection.to);
  });
  assert.equal(selected, 'brass key');
  // Its text did not change, and no change went to the core.
  assert.equal(await settled(page), text);
  await page.context().close();
});

test('the installed package as plain ESM from a static server starts its worker and wasm beside itself', async () => {
  const server = await startServer({ port: 0, root: INSTALLED });
  try {
    const page = await env.newPage();
    await page.goto(`${server.url}package.json`);
    const hello = await page.evaluate(async (url) => {
      const { Draftsmith } = await import(`${url}draftsmith.js`);
      const client = await Draftsmith.start({ persist: false });
      const answer = await client.hello();
      client.close();
      return answer;
    }, server.url);
    assert.equal(hello.name, 'draftsmith');
    await page.context().close();
  } finally {
    await server.close();
  }
});

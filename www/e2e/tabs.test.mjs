// Never lose a word: one writer per database across tabs (Web Locks + BroadcastChannel),
// the writing tab closing mid-run, a full quota, and a core panic while typing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openReady, waitUntil } from './harness.mjs';

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

const editorText = (page) => page.evaluate(() => window.draftsmithApp.view.state.doc.toString());
const coreText = (page) => page.evaluate(async () => (await window.draftsmith.getChapter()).text);

/** Wait until the page has sent everything typed and the core agrees with the editor. */
async function settled(page) {
  await page.waitForFunction(() => window.draftsmithApp.sync?.synced, null, { timeout: 20_000 });
  await waitUntil(page, async () => window.draftsmithApp.view.state.doc.toString() === (await window.draftsmith.getChapter()).text, null, {
    timeout: 20_000,
  });
  return editorText(page);
}

/** A new tab in `context` showing the page, with its console kept for failures. */
async function tab(context) {
  const page = await context.newPage();
  page.consoleLog = [];
  page.on('console', (msg) => page.consoleLog.push(`${msg.type()}: ${msg.text()}`));
  page.on('pageerror', (err) => page.consoleLog.push(`pageerror: ${err.message}`));
  await openReady(env, page);
  return page;
}

/** Put the caret at the end of line `line` (1-based) of the editor. */
async function caretAtEndOfLine(page, line) {
  await page.locator('[data-testid="editor"] .cm-content').click();
  await page.keyboard.press('Control+Home');
  for (let i = 1; i < line; i++) await page.keyboard.press('ArrowDown');
  await page.keyboard.press('End');
}

/**
 * A fresh project that every page then shows: the first page creates it (and shows it at
 * once), the others reload and open it as the most recent project. The first page keeps
 * its worker, so it stays the tab that writes for all.
 */
async function sharedProject(pages, text) {
  const id = await pages[0].evaluate(
    async (text) => (await window.draftsmith.projects.create(`Shared ${Math.random()}`, [{ title: 'One', text }])).id,
    text,
  );
  for (const [i, page] of pages.entries()) {
    if (i > 0) {
      await page.reload();
      await openReady(env, page);
    }
    await page.waitForFunction(
      ([id, text]) => window.draftsmithApp?.project?.id === id && window.draftsmithApp.view?.state.doc.toString() === text,
      [id, text],
      { timeout: 10_000 },
    );
  }
  return id;
}

const count = (text, needle) => text.split(needle).length - 1;

test('two tabs: 50 agent appends in each at once plus typing in both; all of it survives closing both', async () => {
  const context = await env.browser.newContext();
  const a = await tab(context);
  const b = await tab(context);
  await sharedProject([a, b], 'First line.\nSecond line.\nThird line.');
  await caretAtEndOfLine(a, 1);
  await caretAtEndOfLine(b, 2);
  const appends = (page, who) =>
    page.evaluate(async (who) => {
      const calls = Array.from({ length: 50 }, (_, i) =>
        window.draftsmith.execute('append_to_manuscript', { text: `[${who}${i}]` }, { origin: `agent:${who}` }),
      );
      const results = await Promise.all(calls);
      return results.filter((r) => r.status !== 'success').map((r) => JSON.stringify(r.data));
    }, who);
  // Both sides start before either is awaited: the appends and the typing really overlap.
  const running = [appends(a, 'A'), appends(b, 'B'), a.keyboard.type(' Typed in A.', { delay: 15 }), b.keyboard.type(' Typed in B.', { delay: 15 })];
  const [failedA, failedB] = await Promise.all(running);
  assert.deepEqual(failedA, []);
  assert.deepEqual(failedB, []);
  await settled(a);
  await settled(b);
  await a.close();
  await b.close();
  const c = await tab(context);
  const text = await coreText(c);
  for (const who of ['A', 'B']) {
    for (let i = 0; i < 50; i++) assert.equal(count(text, `[${who}${i}]`), 1, `[${who}${i}] once in:\n${text}`);
  }
  assert.match(text, /^First line\. Typed in A\.\nSecond line\. Typed in B\.\nThird line\./);
  await context.close();
});

test('closing the writing tab mid-run: the other tab takes over and nothing is lost', async () => {
  const context = await env.browser.newContext();
  const a = await tab(context); // the first tab writes for all
  const b = await tab(context);
  const c = await tab(context); // only watches
  await sharedProject([a, b, c], 'Opening.');
  // B's agent appends once, then its model stalls: the run is still going when A closes.
  const name = `tabs-${Date.now()}`;
  const base = env.url.replace(/\/$/, '');
  const chunk = (delta, finish = null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}`;
  const args = JSON.stringify({ text: 'Before the close.' });
  const r = await fetch(`${base}/mock/${name}/responses`, {
    method: 'POST',
    body: JSON.stringify([
      { events: [chunk({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'append_to_manuscript', arguments: args } }] }), chunk({}, 'tool_calls'), 'data: [DONE]'] },
      { events: [chunk({ content: 'Still thinking' })], stallAfter: 1 },
    ]),
  });
  assert.equal(r.status, 204);
  await b.evaluate((url) => window.draftsmith.settings.set({ provider: 'openai', baseUrl: url, model: 'mock' }), `${base}/mock/${name}/v1`);
  await b.evaluate(() => {
    window.runEnd = window.draftsmith.run('add a line').result.then(
      () => 'finished',
      (err) => err.code,
    );
  });
  await b.waitForFunction(() => window.draftsmithApp.view.state.doc.toString().includes('Before the close.'), null, { timeout: 20_000 });
  await caretAtEndOfLine(a, 1);
  await a.keyboard.type(' Typed in A.');
  await settled(a);
  await caretAtEndOfLine(b, 1);
  await b.keyboard.type(' Typed in B.');
  await settled(b);
  await c.evaluate(() => {
    window.heard = [];
    window.draftsmith.on('edit', (e) => window.heard.push(JSON.stringify(e.changeset)));
  });
  await a.close({ runBeforeUnload: false });
  await b.getByTestId('status').filter({ hasText: 'this tab now saves' }).waitFor({ timeout: 20_000 });
  assert.equal(await b.evaluate(() => window.runEnd), 'interrupted');
  await b.keyboard.type(' After the close.');
  const seen = await settled(b);
  // The tab that only watches hears the new writer's typing as edit events (the new writer
  // counts it among the tabs it broadcasts to: found alive when it took over, or by its
  // requests; a writer alone broadcasts nothing).
  // C may catch up on the first words through its resync (its editor resyncs on
  // `writer_changed`, replaying the core's changes, which are not edit events), so the typing
  // it must hear as edits comes once it shows the same text. Each key may be its own edit:
  // C must hear every inserted character, in order.
  await c.waitForFunction((seen) => window.draftsmithApp.view.state.doc.toString() === seen, seen, { timeout: 10_000 });
  await c.evaluate(() => { window.heard = []; });
  await b.keyboard.type(' Later.');
  const later = await settled(b);
  await c.waitForFunction((later) => window.draftsmithApp.view.state.doc.toString() === later, later, { timeout: 10_000 });
  const inserted = await c.evaluate(() => window.heard.map((e) => JSON.parse(e).map((op) => op.insert || '').join('')).join(''));
  assert.equal(inserted, ' Later.', 'C heard the new writer\'s typing as edit events');
  await b.close();
  await c.close();
  const d = await tab(context);
  const text = await coreText(d);
  assert.equal(text, later);
  assert.match(text, /^Opening\. Typed in A\. Typed in B\. After the close\. Later\.\n\nBefore the close\.$/);
  await context.close();
});

test('a full quota while typing, then another tab saves, then a reload: everything typed is there', async () => {
  const context = await env.browser.newContext();
  const a = await tab(context); // writes for both tabs
  const b = await tab(context);
  await sharedProject([a, b], 'Quota.');
  await caretAtEndOfLine(a, 1);
  await a.keyboard.type(' Saved first.');
  await settled(a);
  await a.evaluate(() => {
    window.storageErrors = [];
    window.draftsmith.on('storage_error', (e) => window.storageErrors.push(e.code));
  });
  // IndexedDB refuses the next saves as if the quota were used up (Chromium cannot shrink an
  // origin's quota on demand; the failure is injected at the store, under the core).
  await a.evaluate(() => window.draftsmith.request('debug_fail_saves', { count: 1000 }));
  await a.keyboard.type(' Typed while full.');
  await settled(a);
  assert.ok((await a.evaluate(() => window.storageErrors)).includes('quota_exceeded'));
  await a.evaluate(() => window.draftsmith.request('debug_fail_saves', { count: 0 }));
  // The other tab saves a change of its own.
  await b.evaluate(() => window.draftsmith.execute('append_to_manuscript', { text: 'From B.' }));
  await settled(b);
  for (const page of [a, b]) await page.close();
  const c = await tab(context);
  assert.equal(await coreText(c), 'Quota. Saved first. Typed while full.\n\nFrom B.');
  await context.close();
});

for (const offline of [false, true]) {
  test(`a core panic while typing (${offline ? 'offline' : 'online'}): the page recovers, keeps saving, loses nothing`, async () => {
    const context = await env.browser.newContext();
    const page = await tab(context);
    await sharedProject([page], 'Panic.');
    if (offline) {
      // Served by the service worker from here on.
      await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
      await page.reload();
      await openReady(env, page);
      await context.setOffline(true);
    }
    await caretAtEndOfLine(page, 1);
    const typing = page.keyboard.type(' One two three four five six seven eight nine ten.', { delay: 20 });
    await page.waitForTimeout(300);
    await page.evaluate(() => window.draftsmith.request('debug_panic', { message: 'deliberate test panic' }).catch(() => 'failed'));
    await typing;
    await page.getByTestId('status').filter({ hasText: 'restarted' }).waitFor({ timeout: 20_000 });
    await page.keyboard.type(' After.');
    const seen = await settled(page);
    assert.equal(seen, 'Panic. One two three four five six seven eight nine ten. After.');
    assert.equal(await page.getByTestId('conflict').isHidden(), true, 'no conflict copy was needed');
    await page.reload();
    await openReady(env, page);
    assert.equal(await coreText(page), seen);
    await context.setOffline(false);
    await context.close();
  });
}

test('the tab that takes over keeps the key held in memory only, and a closed tab’s client is dropped', async () => {
  const context = await env.browser.newContext();
  const a = await tab(context); // writes for all
  const b = await tab(context);
  const c = await tab(context);
  await sharedProject([a, b, c], 'Opening.');
  const name = `key-${Date.now()}`;
  const base = env.url.replace(/\/$/, '');
  const r = await fetch(`${base}/mock/${name}/responses`, {
    method: 'POST',
    body: JSON.stringify([{ events: [`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'Done.' }, finish_reason: 'stop' }] })}`, 'data: [DONE]'] }]),
  });
  assert.equal(r.status, 204);
  // The key is set in A, in memory only (not remembered).
  await a.evaluate(
    (url) => window.draftsmith.settings.set({ provider: 'openai', baseUrl: url, model: 'mock', apiKey: 'sk-in-memory-7' }),
    `${base}/mock/${name}/v1`,
  );
  const writing = await a.evaluate(() => window.draftsmith.workerStatus());
  assert.equal(writing.role, 'writer');
  assert.equal(writing.soleWriter, true, 'it holds the writer lock');
  assert.equal((await b.evaluate(() => window.draftsmith.workerStatus())).soleWriter, false);
  await waitUntil(a, async () => (await window.draftsmith.workerStatus()).clients === 2, null, { timeout: 10_000 });
  // C closes: A drops its client.
  await c.close({ runBeforeUnload: false });
  await waitUntil(a, async () => (await window.draftsmith.workerStatus()).clients === 1, null, { timeout: 10_000 });
  // A closes: B writes now, and still has the key.
  await a.close({ runBeforeUnload: false });
  await waitUntil(b, async () => (await window.draftsmith.workerStatus()).role === 'writer', null, { timeout: 20_000 });
  assert.equal((await b.evaluate(() => window.draftsmith.workerStatus())).soleWriter, true);
  const settings = await b.evaluate(() => window.draftsmith.settings.get());
  assert.equal(settings.hasKey, true);
  assert.equal(settings.rememberKey, false);
  const end = await b.evaluate(async () => {
    const run = window.draftsmith.run('say done');
    return run.result.then(() => 'finished', (err) => err.code);
  });
  assert.equal(end, 'finished');
  const requests = await (await fetch(`${base}/mock/${name}/requests`)).json();
  assert.equal(requests.length, 1);
  assert.equal(requests[0].headers.authorization, 'Bearer sk-in-memory-7');
  await context.close();
});

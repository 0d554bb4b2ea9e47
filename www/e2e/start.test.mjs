// The page takes typing before the core is ready: the chapter the writer had open is shown at
// once (kept in localStorage when the page was hidden), and what is typed while the wasm loads
// reaches the core and survives a reload, rebased over what changed since it was kept.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openReady, waitUntil } from './harness.mjs';

const KEY = 'draftsmith.kept-chapter';

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

/**
 * Hold the wasm's response until `release()`: the worker cannot become ready before then, so
 * whatever the test does meanwhile happens before `ready` for certain.
 */
async function holdWasm(page) {
  let release;
  const released = new Promise((resolve) => (release = resolve));
  let asked = false;
  await page.context().route(/draftsmith_bg\.wasm/, async (route) => {
    asked = true;
    await released;
    await route.continue();
  });
  return {
    release,
    asked: () => asked,
    async done() {
      await page.context().unroute(/draftsmith_bg\.wasm/);
    },
  };
}

/** Reload with the wasm held; resolves once the kept chapter shows, the core still starting. */
async function reloadHeld(page) {
  const held = await holdWasm(page);
  await page.reload();
  await page.locator('.cm-content').waitFor();
  assert.equal(await page.evaluate(() => document.body.dataset.core), 'starting');
  return held;
}

/** The next start of the page finds `kept` (JSON text) kept, whatever the page kept on leaving. */
async function keepOnNextStart(page, kept) {
  await page.addInitScript(
    ([key, kept]) => {
      if (sessionStorage.getItem('kept-once')) return;
      sessionStorage.setItem('kept-once', '1');
      localStorage.setItem(key, kept);
    },
    [KEY, kept],
  );
}

/** The core's text of the page's open chapter. */
async function coreText(page) {
  return page.evaluate(async () => (await window.draftsmith.getChapter(window.draftsmithApp.chapter)).text);
}

/** The editor's text. */
async function shown(page) {
  return page.evaluate(() => window.draftsmithApp.view.state.doc.toString());
}

async function typeAtEnd(page, text) {
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(text);
}

test('typing while the core starts reaches the core and survives a reload', async () => {
  const page = await env.newPage();
  await openReady(env, page);
  const before = await coreText(page);

  const held = await reloadHeld(page);
  assert.equal(await shown(page), before);
  await typeAtEnd(page, ' Typed before ready.');
  // Still starting: the wasm was never sent.
  assert.equal(await page.evaluate(() => document.body.dataset.core), 'starting');
  held.release();
  await page.getByTestId('status').filter({ hasText: 'core ready' }).waitFor({ timeout: 30_000 });
  assert.ok(held.asked());
  await held.done();
  await waitUntil(page, async () => window.draftsmithApp.sync.synced);
  assert.equal(await coreText(page), `${before} Typed before ready.`);
  assert.equal(await shown(page), `${before} Typed before ready.`);

  // A new worker reads it from IndexedDB.
  await page.evaluate(() => localStorage.removeItem('draftsmith.kept-chapter'));
  await page.reload();
  await openReady(env, page);
  assert.equal(await coreText(page), `${before} Typed before ready.`);
});

test('typing on a kept chapter that changed since is rebased over the change', async () => {
  const page = await env.newPage();
  await openReady(env, page);
  // The chapter as the page keeps it on leaving...
  await page.evaluate(() => window.dispatchEvent(new Event('pagehide')));
  const kept = await page.evaluate((key) => localStorage.getItem(key), KEY);
  assert.ok(kept, 'the open chapter is kept when the page is hidden');
  const first = JSON.parse(kept).text.split(' ')[0];
  // ...then changed by an agent (as another device's change would arrive) before the next start.
  const changed = await page.evaluate(async (first) => {
    const c = window.draftsmith;
    const chapter = window.draftsmithApp.chapter;
    await c.execute('update_manuscript', { chapter, searchText: first, replacementText: 'AGENT' }, { origin: 'agent:ed' });
    return (await c.getChapter(chapter)).text;
  }, first);
  assert.ok(changed.startsWith('AGENT'));

  await keepOnNextStart(page, kept);
  const held = await reloadHeld(page);
  assert.ok((await shown(page)).startsWith(first));
  await typeAtEnd(page, ' Mine.');
  held.release();
  await page.getByTestId('status').filter({ hasText: 'core ready' }).waitFor({ timeout: 30_000 });
  await held.done();
  await waitUntil(page, async () => window.draftsmithApp.sync.synced);
  const expected = `${changed} Mine.`;
  assert.equal(await coreText(page), expected);
  assert.equal(await shown(page), expected);
  assert.equal(await page.getByTestId('conflict').isHidden(), true);
});

test('typing on a kept chapter whose project is gone is kept as a copy', async () => {
  const page = await env.newPage();
  await openReady(env, page);
  await keepOnNextStart(page, JSON.stringify({ project: 'no-such-project', chapter: 'gone', title: 'Lost', version: 3, text: 'Kept words.' }));
  const held = await reloadHeld(page);
  assert.equal(await shown(page), 'Kept words.');
  await typeAtEnd(page, ' And more.');
  held.release();
  await page.getByTestId('status').filter({ hasText: 'core ready' }).waitFor({ timeout: 30_000 });
  await held.done();
  await page.getByTestId('conflict').waitFor();
  const path = await page.getByTestId('conflict').getAttribute('data-path');
  const copy = await page.evaluate(async (path) => (await window.draftsmith.execute('read_file', { path })).data, path);
  assert.match(JSON.stringify(copy), /Kept words\. And more\./);
});

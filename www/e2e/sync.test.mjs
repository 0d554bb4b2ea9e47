// Sync between devices through a real Hocuspocus (scripts/sync-server.mjs, started here): two
// browser contexts are two devices of one project. Typing and agents' appends at once on both
// converge with everything once; a device cut off the network keeps its edits and merges them
// when it comes back, and each device's undo takes back only its own changes; undoing A's agent
// keeps B's text; a refused token is `unauthorized` and leaves local work alone; two servers
// sharing through Redis serve one device each; a co-author joins through the page's form; and a
// story-bible field written on both devices ends alike, the other value kept as a revision.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openReady, waitUntil, ARTIFACTS } from './harness.mjs';
import { startRedis, startSyncServer, token } from './sync-harness.mjs';

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const projectOf = (page) => page.evaluate(() => window.draftsmithApp.project.id);
const chapterOf = (page) => page.evaluate(() => window.draftsmithApp.chapter);
const status = (page) => page.evaluate(() => window.draftsmith.sync.status());
const editor = (page) => page.locator('[data-testid="editor"] .cm-content');

/** A device: a fresh browser context with the demo page ready. */
async function device() {
  const page = await env.newPage();
  await openReady(env, page);
  return page;
}

async function waitStatus(page, wanted, timeout = 20_000) {
  await waitUntil(page, async (s) => (await window.draftsmith.sync.status()).status === s, wanted, { timeout });
}

/** Device A shares its project as Ann; returns the project id and a token for it. */
async function share(a, url) {
  const project = await projectOf(a);
  const tok = await token([project]);
  await a.evaluate(({ url, tok }) => window.draftsmith.sync.connect({ url, token: tok, name: 'Ann' }), { url, tok });
  await waitStatus(a, 'connected');
  return { project, tok };
}

/** Device B joins project `project` as Ben, and shows chapter `chapter` of it. */
async function join(b, url, tok, project, chapter) {
  await b.evaluate(({ url, tok, project }) => window.draftsmith.sync.connect({ url, token: tok, project, name: 'Ben' }), { url, tok, project });
  await b.waitForFunction((id) => window.draftsmithApp.project?.id === id, project);
  await waitStatus(b, 'connected');
  await b.evaluate((chapter) => window.draftsmith.execute('jump_to_chapter', { chapter }), chapter);
  await b.waitForFunction((ch) => window.draftsmithApp.chapter === ch && window.draftsmithApp.sync?.synced, chapter);
}

/** Two devices on one shared project (A's demo project), both showing A's chapter. */
async function twoDevices(urlA, urlB = urlA) {
  const [a, b] = [await device(), await device()];
  const { project, tok } = await share(a, urlA);
  const chapter = await chapterOf(a);
  await join(b, urlB, tok, project, chapter);
  return { a, b, project, tok, chapter };
}

/** What a device shows and holds of `chapter`, and how its link stands. */
const look = (page, chapter) =>
  page.evaluate(async (chapter) => {
    const app = window.draftsmithApp;
    const s = await window.draftsmith.sync.status();
    return {
      editor: app.chapter === chapter ? app.view.state.doc.toString() : null,
      synced: !!app.sync?.synced,
      core: (await window.draftsmith.getChapter(chapter)).text,
      status: s.status,
      unsent: s.unsent,
    };
  }, chapter);

/**
 * Wait until every device is connected with nothing unsent, its editor shows what its core
 * holds, and all hold the same text; returns it.
 */
async function converged(pages, chapter, timeout = 45_000) {
  const end = Date.now() + timeout;
  for (;;) {
    const looks = await Promise.all(pages.map((p) => look(p, chapter)));
    const same = looks.every((l) => l.status === 'connected' && l.unsent === 0 && l.synced && l.editor === l.core && l.core === looks[0].core);
    if (same) {
      // Quiet for a moment: nothing more arrives.
      await sleep(500);
      const again = await Promise.all(pages.map((p) => look(p, chapter)));
      if (again.every((l) => l.core === looks[0].core && l.editor === l.core)) return looks[0].core;
    }
    if (Date.now() > end) assert.fail(`the devices did not converge:\n${JSON.stringify(looks, null, 1)}`);
    await sleep(300);
  }
}

/** Run `body` with a sync server of its own, stopped after. */
async function withServer(body) {
  const server = await startSyncServer();
  try {
    return await body(server);
  } finally {
    await server.kill();
  }
}

const count = (text, piece) => text.split(piece).length - 1;

/** Start `n` agent appends on a device without awaiting them; `appendsDone` awaits them. */
async function startAppends(page, chapter, prefix, n) {
  await page.evaluate(
    ({ chapter, prefix, n }) => {
      window.appends = Promise.all(
        Array.from({ length: n }, (_, i) =>
          window.draftsmith.execute('append_to_manuscript', { chapter, text: `${prefix}${i}]` }, { origin: 'agent:helper' }),
        ),
      );
    },
    { chapter, prefix, n },
  );
}
const appendsDone = (page) => page.evaluate(async () => (await window.appends).map((r) => r.status));

/** Type `text` in the editor at the start of the chapter, or at the end of its first line. */
async function typeAt(page, where, text) {
  await editor(page).click();
  await page.keyboard.press('Control+Home');
  if (where === 'first-line-end') await page.keyboard.press('End');
  await page.keyboard.type(text);
}

test('typing and 50 agent appends on each of two devices at once converge with everything once', () =>
  withServer(async (server) => {
    const { a, b, chapter } = await twoDevices(server.url);
    for (const page of [a, b]) await page.evaluate(() => window.draftsmith.on('edit', (e) => (window.origins ??= new Set()).add(e.origin)));
    // Every append is asked for before any is awaited, and both writers type meanwhile.
    await Promise.all([startAppends(a, chapter, '[A-agent-', 50), startAppends(b, chapter, '[B-agent-', 50)]);
    const typedA = '{Ann typed this at the start}';
    const typedB = '{Ben typed this after the first line}';
    await Promise.all([typeAt(a, 'start', typedA), typeAt(b, 'first-line-end', typedB)]);
    const [ra, rb] = await Promise.all([appendsDone(a), appendsDone(b)]);
    assert.deepEqual([...new Set([...ra, ...rb])], ['success']);
    const text = await converged([a, b], chapter);
    assert.equal(count(text, typedA), 1, text);
    assert.equal(count(text, typedB), 1, text);
    for (let i = 0; i < 50; i++) {
      assert.equal(count(text, `[A-agent-${i}]`), 1, `[A-agent-${i}]`);
      assert.equal(count(text, `[B-agent-${i}]`), 1, `[B-agent-${i}]`);
    }
    // Each saw the other's edits as a co-author's, and sees the other connected.
    const origins = (page) => page.evaluate(() => [...window.origins]);
    assert.ok((await origins(a)).includes('remote:Ben'), String(await origins(a)));
    assert.ok((await origins(b)).includes('remote:Ann'), String(await origins(b)));
    assert.deepEqual((await status(a)).peers.map((p) => p.name), ['Ben']);
    assert.deepEqual((await status(b)).peers.map((p) => p.name), ['Ann']);
  }));

test('a device offline keeps its edits, merges them on return, and each undo takes back only its own', () =>
  withServer(async (server) => {
    const { a, b, chapter } = await twoDevices(server.url);
    await a.context().setOffline(true);
    await waitStatus(a, 'offline');
    assert.equal((await status(a)).reason, 'this device is offline');
    assert.match(await a.getByTestId('sync-status').textContent(), /offline/);
    await typeAt(a, 'start', '{Ann offline}');
    await a.evaluate((chapter) => window.draftsmith.execute('append_to_manuscript', { chapter, text: '[Ann agent offline]' }, { origin: 'agent:helper' }), chapter);
    await typeAt(b, 'first-line-end', '{Ben online}');
    // Each keeps writing on its own for a while: nothing crosses.
    await waitUntil(a, async () => (await window.draftsmith.sync.status()).unsent > 0, null, { timeout: 10_000 });
    await sleep(3_000);
    const [lookA, lookB] = [await look(a, chapter), await look(b, chapter)];
    assert.equal(lookA.status, 'offline');
    assert.ok(!lookA.core.includes('{Ben online}'), 'A is really cut off');
    assert.ok(!lookB.core.includes('{Ann offline}') && !lookB.core.includes('[Ann agent offline]'), 'B did not get A’s offline edits');
    assert.match(await a.getByTestId('sync-status').textContent(), /offline, [1-9]\d* unsent/);
    await a.context().setOffline(false);
    let text = await converged([a, b], chapter);
    for (const piece of ['{Ann offline}', '[Ann agent offline]', '{Ben online}']) assert.equal(count(text, piece), 1, `${piece} in ${text}`);
    // A's undo of its typing keeps B's; B's undo takes back B's typing and none of A's.
    await a.evaluate(() => window.draftsmith.undo({ origin: 'user' }));
    await b.getByTestId('undo').click();
    text = await converged([a, b], chapter);
    assert.ok(!text.includes('{Ann offline}') && !text.includes('{Ben online}'), text);
    assert.equal(count(text, '[Ann agent offline]'), 1, text);
    // B has nothing more of its own to undo: A's edits stay.
    await b.evaluate(() => window.draftsmith.undo().catch(() => null));
    assert.equal(await converged([a, b], chapter), text);
  }));

test("undo {origin: 'agent'} on A takes back A's agent edit and keeps B's text that came after", () =>
  withServer(async (server) => {
    const { a, b, chapter } = await twoDevices(server.url);
    await a.evaluate((chapter) => window.draftsmith.execute('append_to_manuscript', { chapter, text: "[Ann's agent wrote this]" }, { origin: 'agent:helper' }), chapter);
    await b.waitForFunction(() => window.draftsmithApp.view.state.doc.toString().includes("[Ann's agent wrote this]"));
    // B writes right after the agent's text.
    await editor(b).click();
    await b.keyboard.press('Control+End');
    await b.keyboard.type(' {Ben after the agent}');
    let text = await converged([a, b], chapter);
    assert.ok(text.endsWith("[Ann's agent wrote this] {Ben after the agent}"), text);
    await a.evaluate(() => window.draftsmith.undo({ origin: 'agent' }));
    text = await converged([a, b], chapter);
    assert.ok(!text.includes("[Ann's agent wrote this]"), text);
    assert.equal(count(text, ' {Ben after the agent}'), 1, text);
  }));

test('a bad or missing token: unauthorized in the client and the page, local work untouched', () =>
  withServer(async (server) => {
    const a = await device();
    const chapter = await chapterOf(a);
    await typeAt(a, 'start', '{local work}');
    await a.waitForFunction(() => window.draftsmithApp.sync?.synced);
    const before = (await look(a, chapter)).core;
    const project = await projectOf(a);
    // A token for another project.
    const other = await token(['p-someone-else']);
    const refused = await a.evaluate(({ url, other }) => window.draftsmith.sync.connect({ url, token: other }), { url: server.url, other });
    assert.equal(refused.project, project);
    await waitStatus(a, 'unauthorized');
    assert.equal((await status(a)).reason, 'project not in token');
    await a.getByTestId('sync-status').filter({ hasText: 'unauthorized (project not in token)' }).waitFor();
    // Not a token at all.
    await a.evaluate(({ url }) => window.draftsmith.sync.connect({ url, token: 'not-a-token' }), { url: server.url });
    await waitUntil(a, async () => (await window.draftsmith.sync.status()).reason === 'invalid token', null);
    assert.equal((await status(a)).status, 'unauthorized');
    // No token: refused before anything is sent, and nothing changes.
    const missing = await a.evaluate(({ url }) => window.draftsmith.sync.connect({ url, token: '' }).then(() => 'accepted', (e) => e.code), { url: server.url });
    assert.equal(missing, 'invalid_params');
    assert.equal((await look(a, chapter)).core, before);
    assert.equal((await look(a, chapter)).editor, before);
    // Still writing here.
    await typeAt(a, 'start', '{more}');
    await a.waitForFunction(() => window.draftsmithApp.sync?.synced);
    assert.equal((await look(a, chapter)).core, `{more}${before}`);
    // Joining with a refused token fails and leaves the open project as it was.
    const joined = await a.evaluate(({ url, other, project }) => window.draftsmith.sync.connect({ url, token: other, project: 'p-not-mine' }).then(() => 'joined', (e) => e.code), { url: server.url, other, project });
    assert.equal(joined, 'no_project');
    assert.equal(await projectOf(a), project);
  }));

test('two Hocuspocus instances sharing through Redis, one device on each, converge', async () => {
  const redis = await startRedis();
  const [s1, s2] = [await startSyncServer({ redisUrl: redis.url }), await startSyncServer({ redisUrl: redis.url })];
  try {
    const { a, b, chapter } = await twoDevices(s1.url, s2.url);
    assert.equal((await look(b, chapter)).core, (await look(a, chapter)).core, 'B fetched A’s text through the other instance');
    await Promise.all([startAppends(a, chapter, '[A-redis-', 10), startAppends(b, chapter, '[B-redis-', 10)]);
    await Promise.all([typeAt(a, 'start', '{Ann on one}'), typeAt(b, 'first-line-end', '{Ben on two}')]);
    await Promise.all([appendsDone(a), appendsDone(b)]);
    const text = await converged([a, b], chapter);
    for (const piece of ['{Ann on one}', '{Ben on two}']) assert.equal(count(text, piece), 1, text);
    for (let i = 0; i < 10; i++) {
      assert.equal(count(text, `[A-redis-${i}]`), 1);
      assert.equal(count(text, `[B-redis-${i}]`), 1);
    }
  } finally {
    await s1.kill();
    await s2.kill();
    await redis.stop();
  }
});

test('Share and Join in the page: B joins through the form, sees A’s text, its cursor and stays shared after a reload', () =>
  withServer(async (server) => {
    const [a, b] = [await device(), await device()];
    const project = await projectOf(a);
    const tok = await token([project]);
    await a.getByTestId('share').click();
    assert.equal(await a.getByTestId('share-url').inputValue(), 'ws://127.0.0.1:1234');
    assert.equal(await a.getByTestId('share-project-id').inputValue(), project);
    // Bad input: a clear message, nothing shared.
    await a.getByTestId('share-url').fill('http://127.0.0.1:1234');
    await a.getByTestId('share-token').fill(tok);
    await a.getByTestId('share-submit').click();
    await a.getByTestId('share-message').filter({ hasText: 'must start with ws://' }).waitFor();
    assert.equal((await status(a)).status, 'disconnected');
    await a.getByTestId('share-url').fill(server.url);
    await a.getByTestId('share-token').fill('');
    await a.getByTestId('share-submit').click();
    await a.getByTestId('share-message').filter({ hasText: 'A token is needed' }).waitFor();
    assert.equal((await status(a)).status, 'disconnected');
    await a.getByTestId('share-token').fill(tok);
    await a.getByTestId('share-name').fill('Ann');
    await a.getByTestId('share-submit').click();
    await a.getByTestId('sync-status').filter({ hasText: 'sync: connected' }).waitFor();
    await a.getByTestId('share-close').click();
    const textA = await a.evaluate(() => window.draftsmithApp.view.state.doc.toString());

    await b.getByTestId('share').click();
    await b.getByTestId('share-name').fill('Ben');
    await b.getByTestId('join-url').fill(server.url);
    await b.getByTestId('join-token').fill(tok);
    await b.getByTestId('join-submit').click();
    await b.getByTestId('join-message').filter({ hasText: 'project id is needed' }).waitFor();
    await b.getByTestId('join-project').fill(project);
    await b.getByTestId('join-submit').click();
    await b.getByTestId('share-dialog').waitFor({ state: 'hidden' });
    assert.equal(await projectOf(b), project);
    await b.getByTestId('sync-status').filter({ hasText: 'sync: connected' }).waitFor();
    assert.equal(await b.evaluate(() => window.draftsmithApp.view.state.doc.toString()), textA);
    // Who is connected, and where A's cursor is.
    await b.getByTestId('sync-peer').filter({ hasText: 'Ann' }).waitFor();
    await a.getByTestId('sync-peer').filter({ hasText: 'Ben' }).waitFor();
    await b.locator('[data-testid="editor"] [data-testid="peer-cursor"][data-name="Ann"]').waitFor();
    await b.screenshot({ path: `${ARTIFACTS}sync-joined-1280x720.png` });
    // A reload keeps the project shared.
    await b.reload();
    await b.getByTestId('status').filter({ hasText: 'core ready' }).waitFor({ timeout: 30_000 });
    assert.equal(await projectOf(b), project);
    await b.getByTestId('sync-status').filter({ hasText: 'sync: connected' }).waitFor({ timeout: 20_000 });
    await typeAt(b, 'start', '{Ben after reload}');
    await a.waitForFunction(() => window.draftsmithApp.view.state.doc.toString().startsWith('{Ben after reload}'), null, { timeout: 20_000 });
  }));

/** A character's field as a device's story bible has it. */
const field = (page, id, name) =>
  page.evaluate(async ({ id, name }) => (await window.draftsmith.bible.list('character')).kinds.character.find((c) => c.id === id)?.[name] ?? null, { id, name });

test('a bible field written by the writer on A and an agent on B ends alike on both, the other value restorable', () =>
  withServer(async (server) => {
    const { a, b } = await twoDevices(server.url);
    // A new character, named by the writer on A (an agent may fill what the writer left empty).
    const { id } = await a.evaluate(() => window.draftsmith.bible.save('character', { name_src: 'Mara Lind' }));
    await waitUntil(b, async (id) => (await window.draftsmith.bible.list('character')).kinds.character.some((c) => c.id === id), id, { timeout: 20_000 });
    // A is cut off; the writer there and an agent on B write the same field.
    await a.context().setOffline(true);
    await waitStatus(a, 'offline');
    await a.evaluate((id) => window.draftsmith.bible.save('character', { pronouns: 'they/them' }, { id }), id);
    const agent = await b.evaluate(
      (id) => window.draftsmith.execute('character_update_pronouns', { character: id, pronouns: 'xe/xem' }, { origin: 'agent:lore' }),
      id,
    );
    assert.equal(agent.status, 'success', JSON.stringify(agent));
    await a.context().setOffline(false);
    await waitStatus(a, 'connected');
    // Both devices end with the same value and the same origin.
    let value = null;
    const end = Date.now() + 20_000;
    for (;;) {
      const [va, vb, oa, ob] = [await field(a, id, 'pronouns'), await field(b, id, 'pronouns'), await field(a, id, 'pronouns_origin'), await field(b, id, 'pronouns_origin')];
      if (va === vb && oa === ob && va !== null) {
        value = va;
        break;
      }
      if (Date.now() > end) assert.fail(`the field did not converge: A ${va} (${oa}), B ${vb} (${ob})`);
      await sleep(300);
    }
    assert.ok(['they/them', 'xe/xem'].includes(value), value);
    // The other value is a revision on both devices, the writer's with origin `human`.
    for (const page of [a, b]) {
      const { revisions } = await page.evaluate((id) => window.draftsmith.bible.revisions('character', id, { field: 'pronouns' }), id);
      const values = revisions.map((r) => r.value);
      assert.ok(values.includes('they/them') && values.includes('xe/xem'), JSON.stringify(revisions));
      assert.equal(revisions.find((r) => r.value === 'they/them').origin, 'human');
      assert.equal(revisions.filter((r) => r.current).length, 1);
    }
    // The writer restores the value that lost; both devices have it.
    const lost = value === 'they/them' ? 'xe/xem' : 'they/them';
    await a.evaluate(({ id, lost }) => window.draftsmith.bible.save('character', { pronouns: lost }, { id }), { id, lost });
    await waitUntil(b, async ({ id, lost }) => (await window.draftsmith.bible.list('character')).kinds.character.find((c) => c.id === id)?.pronouns === lost, { id, lost }, { timeout: 20_000 });
  }));

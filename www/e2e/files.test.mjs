// The Files view: the agents' data/ tree in the side panel. The writer creates and edits a
// plan there (saved through write_file as origin user, kept across a reload); an agent's write
// shows up live; chapters are listed as manuscripts/NN-<slug>.md and are read-only here.
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

test('the Files view lists data/, the writer edits a plan, an agent write appears, and a reload keeps it', async () => {
  const page = await env.newPage({ viewport: { width: 1280, height: 800 } });
  await openReady(env, page);
  await page.evaluate(async () => {
    await window.draftsmith.createProject('Files', [
      { title: 'The Stair', text: 'Mara climbed the stair.\nThe lamp was dark.' },
      { title: 'Below', text: 'A door banged twice.' },
    ]);
  });
  await page.reload();
  await openReady(env, page);
  await page.locator('[data-tab="files"]').click();
  const tree = page.getByTestId('files-tree');
  await tree.getByText('01-the-stair.md').waitFor();
  await tree.getByText('02-below.md').waitFor();
  for (const dir of ['manuscripts/', 'bible/', 'plans/', 'notes/']) await tree.getByText(dir, { exact: true }).waitFor();

  // A chapter opens read-only, with its text.
  await tree.getByText('01-the-stair.md').click();
  await page.getByTestId('file-path').filter({ hasText: 'manuscripts/01-the-stair.md' }).waitFor();
  assert.equal(await page.getByTestId('file-content').inputValue(), 'Mara climbed the stair.\nThe lamp was dark.');
  assert.equal(await page.getByTestId('file-content').evaluate((n) => n.readOnly), true);
  assert.equal(await page.getByTestId('file-save').isHidden(), true);

  // The writer creates a plan and writes it.
  await page.getByTestId('files-new-path').fill('plans/outline.md');
  await page.getByTestId('files-new').click();
  await page.getByTestId('file-path').filter({ hasText: 'plans/outline.md' }).waitFor();
  await page.getByTestId('file-content').fill('# Outline\n1. The stair\n2. The door');
  await page.getByTestId('file-save').click();
  await page.getByTestId('files-message').filter({ hasText: 'Saved plans/outline.md' }).waitFor();
  const saved = await page.evaluate(() => window.draftsmith.execute('read_file', { path: 'plans/outline.md' }));
  assert.equal(saved.status, 'success', JSON.stringify(saved));
  assert.equal(saved.data.content, '# Outline\n1. The stair\n2. The door');
  assert.equal(saved.data.origin, 'human', JSON.stringify(saved.data));

  // An agent writes a note: it appears in the tree without a reload.
  const agent = await page.evaluate(() =>
    window.draftsmith.execute('write_file', { path: 'notes/todo.md', content: 'Check the lamp.' }, { origin: 'agent:architect' }),
  );
  assert.equal(agent.status, 'success', JSON.stringify(agent));
  await tree.getByText('todo.md').waitFor();
  await page.screenshot({ path: `${ARTIFACTS}files-view-1280x800.png` });

  // A reload (a new worker) keeps both files.
  await page.reload();
  await openReady(env, page);
  await page.locator('[data-tab="files"]').click();
  await tree.getByText('outline.md').click();
  await page.getByTestId('file-path').filter({ hasText: 'plans/outline.md' }).waitFor();
  await page.waitForFunction(() => document.querySelector('[data-testid="file-content"]').value.startsWith('# Outline'));
  assert.equal(await page.getByTestId('file-content').inputValue(), '# Outline\n1. The stair\n2. The door');
  await tree.getByText('todo.md').click();
  await page.getByTestId('file-origin').filter({ hasText: 'agent:architect' }).waitFor();
  assert.deepEqual(page.consoleLog.filter((l) => l.startsWith('pageerror')), []);
});

test('a hostile path from the page is refused with security and changes nothing', async () => {
  const page = await env.newPage();
  await openReady(env, page);
  const result = await page.evaluate(async () => {
    const c = window.draftsmith;
    await c.createProject('Sandbox', [{ title: 'One', text: 'Safe.' }]);
    const attempts = [];
    for (const path of ['../../etc/passwd', '/etc/passwd', 'plans/%2e%2e/x.md', 'plans\\..\\x.md', 'plans/\u2024\u2024/x.md']) {
      attempts.push(await c.execute('write_file', { path, content: 'pwned' }, { origin: 'agent:x' }));
    }
    return { codes: attempts.map((r) => r.data?.code), text: (await c.getChapter()).text, listing: await c.execute('list_files', { directory: 'plans' }) };
  });
  assert.deepEqual(result.codes, ['security', 'security', 'security', 'security', 'security']);
  assert.equal(result.text, 'Safe.');
  assert.ok(!JSON.stringify(result.listing).includes('pwned'));
});

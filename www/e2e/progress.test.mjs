// Long work reports progress, and the page shows it while the work goes on: the Analysis
// panel names the section under way, the status bar the part of the project being read.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openReady } from './harness.mjs';

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

/** A project of 40 chapters (100,000 words) that the page then shows. */
async function longProject(page) {
  const id = await page.evaluate(async () => {
    const words = 'the keeper climbed the stair and Mara saw that the lamp in Greyhaven was dark'.split(' ');
    const chapters = Array.from({ length: 40 }, (_, i) => ({
      title: `Chapter ${i + 1}`,
      text: Array.from({ length: 2_500 }, (_, j) => words[(i + j) % words.length]).join(' ') + '.',
    }));
    return (await window.draftsmith.projects.create('Long', chapters)).id;
  });
  await page.waitForFunction((id) => window.draftsmithApp?.project?.id === id && window.draftsmithApp.sync, id);
  return id;
}

/** What the worker posts from now on: each message's parts (`response`, or the event's type). */
async function recordMessages(page) {
  await page.evaluate(() => {
    window.posted = [];
    window.draftsmith._worker.addEventListener('message', (e) => {
      const read = (m) => (typeof m === 'string' ? JSON.parse(m) : m); // a message may be its JSON text
      const data = read(e.data);
      const parts = data.kind === 'batch' ? data.messages : [data];
      window.posted.push(parts.map(read).map((m) => (m.kind === 'event' && m.type === 'progress' ? `progress ${m.data.task} ${m.data.done}/${m.data.total}` : m.kind === 'event' ? m.type : m.kind)));
    });
  });
}

test('the Analysis panel names each section while the analysis runs', async () => {
  const page = await env.newPage();
  await openReady(env, page);
  await longProject(page);
  await page.locator('[data-tab="analysis"]').click();
  await recordMessages(page);
  await page.evaluate(() => {
    const node = document.querySelector('[data-testid="analysis-message"]');
    window.panel = [];
    new MutationObserver(() => window.panel.push(node.textContent)).observe(node, { childList: true, characterData: true, subtree: true });
  });
  await page.getByTestId('analysis-interpret').setChecked(false);
  await page.getByTestId('analysis-run').click();
  await page.getByTestId('analysis-pacing').waitFor();
  await page.waitForFunction(() => !document.querySelector('[data-testid="analysis-run"]').disabled);

  const panel = await page.evaluate(() => window.panel);
  for (const [i, section] of ['pacing', 'characters', 'plot', 'setting'].entries()) {
    assert.ok(panel.includes(`Analyzing… ${section} (${i + 1} of 4)`), `${section}: ${JSON.stringify(panel)}`);
  }
  assert.equal(panel.at(-1), '');

  // Each step was posted on its own, before the call's answer: not held for it.
  const posted = await page.evaluate(() => window.posted);
  for (let done = 0; done < 4; done++) {
    const message = posted.find((parts) => parts.includes(`progress run_analysis ${done}/4`));
    assert.ok(message, `step ${done}: ${JSON.stringify(posted)}`);
    assert.ok(!message.includes('response'), `step ${done} came with an answer: ${JSON.stringify(posted)}`);
  }
});

test('the status bar names each part of a project as a new worker reads it', async () => {
  const page = await env.newPage();
  await openReady(env, page);
  await longProject(page);
  // From the next start on: every text the status bar shows.
  await page.addInitScript(() => {
    window.statuses = [];
    document.addEventListener('DOMContentLoaded', () => {
      const node = document.querySelector('[data-testid="status"]');
      new MutationObserver(() => window.statuses.push(node.textContent)).observe(node, { childList: true, characterData: true, subtree: true });
    });
  });
  await page.reload();
  await openReady(env, page);
  const statuses = await page.evaluate(() => window.statuses);
  const stages = ['chapters', 'changes', 'history', 'memory', 'bible', 'files', 'sync'];
  for (const [i, stage] of stages.entries()) {
    assert.ok(
      statuses.some((s) => s.startsWith('opening ') && s.endsWith(`: ${stage} (${i + 1} of 7)`)),
      `${stage}: ${JSON.stringify(statuses)}`,
    );
  }
  assert.equal(statuses.at(-1), 'core ready');
});

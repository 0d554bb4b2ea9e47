// Background jobs in the page (issue 17): the Jobs panel starts rentl's context pipeline on the
// story bible's scenes and its bars reach 100 %; a second job, cancelled midway, stops (its
// units stop asking the model); a job goes on after a reload (a new worker) and ends at
// 100 %; a unit's transcript opens in a dialog. The first job runs on the offline demo model;
// the others on the scriptable mock LLM, whose every answer waits a little, so that they are
// still running when the test acts.
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

const SCENES = ['s1', 's2', 's3'];

/** A project with two chapters, three scenes, a character, a location and a glossary entry. */
async function storyProject(page, name) {
  await page.evaluate(
    async ({ name, scenes }) => {
      const c = window.draftsmith;
      const project = await c.createProject(name, [
        { title: 'The Stair', text: 'Mara climbed the stair of the lighthouse. The lamp was dark.\n\n“Who’s there?” she called.' },
        { title: 'The Shore', text: 'At dawn Tomas found her on the shore, holding the brass key.' },
      ]);
      await c.bible.save('character', { name_src: 'Mara', pronouns: 'she/her' });
      await c.bible.save('character', { name_src: 'Tomas', pronouns: 'he/him' });
      await c.bible.save('location', { name_src: 'Lighthouse', description: 'A tower on the rocks.' });
      await c.bible.save('glossary', { term_src: 'brass key', notes: 'Opens the lamp room.' });
      const [one, two] = project.chapters.map((ch) => ch.id);
      const spans = [
        [one, 0, 59],
        [one, 61, 87],
        [two, 0, 60],
      ];
      for (const [i, id] of scenes.entries()) {
        const [chapter, start, end] = spans[i];
        await c.bible.save('scene', { chapter, span: { start, end } }, { id });
      }
    },
    { name, scenes: SCENES },
  );
  // The panel's scope follows the story bible.
  await page.getByTestId('jobs-scope').locator('option[value="all"]').filter({ hasText: `All scenes (${SCENES.length})` }).waitFor({ state: 'attached' });
}

/** Queue `count` text answers on a fresh mock LLM script, each after `delayMs`; returns its base URL and name. */
async function slowModel(count, delayMs) {
  const name = `jobs-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const base = env.url.replace(/\/$/, '');
  const chunk = (delta, finish = null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}`;
  const answer = { delayMs, events: [chunk({ content: 'Nothing to change here.' }), chunk({}, 'stop'), 'data: [DONE]'] };
  const r = await fetch(`${base}/mock/${name}/responses`, { method: 'POST', body: JSON.stringify(Array(count).fill(answer)) });
  assert.equal(r.status, 204);
  return { url: `${base}/mock/${name}/v1`, requests: async () => (await (await fetch(`${base}/mock/${name}/requests`)).json()).length };
}

const useModel = (page, url) => page.evaluate((url) => window.draftsmith.settings.set({ provider: 'openai', baseUrl: url, model: 'mock' }), url);

/** Open the Jobs panel and start a pipeline with these phases and concurrency. */
async function startPipeline(page, { phases = ['context'], concurrency = 3 } = {}) {
  await page.locator('[data-tab="jobs"]').click();
  const panel = page.getByTestId('jobs-panel');
  for (const phase of ['context', 'translation', 'editing']) await panel.getByTestId(`jobs-phase-${phase}`).setChecked(phases.includes(phase));
  await panel.getByLabel('Units at once').fill(String(concurrency));
  await panel.getByTestId('jobs-scope').selectOption('all');
  const ids = () => panel.getByTestId('job').evaluateAll((nodes) => nodes.map((n) => n.dataset.job));
  const before = await ids();
  await panel.getByRole('button', { name: 'Start pipeline' }).click();
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="job"]').length > n, before.length);
  await panel.getByTestId('jobs-message').filter({ hasText: 'Started' }).waitFor();
  const added = (await ids()).filter((id) => !before.includes(id));
  assert.equal(added.length, 1, JSON.stringify({ before, added }));
  // The newest job is listed first.
  assert.equal((await ids())[0], added[0]);
  return panel.locator(`[data-testid="job"][data-job="${added[0]}"]`);
}

/** The overall bar's state: aria value (percent), done and total units, the job's state. */
function overall(job) {
  return job.evaluate((node) => {
    const bar = node.querySelector('[data-testid="job-progress"]');
    return { percent: Number(bar.getAttribute('aria-valuenow')), done: Number(bar.dataset.done), total: Number(bar.dataset.total), state: node.dataset.state };
  });
}

/** Sample the overall bar until the job reaches a final state; returns the samples. */
async function watch(job, timeoutMs = 120_000) {
  const samples = [];
  const end = Date.now() + timeoutMs;
  for (;;) {
    const now = await overall(job);
    samples.push(now);
    if (['done', 'failed', 'cancelled'].includes(now.state)) return samples;
    if (Date.now() > end) throw new Error(`the job did not end: ${JSON.stringify(now)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const nonDecreasing = (values) => values.every((v, i) => i === 0 || v >= values[i - 1]);

/** Expand a job's units and return each unit's id, agent and state. */
async function units(job) {
  const details = job.getByTestId('job-units');
  if (!(await details.evaluate((d) => d.open))) await details.locator('summary').click();
  await job.getByTestId('job-unit').first().waitFor();
  return job.getByTestId('job-unit').evaluateAll((rows) => rows.map((r) => ({ id: r.dataset.unit, agent: r.dataset.agent, phase: r.dataset.phase, state: r.dataset.state })));
}

test('the context pipeline started in the Jobs panel on the demo project reaches 100 % on the demo model: bars full, every unit done, every scene filled; a unit transcript opens', async () => {
  const page = await env.newPage({ viewport: { width: 1280, height: 900 } });
  await openReady(env, page);
  // The page's demo project: six scenes, two routes, characters, locations, a glossary.
  const bible = await page.evaluate(() => window.draftsmith.bible.list());
  const scenes = bible.kinds.scene.map((s) => s.id);
  const routes = bible.kinds.route.map((r) => r.id);
  assert.equal(scenes.length, 6);
  assert.equal(routes.length, 2);
  await page.getByTestId('jobs-scope').locator('option[value="all"]').filter({ hasText: 'All scenes (6)' }).waitFor({ state: 'attached' });
  const job = await startPipeline(page, { phases: ['context'], concurrency: 3 });

  const samples = await watch(job);
  const last = samples.at(-1);
  assert.equal(last.state, 'done', JSON.stringify(last));
  assert.equal(last.percent, 100);
  assert.equal(last.done, last.total);
  // The context phase's units: five per scene, an outline per route, the three curators.
  assert.equal(last.total, scenes.length * 5 + routes.length + 3);
  assert.ok(samples.length > 2 && samples[0].done < last.total, `progress was seen on its way: ${samples.map((s) => s.done).join(',')}`);
  assert.ok(nonDecreasing(samples.map((s) => s.done)), `progress only goes forward: ${samples.map((s) => s.done).join(',')}`);
  assert.equal(await job.getByTestId('job-percent').textContent(), '100 %');
  assert.equal(await job.getByTestId('job-state').textContent(), 'done');
  const bar = job.getByRole('progressbar', { name: /^Overall progress/ });
  assert.equal(await bar.getAttribute('aria-valuenow'), '100');
  const phase = job.getByRole('progressbar', { name: 'Context phase' });
  assert.equal(await phase.getAttribute('aria-valuenow'), '100');
  assert.equal(await job.getByTestId('phase-count').textContent(), `${last.total} / ${last.total}`);
  // A finished job offers nothing to pause or cancel.
  assert.equal(await job.getByRole('button', { name: /^Cancel/ }).isVisible(), false);
  assert.equal(await job.getByRole('button', { name: /^Pause/ }).isVisible(), false);

  // Its units: every one done, each subagent of the context phase present.
  const list = await units(job);
  assert.equal(list.length, last.total);
  assert.deepEqual(list.filter((u) => u.state !== 'done'), []);
  const agents = new Set(list.map((u) => u.agent));
  for (const a of ['scene_summary_detailer', 'scene_tag_detailer', 'scene_primary_character_detailer', 'scene_location_detailer', 'scene_glossary_detailer', 'route_outline_builder', 'meta_character_curator', 'meta_location_curator', 'meta_glossary_curator']) {
    assert.ok(agents.has(a), `${a} ran: ${[...agents].join(', ')}`);
  }
  // The API agrees with the panel.
  const status = await page.evaluate(async (id) => window.draftsmith.jobStatus(id), await job.getAttribute('data-job'));
  assert.equal(status.state, 'done');
  assert.equal(status.units.length, last.total);
  // Every scene is filled in, each field by its subagent.
  const after = await page.evaluate(() => window.draftsmith.bible.list('scene'));
  for (const scene of after.kinds.scene) {
    for (const [field, agent] of [['summary', 'scene_summary_detailer'], ['tags', 'scene_tag_detailer'], ['primary_characters', 'scene_primary_character_detailer'], ['locations', 'scene_location_detailer']]) {
      const value = scene[field];
      assert.ok(value !== null && value !== '' && !(Array.isArray(value) && value.length === 0), `${scene.id}: ${field} is empty`);
      assert.match(scene[`${field}_origin`], new RegExp(`^agent:${agent}:`), `${scene.id}: ${field}`);
    }
  }

  // A unit's transcript: the task it was given, then what the agent did.
  const first = scenes[0];
  const unit = list.find((u) => u.agent === 'scene_summary_detailer' && u.id.endsWith(`:${first}`));
  assert.ok(unit, JSON.stringify(list.map((u) => u.id)));
  await job.locator(`[data-unit="${unit.id}"]`).getByRole('button', { name: /^Transcript of scene_summary_detailer/ }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByTestId('transcript-log').waitFor();
  const task = await dialog.getByTestId('transcript-task').textContent();
  assert.match(task, /Task for scene_summary_detailer: /);
  assert.ok(task.includes(`Scene: ${first}`), task);
  assert.match(task, /Overwrite allowed: no/);
  assert.equal(await dialog.getByTestId('unit-transcript-title').textContent(), `scene_summary_detailer on scene ${first} · done`);
  // It read before it wrote, and its write succeeded.
  const calls = await dialog.getByTestId('transcript-call').evaluateAll((nodes) => nodes.map((n) => ({ tool: n.dataset.tool, status: n.dataset.status })));
  assert.ok(calls.length >= 2, JSON.stringify(calls));
  assert.ok(calls.some((c) => c.tool === 'scene_update_summary' && c.status === 'success'), JSON.stringify(calls));
  assert.notEqual(calls[0].tool, 'scene_update_summary');
  await page.screenshot({ path: `${ARTIFACTS}jobs-transcript-1280x900.png` });
  await dialog.getByRole('button', { name: 'Close' }).click();
  await dialog.waitFor({ state: 'hidden' });
  await page.screenshot({ path: `${ARTIFACTS}jobs-done-1280x900.png` });
  assert.deepEqual(page.consoleLog.filter((l) => l.startsWith('pageerror')), []);
});

test('a second job, paused and resumed, then cancelled midway, stops: no unit runs or asks the model after the cancel, its bar stays short of 100 %', async () => {
  const page = await env.newPage({ viewport: { width: 1280, height: 900 } });
  await openReady(env, page);
  await storyProject(page, 'Storm');
  const total = SCENES.length * 5 + 3;
  // A first job on the demo model runs to its end.
  const first = await startPipeline(page, { phases: ['context'], concurrency: 3 });
  assert.equal((await watch(first)).at(-1).state, 'done');

  // The second, one unit at a time on a model that takes 400 ms per answer.
  const model = await slowModel(total + 4, 400);
  await useModel(page, model.url);
  const second = await startPipeline(page, { phases: ['context'], concurrency: 1 });
  const id = await second.getAttribute('data-job');
  assert.notEqual(id, await first.getAttribute('data-job'));
  // Midway: some units done, the job still running.
  await page.waitForFunction((id) => Number(document.querySelector(`[data-job="${id}"] [data-testid="job-progress"]`)?.dataset.done) >= 3, id, { timeout: 60_000 });
  // Paused: the running unit finishes, no other starts; resumed: it goes on.
  await second.getByRole('button', { name: /^Pause/ }).click();
  await second.getByRole('button', { name: /^Resume/ }).waitFor();
  await second.and(page.locator('[data-state="paused"]')).waitFor({ timeout: 20_000 });
  assert.equal(await second.getByTestId('job-state').textContent(), 'paused');
  const paused = await overall(second);
  const askedWhilePaused = await model.requests();
  await new Promise((r) => setTimeout(r, 1_500));
  assert.deepEqual(await overall(second), paused, 'nothing runs while paused');
  assert.equal(await model.requests(), askedWhilePaused);
  await second.getByRole('button', { name: /^Resume/ }).click();
  await page.waitForFunction(([id, done]) => Number(document.querySelector(`[data-job="${id}"] [data-testid="job-progress"]`)?.dataset.done) > done, [id, paused.done], { timeout: 20_000 });
  const midway = await overall(second);
  assert.equal(midway.state, 'running', JSON.stringify(midway));
  assert.ok(midway.done < midway.total, JSON.stringify(midway));
  await second.getByRole('button', { name: /^Cancel/ }).click();
  await second.and(page.locator('[data-state="cancelled"]')).waitFor({ timeout: 20_000 });
  assert.equal(await second.getByTestId('job-state').textContent(), 'cancelled');
  const stopped = await overall(second);
  assert.ok(stopped.percent < 100, JSON.stringify(stopped));
  assert.ok(stopped.done <= midway.done + 1, `at most the unit running at the cancel finished: ${JSON.stringify({ midway, stopped })}`);
  // Nothing left to pause or cancel.
  assert.equal(await second.getByRole('button', { name: /^Cancel/ }).isVisible(), false);

  // It stays stopped: nothing more is done and the model hears nothing more.
  const heard = await model.requests();
  await new Promise((r) => setTimeout(r, 2_000));
  assert.equal(await model.requests(), heard, 'no model request after the cancel');
  assert.ok(heard <= stopped.done + 1, `${heard} model requests for ${stopped.done} units done`);
  assert.deepEqual(await overall(second), stopped);
  const list = await units(second);
  assert.equal(list.length, total);
  assert.deepEqual(list.filter((u) => ['running', 'queued'].includes(u.state)), [], 'no unit left running or queued');
  assert.ok(list.some((u) => u.state === 'cancelled'), JSON.stringify(list));
  assert.equal(list.filter((u) => u.state === 'done').length, stopped.done);
  // The first job is untouched; both are listed, newest first.
  assert.equal((await overall(first)).state, 'done');
  const listed = await page.evaluate(() => window.draftsmith.listJobs());
  assert.deepEqual(listed.jobs.map((j) => j.state), ['cancelled', 'done']);
  assert.deepEqual(await page.getByTestId('job').evaluateAll((nodes) => nodes.map((n) => n.dataset.state)), ['cancelled', 'done']);
  await page.screenshot({ path: `${ARTIFACTS}jobs-cancelled-1280x900.png` });
  assert.deepEqual(page.consoleLog.filter((l) => l.startsWith('pageerror')), []);
});

test('a job goes on after a reload: the new worker resumes it and the bar reaches 100 %', async () => {
  const page = await env.newPage({ viewport: { width: 1280, height: 900 } });
  await openReady(env, page);
  await storyProject(page, 'Reload');
  const total = SCENES.length * 5 + 3;
  // Spare answers: a request cut by the reload still takes one.
  const model = await slowModel(total + 6, 300);
  await useModel(page, model.url);
  const job = await startPipeline(page, { phases: ['context'], concurrency: 1 });
  const id = await job.getAttribute('data-job');
  await page.waitForFunction((id) => Number(document.querySelector(`[data-job="${id}"] [data-testid="job-progress"]`)?.dataset.done) >= 3, id, { timeout: 60_000 });
  const before = await overall(job);
  assert.equal(before.state, 'running');

  await page.reload();
  await openReady(env, page);
  await page.locator('[data-tab="jobs"]').click();
  const again = page.locator(`[data-testid="job"][data-job="${id}"]`);
  await again.waitFor();
  const samples = await watch(again);
  const last = samples.at(-1);
  assert.equal(last.state, 'done', JSON.stringify(last));
  assert.equal(last.percent, 100);
  assert.ok(samples[0].done >= before.done, `the units done before the reload stay done: ${samples[0].done} >= ${before.done}`);
  assert.ok(nonDecreasing(samples.map((s) => s.done)));
  const list = await units(again);
  assert.equal(list.length, total);
  assert.deepEqual(list.filter((u) => u.state !== 'done'), []);
  // Each unit asked the model once, apart from the one the reload cut short.
  const asked = await model.requests();
  assert.ok(asked >= total && asked <= total + 1, `${asked} model requests for ${total} units`);
  assert.deepEqual(page.consoleLog.filter((l) => l.startsWith('pageerror')), []);
});

test("a job unit's approval card shows under its job and in the chat, naming the agent; approving it in the Jobs panel lets the job finish", async () => {
  const page = await env.newPage({ viewport: { width: 1280, height: 900 } });
  await openReady(env, page);
  await storyProject(page, 'Approval');
  await page.evaluate(() => window.draftsmith.bible.save('scene', { summary: 'Mara climbs the stair.' }, { id: 's1' }));
  // The model asks to replace the writer's summary (which needs the writer's approval), then sums up.
  const name = `jobs-approve-${Date.now()}`;
  const base = env.url.replace(/\/$/, '');
  const chunk = (delta, finish = null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}`;
  const args = JSON.stringify({ scene: 's1', summary: 'Mara reaches the lamp room.' });
  const responses = [
    { events: [chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'scene_update_summary', arguments: args } }] }), chunk({}, 'tool_calls'), 'data: [DONE]'] },
    { events: [chunk({ content: 'Done.' }), chunk({}, 'stop'), 'data: [DONE]'] },
  ];
  assert.equal((await fetch(`${base}/mock/${name}/responses`, { method: 'POST', body: JSON.stringify(responses) })).status, 204);
  await useModel(page, `${base}/mock/${name}/v1`);
  const started = await page.evaluate(() => window.draftsmith.startJob({ kind: 'run', prompt: 'Update the summary of scene s1.' }));
  await page.locator('[data-tab="jobs"]').click();
  const job = page.locator(`[data-testid="job"][data-job="${started.id}"]`);
  await job.waitFor();
  const inJob = job.getByTestId('approval-card');
  await inJob.waitFor({ timeout: 30_000 });
  await job.and(page.locator('[data-state="waiting_approval"]')).waitFor({ timeout: 30_000 });
  assert.equal(await inJob.getByTestId('approval-tool').textContent(), 'scene_update_summary');
  assert.match(await inJob.getByTestId('approval-job').textContent(), /^From a background job/);
  const pending = await page.evaluate(() => window.draftsmith.approvals.list());
  assert.equal(pending.approvals.length, 1);
  assert.ok(pending.approvals[0].run.startsWith(`job:${started.id}:`), pending.approvals[0].run);
  const agent = pending.approvals[0].origin.replace(/^agent:/, '');
  assert.equal(await inJob.getByTestId('approval-agent').textContent(), agent);
  // The same card in the chat, which did not start this run.
  const inChat = page.getByTestId('chat-log').getByTestId('approval-card');
  assert.equal(await inChat.count(), 1);
  assert.equal(await inChat.getByTestId('approval-agent').textContent(), agent);
  assert.match(await inChat.getByTestId('approval-job').textContent(), /^From a background job/);
  await page.screenshot({ path: `${ARTIFACTS}jobs-approval-1280x900.png` });

  await inJob.getByRole('button', { name: 'Approve' }).click();
  await job.and(page.locator('[data-state="done"]')).waitFor({ timeout: 30_000 });
  // Decided once: both cards go.
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="approval-card"]').length === 0, null, { timeout: 10_000 });
  const scene = await page.evaluate(async () => (await window.draftsmith.bible.list('scene')).kinds.scene.find((s) => s.id === 's1'));
  assert.equal(scene.summary, 'Mara reaches the lamp room.');
  assert.match(scene.summary_origin, /^agent:/);
  assert.equal(await job.getByTestId('job-percent').textContent(), '100 %');
  assert.deepEqual(page.consoleLog.filter((l) => l.startsWith('pageerror')), []);
});

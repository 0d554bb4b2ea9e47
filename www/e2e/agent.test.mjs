// An agent run through the page's client: settings, run() as an async iterable of events,
// the demo model's real tool call landing as an edit, undo of the whole turn, and an abort
// through an AbortSignal.
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

test('run() streams a demo-model run that edits, and undo reverts the turn', async () => {
  const page = await env.newPage();
  await openReady(env, page);
  const result = await page.evaluate(async (origin) => {
    const client = window.draftsmith;
    await client.createProject('Lighthouse', [{ title: 'The Stair', text: 'Mara climbed the stair. The lamp was dark.' }]);
    let noModel = null;
    // The demo page configures the demo model; without a provider a run cannot start.
    await client.settings.set({ provider: '' });
    try {
      await client.run('hello').result;
    } catch (err) {
      noModel = { code: err.code, name: err.name };
    }
    const badSettings = await client.settings.set({ baseUrl: 'ftp://nope' }).catch((err) => err.code);
    const settings = await client.settings.set({ provider: 'openai', baseUrl: `${origin}/demo/v1`, model: 'demo', apiKey: 'sk-demo-secret-1' });
    const events = [];
    const run = client.run('replace "The lamp was dark." with "The lamp was lit."', { agent: { name: 'helper' } });
    for await (const event of run) events.push(event);
    const outcome = await run.result;
    const edited = (await client.getChapter()).text;
    await client.undo();
    const undone = (await client.getChapter()).text;
    const history = await client.history();
    return { noModel, badSettings, settings, events, outcome, edited, undone, canRedo: history.canRedo, publicSettings: await client.settings.get() };
  }, env.url.replace(/\/$/, ''));
  assert.deepEqual(result.noModel, { code: 'no_model', name: 'DraftsmithError' });
  assert.equal(result.badSettings, 'invalid_params');
  assert.equal(result.settings.hasKey, true);
  assert.ok(!JSON.stringify(result.publicSettings).includes('sk-demo-secret-1'));
  assert.equal(result.outcome.status, 'finished', JSON.stringify(result.outcome));
  assert.equal(result.edited, 'Mara climbed the stair. The lamp was lit.');
  assert.equal(result.undone, 'Mara climbed the stair. The lamp was dark.');
  assert.equal(result.canRedo, true);
  const types = result.events.map((e) => e.type);
  assert.equal(types[0], 'run_started');
  assert.equal(types.at(-1), 'run_finished');
  assert.ok(types.includes('edit_applied'), types.join());
  assert.ok(result.events.every((e) => e.run === result.outcome.run));
  assert.ok(!JSON.stringify(result.events).includes('sk-demo-secret-1'));
});

test('an AbortSignal stops a run mid-stream and nothing changes', async () => {
  const page = await env.newPage();
  await openReady(env, page);
  const base = env.url.replace(/\/$/, '');
  // A mock script that streams a little text, then stalls with the connection open.
  const script = `abort-${Date.now()}`;
  const queued = await fetch(`${base}/mock/${script}/responses`, {
    method: 'POST',
    body: JSON.stringify([
      {
        events: [
          `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'Thinking' }, finish_reason: null }] })}`,
          `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: ' more' }, finish_reason: null }] })}`,
        ],
        stallAfter: 1,
      },
    ]),
  });
  assert.equal(queued.status, 204);
  const result = await page.evaluate(async (url) => {
    const client = window.draftsmith;
    await client.createProject('Quiet', [{ title: 'One', text: 'Nothing moves.' }]);
    await client.settings.set({ provider: 'openai', baseUrl: url, model: 'mock' });
    const controller = new AbortController();
    const run = client.run('go', { signal: controller.signal });
    const types = [];
    const started = performance.now();
    for await (const event of run) {
      types.push(event.type);
      if (event.type === 'text_delta') controller.abort();
    }
    return { types, outcome: await run.result, ms: performance.now() - started, text: (await client.getChapter()).text };
  }, `${base}/mock/${script}/v1`);
  assert.equal(result.outcome.status, 'aborted');
  assert.equal(result.types.at(-1), 'run_aborted');
  assert.equal(result.text, 'Nothing moves.');
  assert.ok(result.ms < 10_000, `ended by the abort (${result.ms} ms)`);
});

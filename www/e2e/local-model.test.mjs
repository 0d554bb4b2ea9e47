// The `local` provider end to end: the demo page, the real SmolLM2-135M model (www/models/,
// fetched by scripts/setup.sh) running in headless Chromium through wllama, and the whole
// agent loop against it. The tests share one page and run in order: the first downloads the
// model into the browser's storage, a later one reloads offline and loads it from there.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { launch, openReady } from './harness.mjs';

const MODEL_PATH = '/models/SmolLM2-135M-Instruct.Q4_1.gguf';
const MODEL_FILE = new URL(`..${MODEL_PATH}`, import.meta.url);
const SCHEMAS = JSON.parse(readFileSync(new URL('../../src/tools/schemas.json', import.meta.url), 'utf8'));

let env;
let page;
let origin;
let modelUrl;
before(async () => {
  assert.ok(statSync(MODEL_FILE, { throwIfNoEntry: false }), `${MODEL_FILE.pathname} is missing: run scripts/setup.sh model`);
  env = await launch();
  origin = env.url.replace(/\/$/, '');
  modelUrl = `${origin}${MODEL_PATH}`;
  // No service worker: requests go to the network, where the test's routing sees them all.
  page = await env.newPage({ serviceWorkers: 'block' });
  await openReady(env, page);
  await page.evaluate(() => {
    window.modelProgress = [];
    window.draftsmith.on('model_progress', (e) => window.modelProgress.push(e));
  });
});
after(async () => {
  await env?.close();
});

/** Errors of `value` against a JSON Schema of the kinds the tool catalog uses. */
function schemaErrors(schema, value, path = 'arguments') {
  const errors = [];
  const types = [].concat(schema.type ?? []);
  const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);
  const fits = (t) => t === typeOf(value) || (t === 'number' && typeOf(value) === 'integer');
  if (types.length && !types.some(fits)) return [`${path}: ${typeOf(value)} is not ${types.join(' or ')}`];
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) errors.push(`${path}: ${JSON.stringify(value)} not in ${JSON.stringify(schema.enum)}`);
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) errors.push(`${path}: ${value} < ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) errors.push(`${path}: ${value} > ${schema.maximum}`);
  }
  if (typeOf(value) === 'array' && schema.items) value.forEach((v, i) => errors.push(...schemaErrors(schema.items, v, `${path}[${i}]`)));
  if (typeOf(value) === 'object') {
    for (const name of schema.required ?? []) if (!(name in value)) errors.push(`${path}.${name} is missing`);
    for (const [name, v] of Object.entries(value)) {
      const property = schema.properties?.[name];
      if (property) errors.push(...schemaErrors(property, v, `${path}.${name}`));
      else if (schema.additionalProperties === false) errors.push(`${path}.${name} is not allowed`);
    }
  }
  return errors;
}

/** Run `prompt` with the agent `agent` in the page: its events, result and timing. */
function runInPage(prompt, agent, { abortOnText = false } = {}) {
  return page.evaluate(
    async ([prompt, agent, abortOnText]) => {
      const client = window.draftsmith;
      const events = [];
      const run = client.run(prompt, { agent, newConversation: true });
      let abortedAt = null;
      let endedAt = null;
      for await (const event of run) {
        events.push({ ...event, at: performance.now() });
        if (abortOnText && abortedAt === null && event.type === 'text_delta') {
          abortedAt = performance.now();
          run.abort();
        }
        if (['run_finished', 'run_failed', 'run_aborted', 'run_paused'].includes(event.type)) endedAt = performance.now();
      }
      const result = await run.result;
      return { events, result, abortToEndMs: abortedAt === null ? null : endedAt - abortedAt };
    },
    [prompt, agent, abortOnText],
  );
}

test('the settings switch to the in-browser model; its download shows as progress', async () => {
  const size = statSync(MODEL_FILE).size;
  await page.evaluate(() => window.draftsmith.createProject('Lighthouse', [{ title: 'The Stair', text: 'Mara climbed the stair. The lamp was dark.' }]));
  await page.locator('[data-tab="settings"]').click();
  await page.getByTestId('settings-provider').selectOption('local');
  assert.equal(await page.getByTestId('settings-base-url').isHidden(), true);
  assert.equal(await page.getByTestId('settings-model').inputValue(), MODEL_PATH);
  await page.getByTestId('settings-model').fill(modelUrl);
  await page.getByTestId('settings-save').click();
  await page.getByTestId('settings-message').filter({ hasText: 'Saved.' }).waitFor();
  const settings = await page.evaluate(() => window.draftsmith.settings.get());
  assert.equal(settings.provider, 'local');
  assert.equal(settings.model, modelUrl);
  assert.match(await page.getByTestId('model-label').textContent(), /SmolLM2-135M-Instruct\.Q4_1\.gguf · in the browser/);

  await page.evaluate(() => window.draftsmith.request('load_local_model'));
  const progress = await page.evaluate(() => window.modelProgress);
  const downloading = progress.filter((e) => e.phase === 'downloading');
  assert.ok(downloading.length >= 2, JSON.stringify(progress));
  for (const e of downloading) {
    assert.equal(e.url, modelUrl);
    assert.equal(e.total, size);
    assert.ok(e.loaded >= 0 && e.loaded <= size);
  }
  assert.ok(downloading.some((e) => e.loaded < size), 'the download reports progress before its end');
  assert.ok(progress.some((e) => e.loaded === size), 'the whole file arrives');
  assert.equal(progress.at(-1).phase, 'ready', JSON.stringify(progress.at(-1)));
  // The page shows it: the bar, then the stored model with its size in the settings.
  await page.getByTestId('model-progress-text').filter({ hasText: 'ready' }).waitFor();
  const stored = page.getByTestId('local-model').filter({ hasText: 'SmolLM2-135M-Instruct.Q4_1.gguf · 98 MB · loaded' });
  await stored.waitFor();
  const listed = await page.evaluate(() => window.draftsmith.request('local_models'));
  assert.deepEqual(listed.models, [{ url: modelUrl, size, loaded: true }]);
  assert.equal(listed.total, size);
  const worker = await page.evaluate(() => window.draftsmith.workerStatus());
  assert.deepEqual(worker.localModel, { runtime: 'multi-thread', crossOriginIsolated: true, loaded: modelUrl, threads: worker.localModel.threads });
  assert.ok(worker.localModel.threads >= 2);
  assert.match(await page.getByTestId('local-runtime').textContent(), /multi-threaded/);
  const { usage } = await page.evaluate(() => window.draftsmith.storageEstimate());
  assert.ok(usage >= size, `storage_estimate counts the model: ${usage} < ${size}`);
});

// Approval rules hold as with any provider: right after the download, on a fresh project.
test('approval rules apply: creating a character waits for the writer’s approval, and runs once approved', async () => {
  await page.evaluate(async () => {
    // Room for the whole call (a call cut off by max_tokens is rejected, not run).
    await window.draftsmith.settings.set({ maxTokens: 96, temperature: 0 });
    await window.draftsmith.defineAgent({ name: 'archivist', description: 'Keeps the story bible.', systemPrompt: 'You keep the story bible of a novel. Make the change the writer asks for.', tools: ['character_create_entry'], toolChoice: 'character_create_entry', talksToWriter: true, maxSteps: 1 });
  });
  const { events, result } = await runInPage('Add a character named Tomas.', 'archivist');
  const calls = events.filter((e) => e.type.startsWith('tool_call') || e.type === 'approval_requested').map((e) => [e.type, e.name ?? e.tool, e.status, e.arguments ?? e.args]);
  // Creating a character is strict by default: an agent always asks.
  assert.equal(result.status, 'paused', JSON.stringify({ result, calls }));
  const card = result.pending?.[0];
  assert.equal(card?.tool, 'character_create_entry', JSON.stringify(result.pending));
  assert.deepEqual(schemaErrors(SCHEMAS.character_create_entry, card.args), [], JSON.stringify(card.args));
  assert.ok(events.some((e) => e.type === 'approval_requested'));
  const before = await page.evaluate(() => window.draftsmith.bible.list('character'));
  assert.equal((before.kinds.character ?? []).length, 0, 'nothing was created before the approval');
  const decided = await page.evaluate(async (callId) => {
    const ran = [];
    const off = window.draftsmith.on('run', (e) => e.type === 'tool_call_finished' && ran.push(e));
    const outcome = await window.draftsmith.approve(callId, 'approve');
    off();
    return { outcome, ran, after: (await window.draftsmith.bible.list('character')).kinds.character ?? [] };
  }, card.callId);
  const ran = decided.ran.filter((e) => e.name === 'character_create_entry' && e.status === 'success');
  assert.equal(ran.length, 1, JSON.stringify(decided));
  assert.equal(decided.after.length, 1, JSON.stringify(decided.after));
  assert.equal(decided.after[0].name_src, card.args.name_src);
});

test('a chat run streams text deltas and finishes', async () => {
  await page.evaluate(async () => {
    await window.draftsmith.settings.set({ maxTokens: 24 });
    await window.draftsmith.defineAgent({ name: 'chatter', description: 'Chats with the writer.', systemPrompt: 'You are a friendly writing assistant. Answer in one short sentence.', talksToWriter: true, maxSteps: 2 });
  });
  const { events, result } = await runInPage('Say hello to the writer.', 'chatter');
  assert.equal(result.status, 'finished', JSON.stringify(result));
  const deltas = events.filter((e) => e.type === 'text_delta');
  assert.ok(deltas.length >= 2, `text deltas: ${deltas.length}`);
  assert.ok(result.text.trim().length > 0);
  assert.equal(deltas.map((e) => e.text).join(''), result.text);
  assert.equal(events.at(-1).type, 'run_finished');
});

test('with toolChoice "required" over the quick toolset the model calls a tool with valid arguments, and it runs', async () => {
  const quick = await page.evaluate(() => window.draftsmith.tools({ toolset: 'quick' }));
  const names = new Set((quick.tools ?? quick).map((t) => t.name));
  await page.evaluate(async () => {
    await window.draftsmith.settings.set({ maxTokens: 128, temperature: 0 });
    await window.draftsmith.defineAgent({ name: 'navigator', description: 'Finds things in the manuscript.', systemPrompt: 'You help a novelist find their way around the manuscript.', toolset: 'quick', toolChoice: 'required', talksToWriter: true, maxSteps: 1 });
  });
  const { events, result } = await runInPage('Open chapter 1.', 'navigator');
  const started = events.find((e) => e.type === 'tool_call_started');
  assert.ok(started, `no tool call: ${JSON.stringify(events.map((e) => e.type))}`);
  assert.ok(names.has(started.name), `${started.name} is in the quick toolset`);
  assert.deepEqual(schemaErrors(SCHEMAS[started.name], started.arguments), [], `${started.name}(${JSON.stringify(started.arguments)})`);
  const finished = events.find((e) => e.type === 'tool_call_finished' && e.id === started.id);
  assert.ok(finished, 'the tool ran');
  assert.ok(['finished', 'max_steps'].includes(result.status), JSON.stringify(result));
});


// The writer closes the tab and opens the page again with the network gone: every request to
// another origin, and the model's own URL, are refused; the model loads from the browser's
// storage and a run works.
test('reopened with the network gone, the model loads from the browser’s storage and a run works', async () => {
  const context = page.context();
  const blocked = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.origin !== origin || url.pathname.startsWith('/models/')) {
      blocked.push(url.href);
      return route.abort('internetdisconnected');
    }
    return route.continue();
  });
  await page.evaluate(() => window.draftsmith.settings.set({ maxTokens: 16 }));
  // Closing the tab ends its workers (and the model they held); the same browser profile
  // opens the page again.
  await page.close();
  page = await context.newPage();
  page.consoleLog = [];
  page.on('console', (msg) => page.consoleLog.push(`${msg.type()}: ${msg.text()}`));
  await openReady(env, page);
  const reachable = await page.evaluate((url) => fetch(url, { method: 'HEAD' }).then((r) => r.status, () => 'blocked'), modelUrl);
  assert.equal(reachable, 'blocked');
  const { events, result } = await page.evaluate(async () => {
    window.modelProgress = [];
    window.draftsmith.on('model_progress', (e) => window.modelProgress.push(e));
    await window.draftsmith.defineAgent({ name: 'greeter', description: 'Greets the writer.', systemPrompt: 'Answer in one short sentence.', talksToWriter: true, maxSteps: 1 });
    const events = [];
    const run = window.draftsmith.run('Say hello.', { agent: 'greeter', newConversation: true });
    for await (const event of run) events.push(event);
    return { events, result: await run.result };
  });
  assert.equal(result.status, 'finished', JSON.stringify(result));
  assert.ok(events.some((e) => e.type === 'text_delta'));
  const progress = await page.evaluate(() => window.modelProgress);
  assert.equal(progress.at(-1)?.phase, 'ready', JSON.stringify(progress));
  assert.ok(!progress.some((e) => e.phase === 'downloading' && e.loaded < e.total), 'nothing was downloaded');
  assert.ok(!blocked.some((u) => new URL(u).origin === origin && !u.includes('/models/')), JSON.stringify(blocked));
  await context.unroute('**/*');
});

test('aborting mid-generation ends the run aborted within a second', async () => {
  await page.evaluate(async () => {
    await window.draftsmith.settings.set({ maxTokens: 400 });
    await window.draftsmith.defineAgent({ name: 'storyteller', description: 'Tells long stories.', systemPrompt: 'You tell long, detailed stories.', talksToWriter: true, maxSteps: 1 });
  });
  const { result, abortToEndMs, events } = await runInPage('Tell me a long story about a lighthouse keeper.', 'storyteller', { abortOnText: true });
  assert.equal(result.status, 'aborted', JSON.stringify(result));
  assert.equal(events.at(-1).type, 'run_aborted');
  assert.ok(abortToEndMs < 1000, `the run ended ${abortToEndMs} ms after the abort`);
});

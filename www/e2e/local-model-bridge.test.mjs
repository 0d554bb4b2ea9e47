// The in-browser model's bridge (packages/draftsmith/local-model.js) on its own, in a module
// worker as the draftsmith worker runs it, with the real SmolLM2-135M model (scripts/setup.sh
// model puts it in www/models/). The tests share one page and run in order: the first load
// downloads the model into the browser's storage, the later ones open the stored copy.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { launch } from './harness.mjs';

const MODEL_PATH = '/models/SmolLM2-135M-Instruct.Q4_1.gguf';
const MODEL_FILE = new URL(`..${MODEL_PATH}`, import.meta.url);

let env;
let page;
let call;
before(async () => {
  assert.ok(statSync(MODEL_FILE, { throwIfNoEntry: false }), `${MODEL_FILE.pathname} is missing: run scripts/setup.sh model`);
  env = await launch();
  page = await env.newPage();
  await page.goto(`${env.url}e2e/fixtures/bridge.html?worker=local-model/worker.js`);
  await page.waitForFunction(() => window.harnessReady === true);
  call = (method, ...args) =>
    page.evaluate(
      ([method, args]) => window.call(method, ...args).then((value) => ({ value }), (err) => ({ error: { message: err.message, status: err.status, name: err.name } })),
      [method, args],
    );
});
after(async () => {
  await env?.close();
});

const modelUrl = () => new URL(MODEL_PATH, env.url).href;
const chatBody = (extra) => ({ model: MODEL_PATH, load: { threads: 1 }, max_tokens: 8, ...extra });

/** The `data:` events of a streamed answer, parsed (`[DONE]` as the string). */
function events(text) {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => block.slice(6))
    .map((data) => (data === '[DONE]' ? data : JSON.parse(data)));
}

test('before any load, status tells what a load would use on this isolated page', async () => {
  const { value } = await call('status');
  assert.equal(value.crossOriginIsolated, true);
  assert.equal(value.loaded, null);
  assert.ok(value.threads >= 1);
  assert.equal(value.runtime, value.threads > 1 ? 'multi-thread' : 'single-thread');
});

test('bad model specs are refused with a message the writer understands', async () => {
  const notGguf = await call('load', { url: '/index.html' });
  assert.match(notGguf.error.message, /not a \.gguf model file: http:\/\/127\.0\.0\.1:\d+\/index\.html/);
  assert.equal(notGguf.error.status, 400);
  const missing = await call('load', { url: '/models/missing.gguf' });
  assert.match(missing.error.message, /could not download the model .*missing\.gguf: the server answered HTTP 404/);
  const context = await call('load', { url: MODEL_PATH, contextSize: 5 });
  assert.match(context.error.message, /context size must be a whole number/);
  const threads = await call('load', { url: MODEL_PATH, threads: 0 });
  assert.match(threads.error.message, /thread count must be a whole number/);
  assert.equal((await call('status')).value.loaded, null);
  await call('modelFetches');
});

test('two loads of one model share one download, with progress up to the file size', async () => {
  const size = statSync(MODEL_FILE).size;
  const { value } = await call('loadTwice', { url: MODEL_PATH, threads: 1 });
  for (const info of value.infos) {
    assert.deepEqual(info, { url: modelUrl(), size, contextSize: 2048, threads: 1, multiThread: false, toolTemplate: false });
  }
  for (const progress of value.progress) {
    assert.ok(progress.length >= 2, `progress events: ${JSON.stringify(progress)}`);
    assert.deepEqual(progress.at(-1), [size, size]);
    for (let i = 1; i < progress.length; i++) assert.ok(progress[i][0] >= progress[i - 1][0]);
  }
  const downloads = (await call('modelFetches')).value.filter((f) => f.method === 'GET');
  assert.equal(downloads.length, 1, JSON.stringify(downloads));
  // Loaded already: at once, no progress, no request.
  const again = (await call('load', { url: modelUrl(), threads: 1 })).value;
  assert.deepEqual(again.progress, []);
  assert.deepEqual((await call('modelFetches')).value, []);
  assert.deepEqual((await call('list')).value, [{ url: modelUrl(), size }]);
  const status = (await call('status')).value;
  assert.equal(status.loaded, modelUrl());
  assert.equal(status.runtime, 'single-thread');
});

test('a chat streams OpenAI chunks with text, timings on the last, then [DONE]', async () => {
  const { value } = await call('chat', chatBody({ messages: [{ role: 'user', content: 'Say hello.' }] }));
  assert.equal(value.status, 200);
  const parsed = events(value.text);
  assert.equal(parsed.at(-1), '[DONE]');
  const chunks = parsed.slice(0, -1);
  const text = chunks.map((c) => c.choices[0].delta.content ?? '').join('');
  assert.ok(text.trim().length > 0, value.text);
  const last = chunks.at(-1);
  assert.ok(['stop', 'length'].includes(last.choices[0].finish_reason), JSON.stringify(last));
  assert.ok(last.timings.prompt_per_second > 0 && last.timings.predicted_per_second > 0, JSON.stringify(last.timings));
});

test('a grammar constrains the answer', async () => {
  const { value } = await call('chat', chatBody({ messages: [{ role: 'user', content: 'Is the sky blue?' }], grammar: 'root ::= "yes" | "no"' }));
  const text = events(value.text)
    .filter((e) => e !== '[DONE]')
    .map((c) => c.choices[0].delta.content ?? '')
    .join('');
  assert.ok(['yes', 'no'].includes(text), text);
});

test('bad requests and context overflow answer 400 with an OpenAI error body', async () => {
  const notJson = (await call('chat', '{"messages": [')).value;
  assert.equal(notJson.status, 400);
  assert.match(JSON.parse(notJson.text).error.message, /not JSON/);
  const noMessages = (await call('chat', { model: MODEL_PATH })).value;
  assert.equal(noMessages.status, 400);
  const badModel = (await call('chat', { model: '/notes.txt', messages: [] })).value;
  assert.equal(badModel.status, 400);
  assert.match(JSON.parse(badModel.text).error.message, /not a \.gguf model file/);
  // A small context loads that spec (the other is unloaded first), and the prompt overflows it.
  const long = 'word '.repeat(600);
  const overflow = (await call('chat', { ...chatBody({ messages: [{ role: 'user', content: long }] }), load: { threads: 1, contextSize: 128 } })).value;
  assert.equal(overflow.status, 400);
  const error = JSON.parse(overflow.text).error;
  assert.equal(error.type, 'context_length_exceeded');
  // llama.cpp rounds a context up to 256 tokens.
  assert.match(error.message, /request \(\d+ tokens\) exceeds the available context size \(256 tokens\)/);
  assert.equal((await call('status')).value.loaded, modelUrl());
});

test('aborting ends the stream at once and frees the model for the next request', async () => {
  const body = chatBody({ messages: [{ role: 'user', content: 'Tell a long story about a lighthouse.' }], max_tokens: 400 });
  const { value } = await call('chat', body, { abortAfter: 3 });
  assert.equal(value.status, 200);
  assert.ok(value.abortToEndMs < 1000, `the stream ended ${value.abortToEndMs} ms after the abort`);
  assert.ok(!value.text.includes('[DONE]'));
  // The aborted generation does not go on: a short request right after is not queued behind
  // the ~400 tokens (at ~10 tokens/s) it would have taken.
  const next = (await call('chat', chatBody({ messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2 }))).value;
  assert.equal(next.status, 200);
  assert.ok(next.ms < 15_000, `the next request took ${next.ms} ms`);
  // Aborted before any answer: rejects as fetch does.
  const early = (await call('abortBeforeAnswer', body)).value;
  assert.deepEqual({ name: early.name }, { name: 'AbortError' });
  assert.ok(early.ms < 1000);
});

test('with two threads the model runs multi-threaded on the isolated page', async () => {
  const { value } = await call('load', { url: MODEL_PATH, threads: 2 });
  assert.equal(value.info.multiThread, true);
  assert.equal(value.info.threads, 2);
  // From storage: one progress report of the whole size, no download.
  assert.deepEqual(value.progress, [[value.info.size, value.info.size]]);
  assert.deepEqual((await call('modelFetches')).value.filter((f) => f.method === 'GET'), []);
  assert.deepEqual((await call('status')).value, { runtime: 'multi-thread', crossOriginIsolated: true, loaded: modelUrl(), threads: 2 });
});

test('a stored model is deleted (and unloaded); deleting it again says false', async () => {
  assert.equal((await call('remove', MODEL_PATH)).value, true);
  assert.deepEqual((await call('list')).value, []);
  assert.equal((await call('status')).value.loaded, null);
  assert.equal((await call('remove', MODEL_PATH)).value, false);
});

// The page boots the worker, the core answers, and the worker survives bad input and panics.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openReady, crateVersion } from './harness.mjs';

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

test('the page shows core ready with the version reported by the worker', async () => {
  const page = await env.newPage();
  await openReady(env, page);
  const version = await page.getByTestId('version').textContent();
  assert.match(version, new RegExp(`^draftsmith ${crateVersion().replaceAll('.', '\\.')} \\((release|debug)\\)$`));
  const hello = await page.evaluate(() => window.draftsmith.hello());
  assert.equal(hello.version, crateVersion());
  assert.ok(hello.capabilities.includes('hello'));
});

test('unknown and malformed requests get error responses and the worker keeps serving', async () => {
  const page = await env.newPage();
  await openReady(env, page);
  const results = await page.evaluate(async () => {
    const client = window.draftsmith;
    const outcome = (p) => p.then((r) => ({ ok: r }), (e) => ({ code: e.code, message: e.message, name: e.name }));
    return {
      unknown: await outcome(client.request('helo')),
      badParams: await outcome(client.request('hello', 'not an object')),
      loneSurrogate: await outcome(client.request('hello', { text: 'a\uD800b' })),
      uncloneable: await outcome(client.request('hello', { f: () => 1 })),
      after: await outcome(client.hello()),
    };
  });
  assert.equal(results.unknown.code, 'unknown_request');
  assert.equal(results.unknown.name, 'DraftsmithError');
  assert.match(results.unknown.message, /did you mean 'hello'/);
  assert.equal(results.badParams.code, 'malformed');
  assert.match(results.badParams.message, /'params' must be an object/);
  assert.equal(results.loneSurrogate.ok.name, 'draftsmith');
  assert.equal(results.uncloneable.code, 'malformed');
  assert.equal(results.after.ok.name, 'draftsmith');
});

test('raw messages the client would never send still get a response', async () => {
  const page = await env.newPage();
  await openReady(env, page);
  const responses = await page.evaluate(async () => {
    const worker = window.draftsmith._worker;
    const seen = [];
    const done = new Promise((resolve) => {
      worker.addEventListener('message', (e) => {
        // A message may come as its JSON text; events and the response after them may come
        // as one `batch`.
        const read = (m) => (typeof m === 'string' ? JSON.parse(m) : m);
        const data = read(e.data);
        for (const part of data.kind === 'batch' ? data.messages : [data]) {
          const message = read(part);
          if (message.kind === 'response') {
            seen.push(message);
            if (seen.length === 4) resolve();
          }
        }
      });
    });
    worker.postMessage('just a string');
    worker.postMessage({ type: 'hello' });
    worker.postMessage({ id: 'x', type: 42 });
    worker.postMessage({ id: 'y', type: 'hello' });
    await done;
    return seen;
  });
  const withId = (id) => responses.filter((r) => r.id === id);
  assert.equal(withId(null).length, 2);
  assert.ok(withId(null).every((r) => r.ok === false && r.error.code === 'malformed'));
  assert.equal(withId('x')[0].error.code, 'malformed');
  assert.equal(withId('y')[0].ok, true);
});

test('a panic in the core becomes an error event and the worker recovers', async () => {
  const page = await env.newPage();
  await openReady(env, page);
  const result = await page.evaluate(async () => {
    const client = window.draftsmith;
    const panics = [];
    client.on('panic', (data) => panics.push(data.message));
    const readyAgain = new Promise((resolve) => client.on('ready', resolve));
    let error = null;
    try {
      await client.request('debug_panic', { message: 'deliberate test panic' });
    } catch (e) {
      error = { code: e.code, message: e.message };
    }
    const ready = await readyAgain;
    const hello = await client.hello();
    return { panics, error, ready, hello };
  });
  assert.equal(result.error.code, 'internal');
  assert.match(result.error.message, /deliberate test panic/);
  assert.equal(result.panics.length, 1);
  assert.match(result.panics[0], /deliberate test panic/);
  assert.equal(result.ready.instance, 2);
  assert.equal(result.hello.name, 'draftsmith');
  // The page reopens its project on the new core (its progress shows in the status bar), then
  // says the core is ready again.
  await page.waitForFunction(() => /core ready/.test(document.querySelector('[data-testid="status"]').textContent), null, { timeout: 30_000 });
});

test('requests time out and close() rejects what is pending', async () => {
  const page = await env.newPage();
  await openReady(env, page);
  const result = await page.evaluate(async () => {
    const { Draftsmith } = await import('./draftsmith.js');
    const silent = new Worker(URL.createObjectURL(new Blob(['onmessage = () => {}'], { type: 'text/javascript' })));
    const client = new Draftsmith(silent, { timeoutMs: 150 });
    const outcome = (p) => p.then(() => 'resolved', (e) => e.code);
    const timedOut = await outcome(client.request('hello'));
    const perRequest = await outcome(client.request('hello', undefined, { timeoutMs: 50 }));
    const pending = outcome(client.request('hello', undefined, { timeoutMs: 0 }));
    client.close();
    return { timedOut, perRequest, closed: await pending, afterClose: await outcome(client.hello()) };
  });
  assert.deepEqual(result, { timedOut: 'timeout', perRequest: 'timeout', closed: 'closed', afterClose: 'closed' });
});

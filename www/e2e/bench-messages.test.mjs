// The message-encoding benchmark page (`make bench-browser`'s messages part) converts each
// message both ways and brings it from a worker to the page in each form, with the same
// message at the end of every way: here with short rounds.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch } from './harness.mjs';

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

test('the messages page times each encoding and each crossing, all giving the same message', async () => {
  const page = await env.newPage();
  await page.goto(`${env.url}bench/messages.html?ms=2&rounds=1`);
  await page.waitForFunction(() => window.benchResult, null, { timeout: 120_000 });
  const r = await page.evaluate(() => window.benchResult);
  assert.equal(r.error, undefined, r.error);
  assert.equal(Object.keys(r.messages).length, 4);
  for (const [name, m] of Object.entries(r.messages)) {
    assert.equal(m.same, true, `${name}: text and value encodings differ`);
    for (const k of ['inTextUs', 'inValueUs', 'outTextUs', 'outValueUs']) {
      assert.ok(Number.isFinite(m[k]) && m[k] > 0, `${name}: ${k} = ${m[k]}`);
    }
    assert.deepEqual(Object.keys(m.crossing), ['text', 'bytes', 'value'], name);
    for (const [form, c] of Object.entries(m.crossing)) {
      assert.equal(c.same, true, `${name}: the ${form} crossing gave another message`);
      assert.ok(Number.isFinite(c.us) && c.us > 0, `${name}: ${form} took ${c.us} µs`);
      assert.ok(Number.isFinite(c.decodeUs) && c.decodeUs >= 0, `${name}: ${form} decoded in ${c.decodeUs} µs`);
    }
  }
});

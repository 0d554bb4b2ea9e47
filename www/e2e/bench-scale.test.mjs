// The scale benchmark page (`make bench-browser`'s scale tables) runs through the worker and
// reports every metric at every size with its growth: here on two small sizes.
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

test('the scale page reports each metric at each size, with its growth', async () => {
  const page = await env.newPage();
  await page.goto(`${env.url}bench/scale.html?words=10000,20000&notes=20,40&warmup=20`);
  await page.waitForFunction(() => window.benchResult, null, { timeout: 300_000 });
  const r = await page.evaluate(() => window.benchResult);
  assert.equal(r.error, undefined, r.error);
  assert.deepEqual(r.words, [10_000, 20_000]);
  assert.deepEqual(r.chapters, [1, 2]);
  assert.deepEqual(
    r.manuscript.map((m) => m.name),
    ['open project (cold)', 'search_manuscript, literal', 'search_manuscript, regex', 'run_analysis (full)', 'export_project', 'keystroke', 'update_manuscript (agent)', 'editor-context block'],
  );
  assert.deepEqual(r.memory.map((m) => m.name), ['search_memory']);
  for (const row of [...r.manuscript, ...r.memory]) {
    assert.equal(row.ms.length, 2, row.name);
    assert.ok(row.ms.every((ms) => Number.isFinite(ms) && ms >= 0), `${row.name}: ${row.ms}`);
    assert.equal(row.growth.length, 1, row.name);
  }
});

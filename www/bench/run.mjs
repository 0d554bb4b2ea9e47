// Runs the browser benchmarks in headless Chromium and prints their numbers.
//   node www/bench/run.mjs        (make bench-browser)
import { launch } from '../e2e/harness.mjs';

const env = await launch();
try {
  const page = await env.newPage();
  await page.goto(`${env.url}bench/memory.html`);
  await page.waitForFunction(() => window.benchResult, null, { timeout: 600_000 });
  const result = await page.evaluate(() => window.benchResult);
  if (result.error) throw new Error(result.error);
  console.log(`memory: ${result.notes} notes (~1 KB) in batches of ${result.batch}: ${result.writeSeconds} s, ${result.writesPerSecond} notes/s`);
  console.log(`memory: ${result.searches} searches over ${result.notes} notes: p50 ${result.searchP50Ms} ms, p95 ${result.searchP95Ms} ms`);
  console.log(`memory: storage used ${result.storageUsageBytes} bytes`);
  await page.goto(`${env.url}bench/keystroke.html`);
  await page.waitForFunction(() => window.benchResult, null, { timeout: 600_000 });
  const keys = await page.evaluate(() => window.benchResult);
  if (keys.error) throw new Error(keys.error);
  if (keys.cold) {
    console.log(`keystroke: the first ${keys.cold.keys} after the worker started (5 KB chapter, warm-up, not counted below): p50 ${keys.cold.p50Ms} ms, p95 ${keys.cold.p95Ms} ms`);
  }
  console.log(`keystroke: raw IndexedDB put p50 ${keys.rawPutP50Ms} ms (${keys.keys} puts, same run)`);
  for (const [name, r] of [['5 KB', keys.small], ['5 MB', keys.large]]) {
    console.log(`keystroke: ${name} chapter, one char through the worker and saved: p50 ${r.p50Ms} ms, p95 ${r.p95Ms} ms = ${r.ratio}x the raw put (target <= 3x)`);
  }
} finally {
  await env.close();
}

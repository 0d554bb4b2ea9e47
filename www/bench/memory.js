// Browser benchmark of the memory store: 10,000 notes of about 1 KB written in batches,
// then 100 searches. Prints writes per second and search p50/p95. Numbers, never asserts.
import { Draftsmith } from '../draftsmith.js';

const params = new URLSearchParams(location.search);
const NOTES = Number(params.get('notes') ?? 10_000);
const BATCH = Number(params.get('batch') ?? 500);
const SEARCHES = Number(params.get('searches') ?? 100);
const out = document.querySelector('[data-testid="bench-output"]');

const WORDS = ('lighthouse harbour storm lantern keeper gull ledger captain tide rope stair map fog bell '
  + 'shipwreck letter mara tobias elin greyhaven saltmarsh north night dawn salt brass chart room secret '
  + 'promise betrayal wreck signal beacon island cliff boat oar sail compass debt ghost memory').split(' ');

function rng(seed) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

function note(random, i) {
  let text = `Note ${i}:`;
  while (text.length < 1000) text += ' ' + WORDS[Math.floor(random() * WORDS.length)];
  return { text, noteType: 'observation', tags: [WORDS[i % WORDS.length], `batch-${Math.floor(i / BATCH)}`] };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function main() {
  const db = `bench-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const client = await Draftsmith.start({ workerUrl: new URL(`../worker.js?db=${db}`, import.meta.url), persist: false, timeoutMs: 120_000 });
  await client.createProject('Benchmark');
  const random = rng(42);
  const started = performance.now();
  for (let i = 0; i < NOTES; i += BATCH) {
    const notes = [];
    for (let j = i; j < Math.min(NOTES, i + BATCH); j++) notes.push(note(random, j));
    await client.request('write_memory_notes', { notes });
  }
  const writeSeconds = (performance.now() - started) / 1000;
  const times = [];
  for (let k = 0; k < SEARCHES; k++) {
    const query = `${WORDS[Math.floor(random() * WORDS.length)]} ${WORDS[Math.floor(random() * WORDS.length)]}`;
    const t = performance.now();
    const result = await client.execute('search_memory', { query, limit: 10 });
    times.push(performance.now() - t);
    if (result.status !== 'success') throw new Error(JSON.stringify(result.data));
  }
  times.sort((a, b) => a - b);
  const estimate = await client.storageEstimate();
  const report = {
    notes: NOTES,
    batch: BATCH,
    writeSeconds: +writeSeconds.toFixed(2),
    writesPerSecond: Math.round(NOTES / writeSeconds),
    searches: SEARCHES,
    searchP50Ms: +percentile(times, 50).toFixed(2),
    searchP95Ms: +percentile(times, 95).toFixed(2),
    storageUsageBytes: estimate.usage,
  };
  out.textContent = JSON.stringify(report, null, 2);
  window.benchResult = report;
  await client.deleteProject((await client.listProjects()).current ?? '');
  client.close();
}

main().catch((err) => {
  out.textContent = `failed: ${err.message}`;
  window.benchResult = { error: err.message };
});

// Browser benchmark of the project at the sizes writers reach, through the page -> worker ->
// core -> IndexedDB path (the native `benches/scale.rs` measures the core alone):
// - manuscripts of generated prose of 10,000, 100,000 and 1,000,000 words (chapters of 10,000
//   words: 1, 10 and 100 of them), the projects of one database: opening the project in a new
//   worker (cold: read from IndexedDB, after a checkpoint), `search_manuscript` (literal and
//   regex), `run_analysis` (full), `export_project`; then what runs per keystroke or per tool
//   call: a keystroke (saved), an agent's `update_manuscript` (saved), the editor-context
//   block;
// - memories of 1,000, 10,000 and 100,000 notes of about 40 words, each in a database of its
//   own: `search_memory`.
// Each operation's median over its repetitions, then its growth from the smallest size. What
// runs per keystroke or per tool call should not grow with the project beyond the chapter it
// touches. Numbers, never asserts. `?words=10000,100000` and `?notes=1000` pick sizes.
//
// The per-call operations run in one worker for all sizes, the sizes taking turns over
// `?rounds=` rounds (default 10): a worker's round trip differs from one worker to the next and
// over a run (it depends on where the OS puts its thread and the page's, which on a small
// machine costs a wake-up of an idle core or not), and a size measured in a worker of its own
// would carry its worker's luck into the growth.
//
// The workers of one page share the core's compiled wasm (the first lends it to the page): a
// size measured later would run on code that V8 has optimized while an earlier size ran. So a
// first worker runs the per-call operations `?warmup=` times (default 1500) on a small project
// before any size is measured, and every size runs on the same optimized code.
import { Draftsmith } from '../draftsmith.js';

const params = new URLSearchParams(location.search);
const sizes = (name, fallback) => (params.get(name) ?? fallback).split(',').filter(Boolean).map(Number);
const WORDS = sizes('words', '10000,100000,1000000');
const NOTES = sizes('notes', '1000,10000,100000');
const CHAPTER_WORDS = 10_000;
const WARMUP = Number(params.get('warmup') ?? 1500);
const PER_CALL_ROUNDS = Number(params.get('rounds') ?? 10);
const out = document.querySelector('[data-testid="bench-output"]');

// The native bench's vocabulary and shape: sentences of 6–18 words, paragraphs of 3–7.
const VOCABULARY = ('the keeper climbed stair lamp sea storm answered slow grey Mara Tobin harbour night rope salt '
  + 'window light turned cold boat rocks wind said quietly before after letter iron door gulls tide waited '
  + 'again under over bell rang far ship').split(' ');

function rng(seed) {
  let s = seed >>> 0;
  const next = () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
  return { range: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)), pick: (list) => list[Math.floor(next() * list.length)] };
}

function prose(random, words) {
  const parts = [];
  let written = 0;
  while (written < words) {
    const paragraph = [];
    for (let s = random.range(3, 7); s > 0 && written < words; s--) {
      const n = Math.max(1, Math.min(random.range(6, 18), words - written));
      const sentence = Array.from({ length: n }, () => random.pick(VOCABULARY));
      sentence[0] = sentence[0][0].toUpperCase() + sentence[0].slice(1);
      paragraph.push(`${sentence.join(' ')}.`);
      written += n;
    }
    parts.push(paragraph.join(' '));
  }
  return `${parts.join('\n\n')}\n`;
}

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];

/** Push the times (ms) of `reps` calls of `f(i)` onto `list`, after `warm` calls not counted. */
async function sample(list, reps, f, warm = 0) {
  for (let i = 0; i < warm; i++) await f(i);
  for (let i = 0; i < reps; i++) {
    const started = performance.now();
    await f(i);
    list.push(performance.now() - started);
  }
}

/** The median time of `reps` calls of `f(i)`, in ms, after `warm` calls not counted. */
async function time(reps, f, warm = 0) {
  const times = [];
  await sample(times, reps, f, warm);
  return median(times);
}

const workerUrl = (db) => new URL(`../worker.js?db=${db}`, import.meta.url);
const start = (db) => Draftsmith.start({ workerUrl: workerUrl(db), persist: false, timeoutMs: 600_000 });

async function tool(client, name, args) {
  const result = await client.execute(name, args, { origin: 'agent:bench' });
  if (result.status !== 'success') throw new Error(`${name}: ${JSON.stringify(result.data)}`);
  return result;
}

function dropDatabase(db) {
  return new Promise((resolve) => {
    const request = indexedDB.deleteDatabase(db);
    request.onsuccess = request.onerror = request.onblocked = () => resolve();
  });
}

/** A project of `words` words of generated prose, created in `db` and checkpointed. */
async function create(db, words) {
  const random = rng(words);
  const chapters = Array.from({ length: Math.ceil(words / CHAPTER_WORDS) }, (_, i) => ({
    title: `Chapter ${i + 1}`,
    // The first chapter opens with a mark an agent's edit replaces back and forth.
    text: `${i === 0 ? '[mark-a] ' : ''}${prose(random, CHAPTER_WORDS)}`,
  }));
  const writer = await start(db);
  const { id } = await writer.projects.create('Scale', chapters);
  await writer.checkpoint(id);
  writer.close();
  return id;
}

/** What grows with the manuscript it reads: each in a worker that has not seen the project. */
async function whole(db, id) {
  const metrics = {};
  // Opening it in a worker that has not seen it (the worker's own start is not counted).
  let client = null;
  const opens = [];
  for (let i = 0; i < 3; i++) {
    client?.close();
    client = await start(db);
    const started = performance.now();
    await client.projects.open(id);
    opens.push(performance.now() - started);
  }
  metrics['open project (cold)'] = median(opens);
  metrics['search_manuscript, literal'] = await time(5, () => tool(client, 'search_manuscript', { query: 'keeper climbed' }));
  metrics['search_manuscript, regex'] = await time(5, () => tool(client, 'search_manuscript', { query: 'gulls? (rang|waited)', regex: true }));
  metrics['run_analysis (full)'] = await time(3, () => tool(client, 'run_analysis', { interpret: false }));
  metrics.export_project = await time(3, () => client.exportProject(id));
  client.close();
  return metrics;
}

/**
 * What runs per keystroke or per tool call, for every size in one worker: `PER_CALL_ROUNDS`
 * rounds, each opening every size's project in turn and timing a share of its calls; each
 * metric the median of all its calls. One worker and sizes taking turns, so that every size
 * meets the same machine: how fast a worker's messages come and go depends on which core
 * its thread lands on and what else runs, which differs between workers and over a run.
 */
async function perCall(db, ids) {
  const client = await start(db);
  const samples = ids.map(() => ({ keystroke: [], 'update_manuscript (agent)': [], 'editor-context block': [] }));
  const typed = ids.map(() => 0);
  // An agent's edit swaps the mark for the other one, back and forth.
  const edits = ids.map(() => 0);
  for (let round = 0; round < PER_CALL_ROUNDS; round++) {
    for (const [n, id] of ids.entries()) {
      await client.projects.open(id);
      // Typing in the middle of the first chapter.
      const chapter = await client.getChapter();
      let version = chapter.version;
      const middle = Math.floor(chapter.text.length / 2);
      await sample(samples[n].keystroke, Math.ceil(200 / PER_CALL_ROUNDS), async () => {
        const result = await client.applyUserChange(chapter.id, version, [{ retain: middle + typed[n]++ }, { insert: 'x' }]);
        version = result.applied?.version ?? version;
      }, 10);
      await sample(samples[n]['update_manuscript (agent)'], Math.ceil(100 / PER_CALL_ROUNDS), () => {
        const back = edits[n]++ % 2 === 1;
        return tool(client, 'update_manuscript', { searchText: back ? '[mark-b]' : '[mark-a]', replacementText: back ? '[mark-a]' : '[mark-b]' });
      }, 10);
      await sample(samples[n]['editor-context block'], Math.ceil(200 / PER_CALL_ROUNDS), () => client.editorContext(), 10);
    }
  }
  client.close();
  return samples.map((metrics) => Object.fromEntries(Object.entries(metrics).map(([name, list]) => [name, median(list)])));
}

async function manuscripts(words) {
  const db = `scale-manuscripts-${Date.now()}`;
  const ids = [];
  for (const w of words) {
    out.textContent = `running: creating ${w} words…`;
    ids.push(await create(db, w));
  }
  const runs = [];
  for (const [n, w] of words.entries()) {
    out.textContent = `running: ${w} words…`;
    runs.push(await whole(db, ids[n]));
  }
  out.textContent = 'running: per-call operations, every size in turn…';
  const calls = await perCall(db, ids);
  await dropDatabase(db);
  return runs.map((metrics, n) => ({ ...metrics, ...calls[n] }));
}

async function memory(notes) {
  const random = rng(notes + 7);
  const db = `scale-notes-${notes}-${Date.now()}`;
  const client = await start(db);
  await client.projects.create('Memory');
  for (let written = 0; written < notes; ) {
    const batch = Array.from({ length: Math.min(1_000, notes - written) }, (_, i) => ({
      text: prose(random, 40).trim(),
      noteType: 'fact',
      tags: [`t${(written + i) % 50}`],
    }));
    written += batch.length;
    await client.memory.write(batch);
  }
  const queries = ['keeper lamp', 'storm harbour', 'Mara letter', 'tide bell'];
  const metrics = { search_memory: await time(40, (i) => tool(client, 'search_memory', { query: queries[i % queries.length] }), 4) };
  client.close();
  await dropDatabase(db);
  return metrics;
}

/** Run the per-call operations `times` times in a worker of their own (see the top). */
async function warmUp(times) {
  const db = `scale-warmup-${Date.now()}`;
  const client = await start(db);
  const { id } = await client.projects.create('Warm-up', [{ title: 'One', text: `[mark-a] ${prose(rng(1), 2_000)}` }]);
  await client.projects.open(id);
  const chapter = await client.getChapter();
  let version = chapter.version;
  await client.memory.write(Array.from({ length: 200 }, (_, i) => ({ text: prose(rng(i), 40).trim(), noteType: 'fact', tags: [`t${i % 50}`] })));
  for (let i = 0; i < times; i++) {
    const result = await client.applyUserChange(chapter.id, version, [{ retain: 100 + i }, { insert: 'x' }]);
    version = result.applied?.version ?? version;
    if (i % 5 === 0) {
      await tool(client, 'update_manuscript', { searchText: i % 10 ? '[mark-b]' : '[mark-a]', replacementText: i % 10 ? '[mark-a]' : '[mark-b]' });
      await client.editorContext();
      await tool(client, 'search_memory', { query: 'keeper lamp' });
    }
  }
  client.close();
  await dropDatabase(db);
}

async function main() {
  if (WARMUP > 0) {
    out.textContent = 'running: warm-up…';
    await warmUp(WARMUP);
  }
  const runs = await manuscripts(WORDS);
  const notes = [];
  for (const n of NOTES) {
    out.textContent = `running: ${n} notes…`;
    notes.push(await memory(n));
  }
  const round = (ms) => Math.round(ms * 1000) / 1000;
  const table = (sizes, list) =>
    Object.keys(list[0] ?? {}).map((name) => ({
      name,
      ms: list.map((m) => round(m[name])),
      growth: list.slice(1).map((m) => Math.round((m[name] / list[0][name]) * 100) / 100),
    }));
  window.benchResult = {
    words: WORDS,
    chapters: WORDS.map((w) => Math.ceil(w / CHAPTER_WORDS)),
    notes: NOTES,
    manuscript: table(WORDS, runs),
    memory: table(NOTES, notes),
  };
  out.textContent = JSON.stringify(window.benchResult, null, 2);
}

main().catch((err) => {
  window.benchResult = { error: String(err?.stack ?? err) };
  out.textContent = window.benchResult.error;
});

// Browser benchmark of the memory store, side by side with its peers, in one run:
// - writes: 10,000 notes of about 1 KB in batches of 500, through `write_memory_notes`
//   (page -> worker -> core -> IndexedDB), against raw IndexedDB and against Dexie writing
//   the same records (the shape the core stores, with the same three indexes) in the same
//   batches, one transaction per batch. Each writes into a fresh database of its own; the
//   three take turns batch by batch (see `writeRound`).
// - search: 100 two-word queries over those notes through `search_memory` (a tool call,
//   worker round trip included), against MiniSearch over the same notes in the page,
//   configured to rank as the core does: the core's tokenizer (tokenize.js), one field in
//   which tag terms count twice, and BM25 with k = 1.2, b = 0.75 and BM25+'s lower bound
//   d = 0 (which leaves the core's formula and idf), each term repeat numbered so that
//   MiniSearch's field length is the core's (see `numbered`). Reported: the overlap of the two
//   top 10s (MiniSearch's without its factor for the query terms matched, see `search`), and
//   each side's precision@10 and nDCG@10 against planted relevant notes (below); also
//   MiniSearch with its default options, for reference. Where a search's time goes: a
//   `hello` round trip, and a `search_memory` call whose words are all stopwords (the tool
//   call, its audit record and its answer, with no search).
// Each write contender runs `?rounds=` times (default 3), the median is reported.
// Numbers, never asserts. `?notes=`, `?batch=`, `?searches=` change the sizes.
import { Draftsmith } from '../draftsmith.js';
import Dexie from '../node_modules/dexie/dist/dexie.mjs';
import MiniSearch from '../node_modules/minisearch/dist/es/index.js';
import { tokenize } from './tokenize.js';

const params = new URLSearchParams(location.search);
const NOTES = Number(params.get('notes') ?? 10_000);
const BATCH = Number(params.get('batch') ?? 500);
const SEARCHES = Number(params.get('searches') ?? 100);
const ROUNDS = Number(params.get('rounds') ?? 3);
// Relevant notes planted per query (the ground truth of the quality measures).
const RELEVANT = Number(params.get('relevant') ?? 10);
const out = document.querySelector('[data-testid="bench-output"]');

// A few story words, then a long tail of made-up ones: notes are drawn from a Zipf-like
// distribution over the whole list, so that a query word is frequent in some notes and rare
// or absent in others (ranking has something to rank).
const HEAD = ('lighthouse harbour storm lantern keeper gull ledger captain tide rope stair map fog bell '
  + 'shipwreck letter mara tobias elin greyhaven saltmarsh north night dawn salt brass chart room secret '
  + 'promise betrayal wreck signal beacon island cliff boat oar sail compass debt ghost memory').split(' ');
const SYLLABLES = 'ka lo mi ren sa tu vel dor an esh il mor qua bri fen gal'.split(' ');
const WORDS = [...HEAD];
for (const a of SYLLABLES) for (const b of SYLLABLES) for (const c of ['', 'th', 'n']) WORDS.push(`${a}${b}${c}`);

function rng(seed) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

// Zipf-like: word k with weight 1 / (k + 1).
function sampler(random) {
  const cumulative = [];
  let total = 0;
  for (let k = 0; k < WORDS.length; k++) cumulative.push((total += 1 / (k + 1)));
  return () => {
    const x = random() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return WORDS[lo];
  };
}

// The ground truth, which neither search sees: each query has a topic of six words of
// middling frequency, and RELEVANT notes are written about it (every word of theirs is a
// topic word with probability 0.08, else drawn as in any note). The query is two of its topic's
// words, so a relevant note may lack one or both of them, and other notes hold them too.
function makeTopics() {
  const random = rng(7);
  const topics = [];
  for (let k = 0; k < SEARCHES; k++) {
    const words = new Set();
    while (words.size < 6) words.add(WORDS[20 + Math.floor(random() * 400)]);
    const topic = [...words];
    topics.push({ words: topic, query: `${topic[0]} ${topic[1]}` });
  }
  return topics;
}

// The topic note `i` is planted for, or -1: planted notes are spread evenly over the notes.
function plantedTopic(i) {
  const stride = Math.max(1, Math.floor(NOTES / (SEARCHES * RELEVANT)));
  const k = i / stride;
  return i % stride === 0 && k < SEARCHES * RELEVANT ? k % SEARCHES : -1;
}

function makeNotes(topics) {
  const random = rng(42);
  const word = sampler(random);
  const notes = [];
  for (let i = 0; i < NOTES; i++) {
    const topic = plantedTopic(i);
    const draw = topic < 0
      ? word
      : () => (random() < 0.08 ? topics[topic].words[Math.floor(random() * 6)] : word());
    // Joined from parts: a flat string, as JSON.parse or a text field gives (a string built
    // by `+=` is a rope, which IndexedDB has to flatten when it clones it).
    const parts = [`Note ${i}:`];
    let length = parts[0].length;
    while (length < 1000) {
      const w = draw();
      parts.push(w);
      length += w.length + 1;
    }
    const text = parts.join(' ');
    notes.push({ text, noteType: 'observation', tags: [HEAD[i % HEAD.length], `batch-${Math.floor(i / BATCH)}`] });
  }
  return notes;
}

function stats(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  return { p50: +at(50).toFixed(3), p95: +at(95).toFixed(3) };
}

// The record the core writes for a note (src/persist.rs, `note_record`).
function record(note, id, project, now) {
  const stored = {
    id,
    project,
    text: note.text,
    noteType: note.noteType,
    scope: 'project',
    tags: note.tags,
    importance: 3,
    createdMs: now,
    updatedMs: now,
    version: 1,
    previous: [],
    author: 'user',
  };
  return { id, project, tags: note.tags, updatedMs: now, note: stored };
}

function uuid() {
  return crypto.randomUUID();
}

// The three writers. Each opens a fresh database, then writes one batch per call.
async function oursWriter() {
  const db = `bench-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const client = await Draftsmith.start({ workerUrl: new URL(`../worker.js?db=${db}`, import.meta.url), persist: false, timeoutMs: 120_000 });
  await client.createProject('Benchmark');
  return {
    client,
    db,
    write: (batch) => client.request('write_memory_notes', { notes: batch }),
    // Untimed, before the next writer's turn: a round trip the worker serves after whatever it
    // left for when it is idle, so that none of it runs while another writer is timed.
    settle: () => client.hello(),
    async close() {
      await client.deleteProject((await client.listProjects()).current ?? '');
      client.close();
      indexedDB.deleteDatabase(db);
    },
  };
}

function rawOpen(name) {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(name, 1);
    open.onupgradeneeded = () => {
      const store = open.result.createObjectStore('notes', { keyPath: 'id' });
      store.createIndex('project', 'project');
      store.createIndex('tags', 'tags', { multiEntry: true });
      store.createIndex('updated', 'updatedMs');
    };
    open.onerror = () => reject(open.error);
    open.onsuccess = () => resolve(open.result);
  });
}

async function rawWriter() {
  const name = `raw-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const db = await rawOpen(name);
  return {
    // One readwrite transaction per batch, its records built as they are put.
    write: (batch) => new Promise((done, fail) => {
      const now = Date.now();
      const tx = db.transaction('notes', 'readwrite');
      const store = tx.objectStore('notes');
      for (const note of batch) store.put(record(note, uuid(), 'p', now));
      tx.oncomplete = done;
      tx.onerror = () => fail(tx.error);
      tx.onabort = () => fail(tx.error);
    }),
    async close() {
      db.close();
      indexedDB.deleteDatabase(name);
    },
  };
}

async function dexieWriter() {
  const name = `dexie-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const db = new Dexie(name);
  db.version(1).stores({ notes: 'id, project, *tags, updatedMs' });
  await db.open();
  return {
    write: (batch) => {
      const now = Date.now();
      return db.notes.bulkPut(batch.map((note) => record(note, uuid(), 'p', now)));
    },
    async close() {
      db.close();
      await Dexie.delete(name);
    },
  };
}

// One round: every writer writes all the notes into its own fresh database, batch by batch,
// taking turns at each batch (in a rotating order), so that all three see the same machine
// even when it is busy. Returns each one's total time (s) and our writer, kept open.
async function writeRound(notes, round) {
  const writers = { raw: await rawWriter(), ours: await oursWriter(), dexie: await dexieWriter() };
  const seconds = { raw: 0, ours: 0, dexie: 0 };
  const order = Object.keys(writers);
  for (let i = 0, k = round; i < notes.length; i += BATCH, k++) {
    const batch = notes.slice(i, i + BATCH);
    for (let j = 0; j < order.length; j++) {
      const who = order[(j + k) % order.length];
      const t = performance.now();
      await writers[who].write(batch);
      seconds[who] += (performance.now() - t) / 1000;
      await writers[who].settle?.();
    }
  }
  await writers.raw.close();
  await writers.dexie.close();
  return { seconds, mine: writers.ours };
}

// The note number a hit's preview starts with ("Note 123: …").
function noteNumber(hit) {
  const match = /^Note (\d+):/.exec(hit.preview ?? '');
  return match ? Number(match[1]) : -1;
}

// Precision@10 and nDCG@10 (binary relevance) of a ranked list of note numbers.
function quality(ranked, relevant) {
  const top = ranked.slice(0, 10);
  const found = top.filter((n) => relevant.has(n)).length;
  const dcg = top.reduce((sum, n, i) => sum + (relevant.has(n) ? 1 / Math.log2(i + 2) : 0), 0);
  let ideal = 0;
  for (let i = 0; i < Math.min(10, relevant.size); i++) ideal += 1 / Math.log2(i + 2);
  return { precision: found / 10, ndcg: ideal ? dcg / ideal : 0 };
}

// The core's terms of a text, each repeat numbered ("lamp", "lamp#2", ...). MiniSearch takes a
// field's length as its number of distinct tokens, the core as its number of terms: numbered,
// the two counts are the same, and `processTerm` takes the numbers off before indexing.
function numbered(text) {
  const seen = new Map();
  return tokenize(text).map((term) => {
    const n = (seen.get(term) ?? 0) + 1;
    seen.set(term, n);
    return n === 1 ? term : `${term}#${n}`;
  });
}

// MiniSearch configured to rank as the core does (see the top of this file): one field, the
// text then the tags twice (a tag term counts twice in the core), the core's terms and
// lengths, and the core's BM25 parameters. Queries are split by the plain tokenizer.
function sameAsCore() {
  return new MiniSearch({
    fields: ['body'],
    tokenize: numbered,
    processTerm: (term) => term.replace(/#\d+$/, ''),
    searchOptions: { tokenize, processTerm: (term) => term, bm25: { k: 1.2, b: 0.75, d: 0 } },
  });
}

async function search(client, notes, topics) {
  const same = sameAsCore();
  let t = performance.now();
  same.addAll(notes.map((n, id) => ({ id, body: `${n.text} ${n.tags.join(' ')} ${n.tags.join(' ')}` })));
  const miniIndexMs = performance.now() - t;
  const defaults = new MiniSearch({ fields: ['text', 'tags'], searchOptions: { boost: { tags: 2 } } });
  defaults.addAll(notes.map((n, id) => ({ id, text: n.text, tags: n.tags.join(' ') })));
  const relevant = topics.map(() => new Set());
  notes.forEach((_, i) => { if (plantedTopic(i) >= 0) relevant[plantedTopic(i)].add(i); });
  const times = { ours: [], mini: [], defaults: [], hello: [], empty: [] };
  const sums = {};
  const add = (who, q) => {
    sums[who] ??= { precision: 0, ndcg: 0 };
    sums[who].precision += q.precision;
    sums[who].ndcg += q.ndcg;
  };
  let overlap = 0;
  for (const [k, { query }] of topics.entries()) {
    t = performance.now();
    const result = await client.execute('search_memory', { query, limit: 10 });
    times.ours.push(performance.now() - t);
    if (result.status !== 'success') throw new Error(JSON.stringify(result.data));
    t = performance.now();
    const all = same.search(query);
    times.mini.push(performance.now() - t);
    const theirs = all.slice(0, 10);
    // MiniSearch multiplies a score by the number of query terms matched; without that factor
    // its scores are the core's BM25 (the top-10 overlap compares these rankings).
    const formula = all
      .map((h) => ({ id: h.id, score: h.score / h.queryTerms.length }))
      .sort((a, b) => b.score - a.score)
      .slice(0, 10);
    t = performance.now();
    const byDefault = defaults.search(query).slice(0, 10);
    times.defaults.push(performance.now() - t);
    // Where the time of a search goes: the round trip alone, and the tool call without a search.
    t = performance.now();
    await client.hello();
    times.hello.push(performance.now() - t);
    t = performance.now();
    const empty = await client.execute('search_memory', { query: 'the of and', limit: 10 });
    times.empty.push(performance.now() - t);
    if (empty.status !== 'success' || empty.data.count !== 0) throw new Error(JSON.stringify(empty.data));
    const ours = result.data.hits.map(noteNumber);
    const top = new Set(formula.map((h) => h.id));
    overlap += ours.filter((n) => top.has(n)).length / 10;
    add('ours', quality(ours, relevant[k]));
    add('mini', quality(theirs.map((h) => h.id), relevant[k]));
    add('defaults', quality(byDefault.map((h) => h.id), relevant[k]));
  }
  const n = topics.length;
  const mean = (who) => ({ precision: +(sums[who].precision / n).toFixed(3), ndcg: +(sums[who].ndcg / n).toFixed(3) });
  return {
    ...Object.fromEntries(Object.entries(times).map(([who, list]) => [who, stats(list)])),
    miniIndexMs,
    overlap: overlap / n,
    quality: { ours: mean('ours'), mini: mean('mini'), defaults: mean('defaults') },
  };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main() {
  const topics = makeTopics();
  const notes = makeNotes(topics);
  // Several rounds (see `writeRound`); the median of each writer is reported. The last
  // round's core is kept for the searches.
  const times = { ours: [], raw: [], dexie: [] };
  let mine = null;
  for (let round = 0; round < ROUNDS; round++) {
    if (mine) await mine.close();
    const done = await writeRound(notes, round);
    mine = done.mine;
    for (const who of Object.keys(times)) times[who].push(done.seconds[who]);
  }
  const oursSeconds = median(times.ours);
  const rawSeconds = median(times.raw);
  const dexieSeconds = median(times.dexie);
  const found = await search(mine.client, notes, topics);
  const estimate = await mine.client.storageEstimate();
  const report = {
    notes: NOTES,
    batch: BATCH,
    rounds: ROUNDS,
    writeSeconds: +oursSeconds.toFixed(2),
    writesPerSecond: Math.round(NOTES / oursSeconds),
    rawSeconds: +rawSeconds.toFixed(2),
    dexieSeconds: +dexieSeconds.toFixed(2),
    vsRaw: +(oursSeconds / rawSeconds).toFixed(2),
    vsDexie: +(oursSeconds / dexieSeconds).toFixed(2),
    allSeconds: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, v.map((t) => +t.toFixed(2))])),
    searches: SEARCHES,
    searchP50Ms: found.ours.p50,
    searchP95Ms: found.ours.p95,
    miniSearchP50Ms: found.mini.p50,
    miniSearchP95Ms: found.mini.p95,
    miniSearchIndexMs: +found.miniIndexMs.toFixed(1),
    searchVsMiniSearch: +(found.ours.p50 / found.mini.p50).toFixed(2),
    top10Overlap: +found.overlap.toFixed(3),
    miniSearchDefaultP50Ms: found.defaults.p50,
    helloP50Ms: found.hello.p50,
    emptySearchP50Ms: found.empty.p50,
    relevantPerQuery: RELEVANT,
    quality: found.quality,
    storageUsageBytes: estimate.usage,
  };
  out.textContent = JSON.stringify(report, null, 2);
  window.benchResult = report;
  await mine.close();
}

main().catch((err) => {
  out.textContent = `failed: ${err.message}`;
  window.benchResult = { error: err.message };
});

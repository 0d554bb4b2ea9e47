// Browser benchmark of the memory store, side by side with its peers, in one run:
// - writes: 10,000 notes of about 1 KB in batches of 500, through `write_memory_notes`
//   (page -> worker -> core -> IndexedDB), against raw IndexedDB and against Dexie writing
//   the same records (the shape the core stores, with the same three indexes) in the same
//   batches, one transaction per batch. Each writes into a fresh database of its own; the
//   three take turns batch by batch (see `writeRound`).
// - search: 100 two-word queries over those notes through `search_memory` (a tool call,
//   worker round trip included), against MiniSearch over the same notes in the page; with
//   the overlap of the two top 10s.
// Each write contender runs `?rounds=` times (default 3), the median is reported.
// Numbers, never asserts. `?notes=`, `?batch=`, `?searches=` change the sizes.
import { Draftsmith } from '../draftsmith.js';
import Dexie from '../node_modules/dexie/dist/dexie.mjs';
import MiniSearch from '../node_modules/minisearch/dist/es/index.js';

const params = new URLSearchParams(location.search);
const NOTES = Number(params.get('notes') ?? 10_000);
const BATCH = Number(params.get('batch') ?? 500);
const SEARCHES = Number(params.get('searches') ?? 100);
const ROUNDS = Number(params.get('rounds') ?? 3);
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

function makeNotes() {
  const random = rng(42);
  const word = sampler(random);
  const notes = [];
  for (let i = 0; i < NOTES; i++) {
    // Joined from parts: a flat string, as JSON.parse or a text field gives (a string built
    // by `+=` is a rope, which IndexedDB has to flatten when it clones it).
    const parts = [`Note ${i}:`];
    let length = parts[0].length;
    while (length < 1000) {
      const w = word();
      parts.push(w);
      length += w.length + 1;
    }
    const text = parts.join(' ');
    notes.push({ text, noteType: 'observation', tags: [HEAD[i % HEAD.length], `batch-${Math.floor(i / BATCH)}`] });
  }
  return notes;
}

function makeQueries() {
  const random = rng(7);
  const queries = [];
  for (let k = 0; k < SEARCHES; k++) {
    // Words of middling frequency, and now and then a head word.
    const pick = () => WORDS[Math.floor(random() < 0.2 ? random() * HEAD.length : 20 + random() * 400)];
    queries.push(`${pick()} ${pick()}`);
  }
  return queries;
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

async function search(client, notes, queries) {
  const mini = new MiniSearch({ fields: ['text', 'tags'], searchOptions: { boost: { tags: 2 } } });
  const built = performance.now();
  mini.addAll(notes.map((n, id) => ({ id, text: n.text, tags: n.tags.join(' ') })));
  const miniIndexMs = performance.now() - built;
  const oursTimes = [];
  const miniTimes = [];
  let overlap = 0;
  for (const query of queries) {
    let t = performance.now();
    const result = await client.execute('search_memory', { query, limit: 10 });
    oursTimes.push(performance.now() - t);
    if (result.status !== 'success') throw new Error(JSON.stringify(result.data));
    t = performance.now();
    const theirs = mini.search(query).slice(0, 10);
    miniTimes.push(performance.now() - t);
    const top = new Set(theirs.map((h) => h.id));
    overlap += result.data.hits.filter((h) => top.has(noteNumber(h))).length / 10;
  }
  return { ours: stats(oursTimes), mini: stats(miniTimes), miniIndexMs, overlap: overlap / queries.length };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main() {
  const notes = makeNotes();
  const queries = makeQueries();
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
  const found = await search(mine.client, notes, queries);
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

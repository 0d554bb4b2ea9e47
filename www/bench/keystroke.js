// Browser benchmark of the keystroke round trip: `apply_user_change` of one character,
// from the request to its response (the change applied and saved in IndexedDB), on a 5 KB
// and a 5 MB chapter, next to one raw IndexedDB put of a small record. Target: within 2x the
// raw put whatever the chapter's size. Also the same keystroke's transaction and answer from
// a plain JS worker (keystroke-worker.js), the floor of any save made from a worker. Numbers
// only.
//
// Each timed keystroke (and each floor round trip) is followed by one timed raw put from the
// page, and each ratio is taken against the puts made between its own keystrokes: a load on
// the machine that comes and goes weighs on both sides of a ratio alike. The work the worker
// leaves for when it is idle (mirroring the keystroke into the project's Yjs document) runs as
// soon as it has answered, so while the put is timed: the put is no slower for it than after
// an untimed round trip that waits for that work.
//
// `?keys=` keystrokes are timed per chapter (default 200). Before them, `?warmup=` keystrokes
// (default 1500) on a third, 5 KB chapter warm the worker up (IndexedDB opens its files, and
// V8 moves the hot wasm functions from its baseline compiler to its optimizing one, which
// takes about a thousand keystrokes; with fewer, the chapter measured first runs partly on
// baseline code): they are reported on their own as `cold`, so the first keystrokes after the
// worker starts are not hidden, and do not weigh on whichever chapter happens to be measured
// first.
import { Draftsmith } from '../draftsmith.js';

const params = new URLSearchParams(location.search);
const KEYS = Number(params.get('keys') ?? 200);
const WARMUP = Number(params.get('warmup') ?? 1500);
const out = document.querySelector('[data-testid="bench-output"]');

function text(bytes) {
  const line = 'The keeper climbed the stair and lit the lamp before the storm came in. ';
  return line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes);
}

function stats(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  return { p50: at(50), p95: at(95), mean };
}

async function keystrokes(client, bytes, keys = KEYS, raw = null) {
  const project = await client.createProject(`Keystrokes ${bytes}`, [{ title: 'One', text: text(bytes) }]);
  const chapter = project.chapters[0].id;
  let { version } = await client.getChapter(chapter);
  const middle = Math.floor(bytes / 2);
  const times = [];
  const puts = [];
  for (let i = 0; i < keys; i++) {
    const t = performance.now();
    const applied = await client.applyUserChange(chapter, version, [{ retain: middle + i }, { insert: 'x' }], { tag: `k${i}` });
    times.push(performance.now() - t);
    version = applied.version;
    if (raw) puts.push(await raw.put());
  }
  return { ...stats(times), puts };
}

// A database of one store in the page, and one put of a small record in it, timed: what a
// keystroke is compared with.
function rawDatabase(name) {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(name, 1);
    open.onupgradeneeded = () => open.result.createObjectStore('records', { keyPath: 'id' });
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      let i = 0;
      const put = () => {
        const n = i++;
        const t = performance.now();
        return new Promise((done, fail) => {
          const tx = db.transaction('records', 'readwrite');
          tx.objectStore('records').put({ id: `r${n}`, project: 'p', changeset: [{ retain: 2500 + n }, { insert: 'x' }], version: n });
          tx.oncomplete = () => done(performance.now() - t);
          tx.onerror = () => fail(tx.error);
        });
      };
      resolve({ put, close: () => db.close() });
    };
  });
}

// The same keystroke's transaction and answer from a plain JS worker (keystroke-worker.js):
// the floor any worker-based save has, whatever its core does.
async function floor(raw) {
  const worker = new Worker(new URL('./keystroke-worker.js', import.meta.url), { type: 'module' });
  await new Promise((resolve) => (worker.onmessage = resolve));
  const times = [];
  const puts = [];
  for (let i = 0; i < KEYS; i++) {
    const t = performance.now();
    await new Promise((resolve) => {
      worker.onmessage = resolve;
      worker.postMessage({ id: i, type: 'apply_user_change', i });
    });
    times.push(performance.now() - t);
    puts.push(await raw.put());
  }
  worker.terminate();
  return { ...stats(times), puts };
}

async function main() {
  const db = `bench-keys-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const client = await Draftsmith.start({ workerUrl: new URL(`../worker.js?db=${db}`, import.meta.url), persist: false, timeoutMs: 120_000 });
  const cold = WARMUP > 0 ? await keystrokes(client, 5_001, WARMUP) : null;
  const raw = await rawDatabase(`${db}-raw`);
  const small = await keystrokes(client, 5_000, KEYS, raw);
  const large = await keystrokes(client, 5_000_000, KEYS, raw);
  const jsWorker = await floor(raw);
  raw.close();
  const against = (r) => {
    const put = stats(r.puts).p50;
    return { p50Ms: +r.p50.toFixed(3), p95Ms: +r.p95.toFixed(3), putP50Ms: +put.toFixed(3), ratio: +(r.p50 / put).toFixed(2) };
  };
  const result = {
    keys: KEYS,
    // Whether the timer is the fine one (see www/server.mjs); 100 µs steps otherwise.
    isolated: self.crossOriginIsolated === true,
    rawPutP50Ms: +stats([...small.puts, ...large.puts, ...jsWorker.puts]).p50.toFixed(3),
    cold: cold && { keys: WARMUP, p50Ms: +cold.p50.toFixed(3), p95Ms: +cold.p95.toFixed(3) },
    small: against(small),
    large: against(large),
    jsWorker: against(jsWorker),
  };
  client.close();
  out.textContent = JSON.stringify(result, null, 2);
  window.benchResult = result;
}

main().catch((err) => {
  out.textContent = `failed: ${err.message}`;
  window.benchResult = { error: err.message };
});

// Browser benchmark of how a worker message crosses between JavaScript and the core (the
// table in the docs of src/web/mod.rs), per message, in microseconds:
// - in as text: `JSON.stringify` in the page, then `serde_json` in the core (what the worker
//   does with every request); in as a value: `serde_wasm_bindgen` reading the JS object;
// - out as text: `serde_json` in the core, then `JSON.parse` in the page (what the worker
//   does with every response and event); out as a value: `serde_wasm_bindgen` making the JS
//   object (with its JSON-compatible serializer).
// Both directions are timed for four messages: a `saved` event, a keystroke's request, a
// response of 200 history entries and a response with a 70 KB chapter. Each conversion runs
// in a loop of at least `?ms=` milliseconds (default 40), `?rounds=` times (default 7),
// text and value taking turns; the median round is reported.
//
// Then the crossing from the worker to the page, for the same four messages: a worker
// (`crossing-worker.js`) holds each one's JSON text as UTF-8 bytes, as the core's answer sits
// in wasm memory, and sends it as a string (parsed in the page), as a transferred buffer
// (decoded and parsed in the page) or as an object (parsed in the worker, cloned): the time
// from the page's request to the message as an object in the page, one at a time, and the
// part of it the page's thread spends decoding. Numbers, never asserts.
import init, { MessageBench } from '../pkg/draftsmith.js';

const params = new URLSearchParams(location.search);
const MS = Number(params.get('ms') ?? 40);
const ROUNDS = Number(params.get('rounds') ?? 7);
const out = document.querySelector('[data-testid="bench-output"]');

const PROJECT = '7f8e2c1a-4b3d-4e5f-9a6b-1c2d3e4f5a6b';
const CHAPTER = '0d9c8b7a-6f5e-4d3c-8b2a-1f0e9d8c7b6a';

function prose(bytes) {
  const line = 'The keeper climbed the stair and lit the lamp before the storm came in. ';
  return line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes);
}

// The messages, in the shapes the core sends and receives.
const MESSAGES = {
  'a `saved` event': {
    kind: 'event', type: 'saved', project: PROJECT, data: { project: PROJECT, at: 1764321234567, changed: true },
  },
  "a keystroke's request": {
    id: 1042, type: 'apply_user_change', params: { chapter: CHAPTER, baseVersion: 1041, changeset: [{ retain: 2513 }, { insert: 'x' }], tag: 'k1042' },
  },
  'a response of 200 history entries': {
    kind: 'response', id: 77, ok: true, result: {
      entries: Array.from({ length: 200 }, (_, i) => ({
        id: `e${String(i).padStart(4, '0')}-${PROJECT.slice(0, 8)}`,
        seq: i,
        group: `g${Math.floor(i / 4)}`,
        origin: i % 3 ? 'user' : 'agent',
        kind: { type: 'edit' },
        timestampMs: 1764321234567 + i * 150,
        effects: [{ chapter: CHAPTER, change: [{ retain: 2500 + i }, { insert: 'x' }], inverse: [{ retain: 2500 + i }, { delete: 1 }] }],
      })),
    },
  },
  'a response with a 70 KB chapter': {
    kind: 'response', id: 78, ok: true, result: { id: CHAPTER, title: 'The Lamp Room', version: 311, text: prose(70_000) },
  },
};

// Microseconds per call of `f`: calls in a loop until `MS` ms have passed.
function perCall(f) {
  let n = 0;
  const start = performance.now();
  let now = start;
  while (now - start < MS) {
    for (let i = 0; i < 8; i++) f();
    n += 8;
    now = performance.now();
  }
  return ((now - start) * 1000) / n;
}

function median(values) {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}

function measure(message) {
  const text = JSON.stringify(message);
  const bench = new MessageBench(text);
  let sink = 0;
  const ways = {
    inText: () => { sink += MessageBench.decode_text(JSON.stringify(message)); },
    inValue: () => { sink += MessageBench.decode_value(message); },
    outText: () => { sink += JSON.parse(bench.encode_text()) ? 1 : 0; },
    outValue: () => { sink += bench.encode_value() ? 1 : 0; },
  };
  // Both ways must give the same message.
  const same = JSON.stringify(JSON.parse(bench.encode_text())) === JSON.stringify(bench.encode_value());
  const times = Object.fromEntries(Object.keys(ways).map((k) => [k, []]));
  for (const f of Object.values(ways)) perCall(f); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    const order = Object.keys(ways);
    if (round % 2) order.reverse();
    for (const k of order) times[k].push(perCall(ways[k]));
  }
  bench.free();
  const us = (k) => +median(times[k]).toFixed(median(times[k]) < 100 ? 1 : 0);
  return { bytes: new TextEncoder().encode(text).length, same, sink, inTextUs: us('inText'), inValueUs: us('inValue'), outTextUs: us('outText'), outValueUs: us('outValue') };
}

// The forms a message can cross from the worker to the page in, each with what the page does
// to have it as an object.
const decoder = new TextDecoder();
const FORMS = {
  text: (data) => JSON.parse(data),
  bytes: (data) => JSON.parse(decoder.decode(new Uint8Array(data))),
  value: (data) => data,
};

// Per form, the µs from asking the worker for message `index` to holding it as an object in
// the page (one message at a time, for at least `MS` ms a round, `ROUNDS` rounds with the
// forms taking turns; the median round), and the µs of that the page spent decoding.
async function crossing(worker, index, expected) {
  const trip = (form) => new Promise((resolve) => {
    worker.onmessage = ({ data }) => {
      const t = performance.now();
      const message = FORMS[form](data);
      resolve({ message, decodeMs: performance.now() - t });
    };
    worker.postMessage({ message: index, form });
  });
  const round = async (form) => {
    let n = 0;
    let decodeMs = 0;
    const start = performance.now();
    let now = start;
    while (now - start < MS) {
      const r = await trip(form);
      decodeMs += r.decodeMs;
      n += 1;
      now = performance.now();
    }
    return { us: ((now - start) * 1000) / n, decodeUs: (decodeMs * 1000) / n };
  };
  const same = {};
  for (const form of Object.keys(FORMS)) {
    same[form] = JSON.stringify((await trip(form)).message) === expected;
    await round(form); // warm-up
  }
  const times = Object.fromEntries(Object.keys(FORMS).map((k) => [k, { us: [], decodeUs: [] }]));
  for (let r = 0; r < ROUNDS; r++) {
    const order = Object.keys(FORMS);
    for (let i = 0; i < r % order.length; i++) order.push(order.shift());
    for (const form of order) {
      const t = await round(form);
      times[form].us.push(t.us);
      times[form].decodeUs.push(t.decodeUs);
    }
  }
  const us = (values) => +median(values).toFixed(median(values) < 100 ? 1 : 0);
  return Object.fromEntries(Object.entries(times).map(([form, t]) => [form, { same: same[form], us: us(t.us), decodeUs: us(t.decodeUs) }]));
}

async function main() {
  await init();
  const report = { isolated: self.crossOriginIsolated === true, messages: {} };
  for (const [name, message] of Object.entries(MESSAGES)) {
    const { sink, ...r } = measure(message);
    if (!sink) throw new Error(`${name}: nothing decoded`);
    report.messages[name] = r;
  }
  const worker = new Worker(new URL('./crossing-worker.js', import.meta.url));
  const texts = Object.values(MESSAGES).map((m) => JSON.stringify(m));
  await new Promise((resolve) => {
    worker.onmessage = resolve;
    worker.postMessage({ hold: texts });
  });
  const names = Object.keys(MESSAGES);
  for (let i = 0; i < names.length; i++) {
    report.messages[names[i]].crossing = await crossing(worker, i, texts[i]);
  }
  worker.terminate();
  out.textContent = JSON.stringify(report, null, 2);
  window.benchResult = report;
}

main().catch((err) => {
  out.textContent = `failed: ${err.message}\n${err.stack}`;
  window.benchResult = { error: err.message };
});

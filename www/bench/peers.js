// Browser benchmarks of draftsmith next to plain JavaScript peers, in one run (numbers, never
// asserts):
// - cold start: from `new Worker` to the core's `ready` event (the wasm fetched, compiled
//   and instantiated, IndexedDB opened), next to a plain JavaScript worker's first message;
//   the first start of the page (nothing compiled or cached yet, the database created) and
//   the median of the next (the database opened as it is);
// - worker round trip: `hello` through the draftsmith worker (request to JSON text, into the
//   core and back) next to a plain JavaScript echo worker answering the same payload, over
//   several pairs of fresh workers (see `roundTrips`);
// - SSE parsing plus tool-call assembly: the crate's decoder (`StreamBench`, the parser,
//   provider decoder and assembler the model client runs) next to `eventsource-parser` with
//   a JavaScript assembler, on the same OpenAI and Anthropic streams cut into the same
//   1–4 KB chunks; both must give the same text and tool calls.
// `?starts=`, `?trips=`, `?pairs=`, `?streams=` change the repetitions.
import { Draftsmith } from '../draftsmith.js';
import init, { StreamBench } from '../pkg/draftsmith.js';
import { createParser } from '../node_modules/eventsource-parser/dist/index.js';

const params = new URLSearchParams(location.search);
const STARTS = Number(params.get('starts') ?? 9);
const TRIPS = Number(params.get('trips') ?? 1200);
const TRIP_PAIRS = Number(params.get('pairs') ?? 4);
const STREAMS = Number(params.get('streams') ?? 40);
const out = document.querySelector('[data-testid="bench-output"]');

function rng(seed) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

function stats(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  return { p50: +at(50).toFixed(4), p95: +at(95).toFixed(4) };
}

function median(values) {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}

// ---- cold start -------------------------------------------------------------------------

function jsWorkerStart() {
  const started = performance.now();
  const worker = new Worker(new URL('./echo-worker.js', import.meta.url), { type: 'module' });
  return new Promise((resolve) => {
    worker.onmessage = () => {
      resolve(performance.now() - started);
      worker.terminate();
    };
  });
}

async function coldStarts() {
  const ours = [];
  const plain = [];
  // One database for every start, as a writer's browser has: the first start creates it,
  // the later ones open it.
  const db = `bench-cold-${Date.now()}`;
  for (let i = 0; i < STARTS; i++) {
    const started = performance.now();
    const client = await Draftsmith.start({ workerUrl: new URL(`../worker.js?db=${db}`, import.meta.url), persist: false, timeoutMs: 60_000 });
    ours.push(performance.now() - started);
    client.close();
    plain.push(await jsWorkerStart());
  }
  indexedDB.deleteDatabase(db);
  return {
    firstMs: +ours[0].toFixed(1),
    nextMs: +median(ours.slice(1)).toFixed(1),
    jsFirstMs: +plain[0].toFixed(1),
    jsNextMs: +median(plain.slice(1)).toFixed(1),
  };
}

// ---- worker round trip ------------------------------------------------------------------

/**
 * `trips` round trips through a fresh draftsmith worker and a fresh JS echo worker, taking
 * turns; the times of both.
 */
async function roundTripPair(trips) {
  const db = `bench-trips-${Date.now()}`;
  const client = await Draftsmith.start({ workerUrl: new URL(`../worker.js?db=${db}`, import.meta.url), persist: false, timeoutMs: 60_000 });
  const payload = await client.hello();
  const echo = new Worker(new URL('./echo-worker.js', import.meta.url), { type: 'module' });
  await new Promise((resolve) => { echo.onmessage = resolve; });
  echo.postMessage({ type: 'payload', payload });
  let next = 0;
  const waiting = new Map();
  echo.onmessage = (event) => {
    waiting.get(event.data.id)?.(event.data.result);
    waiting.delete(event.data.id);
  };
  const echoHello = () => new Promise((resolve) => {
    const id = ++next;
    waiting.set(id, resolve);
    echo.postMessage({ id, type: 'hello' });
  });
  const ours = [];
  const plain = [];
  // Warm-up, then alternate so that both see the same machine.
  for (let i = 0; i < 100; i++) {
    await client.hello();
    await echoHello();
  }
  for (let i = 0; i < trips; i++) {
    let t = performance.now();
    await client.hello();
    ours.push(performance.now() - t);
    t = performance.now();
    await echoHello();
    plain.push(performance.now() - t);
  }
  client.close();
  echo.terminate();
  await new Promise((resolve) => {
    const request = indexedDB.deleteDatabase(db);
    request.onsuccess = request.onerror = request.onblocked = () => resolve();
  });
  return { ours, plain, payloadBytes: JSON.stringify(payload).length };
}

/**
 * The round trips of `TRIP_PAIRS` pairs of fresh workers, `TRIPS` in all, pooled. A worker's
 * round trip depends on where the OS puts its thread next to the page's (on a small machine,
 * whether each message wakes an idle core), which differs from one worker to the next: one
 * pair would give one draw of it, several give its spread on both sides.
 */
async function roundTrips() {
  const ours = [];
  const plain = [];
  let payloadBytes = 0;
  for (let pair = 0; pair < TRIP_PAIRS; pair++) {
    const trips = await roundTripPair(Math.ceil(TRIPS / TRIP_PAIRS));
    ours.push(...trips.ours);
    plain.push(...trips.plain);
    payloadBytes = trips.payloadBytes;
  }
  return { ours: stats(ours), plain: stats(plain), payloadBytes, pairs: TRIP_PAIRS };
}

// ---- SSE parsing and tool-call assembly -------------------------------------------------

const WORDS = ['the', 'lamp', 'turned', 'all', 'night', 'Café', '—', '«Oui»', 'harbour', '"quoted"', 'rain', 'stairs', 'Mara', '🐉', 'keeper', 'storm'];

function prose(random, chars) {
  const parts = [];
  let length = 0;
  while (length < chars) {
    const word = WORDS[Math.floor(random() * WORDS.length)];
    parts.push(word);
    length += word.length + 1;
  }
  return parts.join(' ');
}

// Cut a string into pieces of 3 to 8 characters (code points, so no surrogate is split).
function pieces(random, text) {
  const chars = [...text];
  const out = [];
  for (let i = 0; i < chars.length;) {
    const n = 3 + Math.floor(random() * 6);
    out.push(chars.slice(i, i + n).join(''));
    i += n;
  }
  return out;
}

// One agent turn: some text, then three tool calls (a small edit, a long insertion, a
// navigation), their arguments streamed in small pieces as models do.
function turn(random) {
  return {
    text: prose(random, 600),
    calls: [
      { id: 'call_1', name: 'update_manuscript', arguments: { searchText: prose(random, 80), replacementText: prose(random, 120), description: 'heavier rain' } },
      { id: 'call_2', name: 'insert_text', arguments: { chapter: 3, position: 'end', text: prose(random, 6000) } },
      { id: 'call_3', name: 'navigate_to_text', arguments: { text: prose(random, 40) } },
    ],
  };
}

function openaiStream(random, answer) {
  const head = '{"id":"chatcmpl-AqX1","object":"chat.completion.chunk","created":1736940000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_f2cd28694a","choices":[{"index":0,"delta":';
  const tail = (finish) => `,"logprobs":null,"finish_reason":${finish}}],"usage":null}`;
  const lines = [`data: ${head}{"role":"assistant","content":""}${tail('null')}`];
  for (const piece of pieces(random, answer.text)) lines.push(`data: ${head}${JSON.stringify({ content: piece })}${tail('null')}`);
  answer.calls.forEach((call, index) => {
    lines.push(`data: ${head}${JSON.stringify({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] })}${tail('null')}`);
    for (const piece of pieces(random, JSON.stringify(call.arguments))) {
      lines.push(`data: ${head}${JSON.stringify({ tool_calls: [{ index, function: { arguments: piece } }] })}${tail('null')}`);
    }
  });
  lines.push(`data: ${head}{}${tail('"tool_calls"')}`);
  lines.push('data: [DONE]');
  return lines.join('\n\n') + '\n\n';
}

function anthropicStream(random, answer) {
  const event = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  let s = event('message_start', { message: { id: 'msg_01', type: 'message', role: 'assistant', content: [], model: 'claude-sonnet-4-5', stop_reason: null, stop_sequence: null, usage: { input_tokens: 1024, output_tokens: 2 } } });
  s += event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
  for (const piece of pieces(random, answer.text)) s += event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } });
  s += event('content_block_stop', { index: 0 });
  answer.calls.forEach((call, i) => {
    const index = i + 1;
    s += event('content_block_start', { index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } });
    for (const piece of pieces(random, JSON.stringify(call.arguments))) {
      s += event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } });
    }
    s += event('content_block_stop', { index });
  });
  s += event('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 2000 } });
  s += event('message_stop', {});
  return s;
}

// The body's bytes in chunks of 1 to 4 KB, as the network delivers them.
function chunked(random, text) {
  const bytes = new TextEncoder().encode(text);
  const chunks = [];
  for (let at = 0; at < bytes.length;) {
    const n = 1024 + Math.floor(random() * 3072);
    chunks.push(bytes.slice(at, at + n));
    at += n;
  }
  return chunks;
}

function ours(provider, chunks) {
  const decoder = new StreamBench(provider);
  for (const chunk of chunks) decoder.push(chunk);
  return JSON.parse(decoder.finish());
}

// The JavaScript peer: eventsource-parser, then each provider's events folded into the
// answer, the arguments parsed at the end.
const fold = {
  openai(state, event) {
    if (event.data === '[DONE]') return;
    const choice = JSON.parse(event.data).choices?.[0];
    if (!choice) return;
    const delta = choice.delta ?? {};
    if (delta.content) state.text += delta.content;
    for (const part of delta.tool_calls ?? []) {
      let call = state.calls.get(part.index);
      if (!call) state.calls.set(part.index, (call = { id: '', name: '', raw: '' }));
      if (part.id) call.id = part.id;
      if (part.function?.name) call.name = part.function.name;
      if (part.function?.arguments) call.raw += part.function.arguments;
    }
  },
  anthropic(state, event) {
    const data = JSON.parse(event.data);
    if (data.type === 'content_block_start' && data.content_block.type === 'tool_use') {
      state.calls.set(data.index, { id: data.content_block.id, name: data.content_block.name, raw: '' });
    } else if (data.type === 'content_block_delta') {
      if (data.delta.type === 'text_delta') state.text += data.delta.text;
      else if (data.delta.type === 'input_json_delta') state.calls.get(data.index).raw += data.delta.partial_json;
    }
  },
};

function peer(provider, chunks) {
  const state = { text: '', calls: new Map() };
  const parser = createParser({ onEvent: (event) => fold[provider](state, event) });
  const decoder = new TextDecoder();
  for (const chunk of chunks) parser.feed(decoder.decode(chunk, { stream: true }));
  parser.feed(decoder.decode());
  const toolCalls = [...state.calls.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([, call]) => ({ id: call.id, name: call.name, arguments: JSON.parse(call.raw || '{}') }));
  return { text: state.text, toolCalls };
}

// JSON with sorted keys, to compare answers.
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

async function streams() {
  await init();
  const random = rng(0x5353);
  const results = {};
  for (const [provider, make] of [['openai', openaiStream], ['anthropic', anthropicStream]]) {
    const answer = turn(random);
    const body = make(random, answer);
    const chunks = chunked(random, body);
    const mine = ours(provider, chunks);
    const theirs = peer(provider, chunks);
    const same = canonical({ text: mine.text, toolCalls: mine.toolCalls }) === canonical(theirs)
      && canonical(theirs) === canonical({ text: answer.text, toolCalls: answer.calls });
    const times = { ours: [], peer: [] };
    // Warm-up, then alternate.
    for (let i = 0; i < 10; i++) {
      ours(provider, chunks);
      peer(provider, chunks);
    }
    for (let i = 0; i < STREAMS; i++) {
      let t = performance.now();
      ours(provider, chunks);
      times.ours.push(performance.now() - t);
      t = performance.now();
      peer(provider, chunks);
      times.peer.push(performance.now() - t);
    }
    const events = (body.match(/\n\n/g) ?? []).length;
    results[provider] = { bytes: body.length, events, chunks: chunks.length, same, ours: stats(times.ours), peer: stats(times.peer) };
  }
  return results;
}

async function main() {
  // Cold starts first: nothing of the core is compiled or cached in this page yet.
  const cold = await coldStarts();
  const trips = await roundTrips();
  const sse = await streams();
  const report = {
    isolated: self.crossOriginIsolated === true,
    cold: { ...cold, ratio: +(cold.firstMs / cold.jsFirstMs).toFixed(1), nextRatio: +(cold.nextMs / cold.jsNextMs).toFixed(1) },
    roundTrip: {
      trips: TRIPS,
      pairs: trips.pairs,
      payloadBytes: trips.payloadBytes,
      oursP50Ms: trips.ours.p50,
      oursP95Ms: trips.ours.p95,
      jsP50Ms: trips.plain.p50,
      jsP95Ms: trips.plain.p95,
      ratio: +(trips.ours.p50 / trips.plain.p50).toFixed(2),
    },
    sse: Object.fromEntries(Object.entries(sse).map(([provider, r]) => [provider, {
      bytes: r.bytes,
      events: r.events,
      chunks: r.chunks,
      sameAnswer: r.same,
      oursP50Ms: r.ours.p50,
      peerP50Ms: r.peer.p50,
      ratio: +(r.ours.p50 / r.peer.p50).toFixed(2),
    }])),
  };
  out.textContent = JSON.stringify(report, null, 2);
  window.benchResult = report;
}

main().catch((err) => {
  out.textContent = `failed: ${err.message}\n${err.stack}`;
  window.benchResult = { error: err.message };
});

// Runs the browser benchmarks in headless Chromium and prints their numbers, then the
// ratios against the peers in one table.
//   node www/bench/run.mjs                 (make bench-browser: every benchmark)
//   node www/bench/run.mjs memory peers    (only those pages: memory, peers, keystroke, messages,
//                                           local-model, scale)
// Each page gets a fresh browser context (its own caches and storage).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { launch } from '../e2e/harness.mjs';

const ALL = ['memory', 'peers', 'keystroke', 'messages', 'local-model', 'scale'];
// What runs per keystroke or per tool call: its growth from the smallest manuscript to the
// largest is a ratio of the table (target <= 1.5x).
const PER_CALL = ['keystroke', 'update_manuscript (agent)', 'editor-context block'];
const chosen = process.argv.slice(2).filter((a) => ALL.includes(a));
const pages = chosen.length ? chosen : ALL;

const env = await launch();

/** The wasm the worker loads: its size raw and gzip -9 (what the first start fetches). */
function wasmSize() {
  const path = new URL('../pkg/draftsmith_bg.wasm', import.meta.url);
  const bytes = readFileSync(path);
  // As `make size` counts it.
  const gzip = execFileSync('gzip', ['-9c', fileURLToPath(path)], { maxBuffer: 64 * 1024 * 1024 }).length;
  return `wasm ${bytes.length.toLocaleString('en')} B, ${gzip.toLocaleString('en')} B gzip -9`;
}
const ratios = [];
function ratio(what, ours, peer, value, note = '') {
  ratios.push({ what, ours, peer, ratio: `${value}x`, note });
}

async function run(name) {
  const page = await env.newPage();
  await page.goto(`${env.url}bench/${name}.html`);
  await page.waitForFunction(() => window.benchResult, null, { timeout: 900_000 });
  const result = await page.evaluate(() => window.benchResult);
  if (result.error) throw new Error(`${name}: ${result.error}\n${page.consoleLog.join('\n')}`);
  await page.context().close();
  return result;
}

try {
  for (const name of pages) {
    if (name === 'memory') {
      const r = await run('memory');
      const all = (list) => list.map((s) => `${s} s`).join(', ');
      console.log(`memory: ${r.notes} notes (~1 KB) in batches of ${r.batch}, median of ${r.rounds} rounds, each into a fresh database:`);
      console.log(`memory:   write_memory_notes ${r.writeSeconds} s (${r.writesPerSecond} notes/s; ${all(r.allSeconds.ours)})`);
      console.log(`memory:   raw IndexedDB      ${r.rawSeconds} s (${all(r.allSeconds.raw)})`);
      console.log(`memory:   Dexie bulkPut      ${r.dexieSeconds} s (${all(r.allSeconds.dexie)})`);
      console.log(`memory: ${r.searches} two-word searches over ${r.notes} notes: search_memory (through the worker) p50 ${r.searchP50Ms} ms, p95 ${r.searchP95Ms} ms; MiniSearch (in the page, the core's tokenizer and BM25 parameters) p50 ${r.miniSearchP50Ms} ms, p95 ${r.miniSearchP95Ms} ms (its index built in ${r.miniSearchIndexMs} ms); top-10 overlap ${Math.round(r.top10Overlap * 100)} %`);
      console.log(`memory:   where a search's time goes: hello round trip p50 ${r.helloP50Ms} ms; search_memory of stopwords only (tool call, audit, answer; no search) p50 ${r.emptySearchP50Ms} ms`);
      const q = r.quality;
      const pair = (x) => `precision@10 ${x.precision}, nDCG@10 ${x.ndcg}`;
      console.log(`memory:   ranking quality against ${r.relevantPerQuery} planted relevant notes per query: search_memory ${pair(q.ours)}; MiniSearch, same tokenizer and BM25 ${pair(q.mini)}; MiniSearch defaults (p50 ${r.miniSearchDefaultP50Ms} ms) ${pair(q.defaults)}`);
      console.log(`memory: storage used ${r.storageUsageBytes} bytes`);
      ratio('IndexedDB writes, 10,000 notes', `${r.writeSeconds} s`, `raw IndexedDB ${r.rawSeconds} s`, r.vsRaw, 'target <= 1.2x');
      ratio('IndexedDB writes, 10,000 notes', `${r.writeSeconds} s`, `Dexie ${r.dexieSeconds} s`, r.vsDexie);
      ratio('memory search, p50', `${r.searchP50Ms} ms`, `MiniSearch ${r.miniSearchP50Ms} ms`, r.searchVsMiniSearch, `target <= 1x; top-10 overlap ${Math.round(r.top10Overlap * 100)} %, nDCG@10 ${r.quality.ours.ndcg} vs ${r.quality.mini.ndcg}`);
    }
    if (name === 'peers') {
      const r = await run('peers');
      const c = r.cold;
      console.log(`cold start: worker start to ready: first ${c.firstMs} ms, then median ${c.nextMs} ms; a plain JS worker's first message: ${c.jsFirstMs} ms, then ${c.jsNextMs} ms`);
      const t = r.roundTrip;
      console.log(`round trip: hello through the worker p50 ${t.oursP50Ms} ms, p95 ${t.oursP95Ms} ms; plain JS echo worker (same ${t.payloadBytes}-byte answer) p50 ${t.jsP50Ms} ms, p95 ${t.jsP95Ms} ms (${t.trips} trips each, over ${t.pairs} pairs of fresh workers)`);
      for (const [provider, s] of Object.entries(r.sse)) {
        console.log(`sse: ${provider} stream (${s.bytes} bytes, ${s.events} events, ${s.chunks} chunks): crate decoder p50 ${s.oursP50Ms} ms; eventsource-parser + JS assembly p50 ${s.peerP50Ms} ms; same answer: ${s.sameAnswer}`);
        ratio(`SSE + tool-call assembly, ${provider}`, `${s.oursP50Ms} ms`, `eventsource-parser ${s.peerP50Ms} ms`, s.ratio, `target <= 1x; ${s.sameAnswer ? 'same answer' : 'ANSWERS DIFFER'}`);
      }
      ratio('worker round trip, p50', `${t.oursP50Ms} ms`, `JS echo worker ${t.jsP50Ms} ms`, t.ratio, 'target <= 1.5x');
      ratio('cold start to ready (first)', `${c.firstMs} ms`, `JS worker ${c.jsFirstMs} ms`, c.ratio, wasmSize());
      ratio('cold start to ready (later, median)', `${c.nextMs} ms`, `JS worker ${c.jsNextMs} ms`, c.nextRatio, 'target <= 2x');
    }
    if (name === 'keystroke') {
      const keys = await run('keystroke');
      if (keys.cold) {
        console.log(`keystroke: the first ${keys.cold.keys} after the worker started (5 KB chapter, warm-up, not counted below): p50 ${keys.cold.p50Ms} ms, p95 ${keys.cold.p95Ms} ms`);
      }
      console.log(`keystroke: raw IndexedDB put p50 ${keys.rawPutP50Ms} ms (one after each timed keystroke, same run; each ratio is against the puts between its own keystrokes)`);
      for (const [label, r] of [['5 KB', keys.small], ['5 MB', keys.large]]) {
        console.log(`keystroke: ${label} chapter, one char through the worker and saved: p50 ${r.p50Ms} ms, p95 ${r.p95Ms} ms = ${r.ratio}x the raw put (${r.putP50Ms} ms; target <= 2x)`);
        ratio(`keystroke saved, ${label} chapter, p50`, `${r.p50Ms} ms`, `raw put ${r.putP50Ms} ms`, r.ratio, 'target <= 2x');
      }
      const f = keys.jsWorker;
      console.log(`keystroke: the floor, a plain JS worker doing the same transaction (2 writes) and answer: p50 ${f.p50Ms} ms, p95 ${f.p95Ms} ms = ${f.ratio}x the raw put (${f.putP50Ms} ms)`);
      ratio('keystroke, plain JS worker (floor), p50', `${f.p50Ms} ms`, `raw put ${f.putP50Ms} ms`, f.ratio, 'same transaction, no core');
    }
    if (name === 'messages') {
      const r = await run('messages');
      console.log('messages: a worker message into the core and out of it, µs per message, JSON text / JS value (serde-wasm-bindgen):');
      for (const [what, m] of Object.entries(r.messages)) {
        console.log(`messages:   ${what} (${m.bytes} B): in ${m.inTextUs} / ${m.inValueUs} µs, out ${m.outTextUs} / ${m.outValueUs} µs${m.same ? '' : ' (ENCODINGS DIFFER)'}`);
      }
      console.log('messages: the same messages from a worker to the page, µs from asking to holding the object (of which the page decoding), as a string / a transferred UTF-8 buffer / an object:');
      for (const [what, m] of Object.entries(r.messages)) {
        const c = m.crossing;
        const differ = Object.entries(c).filter(([, f]) => !f.same).map(([form]) => form);
        console.log(`messages:   ${what}: ${c.text.us} (${c.text.decodeUs}) / ${c.bytes.us} (${c.bytes.decodeUs}) / ${c.value.us} (${c.value.decodeUs}) µs${differ.length ? ` (${differ.join(', ')} DIFFER)` : ''}`);
      }
    }
    if (name === 'local-model') {
      const r = await run('local-model');
      console.log(`local model: ${r.model} through the bridge (wllama), ${r.cores} cores, cross-origin isolated: ${r.crossOriginIsolated}; median of ${r.rounds} answers each:`);
      for (const run of r.runs) {
        console.log(
          `local model:   ${run.label.padEnd(13)} (${run.threads} thread${run.threads > 1 ? 's' : ''}): ` +
            `prompt ${run.promptPerSecond} tokens/s (${run.promptTokens} tokens; ${run.allPromptPerSecond.join(', ')}), ` +
            `generation ${run.generationPerSecond} tokens/s (${run.generatedTokens} tokens; ${run.allGenerationPerSecond.join(', ')}); loaded in ${run.loadMs} ms`,
        );
      }
      const [single, multi] = r.runs;
      ratio('in-browser model, generation', `${multi.generationPerSecond} tok/s (${multi.threads} threads)`, `1 thread ${single.generationPerSecond} tok/s`, (single.generationPerSecond / multi.generationPerSecond).toFixed(2), 'time per token, multi / single');
    }
    if (name === 'scale') {
      const r = await run('scale');
      const ms = (v) => (v < 1 ? `${Math.round(v * 1000)} µs` : `${v.toFixed(2)} ms`);
      const print = (label, sizes, unit, rows) => {
        console.log(`scale: ${label}, median through the worker; growth from the smallest size:`);
        for (const row of rows) {
          const cells = row.ms.map((v, i) => `${sizes[i]} ${unit}: ${ms(v)}`).join(', ');
          console.log(`scale:   ${row.name.padEnd(28)} ${cells}   growth ${row.growth.map((g) => `${g}x`).join(', ')}`);
        }
      };
      print(`manuscript (${r.chapters.join(', ')} chapters)`, r.words, 'words', r.manuscript);
      print('memory', r.notes, 'notes', r.memory);
      const last = r.words.length - 1;
      for (const row of r.manuscript.filter((m) => PER_CALL.includes(m.name))) {
        if (last < 1) break;
        ratio(`${row.name}, ${r.words[last].toLocaleString('en')} / ${r.words[0].toLocaleString('en')} words`, ms(row.ms[last]), ms(row.ms[0]), row.growth[last - 1].toFixed(2), 'growth; target <= 1.5x');
      }
    }
  }
  if (ratios.length) {
    console.log('\nratios (draftsmith / peer; below 1 is faster):');
    const cols = ['what', 'ours', 'peer', 'ratio', 'note'];
    const width = Object.fromEntries(cols.map((k) => [k, Math.max(k.length, ...ratios.map((r) => r[k].length))]));
    const line = (r) => cols.map((k) => r[k].padEnd(width[k])).join('  ').trimEnd();
    console.log(line(Object.fromEntries(cols.map((k) => [k, k]))));
    for (const r of ratios) console.log(line(r));
  }
} finally {
  await env.close();
}

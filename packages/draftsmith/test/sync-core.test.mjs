// Property test of the sync engine against the real core (the native headless core,
// `cargo run --example core`, which speaks the worker protocol as JSON lines): random
// interleavings of the writer's typing, agents' edits, another tab's changes, agent undos,
// late and lost messages converge to the core's text, with every piece of the writer's text
// kept. Seeded (`SEED=<n>` reruns one case); a failure names its seed and the steps.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { SyncEngine, charToUtf16 } from '../sync.js';
import { prng, seeds } from './prng.mjs';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The headless core, built by cargo (already built by `cargo test`: then this is quick). */
function coreBinary() {
  if (process.env.DRAFTSMITH_CORE) return process.env.DRAFTSMITH_CORE;
  const built = spawnSync('cargo', ['build', '--quiet', '--example', 'core'], { cwd: ROOT, stdio: 'inherit' });
  if (built.status !== 0) throw new Error('cargo build --example core failed');
  return join(process.env.CARGO_TARGET_DIR || join(ROOT, 'target'), 'debug', 'examples', 'core');
}

/** One headless core process: `exchange(type, params)` resolves to the lines it answered. */
class Core {
  constructor(binary) {
    this.proc = spawn(binary, [], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.lines = createInterface({ input: this.proc.stdout });
    this.waiting = null;
    this.collected = [];
    this.nextId = 1;
    this.lines.on('line', (line) => {
      const message = JSON.parse(line);
      this.collected.push(message);
      if (message.kind === 'response' && this.waiting && message.id === this.waiting.id) {
        const { resolve } = this.waiting;
        this.waiting = null;
        resolve(this.collected.splice(0));
      }
    });
  }
  /** Serve one request; resolves to its events and then its response. */
  exchange(type, params) {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting = { id, resolve };
      this.proc.stdin.write(`${JSON.stringify({ id, type, params })}\n`);
    });
  }
  async ok(type, params) {
    const lines = await this.exchange(type, params);
    const response = lines[lines.length - 1];
    if (!response.ok) throw new Error(`${type}: ${response.error.message}`);
    return response.result;
  }
  close() {
    this.proc.stdin.end();
  }
}

let core;
before(() => {
  core = new Core(coreBinary());
});
after(() => core?.close());

const TOKEN = /\[[wo]\d+[^\]]*\]/g;
const UPPER = /\b[A-Z]{3,}\d*\b/g;

/** UTF-16 ranges of a text where the writer may type or delete: outside every token. */
function freeSpans(text) {
  const spans = [];
  let last = 0;
  for (const m of text.matchAll(TOKEN)) {
    spans.push([last, m.index]);
    last = m.index + m[0].length;
  }
  spans.push([last, text.length]);
  return spans;
}

const isLow = (s, i) => {
  const c = s.charCodeAt(i);
  return c >= 0xdc00 && c <= 0xdfff;
};

/** A random position in a span, never inside a surrogate pair. */
function positionIn(r, text, [from, to]) {
  let pos = r.range(from, to);
  if (pos > from && pos < to && isLow(text, pos)) pos--;
  return pos;
}

async function scenario(seed, steps) {
  const log = [];
  try {
    return await run(seed, steps, log);
  } catch (err) {
    err.message = `seed ${seed} (SEED=${seed} to rerun): ${err.message}\nsteps:\n  ${log.join('\n  ')}`;
    throw err;
  }
}

async function run(seed, steps, log) {
  const r = prng(seed);
  const start = 'ALPHA beta GAMMA delta\nEPSILON zeta 🐉 ETA theta\n\nIOTA kappa LAMBDA mu NU';
  const project = await core.ok('create_project', { name: `p${seed}`, chapters: [{ title: 'One', text: start }] });
  const chapter = project.chapters[0].id;

  // The page's side: requests wait in `toCore` until served; what the core said waits in
  // `fromCore` until delivered, in order (as the worker posts it).
  const toCore = [];
  const fromCore = [];
  const client = {
    request(type, params) {
      return new Promise((resolve, reject) => toCore.push({ type, params, resolve, reject }));
    },
    applyUserChange(ch, baseVersion, changes, { tag }) {
      return this.request('apply_user_change', { chapter: ch, baseVersion, changes, tag });
    },
    getChapter(ch, { since } = {}) {
      return this.request('get_chapter', since === undefined ? { chapter: ch } : { chapter: ch, since });
    },
  };
  const editor = {
    doc: start,
    text() {
      return this.doc;
    },
    apply(changes) {
      let doc = this.doc;
      for (const c of [...changes].reverse()) doc = doc.slice(0, c.from) + c.insert + doc.slice(c.to);
      this.doc = doc;
    },
  };
  const conflicts = [];
  const errors = [];
  const engine = new SyncEngine({
    client,
    chapter,
    version: 0,
    text: start,
    editor,
    listen: false,
    onConflict: (c) => conflicts.push(c),
    onError: (e) => errors.push(e),
  });

  if (process.env.DEBUG) {
    const send = engine._send.bind(engine);
    engine._send = (ops, tag) => { log.push(`  engine sends ${tag ?? 'new'} at v${engine.version}`); send(ops, tag); };
    const remote = engine.remote.bind(engine);
    engine.remote = (e) => { log.push(`  engine hears v${e.version} ${e.tag ?? e.origin}${e.replay ? ' (replay)' : ''} at v${engine.version} inflight ${engine.inflight?.tag}`); remote(e); };
    const catchUp = engine._catchUp.bind(engine);
    engine._catchUp = async () => { log.push(`  catch up from v${engine.version}`); await catchUp(); log.push(`  caught up v${engine.version}`); };
  }
  const written = [];
  let tokens = 0;
  let agents = 0;
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  async function serveOne() {
    const request = toCore.shift();
    const lines = await core.exchange(request.type, request.params);
    if (process.env.DEBUG) for (const l of lines) if (l.type === 'edit' || l.kind === 'response') log.push(`    core: ${JSON.stringify(l).slice(0, 300)}`);
    for (const line of lines) fromCore.push(line.kind === 'response' ? { ...line, request } : line);
  }
  /** A request of another actor, answered now; its events queue up for the page. */
  async function actor(type, params) {
    const lines = await core.exchange(type, params);
    if (process.env.DEBUG) for (const l of lines) if (l.type === 'edit' || l.kind === 'response') log.push(`    core: ${JSON.stringify(l).slice(0, 300)}`);
    for (const line of lines) if (line.kind === 'event') fromCore.push(line);
    return lines[lines.length - 1];
  }
  function deliverOne() {
    const message = fromCore.shift();
    if (message.kind === 'response') {
      if (message.ok) message.request.resolve(message.result);
      else message.request.reject(Object.assign(new Error(message.error.message), { code: message.error.code }));
    } else if (message.type === 'edit' && message.data.chapter === chapter) {
      engine.remote(message.data);
    }
  }

  for (let step = 0; step < steps; step++) {
    const roll = r.next();
    if (roll < 0.32) {
      // The writer types a token, or deletes a little text that is no token.
      const doc = editor.doc;
      const spans = freeSpans(doc);
      const span = r.pick(spans);
      if (r.chance(0.7) || span[1] === span[0]) {
        const token = `[w${++tokens}${r.pick(['', '🐉', 'é', '\n', ' x'])}]`;
        const at = positionIn(r, doc, span);
        editor.doc = doc.slice(0, at) + token + doc.slice(at);
        written.push(token);
        log.push(`type ${JSON.stringify(token)} at ${at}`);
        engine.localUtf16([{ from: at, to: at, insert: token }]);
      } else {
        const from = positionIn(r, doc, span);
        let to = Math.min(span[1], from + r.range(1, 3));
        if (to < doc.length && isLow(doc, to)) to++;
        to = Math.min(to, span[1]);
        if (to <= from) continue;
        editor.doc = doc.slice(0, from) + doc.slice(to);
        log.push(`delete ${from}..${to}`);
        engine.localUtf16([{ from, to, insert: '' }]);
      }
    } else if (roll < 0.52) {
      if (toCore.length) {
        log.push(`serve ${toCore[0].type}`);
        await serveOne();
      }
    } else if (roll < 0.8) {
      if (fromCore.length) {
        log.push(`deliver ${fromCore[0].type ?? fromCore[0].kind}`);
        deliverOne();
      }
    } else if (roll < 0.88) {
      // An agent replaces an upper-case word of the core's text (never a token).
      const { text } = await core.ok('get_chapter', { chapter });
      const words = [...new Set(text.match(UPPER) ?? [])].filter((w) => text.split(w).length === 2);
      if (words.length) {
        const word = r.pick(words);
        const replacement = `${r.pick(['OMEGA', 'SIGMA', 'TAU'])}${++agents}${r.pick(['', ' 𝒳 ', ' PHI'])}`;
        log.push(`agent ${word} -> ${replacement}`);
        await actor('execute', { tool: 'update_manuscript', args: { searchText: word, replacementText: replacement }, origin: 'agent:a' });
      }
    } else if (roll < 0.94) {
      // Another tab's writer: a token of their own, and a small delete outside tokens.
      const { text, version } = await core.ok('get_chapter', { chapter });
      const span = r.pick(freeSpans(text));
      const at = positionIn(r, text, span);
      const token = `[o${++tokens}]`;
      let end = Math.min(span[1], at + r.range(0, 2));
      if (end < text.length && isLow(text, end)) end = Math.min(span[1], end + 1);
      const before = Array.from(text.slice(0, at)).length;
      const deleted = Array.from(text.slice(at, end)).length;
      const changes = [{ retain: before }, { insert: token }, { delete: deleted }].filter((op) => Object.values(op)[0]);
      log.push(`other ${JSON.stringify(changes)}`);
      const answer = await actor('apply_user_change', { chapter, baseVersion: version, changes, tag: `other-${tokens}` });
      if (answer.ok) written.push(token);
    } else if (roll < 0.97) {
      log.push('undo agent');
      await actor('undo', { origin: 'agent' });
    } else if (fromCore.length && fromCore[0].kind === 'event') {
      // A lost event: the engine sees the gap later (or never, and the end resyncs).
      log.push(`drop ${fromCore[0].type}`);
      fromCore.shift();
    }
    await tick();
  }

  // Let everything arrive; resync when a lost message left the engine waiting.
  for (let quiet = 0, rounds = 0; quiet < 3; rounds++) {
    assert.ok(rounds < 5000, `never settled: ${JSON.stringify({ synced: engine.synced, resyncing: engine.resyncing, inflight: engine.inflight?.tag, buffer: engine.buffer, version: engine.version, errors: errors.map(String) })}`);
    if (fromCore.length) deliverOne();
    else if (toCore.length) await serveOne();
    else if (!engine.synced && !engine.resyncing) engine.resync();
    quiet = !fromCore.length && !toCore.length && engine.synced && !engine.resyncing ? quiet + 1 : 0;
    await tick();
  }

  const context = 'after settling';
  const coreChapter = await core.ok('get_chapter', { chapter });
  assert.deepEqual(conflicts, [], `${context}\nno conflict copy`);
  assert.equal(editor.doc, coreChapter.text, `${context}\nthe editor shows the core's text`);
  assert.equal(engine.text, coreChapter.text, context);
  assert.equal(engine.version, coreChapter.version, context);
  for (const token of written) {
    assert.equal(coreChapter.text.split(token).length, 2, `${context}\nthe writer's ${JSON.stringify(token)} is kept once`);
  }
  return { steps: log.length, tokens: written.length };
}

test('random interleavings of typing and incoming edits converge to the core with the writer\u2019s text kept', async () => {
  let total = 0;
  for (const seed of seeds(Number(process.env.SEEDS ?? 60))) total += (await scenario(seed, 160)).tokens;
  if (!process.env.SEED) assert.ok(total > 500, `the scenarios typed little (${total} tokens)`);
});

test('position conversion: the core counts chars, the editor UTF-16 units', () => {
  assert.equal(charToUtf16('a🐉b', 2), 3);
});

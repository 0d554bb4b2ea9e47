// Long conversations and structured answers on the in-browser model: the demo page with the
// real SmolLM2-135M (www/models/, fetched by scripts/setup.sh model) loaded at a small context
// size. A chat that reads a long chapter every turn keeps its conversation across runs; the
// core keeps it within the window (compacted events) so every turn finishes, and the same
// turns with compaction off end in the model's context-overflow error. Then a run with an
// output schema answers with JSON the grammar kept valid.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { launch, openReady } from './harness.mjs';

const MODEL_PATH = '/models/SmolLM2-135M-Instruct.Q4_1.gguf';
const MODEL_FILE = new URL(`..${MODEL_PATH}`, import.meta.url);
// Small enough that a few chapter reads fill it, large enough for the system prompt, one
// read and the answer's reserve.
const CONTEXT_SIZE = 1280;
// Room for a call that names the chapter by the id a read gave (a UUID, about 30 tokens, new
// in every run) and its lines.
const MAX_TOKENS = 64;

// The long chapter: one long paragraph (what every read gives, whichever lines the model
// asks for), then a short closing line where the cursor is, so the editor context shows that
// line and not the paragraph.
const PEOPLE = ['Mara', 'Tomas', 'Ilse', 'the keeper', 'old Brann', 'the ferryman'];
const PLACES = ['the lamp room', 'the cellar', 'the jetty', 'the stair', 'the boathouse', 'the cliff path'];
const THINGS = ['a brass key', 'a wet letter', 'a broken oar', 'a tin of matches', 'a logbook', 'a red scarf'];
const BELLS = ['first', 'second', 'third', 'fourth', 'fifth'];
const CLOSING = 'The tide turned.';
const CHAPTER_TEXT = `${Array.from({ length: 10 }, (_, i) => `At the ${BELLS[i % 5]} bell ${PEOPLE[i % 6]} went down to ${PLACES[(i * 5 + 1) % 6]} and found ${THINGS[(i * 7 + 2) % 6]}.`).join(' ')}\n\n${CLOSING}`;

// What the writer asks, turn after turn; each turn reads the chapter again.
const QUESTIONS = [
  'What does Mara find?',
  'Where does Tomas go?',
  'Who finds the brass key?',
  'What happens at the jetty?',
  'What does Ilse find?',
];

let env;
let page;
before(async () => {
  assert.ok(statSync(MODEL_FILE, { throwIfNoEntry: false }), `${MODEL_FILE.pathname} is missing: run scripts/setup.sh model`);
  env = await launch();
  page = await env.newPage();
  await openReady(env, page);
  const modelUrl = new URL(MODEL_PATH, env.url).href;
  await page.evaluate(
    async ([modelUrl, text, closing, contextSize, maxTokens]) => {
      const client = window.draftsmith;
      await client.createProject('Lighthouse', [{ title: 'Chapter 1', text }]);
      await client.request('execute', { tool: 'set_selection', args: { text: closing } });
      await client.settings.set({ provider: 'local', model: modelUrl, contextSize, maxTokens, temperature: 0 });
      await client.request('load_local_model');
      // Each turn is one model call that must read the chapter (a named tool choice), and
      // ends at the step limit with the result in the conversation: a 135M model at
      // temperature 0 given the free step after it calls the tool again rather than answer.
      await client.defineAgent({
        name: 'reader',
        description: 'Reads the open chapter for the writer.',
        systemPrompt: 'You read the chapter open in the editor for a novelist.',
        tools: ['read_chapter'],
        toolChoice: 'read_chapter',
        talksToWriter: true,
        maxSteps: 1,
      });
    },
    [modelUrl, CHAPTER_TEXT, CLOSING, CONTEXT_SIZE, MAX_TOKENS],
  );
});
after(async () => {
  await env?.close();
});

/** One chat turn with `agent` (continuing its conversation unless `fresh`): what came of it. */
async function turn(prompt, agent, { fresh = false } = {}) {
  const started = Date.now();
  const outcome = await page.evaluate(
    async ([prompt, agent, fresh]) => {
      const run = window.draftsmith.run(prompt, { agent, newConversation: fresh });
      const events = [];
      for await (const event of run) events.push(event);
      const result = await run.result;
      return {
        status: result.status,
        message: result.message ?? null,
        text: result.text,
        compacted: events.filter((e) => e.type === 'compacted').map(({ before, after, removed, shortened }) => ({ before, after, removed, shortened })),
        reads: events.filter((e) => e.type === 'tool_call_started' && e.name === 'read_chapter').map((e) => e.arguments),
        results: events.filter((e) => e.type === 'tool_call_finished').map((e) => e.status),
        failed: events.find((e) => e.type === 'run_failed') ?? null,
      };
    },
    [prompt, agent, fresh],
  );
  return { ...outcome, ms: Date.now() - started };
}

/** The turns of `QUESTIONS` in one conversation, until one fails. */
async function conversation(label) {
  const turns = [];
  for (const [i, question] of QUESTIONS.entries()) {
    const t = await turn(question, 'reader', { fresh: i === 0 });
    turns.push(t);
    console.log(`${label} turn ${i + 1}: ${t.status} in ${t.ms} ms; reads ${JSON.stringify(t.reads)} ${JSON.stringify(t.results)}; compacted ${JSON.stringify(t.compacted)}${t.message ? `; ${t.message}` : ''}`);
    if (t.status === 'failed') break;
  }
  return turns;
}

/**
 * Whether turn `t` ended as a turn of this agent does: at its step limit, not failed. (Its one
 * call is the model's: a call it cut off at `maxTokens` gets an error result, never runs.)
 */
function completed(t) {
  return t.status === 'max_steps' && t.failed === null && t.message === null;
}

let kept;
test('a chat that reads a long chapter every turn passes the window again and again, and every turn finishes', async () => {
  const started = Date.now();
  kept = await conversation('compaction on');
  for (const [i, t] of kept.entries()) assert.ok(completed(t), `turn ${i + 1}: ${JSON.stringify(t)}`);
  assert.equal(kept.length, QUESTIONS.length);
  // Most turns read the whole chapter into the conversation.
  const reads = kept.flatMap((t) => t.results).filter((s) => s === 'success').length;
  assert.ok(reads * 2 >= QUESTIONS.length, `the chapter was read ${reads} times`);
  // Each compaction is a request that would have passed the window (less the answer's
  // reserve): three times and more, from the third turn on, each time made shorter (the
  // newest read is kept whole, so the estimate, which reads high, may stay near the window;
  // the model took every one).
  const compactions = kept.flatMap((t) => t.compacted);
  assert.ok(compactions.length >= 3, JSON.stringify(compactions));
  for (const c of compactions) assert.ok(c.after < c.before, JSON.stringify(c));
  console.log(`compaction on: ${kept.length} turns in ${Date.now() - started} ms; ${compactions.length} compactions, ${compactions.filter((c) => c.removed > 0).length} with a summary`);
});

test('the same turns with compaction off fail with the model’s context overflow', async () => {
  const started = Date.now();
  await page.evaluate(() => window.draftsmith.settings.set({ compaction: false }));
  const turns = await conversation('compaction off');
  const last = turns.at(-1);
  assert.equal(last.status, 'failed', JSON.stringify(turns));
  // The in-browser runtime refuses a prompt that leaves no room in its context, naming both
  // sizes; the core reads that as the model's context overflow.
  assert.match(last.message, /request \((\d+) tokens\) exceeds the available context size \(1280 tokens\)/);
  // A request that fills the context exactly is refused too: no room is left for the answer.
  const tokens = Number(last.message.match(/request \((\d+) tokens\)/)[1]);
  assert.ok(tokens >= CONTEXT_SIZE, last.message);
  assert.equal(last.failed?.message, last.message);
  assert.deepEqual(last.reads, [], 'the failing turn’s model call was refused: nothing was read');
  // The turns before it went as with compaction on; the compacted chat got through the
  // turn that failed here by compacting, at it or before it.
  assert.ok(turns.slice(0, -1).every(completed), JSON.stringify(turns));
  assert.ok(kept.slice(0, turns.length).some((t) => t.compacted.length > 0), JSON.stringify(kept.slice(0, turns.length)));
  await page.evaluate(() => window.draftsmith.settings.set({ compaction: true }));
  console.log(`compaction off: failed at turn ${turns.length} after ${Date.now() - started} ms`);
});

// A structured answer on the local model: the grammar built from the schema constrains what
// the model writes, so the run's output is valid against it.
test('a run with an output schema answers with JSON valid against it, through the grammar', async () => {
  const started = Date.now();
  const schema = {
    type: 'object',
    properties: {
      title: { type: 'string', minLength: 1, maxLength: 40 },
      mood: { type: 'string', enum: ['calm', 'tense', 'sad', 'joyful'] },
    },
    required: ['title', 'mood'],
    additionalProperties: false,
  };
  const result = await page.evaluate(async (schema) => {
    await window.draftsmith.defineAgent({ name: 'titler', description: 'Names chapters.', systemPrompt: 'You suggest a title and a mood for a chapter of a novel.', talksToWriter: true, maxSteps: 2 });
    const run = window.draftsmith.run('A chapter where a lighthouse keeper waits all night for a boat that never comes. Give it a title and a mood.', { agent: 'titler', newConversation: true, output: { schema, name: 'chapter_card' } });
    for await (const _ of run);
    return run.result;
  }, schema);
  console.log(`structured output: ${JSON.stringify(result.output)} in ${Date.now() - started} ms`);
  assert.equal(result.status, 'finished', JSON.stringify(result));
  assert.deepEqual(schemaErrors(schema, result.output), [], JSON.stringify(result.output));
});

/** What makes `value` invalid against `schema` (the keywords the schema above uses). */
function schemaErrors(schema, value, path = 'output') {
  if (schema.enum) return schema.enum.includes(value) ? [] : [`${path}: ${JSON.stringify(value)} is not one of ${schema.enum.join(', ')}`];
  if (schema.type === 'string') {
    if (typeof value !== 'string') return [`${path}: not a string`];
    const length = [...value].length;
    if (length < (schema.minLength ?? 0) || length > (schema.maxLength ?? Infinity)) return [`${path}: ${length} characters`];
    return [];
  }
  if (schema.type === 'object') {
    if (!value || typeof value !== 'object' || Array.isArray(value)) return [`${path}: not an object`];
    const errors = (schema.required ?? []).filter((k) => !(k in value)).map((k) => `${path}.${k} is missing`);
    for (const [k, v] of Object.entries(value)) {
      if (schema.properties[k]) errors.push(...schemaErrors(schema.properties[k], v, `${path}.${k}`));
      else if (schema.additionalProperties === false) errors.push(`${path}.${k} is not allowed`);
    }
    return errors;
  }
  return [`${path}: the check does not know ${JSON.stringify(schema)}`];
}

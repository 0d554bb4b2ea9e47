// The dev server's demo model and scriptable mock LLM, over real HTTP; and the demo model
// playing rentl's subagents (called directly: no browser, no core).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startServer } from '../server.mjs';
import { decide } from '../llm-fixtures.mjs';

let server;
before(async () => {
  server = await startServer({ port: 0, mock: true });
});
after(async () => {
  await server?.close();
});

const post = (path, body) => fetch(`${server.url}${path}`, { method: 'POST', body: JSON.stringify(body) });

test('the demo model answers instructions with tool calls, and other text with help', async () => {
  const call = async (content) => {
    const r = await post('demo/v1/chat/completions', { stream: false, messages: [{ role: 'user', content }] });
    return (await r.json()).choices[0];
  };
  const replace = await call('Please replace "the lamp was dark" with "the lamp was lit"');
  assert.equal(replace.finish_reason, 'tool_calls');
  assert.equal(replace.message.tool_calls[0].function.name, 'update_manuscript');
  assert.deepEqual(JSON.parse(replace.message.tool_calls[0].function.arguments).searchText, 'the lamp was dark');
  assert.equal((await call('note: Mara hates boats')).message.tool_calls[0].function.name, 'write_memory_note');
  assert.equal((await call('find "north stair"')).message.tool_calls[0].function.name, 'navigate_to_text');
  assert.equal((await call('go to chapter 3')).message.tool_calls[0].function.name, 'jump_to_chapter');
  assert.match((await call('hello')).message.content, /offline demo model/);
  const notes = (await call('set notes of Mara to "Loves storms, fears boats."')).message.tool_calls[0].function;
  assert.equal(notes.name, 'character_update_notes');
  assert.deepEqual(JSON.parse(notes.arguments), { character: 'Mara', notes: 'Loves storms, fears boats.' });
  // After a tool result it sums up, and says so clearly when the writer declined the call.
  const after = async (result) => {
    const messages = [
      { role: 'user', content: 'set notes of Mara to "x"' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'character_update_notes', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: JSON.stringify(result) },
    ];
    const r = await post('demo/v1/chat/completions', { stream: false, messages });
    return (await r.json()).choices[0].message.content;
  };
  assert.equal(await after({ status: 'success', data: {}, meta: {} }), 'Done.');
  assert.match(await after({ status: 'error', data: { code: 'denied', message: 'The writer rejected this call' }, meta: {} }), /declined/);
  assert.match(await after({ status: 'error', data: { code: 'not_found', message: 'no such character' }, meta: {} }), /did not work.*no such character/);
  // Streamed: OpenAI chunks ending in usage and [DONE]; arguments arrive in pieces.
  const r = await post('demo/v1/chat/completions', { stream: true, messages: [{ role: 'user', content: 'replace "a" with "b"' }] });
  assert.equal(r.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  const events = (await r.text()).split('\n\n').filter(Boolean);
  assert.equal(events.at(-1), 'data: [DONE]');
  const args = events
    .slice(0, -1)
    .map((e) => JSON.parse(e.slice(6)))
    .flatMap((c) => c.choices?.[0]?.delta?.tool_calls ?? [])
    .map((t) => t.function.arguments)
    .join('');
  assert.deepEqual(JSON.parse(args), { searchText: 'a', replacementText: 'b', description: 'Demo model edit' });
});

test('the mock replays queued responses with faults and records requests', async () => {
  await post('mock/f1/responses', [
    { status: 429, headers: { 'Retry-After': '2' }, body: '{"error":{"message":"rate limited"}}' },
    { events: ['event: message_start', 'data: {"x":1}'], noFinalNewline: true, splitBytes: 3 },
    { events: ['data: {"a":1}', 'data: {"b":2}'], dropAfter: 1 },
    { events: ['data: {"a":1}'], stallAfter: 1 },
  ]);
  let r = await post('mock/f1/v1/chat/completions', { n: 1 });
  assert.equal(r.status, 429);
  assert.equal(r.headers.get('retry-after'), '2');
  r = await post('mock/f1/v1/messages', { n: 2 });
  assert.equal(await r.text(), 'event: message_start\n\ndata: {"x":1}\n');
  await assert.rejects(
    (async () => (await post('mock/f1/v1beta/models/m:streamGenerateContent', { n: 3 })).text())(),
    'the connection drops mid-stream',
  );
  r = await post('mock/f1/v1/chat/completions', { n: 4 });
  const reader = r.body.getReader();
  const first = await reader.read();
  assert.equal(new TextDecoder().decode(first.value), 'data: {"a":1}\n\n');
  const stalled = await Promise.race([reader.read().then(() => 'more'), new Promise((done) => setTimeout(() => done('stalled'), 300))]);
  assert.equal(stalled, 'stalled');
  await reader.cancel();
  const requests = await (await fetch(`${server.url}mock/f1/requests`)).json();
  assert.deepEqual(requests.map((q) => JSON.parse(q.body).n), [1, 2, 3, 4]);
  // An empty queue is a clear error.
  r = await post('mock/f1/v1/chat/completions', {});
  assert.equal(r.status, 500);
  assert.match((await r.json()).error.message, /no response queued/);
});

test('the demo model plays the presets’ agents from the request alone: system prompt, tools offered and transcript', async () => {
  const ask = async (system, tools, messages) => {
    const body = { stream: false, messages: [{ role: 'system', content: system }, ...messages], tools: tools.map((name) => ({ type: 'function', function: { name, parameters: {} } })) };
    const r = await post('demo/v1/chat/completions', body);
    return (await r.json()).choices[0].message;
  };
  const callOf = (m) => ({ name: m.tool_calls?.[0]?.function.name, args: JSON.parse(m.tool_calls?.[0]?.function.arguments ?? '{}') });
  const called = (name, args, result, id) => [
    { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] },
    { role: 'tool', tool_call_id: id, content: JSON.stringify(result) },
  ];
  // The player interface turns the player's words into an action dictionary.
  const pi = callOf(await ask('You are the Player Interface Agent.', ['route_action_to_root_agent'], [{ role: 'user', content: 'I attack the goblin' }]));
  assert.equal(pi.name, 'route_action_to_root_agent');
  assert.deepEqual([pi.args.action_type, pi.args.target, pi.args.player_input], ['combat', 'goblin', 'I attack the goblin']);
  const hello = callOf(await ask('You are the Player Interface Agent.', ['route_action_to_root_agent'], [{ role: 'user', content: 'Hello blacksmith' }]));
  assert.deepEqual([hello.args.action_type, hello.args.target], ['dialogue', 'blacksmith']);

  // The root routes combat to the rules lawyer, then the outcome to the narrative agent, then answers.
  const rootTools = ['route_to_narrative_agent', 'route_to_rules_lawyer_agent', 'route_to_npc_agent', 'route_to_player_interface_agent'];
  const task = 'ACTION FROM PLAYER_INTERFACE AGENT:\nAction Type: combat\nPlayer Input: I attack the goblin\nTarget: goblin\nContext: The player swings.\nCampaign ID: demo\nGame State: \n\nProcess this action according to your role. When you are done, answer with route_to_player_interface_agent.';
  const turn = [{ role: 'user', content: task }];
  const first = callOf(await ask('You are the Root Agent.', rootTools, turn));
  assert.deepEqual([first.name, first.args.action_type, first.args.target], ['route_to_rules_lawyer_agent', 'combat', 'goblin']);
  const verdict = 'Attack roll: 19: a miss. No damage.';
  turn.push(...called(first.name, first.args, { status: 'success', data: { agent: 'rules_lawyer', session: 's1', response: { response_content: verdict } } }, 'r1'));
  const second = callOf(await ask('You are the Root Agent.', rootTools, turn));
  assert.deepEqual([second.name, second.args.action_type], ['route_to_narrative_agent', 'combat_description']);
  assert.ok(second.args.context.includes(verdict), second.args.context);
  turn.push(...called(second.name, second.args, { status: 'success', data: { agent: 'narrative', session: 's2', response: { response_content: 'The goblin ducks.' } } }, 'r2'));
  const third = callOf(await ask('You are the Root Agent.', rootTools, turn));
  assert.equal(third.name, 'route_to_player_interface_agent');
  assert.equal(third.args.response_content, `The goblin ducks.\n\n(${verdict})`);
  // Without a rules lawyer among its tools, the same action goes to the narrative agent only.
  const noRules = callOf(await ask('You are the Root Agent.', rootTools.filter((t) => t !== 'route_to_rules_lawyer_agent'), [{ role: 'user', content: task }]));
  assert.equal(noRules.name, 'route_to_narrative_agent');

  // The narrative agent describes the outcome it was given (a miss), and answers with its reply tool.
  const narrate = task.replace('Action Type: combat', 'Action Type: combat_description').replace('The player swings.', `rules_lawyer: ${verdict}`).replace('route_to_player_interface_agent', 'send_response_to_root_agent');
  const told = callOf(await ask('You are the Narrative Agent of a Dungeon Master system.', ['query_lore', 'send_response_to_root_agent'], [{ role: 'user', content: narrate }]));
  assert.equal(told.name, 'send_response_to_root_agent');
  assert.match(told.args.response_content, /ducks under your blade/);

  // The architect looks before it plans: no chapter 3, no plan.
  const architect = 'You are the Architect of TextCraft.';
  const tcTools = ['read_file', 'write_file', 'list_files', 'search_code', 'assign_task'];
  const plan = [{ role: 'user', content: 'plan chapter 3 and draft it' }];
  assert.equal(callOf(await ask(architect, tcTools, plan)).name, 'list_files');
  plan.push(...called('list_files', { directory: 'manuscripts' }, { status: 'success', data: { entries: [{ name: '01-one.md', path: 'manuscripts/01-one.md' }] } }, 'l1'));
  assert.match((await ask(architect, tcTools, plan)).content, /no chapter 3 yet/);
  // The same request gives the same answer: nothing is remembered between requests.
  assert.deepEqual(await ask(architect, tcTools, plan), await ask(architect, tcTools, plan));

  // The next chapter is a new one: planned, then the narrator creates it under its title.
  const fresh = [{ role: 'user', content: 'Narrator, draft chapter 2: The Lamp Room' }];
  fresh.push(...called('list_files', { directory: 'manuscripts' }, { status: 'success', data: { entries: [{ name: '01-one.md', path: 'manuscripts/01-one.md' }] } }, 'l1'));
  const planned = callOf(await ask(architect, tcTools, fresh));
  assert.deepEqual([planned.name, planned.args.path], ['write_file', 'plans/ch2.md']);
  assert.match(planned.args.content, /^# Chapter 2: The Lamp Room/);
  fresh.push(...called('write_file', planned.args, { status: 'success', data: { path: 'plans/ch2.md' } }, 'p1'));
  const assigned = callOf(await ask(architect, tcTools, fresh));
  assert.deepEqual([assigned.name, assigned.args.target_agent, assigned.args.target_file], ['assign_task', 'narrator', 'manuscripts/ch02.md']);
  const narrator = 'You are the Narrator of TextCraft.';
  const narratorTask = `TASK FROM THE ARCHITECT AGENT:\n${assigned.args.task_description}\nTarget file: ${assigned.args.target_file}`;
  const drafting = [{ role: 'user', content: narratorTask }];
  const readPlan = callOf(await ask(narrator, ['read_file', 'write_file', 'list_files'], drafting));
  assert.deepEqual([readPlan.name, readPlan.args.path], ['read_file', 'plans/ch2.md']);
  drafting.push(...called('read_file', readPlan.args, { status: 'success', data: { content: planned.args.content } }, 'r1'));
  const draft = callOf(await ask(narrator, ['read_file', 'write_file', 'list_files'], drafting));
  assert.equal(draft.name, 'write_file');
  assert.equal(draft.args.path, 'manuscripts/ch02.md');
  assert.match(draft.args.content, /^# The Lamp Room\n\nThe night was very dark/);
  // Past the next number: it says which chapter it can draft.
  const far = [{ role: 'user', content: 'draft chapter 5' }, ...fresh.slice(1, 3)];
  assert.match((await ask(architect, tcTools, far)).content, /no chapter 5 yet \(the manuscript has 1\)\. I can draft the next one, chapter 2/);
});

// --- rentl: the demo model plays each subagent -------------------------------------------------
//
// The subagents' prompts and toolboxes, and the tools a job's unit offers with and without
// overwrite, come from the core (rentl-agents.json, kept current by
// tests/rentl_presets.rs), the tools' argument schemas from src/tools/schemas.json. A small
// story bible below answers the tool calls in the shapes the core's tools return (a German
// target language and other names than the demo project's, so nothing can be hard-coded), and
// each conversation is fed back to the demo model until it answers with text.

const RENTL = JSON.parse(readFileSync(new URL('./rentl-agents.json', import.meta.url), 'utf8'));
const SCHEMAS = JSON.parse(readFileSync(new URL('../../src/tools/schemas.json', import.meta.url), 'utf8'));
const agentSpec = (name) => RENTL.agents.find((a) => a.name === name);
const isWrite = (tool) => /_(?:create|update|delete|merge)_/.test(tool);

/** Errors of `value` against a tool's JSON Schema (types, required, enum, bounds; no unknown keys). */
function schemaErrors(schema, value, path = 'arguments') {
  const types = [].concat(schema.type ?? []);
  const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);
  const actual = typeOf(value);
  if (types.length && !types.some((t) => t === actual || (t === 'number' && actual === 'integer'))) return [`${path}: ${actual}, expected ${types.join('|')}`];
  const errors = [];
  if (schema.enum && !schema.enum.includes(value)) errors.push(`${path}: ${JSON.stringify(value)} not in ${schema.enum.join(', ')}`);
  if (typeof value === 'number' && schema.minimum !== undefined && value < schema.minimum) errors.push(`${path}: below ${schema.minimum}`);
  if (typeof value === 'number' && schema.maximum !== undefined && value > schema.maximum) errors.push(`${path}: above ${schema.maximum}`);
  if (actual === 'array' && schema.items) value.forEach((v, i) => errors.push(...schemaErrors(schema.items, v, `${path}[${i}]`)));
  if (actual === 'object') {
    for (const key of schema.required ?? []) if (!(key in value)) errors.push(`${path}.${key}: required`);
    for (const [key, v] of Object.entries(value)) {
      const sub = schema.properties?.[key];
      errors.push(...(sub ? schemaErrors(sub, v, `${path}.${key}`) : [`${path}.${key}: not a parameter`]));
    }
  }
  return errors;
}

const ok = (data) => ({ status: 'success', data, meta: { execution_time_ms: 1 } });
const fail = (code, message) => ({ status: 'error', data: { code, message }, meta: { execution_time_ms: 1 } });
const linesOf = (text) => text.split('\n').map((l) => l.trim()).filter(Boolean);
const flat = (kind, id, fields, origin = 'human') => {
  const out = { kind, id, version: 1 };
  for (const [k, v] of Object.entries(fields)) {
    out[k] = v;
    out[`${k}_origin`] = v === null ? null : origin;
  }
  return out;
};

/** A small story bible answering tool calls as the core's tools do. */
function world() {
  const scenes = {
    mill: {
      text: 'Kai Brenner pushed open the door of the Old Mill at first light.\nThe Wheel Society had left its seal on the millstone, red wax cracked in two.\n“Somebody was here before us,” Kai said, and Lene nodded.\nThe river ran high and brown under the Old Mill, loud with meltwater, and the Wheel Society bell rang across the valley twice.',
      entry: { summary: null, tags: null, primary_characters: null, locations: null },
    },
    ferry: {
      text: 'Lene Vos waited at the ferry while the rain came down.\nKai brought the seal wrapped in oilcloth.',
      entry: { summary: 'Lene waits for Kai at the ferry in the rain.', tags: null, primary_characters: null, locations: null },
    },
  };
  const state = {
    scenes,
    characters: [flat('character', 'kai-brenner', { name_src: 'Kai Brenner', aliases: ['Kai'], name_tgt: null, notes: null }), flat('character', 'lene-vos', { name_src: 'Lene Vos', aliases: ['Lene'], name_tgt: 'Lene Fuchs', notes: null })],
    locations: [flat('location', 'old-mill', { name_src: 'Old Mill', name_tgt: null, description: null })],
    glossary: [flat('glossary', 'wheel-society', { term_src: 'Wheel Society', term_tgt: 'Radgesellschaft', notes: 'The millers’ guild.' })],
    route: flat('route', 'river-route', { synopsis: null, primary_characters: null, scene_ids: ['mill', 'ferry'] }),
    translations: { 'ferry:1': 'Lene Fuchs wartete an der Fähre, während es regnete.' },
    qa: [],
    writes: [],
  };
  const names = (ids, list) => ids.map((id) => `${id} (${list.find((e) => e.id === id).name_src})`).join(', ');
  const mentioned = (text, list) => list.filter((e) => [e.name_src, ...(e.aliases ?? [])].some((n) => new RegExp(`\\b${n}\\b`).test(text))).map((e) => e.id);
  const sceneLines = (id) => linesOf(scenes[id].text);
  const translated = (id) =>
    sceneLines(id).map((source, i) => {
      const target = state.translations[`${id}:${i + 1}`] ?? null;
      return { line: i + 1, source, target, target_origin: target ? 'human' : null, stale: false, translated: target !== null };
    });
  const tools = {
    scene_read_overview: ({ scene, max_chars = 2000 }) => {
      if (!scene) return ok({ text: `${Object.keys(scenes).length} scenes in reading order: …`, count: 2, scenes: Object.entries(scenes).map(([id, s]) => ({ id, summary: s.entry.summary })) });
      const s = scenes[scene];
      if (!s) return fail('not_found', `no scene '${scene}'`);
      const chars = mentioned(s.text, state.characters);
      const locs = mentioned(s.text, state.locations);
      const excerpt = s.text.slice(0, max_chars);
      const text = `Scene '${scene}' (version 1)\nsummary: ${s.entry.summary ?? '(empty)'}\nMentioned in its text: characters: ${names(chars, state.characters) || 'none'}; locations: ${names(locs, state.locations) || 'none'}\nText (${s.text.length} chars):\n${excerpt}`;
      const entry = flat('scene', scene, { chapter: 'c1', span: { start: 0, end: s.text.length }, ...s.entry });
      return ok({ text, id: scene, entry, mentionedCharacters: chars, mentionedLocations: locs, mentionedButNotListed: chars, excerpt, truncated: excerpt.length < s.text.length });
    },
    character_read_entry: ({ character }) => {
      if (!character) return ok({ text: `${state.characters.length} characters: …`, count: state.characters.length, entries: state.characters });
      const c = state.characters.find((e) => e.id === character);
      if (!c) return fail('not_found', `no character '${character}'`);
      const listed = Object.entries(scenes).filter(([, s]) => (s.entry.primary_characters ?? []).includes(c.id)).map(([id]) => id);
      return ok({ text: `Character '${c.id}'`, id: c.id, entry: c, scenes: listed, routes: [] });
    },
    location_read_entry: ({ location }) => (location ? ok({ entry: state.locations.find((e) => e.id === location), scenes: [] }) : ok({ text: '…', count: state.locations.length, entries: state.locations })),
    glossary_search_term: ({ query }) => {
      const q = query.trim().toLowerCase();
      const entries = state.glossary.filter((e) => !q || [e.term_src, e.term_tgt, e.notes].some((v) => String(v ?? '').toLowerCase().includes(q)));
      return ok({ text: `${entries.length} glossary entries match '${query}'.`, query, count: entries.length, entries });
    },
    styleguide_read_full: () => ok({ text: 'Style guide …', exists: true, markdown: '# Style guide\n\nThe target language is German (de).\n- Use the glossary.', version: 1 }),
    ui_read_settings: () => ok({ text: 'UI settings …', exists: true, line_length_limit: 80, lines_per_box: 2, notes: 'Subtitles.' }),
    route_read_entry: ({ route }) => (route === state.route.id ? ok({ text: `Route '${route}'`, id: route, entry: state.route }) : fail('not_found', `no route '${route}'`)),
    translation_read_scene: ({ scene, from_line = 1 }) => {
      const all = translated(scene);
      const lines = all.filter((l) => l.line >= from_line);
      return ok({ text: `Scene '${scene}': ${all.length} lines`, scene, total: all.length, translated: all.filter((l) => l.translated).length, untranslated: all.filter((l) => !l.translated).map((l) => l.line), lines, orphans: [] });
    },
    translation_create_line: ({ scene, line, target }) => {
      if (state.translations[`${scene}:${line}`]) return fail('exists', `line ${line} of scene '${scene}' already has a translation; change it with translation_update_line`);
      state.translations[`${scene}:${line}`] = target;
      return ok({ text: 'Saved', translated: 1, total: sceneLines(scene).length });
    },
    translation_update_line: ({ scene, line, target }) => {
      state.translations[`${scene}:${line}`] = target;
      return ok({ text: 'Updated', changed: true });
    },
    glossary_create_entry: ({ term_src, term_tgt = null, notes = null }) => {
      if (state.glossary.some((e) => e.term_src.toLowerCase() === term_src.toLowerCase())) return fail('exists', `'${term_src}' is in the glossary`);
      const entry = flat('glossary', term_src.toLowerCase().replace(/\W+/g, '-'), { term_src, term_tgt, notes }, 'agent:scene_glossary_detailer:2026-01-01');
      state.glossary.push(entry);
      return ok({ text: 'Added', entry });
    },
  };
  const record = (check) => (args) => {
    const target = args.line ? state.translations[`${args.scene}:${args.line}`] : null;
    let message = args.message;
    if (args.check_line_length && target && target.length > 80) message = `Line length: the translation is ${target.length} characters long, over the UI limit of 80.`;
    if (args.check_glossary) {
      const source = sceneLines(args.scene)[args.line - 1].toLowerCase();
      const missing = state.glossary.filter((e) => e.term_tgt && source.includes(e.term_src.toLowerCase()) && !String(target).toLowerCase().includes(e.term_tgt.toLowerCase()));
      if (missing.length) message = `Glossary: ${missing.map((e) => `'${e.term_src}' should be translated as '${e.term_tgt}'`).join('; ')}.`;
    }
    if (!message) return ok({ text: 'No QA record was made.', record: null });
    const made = { check, scene: args.scene, line: args.line ?? null, severity: args.severity ?? 'warning', message };
    state.qa.push(made);
    return ok({ text: `Recorded ${check} QA`, record: made });
  };
  tools.translation_create_style_check = record('style');
  tools.translation_create_review_check = record('review');
  tools.translation_create_consistency_check = record('consistency');
  const field = (kind, fieldName) => (args) => {
    const list = kind === 'character' ? state.characters : state.locations;
    const e = list.find((x) => x.id === args[kind]);
    e[fieldName] = args[fieldName];
    e[`${fieldName}_origin`] = 'agent';
    return ok({ text: 'Updated', entry: e });
  };
  tools.character_update_name_tgt = field('character', 'name_tgt');
  tools.location_update_name_tgt = field('location', 'name_tgt');
  const sceneField = (fieldName, arg) => (args) => {
    scenes[args.scene].entry[fieldName] = args[arg];
    return ok({ text: 'Updated' });
  };
  tools.scene_update_summary = sceneField('summary', 'summary');
  tools.scene_update_tags = sceneField('tags', 'tags');
  tools.scene_update_primary_characters = sceneField('primary_characters', 'characters');
  tools.scene_update_locations = sceneField('locations', 'locations');
  tools.route_update_synopsis = ({ synopsis }) => ((state.route.synopsis = synopsis), ok({ text: 'Updated' }));
  tools.route_update_primary_characters = ({ characters }) => ((state.route.primary_characters = characters), ok({ text: 'Updated' }));
  tools.glossary_merge_entries = ({ keep, merge }) => ((state.glossary = state.glossary.filter((e) => !merge.includes(e.id) || e.id === keep)), ok({ text: 'Merged' }));
  return { state, tools };
}

/**
 * One unit: the agent's system prompt and toolbox, the task message of the jobs protocol, and
 * the demo model asked until it answers with text. Every call is checked: in the toolbox, its
 * arguments valid against the tool's schema. Returns the calls and the closing text.
 */
function unit(w, agent, target, { overwrite = false, tools } = {}) {
  const spec = agentSpec(agent);
  const offered = tools ?? spec.unitTools[overwrite ? 'overwrite' : 'noOverwrite'];
  const task = `Task for ${agent}: do your job.\n${target}\nOverwrite allowed: ${overwrite ? 'yes' : 'no'}\nDone when: your definition of done is met.`;
  const messages = [{ role: 'system', content: spec.systemPrompt }, { role: 'user', content: task }];
  const calls = [];
  for (let step = 0; step < spec.maxSteps; step++) {
    const answer = decide({ messages, tools: offered.map((name) => ({ type: 'function', function: { name, parameters: SCHEMAS[name] } })) });
    if (!answer.call) return { calls, text: answer.text };
    const { name, arguments: args } = answer.call;
    assert.ok(offered.includes(name), `${agent} called ${name}, not in its toolbox`);
    assert.deepEqual(schemaErrors(SCHEMAS[name], args), [], `${agent}: ${name} ${JSON.stringify(args)}`);
    const result = w.tools[name](args);
    calls.push({ name, args, result });
    const id = `c${calls.length}`;
    messages.push({ role: 'assistant', content: answer.text ?? null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] });
    messages.push({ role: 'tool', tool_call_id: id, content: JSON.stringify(result) });
  }
  assert.fail(`${agent} did not finish in ${spec.maxSteps} steps: ${calls.map((c) => c.name).join(', ')}`);
}

test('rentl, context phase: each detailer reads its scene first, then writes what the scene’s text supports, once', () => {
  const w = world();
  const mill = w.state.scenes.mill;
  const summary = unit(w, 'scene_summary_detailer', 'Scene: mill');
  assert.deepEqual(summary.calls.map((c) => c.name), ['scene_read_overview', 'scene_update_summary']);
  assert.equal(mill.entry.summary, 'Kai Brenner pushed open the door of the Old Mill at first light. The Wheel Society had left its seal on the millstone, red wax cracked in two.');
  assert.match(summary.text, /summary of scene mill/);
  const tags = unit(w, 'scene_tag_detailer', 'Scene: mill');
  assert.equal(tags.calls[0].name, 'scene_read_overview');
  assert.ok(mill.entry.tags.length >= 1 && mill.entry.tags.length <= 6, mill.entry.tags);
  for (const tag of mill.entry.tags) assert.ok(mill.text.toLowerCase().includes(tag), `${tag} is a word of the scene`);
  unit(w, 'scene_primary_character_detailer', 'Scene: mill');
  assert.deepEqual(mill.entry.primary_characters, ['kai-brenner', 'lene-vos']);
  unit(w, 'scene_location_detailer', 'Scene: mill');
  assert.deepEqual(mill.entry.locations, ['old-mill']);
  // The glossary detailer searches before it adds: Wheel Society is there, the Bell... is not a term of its own.
  const glossary = unit(w, 'scene_glossary_detailer', 'Scene: mill');
  assert.equal(glossary.calls[0].name, 'scene_read_overview');
  const searched = glossary.calls.filter((c) => c.name === 'glossary_search_term').map((c) => c.args.query);
  assert.ok(searched.includes('Wheel Society'), searched.join());
  assert.ok(!searched.some((q) => /Kai|Lene|Old Mill/.test(q)), `names are not glossary terms: ${searched}`);
  assert.equal(glossary.calls.filter((c) => c.name === 'glossary_create_entry').length, 0, 'nothing new to add');
  assert.match(glossary.text, /Wheel Society was already there/);

  // A summary the scene already has is left alone without overwrite; with it, it is replaced.
  const kept = unit(w, 'scene_summary_detailer', 'Scene: ferry');
  assert.deepEqual(kept.calls.map((c) => c.name), ['scene_read_overview']);
  assert.match(kept.text, /already has a summary \(by human\).*overwrite is not allowed/);
  assert.equal(w.state.scenes.ferry.entry.summary, 'Lene waits for Kai at the ferry in the rain.');
  const replaced = unit(w, 'scene_summary_detailer', 'Scene: ferry', { overwrite: true });
  assert.equal(replaced.calls[1].name, 'scene_update_summary');
  assert.equal(w.state.scenes.ferry.entry.summary, 'Lene Vos waited at the ferry while the rain came down. Kai brought the seal wrapped in oilcloth.');

  // The route: its scenes' summaries in order, and the characters most of them list.
  w.state.scenes.ferry.entry.primary_characters = ['lene-vos', 'kai-brenner'];
  const route = unit(w, 'route_outline_builder', 'Route: river-route');
  assert.equal(route.calls[0].name, 'route_read_entry');
  assert.equal(w.state.route.synopsis, 'Kai Brenner pushed open the door of the Old Mill at first light. Lene Vos waited at the ferry while the rain came down.');
  assert.deepEqual(w.state.route.primary_characters.sort(), ['kai-brenner', 'lene-vos']);
  // The curators fill in what is empty and keep the writer's values.
  const characters = unit(w, 'meta_character_curator', 'Scope: the whole project');
  assert.equal(characters.calls[0].name, 'character_read_entry');
  assert.deepEqual(characters.calls.filter((c) => c.name === 'character_update_name_tgt').map((c) => c.args), [{ character: 'kai-brenner', name_tgt: 'Kai Brenner' }]);
  assert.equal(w.state.characters[1].name_tgt, 'Lene Fuchs');
  unit(w, 'meta_location_curator', 'Scope: the whole project');
  assert.equal(w.state.locations[0].name_tgt, 'Old Mill');
  // Duplicates in the glossary are merged into the fuller entry.
  w.state.glossary.push(flat('glossary', 'the-wheel-society', { term_src: 'the Wheel Society', term_tgt: null, notes: null }, 'agent:x'));
  const curated = unit(w, 'meta_glossary_curator', 'Scope: the whole project');
  assert.equal(curated.calls[0].name, 'glossary_search_term');
  assert.deepEqual(curated.calls[1].args, { keep: 'wheel-society', merge: ['the-wheel-society'] });
  assert.deepEqual(w.state.glossary.map((e) => e.id), ['wheel-society']);
});

test('rentl, translation phase: every line of the scene, in the style guide’s language, with the glossary’s terms and target names', () => {
  const w = world();
  const run = unit(w, 'scene_translator', 'Scene: mill');
  assert.deepEqual(run.calls.slice(0, 3).map((c) => c.name), ['styleguide_read_full', 'ui_read_settings', 'scene_read_overview']);
  const lines = linesOf(w.state.scenes.mill.text);
  const created = run.calls.filter((c) => c.name === 'translation_create_line');
  assert.deepEqual(created.map((c) => c.args.line), lines.map((_, i) => i + 1));
  for (const c of created) assert.match(c.args.target, /^\[de\] /);
  assert.equal(created[1].args.target, '[de] The Radgesellschaft had left its seal on the millstone, red wax cracked in two.');
  // Full names take their target-language name (Lene Vos → Lene Fuchs in the ferry scene below); a
  // short alias is left as it is.
  assert.equal(created[2].args.target, '[de] “Somebody was here before us,” Kai said, and Lene nodded.');
  assert.match(run.text, /4 lines of scene mill into German/);
  // A line translated already: left without overwrite, replaced with it (translation_update_line).
  const left = unit(w, 'scene_translator', 'Scene: ferry');
  assert.equal(left.calls.filter((c) => c.name === 'translation_update_line').length, 0);
  assert.equal(w.state.translations['ferry:1'], 'Lene Fuchs wartete an der Fähre, während es regnete.');
  assert.match(left.text, /Line 1 already had a translation, which I left \(overwrite is not allowed\)/);
  const replaced = unit(w, 'scene_translator', 'Scene: ferry', { overwrite: true });
  assert.deepEqual(replaced.calls.filter((c) => c.name === 'translation_update_line').map((c) => c.args.line), [1, 2], 'both lines had a translation by then');
  assert.equal(w.state.translations['ferry:1'], '[de] Lene Fuchs waited at the ferry while the rain came down.');
});

test('rentl, editing phase: style, review and consistency checks record a concrete issue or a pass', () => {
  const w = world();
  unit(w, 'scene_translator', 'Scene: mill');
  const style = unit(w, 'scene_style_checker', 'Scene: mill');
  assert.equal(style.calls[0].name, 'translation_read_scene');
  // The lines over the UI's 80 characters are measured by the tool and recorded; the
  // pseudo-translations are an issue too.
  const long = Object.entries(w.state.translations).filter(([k, t]) => k.startsWith('mill:') && t.length > 80).map(([k]) => Number(k.split(':')[1]));
  assert.ok(long.length >= 1 && long.length < 4, long);
  const measured = style.calls.filter((c) => c.args.check_line_length);
  assert.deepEqual(measured.map((c) => c.args.line), long);
  for (const line of long) assert.ok(w.state.qa.some((r) => r.check === 'style' && r.line === line && /over the UI limit of 80/.test(r.message)));
  assert.ok(w.state.qa.some((r) => r.check === 'style' && /pseudo-translations \(\[de\]/.test(r.message)));
  const review = unit(w, 'scene_translation_reviewer', 'Scene: mill');
  assert.equal(review.calls[0].name, 'translation_read_scene');
  assert.ok(w.state.qa.some((r) => r.check === 'review' && /Lines 1, 2, 3, 4 repeat their source text .* in German/.test(r.message)));
  const consistency = unit(w, 'consistency_checker', 'Scene: mill');
  assert.deepEqual(consistency.calls.filter((c) => c.args.check_glossary).map((c) => c.args.line), [1, 2, 3, 4]);
  assert.ok(w.state.qa.some((r) => r.check === 'consistency' && r.severity === 'info' && /passed: 4 lines/.test(r.message)), 'every glossary term is followed: a pass');
  // A line that breaks the glossary is a concrete consistency issue.
  w.state.translations['mill:2'] = 'Die Müllergilde hatte ihr Siegel hinterlassen.';
  const before = w.state.qa.length;
  unit(w, 'consistency_checker', 'Scene: mill');
  const found = w.state.qa.slice(before);
  assert.deepEqual(found.map((r) => [r.check, r.line]), [['consistency', 2]]);
  assert.match(found[0].message, /'Wheel Society' should be translated as 'Radgesellschaft'/);
  // A scene the writer translated, with nothing wrong, passes style, review and consistency.
  w.state.translations['ferry:2'] = 'Kai brachte das Siegel in Öltuch gewickelt.';
  for (const agent of ['scene_style_checker', 'scene_translation_reviewer', 'consistency_checker']) {
    const clean = unit(w, agent, 'Scene: ferry');
    assert.match(clean.text, /scene ferry: it passed, and I recorded that/, agent);
  }
  assert.deepEqual(w.state.qa.filter((r) => r.scene === 'ferry').map((r) => [r.check, r.severity]), [['style', 'info'], ['review', 'info'], ['consistency', 'info']]);
});

test('rentl: each subagent’s first call is a read, recognised from the task line or, in a rentl prompt, from its tools', () => {
  for (const spec of RENTL.agents) {
    const target = spec.name.startsWith('route_') ? 'Route: river-route' : spec.name.startsWith('meta_') ? 'Scope: the whole project' : 'Scene: mill';
    const w = world();
    w.state.translations['mill:1'] = '[de] Kai Brenner stieß die Tür auf.';
    const messages = [{ role: 'system', content: spec.systemPrompt }, { role: 'user', content: `${target}\nOverwrite allowed: no` }];
    const answer = decide({ messages, tools: spec.tools.map((name) => ({ type: 'function', function: { name, parameters: SCHEMAS[name] } })) });
    assert.ok(answer.call, `${spec.name} answered ${answer.text}`);
    assert.ok(!isWrite(answer.call.name), `${spec.name} began with ${answer.call.name}`);
    assert.ok(spec.tools.includes(answer.call.name));
    assert.deepEqual(schemaErrors(SCHEMAS[answer.call.name], answer.call.arguments), []);
    // And every unit of it finishes with text, having written only valid calls (checked in unit()).
    const done = unit(w, spec.name, target);
    assert.ok(done.text && done.text.length > 10, `${spec.name}: ${done.text}`);
  }
  // The same task without "rentl" in the system prompt and without a task line is not a rentl unit.
  assert.equal(decide({ messages: [{ role: 'user', content: 'Scene: mill' }], tools: [] }).call, undefined);
});

test('rentl over HTTP: a unit streams its read call from the dev server', async () => {
  const spec = agentSpec('scene_summary_detailer');
  const body = { stream: true, messages: [{ role: 'system', content: spec.systemPrompt }, { role: 'user', content: 'Task for scene_summary_detailer: summarise.\nScene: mill\nOverwrite allowed: no\nDone when: summarised.' }], tools: spec.tools.map((name) => ({ type: 'function', function: { name, parameters: SCHEMAS[name] } })) };
  const r = await post('demo/v1/chat/completions', body);
  const args = (await r.text())
    .split('\n\n')
    .filter((e) => e.startsWith('data: {'))
    .flatMap((e) => JSON.parse(e.slice(6)).choices?.[0]?.delta?.tool_calls ?? [])
    .map((t) => t.function.arguments)
    .join('');
  assert.deepEqual(JSON.parse(args), { scene: 'mill' });
});

test('the demo model plays the Dungeon Master’s campaign: the record created, read, hit by the verdict, and characters recorded', () => {
  const ask = (system, tools, messages) => decide({ messages: [{ role: 'system', content: system }, ...messages], tools: tools.map((name) => ({ type: 'function', function: { name, parameters: {} } })) });
  const called = (name, args, result, id) => [
    { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] },
    { role: 'tool', tool_call_id: id, content: JSON.stringify(result) },
  ];
  const ok = (data) => ({ status: 'success', data });
  const task = (type, input, reply, state = '') =>
    `ACTION FROM PLAYER_INTERFACE AGENT:\nAction Type: ${type}\nPlayer Input: ${input}\nTarget: ${type === 'combat' ? 'goblin' : ''}\nContext: \nCampaign ID: demo\nGame State: ${state}\n\nProcess this action according to your role. When you are done, answer with ${reply}.`;

  // The campaign creation agent writes the outline, then records the campaign with the hero the player named.
  const creator = 'You are the Campaign Creation Agent of a Dungeon Master system.';
  const creatorTools = ['write_file', 'read_file', 'list_files', 'campaign_create_entry', 'send_response_to_root_agent'];
  const start = [{ role: 'user', content: task('meta', 'Start a campaign for Aria, 14 hit points', 'send_response_to_root_agent') }];
  const outline = ask(creator, creatorTools, start).call;
  assert.deepEqual([outline.name, outline.arguments.path], ['write_file', 'plans/campaign.md']);
  start.push(...called('write_file', outline.arguments, ok({ path: 'plans/campaign.md' }), 'w1'));
  const record = ask(creator, creatorTools, start).call;
  assert.equal(record.name, 'campaign_create_entry');
  assert.deepEqual(record.arguments.party, [{ name: 'Aria', hp: 14, max_hp: 14 }]);
  assert.equal(record.arguments.outline, 'plans/campaign.md');
  start.push(...called('campaign_create_entry', record.arguments, ok({ created: 'the-drowned-crown' }), 'w2'));
  assert.equal(ask(creator, creatorTools, start).call.name, 'send_response_to_root_agent');

  // The root, whose conversation holds the campaign's creation, reads the record before combat.
  const rootPrompt = 'You are the Root Agent of a Dungeon Master system.';
  const rootTools = ['route_to_narrative_agent', 'route_to_rules_lawyer_agent', 'route_to_campaign_creation_agent', 'route_to_player_interface_agent', 'campaign_read_entry', 'campaign_update_entry'];
  const earlier = [
    { role: 'user', content: task('meta', 'Start a campaign for Aria, 14 hit points', 'route_to_player_interface_agent') },
    ...called('route_to_campaign_creation_agent', { action_type: 'meta' }, ok({ response: { response_content: 'Recorded.' } }), 'e1'),
  ];
  const turn = [...earlier, { role: 'user', content: task('combat', 'I attack the goblin', 'route_to_player_interface_agent') }];
  assert.equal(ask(rootPrompt, rootTools, turn).call.name, 'campaign_read_entry');
  // Without that history, the same action goes straight to the rules lawyer.
  assert.equal(ask(rootPrompt, rootTools, turn.slice(earlier.length)).call.name, 'route_to_rules_lawyer_agent');
  const campaign = { id: 'the-drowned-crown', name: 'The Drowned Crown', location: 'The harbour of Saltmere', party: [{ name: 'Aria', hp: 14, max_hp: 14 }], inventory: ['rope'], quests: [{ title: 'The missing lighthouse keeper', status: 'active' }], time: 'Day 1, morning' };
  turn.push(...called('campaign_read_entry', {}, ok({ campaign }), 'r1'));
  const toRules = ask(rootPrompt, rootTools, turn).call;
  assert.deepEqual([toRules.name, toRules.arguments.game_state], ['route_to_rules_lawyer_agent', 'Aria 14/14 HP']);
  // The rules lawyer, given the party, has the goblin strike back at Aria.
  const rules = ask('You are the Rules Lawyer Agent of a Dungeon Master system.', ['send_response_to_root_agent'], [{ role: 'user', content: task('combat', 'I attack the goblin', 'send_response_to_root_agent', 'Aria 14/14 HP') }]).call;
  const verdict = rules.arguments.response_content;
  const damage = Number(verdict.match(/(\d+) damage to Aria\./)?.[1]);
  assert.ok(damage >= 1 && damage <= 6, verdict);
  turn.push(...called(toRules.name, toRules.arguments, ok({ response: { response_content: verdict } }), 'r2'));
  const hit = ask(rootPrompt, rootTools, turn).call;
  assert.deepEqual([hit.name, hit.arguments], ['campaign_update_entry', { hit_points: [{ name: 'Aria', hp: 14 - damage }] }]);
  const after = { ...campaign, party: [{ name: 'Aria', hp: 14 - damage, max_hp: 14 }] };
  turn.push(...called(hit.name, hit.arguments, ok({ campaign: after, changed: ['party'] }), 'r3'));
  const toStory = ask(rootPrompt, rootTools, turn).call;
  assert.equal(toStory.name, 'route_to_narrative_agent');
  turn.push(...called(toStory.name, toStory.arguments, ok({ response: { response_content: 'The goblin crumples.' } }), 'r4'));
  const answered = ask(rootPrompt, rootTools, turn).call;
  assert.equal(answered.name, 'route_to_player_interface_agent');
  assert.ok(answered.arguments.response_content.endsWith(`(Party: Aria ${14 - damage}/14 HP.)`), answered.arguments.response_content);
  // A question about the party is answered from the record.
  const question = [...earlier, { role: 'user', content: task('question', 'How many hit points do I have?', 'route_to_player_interface_agent') }];
  assert.equal(ask(rootPrompt, rootTools, question).call.name, 'campaign_read_entry');
  question.push(...called('campaign_read_entry', {}, ok({ campaign: after }), 'q1'));
  const status = ask(rootPrompt, rootTools, question).call;
  assert.match(status.arguments.response_content, new RegExp(`Party: Aria ${14 - damage}/14 HP\\. Carrying: rope\\.`));

  // The player interface files what the player picks up into the game state ("hit points" names no blow).
  const pi = 'You are the Player Interface Agent.';
  const piTools = ['route_action_to_root_agent', 'campaign_read_state', 'campaign_update_state'];
  for (const [words, type] of [['Start a campaign for Aria, 14 hit points', 'meta'], ['How many hit points do I have?', 'question']]) {
    assert.equal(ask(pi, piTools, [{ role: 'user', content: words }]).call.arguments.action_type, type, words);
  }
  const pick = [{ role: 'user', content: 'I pick up the lantern' }];
  const routed = ask(pi, piTools, pick).call;
  pick.push(...called(routed.name, routed.arguments, ok({ response: { response_content: 'You lift the lantern.' } }), 'p1'));
  assert.equal(ask(pi, piTools, pick).call.name, 'campaign_read_state');
  pick.push(...called('campaign_read_state', {}, ok({ campaign }), 'p2'));
  const stored = ask(pi, piTools, pick).call;
  assert.deepEqual([stored.name, stored.arguments.inventory], ['campaign_update_state', ['rope', 'lantern']]);
  pick.push(...called(stored.name, stored.arguments, ok({ changed: ['inventory'] }), 'p3'));
  assert.equal(ask(pi, piTools, pick).text, 'You lift the lantern.\n\n(lantern is in your pack.)');

  // The character creation agent records the character, in a chat of its own or routed.
  const maker = 'You are the Character Creation Agent of a Dungeon Master system.';
  const makerTools = ['character_create_entry', 'character_read_entry', 'get_character_info'];
  const alone = [{ role: 'user', content: 'Create a new character named Bram, a dwarf cleric.' }];
  const made = ask(maker, makerTools, alone).call;
  assert.deepEqual([made.name, made.arguments], ['character_create_entry', { name_src: 'Bram', notes: 'A dwarf cleric.' }]);
  alone.push(...called(made.name, made.arguments, ok({ id: 'bram' }), 'c1'));
  assert.equal(ask(maker, makerTools, alone).text, 'A new character: Bram. A dwarf cleric. Recorded in the story bible.');
  // With a campaign in play, the new character joins its party.
  const stateTools = [...makerTools, 'campaign_read_state', 'campaign_update_state'];
  assert.equal(ask(maker, stateTools, alone).call.name, 'campaign_read_state');
  alone.push(...called('campaign_read_state', {}, ok({ campaign }), 'c3'));
  const join = ask(maker, stateTools, alone).call;
  assert.deepEqual([join.name, join.arguments.party.map((m) => m.name)], ['campaign_update_state', ['Aria', 'Bram']]);
  alone.push(...called(join.name, join.arguments, ok({ changed: ['party'] }), 'c4'));
  assert.equal(ask(maker, stateTools, alone).text, 'A new character: Bram. A dwarf cleric. Recorded in the story bible. Bram joins the party with 10 hit points.');
  const viaRoot = [{ role: 'user', content: task('character_creation', 'I want a new character named Mira, an elf ranger', 'send_response_to_root_agent') }];
  const routedMade = ask(maker, [...makerTools, 'send_response_to_root_agent'], viaRoot).call;
  assert.deepEqual(routedMade.arguments, { name_src: 'Mira', notes: 'An elf ranger.' });
  viaRoot.push(...called(routedMade.name, routedMade.arguments, { status: 'error', data: { code: 'denied', message: 'The writer declined.' } }, 'c2'));
  const declined = ask(maker, [...makerTools, 'send_response_to_root_agent'], viaRoot).call;
  assert.deepEqual([declined.name, declined.arguments.response_content], ['send_response_to_root_agent', 'You declined, so Mira was not recorded.']);
});

test('an agent with planning writes its to-do list, does the work, and marks the list done', () => {
  const tools = (names) => names.map((name) => ({ type: 'function', function: { name, parameters: {} } }));
  const messages = [{ role: 'system', content: 'You keep notes.' }, { role: 'user', content: 'note: Mara hates boats' }];
  const offered = tools(['write_memory_note', 'write_todos', 'read_todos']);
  const step = (result) => {
    const answer = decide({ messages, tools: offered });
    if (!answer.call) return answer;
    const id = `c${messages.length}`;
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: answer.call.name, arguments: JSON.stringify(answer.call.arguments) } }] });
    messages.push({ role: 'tool', tool_call_id: id, content: JSON.stringify(result(answer.call)) });
    return answer;
  };
  const ok = (data) => () => ({ status: 'success', data });
  const first = step((c) => ({ status: 'success', data: { todos: c.arguments.todos, completed: 0 } }));
  assert.equal(first.call.name, 'write_todos');
  assert.deepEqual(first.call.arguments.todos.map((t) => t.status), ['in_progress', 'pending']);
  assert.equal(step(ok({ note: { id: 'm1' } })).call.name, 'write_memory_note');
  const last = step((c) => ({ status: 'success', data: { todos: c.arguments.todos, completed: 2 } }));
  assert.deepEqual(last.call.arguments.todos.map((t) => t.status), ['completed', 'completed']);
  assert.equal(step(ok({})).text, 'Done. Plan: 2 of 2 items done.');
  // Without the planning tools it just does the work.
  const plainCall = decide({ messages: messages.slice(0, 2), tools: tools(['write_memory_note']) });
  assert.equal(plainCall.call.name, 'write_memory_note');
});

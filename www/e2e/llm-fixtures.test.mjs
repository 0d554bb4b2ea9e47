// The dev server's demo model and scriptable mock LLM, over real HTTP.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../server.mjs';

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
});

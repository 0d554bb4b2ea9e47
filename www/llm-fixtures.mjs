// Model endpoints served by the dev server (server.mjs), so the demo works with no key and
// tests have a model they can script.
//
// Demo model (OpenAI-compatible): POST /demo/v1/chat/completions. Deterministic and offline.
// It understands a few instructions in the last user message and answers with real tool
// calls; after tool results it sums up:
//   replace "A" with "B"        -> update_manuscript {searchText: A, replacementText: B}
//   note: TEXT / remember TEXT   -> write_memory_note {text: TEXT, type: "fact"}
//   find "TEXT"                  -> navigate_to_text {query: TEXT, searchType: "fuzzy"}
//   go to chapter N              -> jump_to_chapter {chapter: N}
//   set notes of NAME to "TEXT"  -> character_update_notes {character: NAME, notes: TEXT}
//   list chapters               -> list_chapters {}
//   read chapter N              -> read_chapter {chapter: N}
//   search "TEXT"               -> search_manuscript {query: TEXT}
//   plan: TEXT                  -> write_file {path: "plans/plan.md", content: TEXT}
//   anything else                -> a short text answer listing what it understands
// After a tool result it says "Done.", that the writer declined (a result with code
// `denied`), or what went wrong.
//
// It also plays the presets' agents, deciding only from the request (the system prompt, the
// tools offered and the transcript of the current turn), never from anything it remembers:
//   Dungeon Master: an agent offered route_action_to_root_agent is the player interface (it
//     classifies the player's words into the action dictionary: "I attack the goblin" ->
//     combat, target goblin; "Hello blacksmith" -> dialogue; then says the answer that comes
//     back); a task "ACTION FROM ..." with route_to_*_agent tools is the root (combat -> rules
//     lawyer, then narrative with action_type combat_description and the verdict in context;
//     dialogue -> npc; exploration -> narrative; ...; then its reply tool combining the
//     answers); other routed agents answer in their role (from "You are the <Role> Agent"),
//     after one query_lore look-up, with their reply tool (send_response_to_root_agent).
//   TextCraft: an agent offered assign_task is the architect (list_files manuscripts, write
//     plans/chN.md, assign the narrator, read the draft, assign the editor a "very X" phrase,
//     then sum up); a "TASK FROM THE ARCHITECT" with write_file is the narrator (read the
//     plan, write the draft), with edit_file only the editor (edit_file the phrase).
//   An agent the app defined: an instruction it has no tool for goes to its first routing
//     tool; a routed agent runs the instruction in the player input and answers with its
//     reply tool.
//
// Mock LLM, scriptable: POST /mock/<script>/responses with a JSON array of responses queues
// them; each model request to /mock/<script>/... takes the next one:
//   {status?: 200, headers?: {...}, body?: string (non-stream), events?: [string] (SSE
//    `data`/`event` blocks, sent as-is, each followed by a blank line), delayMs?: 0 (before
//    the first byte), gapMs?: 0 (between events), stallAfter?: n (stop sending after n events
//    but keep the connection open), dropAfter?: n (destroy the socket after n events),
//    noFinalNewline?: false (omit the last blank line), splitBytes?: n (write in n-byte pieces)}
// Paths accepted: /mock/<script>/v1/chat/completions (OpenAI), /mock/<script>/v1/messages
// (Anthropic), /mock/<script>/v1beta/models/<model>:streamGenerateContent (Gemini).
// GET /mock/<script>/requests lists the requests received ({path, headers, body, at}).
// /mock/<script>/redirect/<path> answers 307 to /mock/<script>/<path> on the other loopback
// name (localhost <-> 127.0.0.1): another origin.
// The mock is for tests only (server.mjs serves it with --mock). A queued response's headers
// can never set Content-Type, Location or Set-Cookie (nor hop-by-hop headers): the mock
// always answers JSON or an event stream, with `X-Content-Type-Options: nosniff`, so nothing
// queued can make this origin serve a page. Bodies are capped (MAX_BODY_BYTES, then 413).

const scripts = new Map();

function script(name) {
  if (!scripts.has(name)) scripts.set(name, { queue: [], requests: [] });
  return scripts.get(name);
}

/** The largest request body read, in bytes. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** Read a request body as UTF-8, at most `limit` bytes (else an error with status 413). */
export async function readBody(req, limit = MAX_BODY_BYTES) {
  const declared = Number(req.headers['content-length']);
  const tooLarge = () => Object.assign(new Error(`request body over ${limit} bytes`), { status: 413 });
  if (declared > limit) throw tooLarge();
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > limit) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

// Headers a queued response may never set: what the body is, where it sends the browser,
// cookies, and what framing the server owns.
const FORBIDDEN_HEADERS = new Set(['content-type', 'location', 'set-cookie', 'set-cookie2', 'content-length', 'transfer-encoding', 'connection', 'content-encoding', 'content-disposition', 'refresh', 'x-content-type-options']);

/** A queued response's headers without the forbidden ones. */
export function safeHeaders(headers) {
  const out = {};
  if (!headers || typeof headers !== 'object') return out;
  for (const [name, value] of Object.entries(headers)) {
    if (FORBIDDEN_HEADERS.has(String(name).toLowerCase())) continue;
    if (typeof value !== 'string' && typeof value !== 'number') continue;
    if (/[\r\n]/.test(String(value))) continue;
    out[name] = String(value);
  }
  return out;
}

const MOCK_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': '*',
  'X-Content-Type-Options': 'nosniff',
};

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function sseHeaders(extra = {}, cors = true) {
  return {
    ...safeHeaders(extra),
    ...(cors ? MOCK_HEADERS : { 'X-Content-Type-Options': 'nosniff' }),
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache',
  };
}

async function writeSlowly(res, text, splitBytes) {
  if (!splitBytes) return void res.write(text);
  const bytes = Buffer.from(text, 'utf8');
  for (let i = 0; i < bytes.length; i += splitBytes) {
    res.write(bytes.subarray(i, i + splitBytes));
    await sleep(0);
  }
}

// Let what was written reach the client, then cut the connection mid-stream.
async function drop(req, res) {
  await new Promise((resolve) => res.write('', resolve));
  await sleep(20);
  req.socket.destroy();
}

async function serveScripted(req, res, name) {
  const entry = script(name);
  const body = await readBody(req);
  entry.requests.push({ path: req.url, method: req.method, headers: req.headers, body, at: Date.now() });
  const next = entry.queue.shift();
  if (!next) {
    res.writeHead(500, { ...MOCK_HEADERS, 'Content-Type': 'application/json' });
    return res.end(JSON.stringify({ error: { message: `mock script '${name}' has no response queued` } }));
  }
  if (next.delayMs) await sleep(next.delayMs);
  const status = next.status ?? 200;
  if (next.events === undefined) {
    res.writeHead(status, { ...safeHeaders(next.headers), ...MOCK_HEADERS, 'Content-Type': 'application/json' });
    return res.end(next.body ?? '');
  }
  res.writeHead(status, sseHeaders(next.headers));
  for (let i = 0; i < next.events.length; i++) {
    if (next.dropAfter === i) return drop(req, res);
    if (next.stallAfter === i) return; // keep the connection open, send nothing more
    const last = i === next.events.length - 1;
    const text = next.events[i] + (last && next.noFinalNewline ? '\n' : '\n\n');
    await writeSlowly(res, text, next.splitBytes);
    if (next.gapMs) await sleep(next.gapMs);
  }
  if (next.dropAfter === next.events.length) return drop(req, res);
  if (next.stallAfter === next.events.length) return;
  res.end();
}

// --- the demo model -------------------------------------------------------------------------

const HELP = 'I am the offline demo model. I understand: replace "A" with "B"; note: some text; find "a phrase"; go to chapter 3; set notes of Mara to "some notes"; list chapters; read chapter 2; search "a phrase"; plan: some steps. With the Dungeon Master preset: "I attack the goblin", "Hello blacksmith", "I look around". With TextCraft: "plan chapter 3 and draft it".';

/** A tool result's JSON, or null. */
function parseResult(content) {
  try {
    return JSON.parse(content);
  } catch {
    return null;
  }
}

/** What the demo model says after a tool result (the result's JSON text). */
function sumUp(content) {
  const result = parseResult(content);
  const status = result?.status ?? 'done';
  if (status === 'success') return 'Done.';
  const code = result?.data?.code;
  if (code === 'denied') return 'You declined that change, so nothing was changed.';
  if (code === 'approval_required') return 'That change waits for your approval.';
  return `That did not work: ${String(content).slice(0, 200)}`;
}

/** The plain instructions (see the list at the top): a tool call, or null. */
function instruction(text) {
  let m;
  if ((m = text.match(/replace\s+["“](.+?)["”]\s+with\s+["“](.*?)["”]/i))) {
    return { name: 'update_manuscript', arguments: { searchText: m[1], replacementText: m[2], description: 'Demo model edit' } };
  }
  if ((m = text.match(/^(?:note|remember)\s*:?\s+(.+)$/is))) return { name: 'write_memory_note', arguments: { text: m[1], type: 'fact' } };
  if ((m = text.match(/find\s+["“](.+?)["”]/i))) return { name: 'navigate_to_text', arguments: { query: m[1], searchType: 'fuzzy' } };
  if ((m = text.match(/set\s+(?:the\s+)?notes\s+(?:of|for)\s+(.+?)\s+to\s+["“]([\s\S]*?)["”]/i))) {
    return { name: 'character_update_notes', arguments: { character: m[1].trim(), notes: m[2] } };
  }
  if (/^list (?:the )?chapters\b/i.test(text)) return { name: 'list_chapters', arguments: {} };
  if ((m = text.match(/^read chapter\s+(\S+)/i))) return { name: 'read_chapter', arguments: { chapter: m[1] } };
  if ((m = text.match(/^search\s+["“](.+?)["”]/i))) return { name: 'search_manuscript', arguments: { query: m[1] } };
  if ((m = text.match(/^plan\s*:\s*([\s\S]+)$/i))) return { name: 'write_file', arguments: { path: 'plans/plan.md', content: m[1].trim() } };
  if ((m = text.match(/go to chapter\s+(\S+)/i))) return { name: 'jump_to_chapter', arguments: { chapter: m[1] } };
  return null;
}

/**
 * What the request holds for the model: the system prompt, the tools offered, the current
 * turn's user message and the calls made since (each with its parsed result).
 */
function readRequest(request) {
  const messages = request.messages ?? [];
  const system = messages.filter((m) => m.role === 'system').map((m) => String(m.content ?? '')).join('\n');
  const tools = new Set((request.tools ?? []).map((t) => t.function?.name ?? t.name).filter(Boolean));
  let start = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === 'user') {
      start = i;
      break;
    }
  }
  const prompt = start >= 0 && typeof messages[start].content === 'string' ? messages[start].content.trim() : '';
  const results = new Map();
  for (const m of messages.slice(start + 1)) if (m.role === 'tool') results.set(m.tool_call_id, m.content);
  const calls = [];
  for (const m of messages.slice(start + 1)) {
    for (const c of m.role === 'assistant' ? m.tool_calls ?? [] : []) {
      const content = results.get(c.id);
      calls.push({ name: c.function?.name, args: parseResult(c.function?.arguments) ?? {}, content, result: content === undefined ? null : parseResult(content) });
    }
  }
  return { messages, system, tools, prompt, calls, last: messages[messages.length - 1] ?? {} };
}

/** A line `Label: value` of a task message (Context runs on to the Campaign ID line). */
const field = (text, label) =>
  (label === 'Context' ? text.match(/^Context:[ \t]*([\s\S]*?)\nCampaign ID:/m) : text.match(new RegExp(`^${label}:[ \\t]*(.*)$`, 'mi')))?.[1].trim() ?? '';

/** A routed task's action dictionary. */
const actionOf = (task) => ({ type: field(task, 'Action Type'), input: field(task, 'Player Input'), target: field(task, 'Target'), context: field(task, 'Context'), campaign: field(task, 'Campaign ID') });

/** The tool a task says to answer with ("When you are done, answer with X."). */
const replyToolOf = (req) => req.prompt.match(/answer with (\w+)\./)?.[1] ?? [...req.tools].find((t) => t.startsWith('send_response_to_')) ?? null;

/** A small deterministic number from a text (the demo's dice). */
function hash(text) {
  let h = 2166136261;
  for (const ch of text) h = Math.imul(h ^ ch.codePointAt(0), 16777619) >>> 0;
  return h;
}

const title = (text) => String(text).replace(/\b\w/g, (c) => c.toUpperCase());
const content = (call) => call?.result?.data?.response?.response_content ?? '';
const failure = (call) => call?.result?.data?.message ?? 'no answer';

// The Dungeon Master seed: player interface -> root -> narrative, rules lawyer, NPC, character
// and campaign creation, every message a routing tool call.

/** The player's message as the seed's action dictionary. */
function classify(text) {
  const clean = text.replace(/[.!?]+$/, '').trim();
  const after = (re) => (clean.match(re)?.[1] ?? '').replace(/^(?:the|a|an)\s+/i, '').trim();
  let action_type = 'exploration';
  let target = '';
  if (/\b(?:attack|hit|strike|stab|slash|shoot|fight|punch|kick|swing at|charge)\b/i.test(clean)) {
    action_type = 'combat';
    target = after(/\b(?:attack|hit|strike|stab|slash|shoot|fight|punch|kick|swing at|charge)\s+(?:at\s+)?(.+?)(?:\s+with\b.*)?$/i);
  } else if (/\b(?:create|make|roll up|build)\b.*\bcharacter\b|\bnew character\b/i.test(clean)) {
    action_type = 'character_creation';
    target = 'new character';
  } else if (/\bcampaign\b/i.test(clean)) {
    action_type = 'meta';
    target = 'campaign';
  } else if (/^(?:hello|hi|hey|greetings|good (?:morning|evening|day))\b/i.test(clean)) {
    action_type = 'dialogue';
    target = after(/^(?:hello|hi|hey|greetings|good (?:morning|evening|day))[,\s]+(?:there[,\s]+)?(.+)$/i);
  } else if (/\b(?:talk|speak|say|ask)\b/i.test(clean)) {
    action_type = 'dialogue';
    target = after(/\b(?:talk|speak|say|ask)\s+(?:to|with)?\s*(.+?)(?:\s+(?:about|if|whether)\b.*)?$/i);
  } else if (/\?\s*$/.test(text) || /^(?:what|how|can|may|is|are|do|does|where|who|why|when)\b/i.test(clean)) {
    action_type = 'question';
  } else {
    target = after(/\b(?:look around|look at|examine|open|search|enter|go to|explore)\s+(.+)$/i);
  }
  return { action_type, player_input: text, target, context: `The player says: "${text}".`, campaign_id: 'demo' };
}

function playerInterface(req) {
  const routed = req.calls.find((c) => c.name === 'route_action_to_root_agent');
  if (!routed) {
    return { text: 'Let me put that to the game master.', call: { name: 'route_action_to_root_agent', arguments: classify(req.prompt) } };
  }
  if (routed.result?.status === 'success') return { text: content(routed) || 'The world holds its breath.' };
  return { text: `The game stumbles (${failure(routed)}). Try again?` };
}

/** Which sub-agents the root routes an action to, in order. */
function routePlan(type, input) {
  if (type === 'combat') return ['rules_lawyer', 'narrative'];
  if (type === 'dialogue') return ['npc'];
  if (type === 'character_creation') return ['character_creation'];
  if (type === 'meta') return /campaign/i.test(input) ? ['campaign_creation'] : [];
  if (type === 'question') return /\b(?:rule|roll|check|dc|armou?r|damage|can i)\b/i.test(input) ? ['rules_lawyer'] : ['narrative'];
  return ['narrative'];
}

function root(req) {
  const action = actionOf(req.prompt);
  const plan = routePlan(action.type, action.input).filter((a) => req.tools.has(`route_to_${a}_agent`));
  const answers = [];
  for (const agent of plan) {
    const done = req.calls.find((c) => c.name === `route_to_${agent}_agent`);
    if (done && done.result?.status !== 'success') {
      answers.push({ agent, text: `(the ${agent} agent could not answer: ${failure(done)})` });
      break;
    }
    if (done) {
      answers.push({ agent, text: content(done) });
      continue;
    }
    // Combat: the rules decide, then the narrative agent describes that outcome.
    const narrateCombat = agent === 'narrative' && action.type === 'combat';
    const earlier = answers.map((a) => `${a.agent}: ${a.text}`).join(' ');
    return {
      call: {
        name: `route_to_${agent}_agent`,
        arguments: {
          action_type: narrateCombat ? 'combat_description' : action.type,
          player_input: action.input,
          target: action.target,
          context: [action.context, earlier].filter(Boolean).join(' '),
          campaign_id: action.campaign || 'demo',
        },
      },
    };
  }
  const narration = answers.find((a) => a.agent !== 'rules_lawyer')?.text;
  const rules = answers.find((a) => a.agent === 'rules_lawyer')?.text;
  const response = narration && rules ? `${narration}\n\n(${rules})` : narration ?? rules ?? `Nothing happens: the game has no agent for "${action.type}".`;
  const reply = replyToolOf(req);
  if (!reply) return { text: response };
  return {
    call: {
      name: reply,
      arguments: { agent_type: 'root', response_content: response, action_type: action.type, context: `Coordinated: ${answers.map((a) => a.agent).join(', ') || 'none'}.`, campaign_id: action.campaign || 'demo' },
    },
  };
}

/** A routed sub-agent's role, from its system prompt ("You are the Rules Lawyer Agent"). */
const roleOf = (system) => (system.match(/You are the ([\w ]+?) Agent\b/)?.[1] ?? '').toLowerCase().replace(/\s+/g, '_');

function rulesAnswer(action) {
  const target = action.target || 'foe';
  if (action.type !== 'combat') return `Roll a d20 and add your modifier; 15 or more succeeds (${action.input}).`;
  const h = hash(`${action.input}|${target}`);
  const d20 = 1 + (h % 20);
  const total = d20 + 5;
  if (total < 13) return `Attack roll: d20 (${d20}) + 5 = ${total} against the ${target}'s AC 13: a miss. No damage.`;
  const d8 = 1 + ((h >>> 5) % 8);
  const damage = d8 + 3;
  return `Attack roll: d20 (${d20}) + 5 = ${total} against the ${target}'s AC 13: a hit. Damage: 1d8 (${d8}) + 3 = ${damage} slashing; the ${target} has 7 hit points and ${damage >= 7 ? 'falls' : 'is wounded'}.`;
}

function narrativeAnswer(action) {
  const target = action.target || 'foe';
  if (action.type === 'combat_description') {
    if (/\bmiss\b/i.test(action.context)) return `You swing at the ${target}, but it ducks under your blade and scrambles back, cackling.`;
    if (/\bfalls\b/i.test(action.context)) return `You lunge at the ${target}. Your blade bites deep, and the ${target} crumples to the floor with a last, wheezing cry.`;
    return `Your blade cuts the ${target}; it staggers back, bleeding, but keeps its feet and bares its teeth.`;
  }
  if (action.type === 'question') return 'Nobody here knows for sure, but the old maps hint at a way down through the cellars.';
  const where = action.target ? `the ${action.target}` : 'the room';
  return `You study ${where}. Torchlight flickers over damp stone; somewhere ahead, water drips, and a draft carries the smell of smoke.`;
}

function routedSubAgent(req) {
  const action = actionOf(req.prompt);
  const role = roleOf(req.system);
  const reply = replyToolOf(req);
  const answer = (text) =>
    reply
      ? { call: { name: reply, arguments: { agent_type: role || 'agent', response_content: text, action_type: action.type, context: action.context, campaign_id: action.campaign || 'demo' } } }
      : { text };
  const looked = req.calls.some((c) => c.name === 'query_lore');
  const lookUp = (what, about) => (!looked && req.tools.has('query_lore') ? { text: what, call: { name: 'query_lore', arguments: { query: about } } } : null);
  switch (role) {
    case 'rules_lawyer':
      return lookUp(`Checking the rules for "${action.input}".`, `${action.target || action.type} rules`) ?? answer(rulesAnswer(action));
    case 'narrative':
      if (action.type === 'combat_description') return answer(narrativeAnswer(action));
      return lookUp('Looking up what the lore says.', action.target || action.input) ?? answer(narrativeAnswer(action));
    case 'npc': {
      const who = title(action.target || 'stranger');
      return lookUp(`Recalling who the ${action.target || 'stranger'} is.`, action.target || 'npc') ?? answer(`[${who}] Well met, traveler! Warm yourself by the forge. What can I do for you today?`);
    }
    case 'character_creation':
      return answer('A new character: Arin Vale, a human fighter with a soldier’s background. Strength 16, Dexterity 12, Constitution 14, Intelligence 10, Wisdom 13, Charisma 8. Longsword, chain mail and a dented shield.');
    case 'campaign_creation': {
      const wrote = req.calls.find((c) => c.name === 'write_file');
      if (!wrote && req.tools.has('write_file')) {
        return { call: { name: 'write_file', arguments: { path: 'plans/campaign.md', content: '# The Drowned Crown\n\nSetting: a flooded coastal kingdom.\n\nFactions: the Tide Court, the Salt Brothers.\n\n1. The missing lighthouse keeper.\n2. The vault beneath the harbour.\n3. The crown rises.\n' } } };
      }
      return answer(wrote?.result?.status === 'success' ? 'The campaign outline is in plans/campaign.md: The Drowned Crown, in three acts.' : 'I could not save the outline.');
    }
    default: {
      // An agent the app defined: the plain instructions, read from the player input.
      const call = instruction(action.input);
      const made = call && req.calls.find((c) => c.name === call.name);
      if (call && !made && req.tools.has(call.name)) return { call };
      return answer(made ? sumUp(made.content) : HELP);
    }
  }
}

// TextCraft: the architect plans and assigns, the narrator drafts, the editor fixes.

const STRONGER = { dark: 'pitch-black', quiet: 'hushed', cold: 'bitter', big: 'vast', small: 'tiny', old: 'ancient', loud: 'deafening', tired: 'exhausted', afraid: 'terrified', wet: 'soaked' };

function architect(req) {
  const n = Number(req.prompt.match(/chapter\s+(\d+)/i)?.[1] ?? 1);
  const nn = String(n).padStart(2, '0');
  const made = (name, test = () => true) => req.calls.find((c) => c.name === name && test(c));
  const listed = made('list_files');
  if (!listed) return { text: 'Let me look at the manuscript first.', call: { name: 'list_files', arguments: { directory: 'manuscripts' } } };
  const entries = listed.result?.data?.entries ?? [];
  const file = entries.find((e) => new RegExp(`^0*${n}(?:-|\\.md$)`).test(e.name ?? ''))?.path;
  if (!file) return { text: `There is no chapter ${n} yet (the manuscript has ${entries.length}). Add it first, then ask me again.` };
  const chapterTitle = title(file.replace(/^.*\/\d+-?/, '').replace(/\.md$/, '').replace(/-/g, ' ')) || `Chapter ${n}`;
  const planPath = `plans/ch${n}.md`;
  const planned = made('write_file', (c) => c.args.path === planPath);
  if (!planned) {
    const plan = `# Chapter ${n}: ${chapterTitle}\n\nRequest: ${req.prompt}\n\n## Beats\n1. Opening: the night closes in and the weather turns.\n2. Turn: a sound from below forces a choice.\n3. Close: a door opens onto a question that pulls into chapter ${n + 1}.\n`;
    return { text: `Planning chapter ${n} in ${planPath}.`, call: { name: 'write_file', arguments: { path: planPath, content: plan } } };
  }
  if (planned.result?.status !== 'success') return { text: `I could not write the plan: ${failure(planned)}` };
  const assigned = (agent) => made('assign_task', (c) => c.args.target_agent === agent);
  const drafted = assigned('narrator');
  if (!drafted) {
    return {
      call: {
        name: 'assign_task',
        arguments: { target_agent: 'narrator', task_description: `Draft chapter ${n} following the plan in ${planPath}: one paragraph per beat, past tense. Write the whole draft to ${file}.`, target_file: file },
      },
    };
  }
  if (drafted.result?.status !== 'success') return { text: `The narrator could not draft ${file}: ${failure(drafted)}` };
  const read = made('read_file', (c) => c.args.path === file);
  if (!read) return { text: 'Checking the draft.', call: { name: 'read_file', arguments: { path: file } } };
  const draft = String(read.result?.data?.content ?? '');
  const weak = draft.match(/\bvery (\w+)/i);
  const edited = assigned('editor');
  if (weak && !edited) {
    const better = STRONGER[weak[1].toLowerCase()] ?? weak[1];
    return {
      call: {
        name: 'assign_task',
        arguments: { target_agent: 'editor', task_description: `In ${file}, replace the phrase "${weak[0]}" with "${better}" (its first occurrence).`, target_file: file },
      },
    };
  }
  const files = new Set([planPath]);
  for (const c of req.calls) for (const f of c.result?.data?.files_changed ?? []) files.add(f);
  const editorSaid = edited ? (edited.result?.status === 'success' ? ` The editor: ${edited.result.data.summary}` : ` The editor could not make its fix: ${failure(edited)}`) : '';
  return { text: `Done. The plan for chapter ${n} is in ${planPath}, and the narrator drafted ${file}.${editorSaid} Files changed: ${[...files].join(', ')}.` };
}

function narrator(req) {
  const target = field(req.prompt, 'Target file') || req.prompt.match(/manuscripts\/[\w.-]+\.md/)?.[0];
  if (!target) return { text: 'The task names no file to write, so I wrote nothing.' };
  const planPath = req.prompt.match(/plans\/[\w./-]+?\.md/)?.[0];
  const read = req.calls.find((c) => c.name === 'read_file');
  if (planPath && !read && req.tools.has('read_file')) return { call: { name: 'read_file', arguments: { path: planPath } } };
  const wrote = req.calls.find((c) => c.name === 'write_file');
  if (!wrote) {
    const beats = [...String(read?.result?.data?.content ?? '').matchAll(/^\d+\.\s+(.+)$/gm)].map((m) => m[1]);
    const paragraphs = [
      'The night was very dark by the time the storm reached the coast. Rain hammered the shutters, and the lamp threw long, nervous shadows across the floor.',
      'Then came the sound from below: a slow scrape, like wood dragged over stone. She held her breath, counted to ten, and took the stair one step at a time.',
      'At the bottom the door stood open. Beyond it the dark waited, patient, and she understood that whatever came next, she would not be going back up the same way.',
    ];
    const text = (beats.length ? beats : ['', '', '']).map((beat, i) => paragraphs[i] ?? `And then: ${beat.replace(/^\w+:\s*/, '')}`).join('\n\n');
    return { text: `Drafting ${target}.`, call: { name: 'write_file', arguments: { path: target, content: text } } };
  }
  if (wrote.result?.status !== 'success') return { text: `I could not write ${target}: ${failure(wrote)}` };
  const words = String(wrote.args.content ?? '').split(/\s+/).filter(Boolean).length;
  return { text: `I drafted ${target}: ${words} words in ${String(wrote.args.content ?? '').split(/\n\n/).length} paragraphs.` };
}

function editor(req) {
  const target = field(req.prompt, 'Target file') || req.prompt.match(/manuscripts\/[\w.-]+\.md/)?.[0];
  const m = req.prompt.match(/replace (?:the phrase )?["“](.+?)["”] with ["“](.*?)["”]/i);
  if (!target || !m) return { text: 'The task names no phrase to change, so I changed nothing.' };
  const edit = req.calls.find((c) => c.name === 'edit_file');
  if (!edit) return { call: { name: 'edit_file', arguments: { path: target, search_text: m[1], replace_text: m[2] } } };
  if (edit.result?.status !== 'success') return { text: `I could not edit ${target}: ${failure(edit)}` };
  return { text: `In ${target}, I replaced “${m[1]}” with “${m[2]}”.` };
}

/** The plain assistant, and any agent without a preset's role. */
function plain(req) {
  if (req.last.role === 'tool') return { text: sumUp(req.last.content) };
  const call = instruction(req.prompt);
  if (!call) return { text: HELP };
  if (req.tools.size && !req.tools.has(call.name)) {
    // Not its tool: hand it to a sub-agent when it has one.
    const route = [...req.tools].find((t) => /^route_/.test(t) && !t.startsWith('route_to_player_interface'));
    if (route) return { call: { name: route, arguments: { action_type: 'meta', player_input: req.prompt, target: '', context: 'Delegated by the demo model.' } } };
  }
  return { call };
}

/** Decide the answer from the request alone: system prompt, tools offered, transcript. */
function decide(request) {
  const req = readRequest(request);
  const task = req.prompt;
  if (req.tools.has('route_action_to_root_agent')) return playerInterface(req);
  if (/^ACTION FROM /.test(task)) {
    const routes = [...req.tools].filter((t) => /^route_to_\w+_agent$/.test(t) && t !== replyToolOf(req));
    return routes.length ? root(req) : routedSubAgent(req);
  }
  if (req.tools.has('assign_task')) return architect(req);
  if (/^TASK FROM THE /.test(task)) {
    if (req.tools.has('write_file')) return narrator(req);
    if (req.tools.has('edit_file')) return editor(req);
  }
  // A routing result back in an agent the app defined: say what came back.
  const routed = req.last.role === 'tool' && req.calls.at(-1);
  if (routed && /^route_/.test(routed.name) && routed.result?.status === 'success') return { text: content(routed) || 'Done.' };
  return plain(req);
}

let demoCalls = 0;

function demoEvents(answer, model) {
  const id = `demo-${++demoCalls}`;
  const base = { id, object: 'chat.completion.chunk', created: 0, model };
  const chunk = (delta, finish = null) => `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}`;
  const events = [chunk({ role: 'assistant', content: '' })];
  if (answer.text) {
    for (const piece of answer.text.match(/.{1,12}/gs)) events.push(chunk({ content: piece }));
  }
  if (!answer.call) {
    events.push(chunk({}, 'stop'));
  } else {
    const args = JSON.stringify(answer.call.arguments);
    const third = Math.ceil(args.length / 3);
    const callId = `call_${id}`;
    events.push(chunk({ tool_calls: [{ index: 0, id: callId, type: 'function', function: { name: answer.call.name, arguments: '' } }] }));
    for (let i = 0; i < args.length; i += third) {
      events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(i, i + third) } }] }));
    }
    events.push(chunk({}, 'tool_calls'));
  }
  events.push(`data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 } })}`);
  events.push('data: [DONE]');
  return events;
}

async function serveDemo(req, res) {
  let request;
  try {
    request = JSON.parse(await readBody(req));
  } catch (err) {
    if (err.status) throw err;
    res.writeHead(400, { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff' });
    return res.end(JSON.stringify({ error: { message: `invalid JSON: ${err.message}` } }));
  }
  const answer = decide(request);
  const model = request.model ?? 'draftsmith-demo';
  if (request.stream) {
    res.writeHead(200, sseHeaders({}, false));
    for (const event of demoEvents(answer, model)) {
      res.write(`${event}\n\n`);
      await sleep(5);
    }
    return res.end();
  }
  const message = !answer.call
    ? { role: 'assistant', content: answer.text }
    : { role: 'assistant', content: answer.text ?? null, tool_calls: [{ id: `call_demo_${++demoCalls}`, type: 'function', function: { name: answer.call.name, arguments: JSON.stringify(answer.call.arguments) } }] };
  res.writeHead(200, { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff' });
  res.end(JSON.stringify({
    id: `demo-${demoCalls}`, object: 'chat.completion', model,
    choices: [{ index: 0, message, finish_reason: answer.call ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 },
  }));
}

/** Handle /demo/... and (with `mock`) /mock/...; returns false for other paths. */
export async function handleModelRoute(req, res, pathname, { mock = false } = {}) {
  if (req.method === 'POST' && pathname === '/demo/v1/chat/completions') {
    await serveDemo(req, res);
    return true;
  }
  const route = mock && pathname.match(/^\/mock\/([\w-]+)\/(.*)$/);
  if (!route) return false;
  const [, name, rest] = route;
  if (rest === 'responses' && req.method === 'POST') {
    let queued;
    try {
      queued = JSON.parse(await readBody(req));
    } catch (err) {
      if (err.status) throw err;
      res.writeHead(400, { ...MOCK_HEADERS, 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `invalid JSON: ${err.message}` } }));
      return true;
    }
    script(name).queue.push(...(Array.isArray(queued) ? queued : [queued]));
    res.writeHead(204, MOCK_HEADERS);
    res.end();
    return true;
  }
  if (rest.startsWith('redirect/')) {
    // A redirect to another origin (the other loopback name, same port), for the test that
    // the worker never follows one with the key. The target is fixed here, not queued.
    const host = String(req.headers.host ?? '');
    const port = req.socket.localPort;
    const other = host.startsWith('localhost') ? '127.0.0.1' : 'localhost';
    res.writeHead(307, { ...MOCK_HEADERS, Location: `http://${other}:${port}/mock/${name}/${rest.slice('redirect/'.length)}` });
    res.end();
    return true;
  }
  if (rest === 'requests' && req.method === 'GET') {
    res.writeHead(200, { ...MOCK_HEADERS, 'Content-Type': 'application/json' });
    res.end(JSON.stringify(script(name).requests));
    return true;
  }
  if (req.method === 'POST') {
    await serveScripted(req, res, name);
    return true;
  }
  return false;
}

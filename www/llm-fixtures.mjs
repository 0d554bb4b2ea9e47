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
//   watch NAME                   -> watch_entity {name: NAME, type: "character", reason}
//   watch rule: TEXT             -> watch_entity {name: TEXT, type: "rule", reason}
//   goal: TEXT                   -> create_goal {title: TEXT}
//   research URL                -> research_url {url: URL}; then the page's title and url
//   search the research for X   -> search_research {query: X} (also "search research for X",
//                                  "what does the research say about X"); then it cites the
//                                  best note: According to "<title>" (<url>): <its first
//                                  quoted sentence>
//   check "TEXT" against the house style
//                                -> the offered tool whose name or description speaks of
//                                  style (an MCP server's, say), its first required string
//                                  argument TEXT; then what the tool answered (its quoted lines)
//   Quill's editor tools (each a short plan decided from the turn's tool results):
//   zen mode / leave zen mode    -> toggle_zen_mode {enabled: true | false} ("toggle zen mode":
//                                  {}); also "zen mode on|off", "enter|exit zen mode"
//   highlight "X" as STYLE: NOTE -> highlight_text {text: X, style, note} (STYLE warning,
//                                  suggestion or info; style and note optional)
//   clear the highlights         -> clear_highlights {} ("clear the warnings": {style: "warning"})
//   show the NAME panel          -> switch_panel {panel} (NAME: chat, history, memory, files,
//                                  jobs, research, analysis, bible or "story bible", settings;
//                                  also "open the NAME panel", "show the story bible")
//   scroll to the end            -> list_chapters, then scroll_to_position at the active
//                                  chapter's length in chars
//   scroll to the top | to N     -> scroll_to_position {position: 0 | N}
//   analyze [the] [SECTION]      -> run_analysis {section?, interpret: false} (SECTION pacing,
//                                  characters, plot or setting; none: the full analysis), then
//                                  switch_panel {panel: "analysis"}, then its headline figures
//   anything else                -> a short text answer listing what it understands
// After a tool result it says "Done.", that the writer declined (a result with code
// `denied`), or what went wrong.
//
// Proactive memory's nested calls (no tools), recognised by their fixed system prompts:
//   the idle thinker ("You are the proactive thinker ...") -> a JSON list of one suggestion
//     made from its prompt: a next step for the first active goal, else a follow-up note on
//     the newest observation, else a note to keep an eye on the first watched entity, else a
//     goal to set one for the project;
//   the bedside plan ("You keep a novelist's bedside note ...") -> "- Work on <goal>." for
//     each active goal the status lists (at most three), else one line asking for a goal.
//
// It also plays the presets' agents, deciding only from the request (the system prompt, the
// tools offered and the transcript of the current turn; the Dungeon Master's root also looks
// at the earlier turns its request carries), never from anything it remembers:
//   Dungeon Master: an agent offered route_action_to_root_agent is the player interface (it
//     classifies the player's words into the action dictionary: "I attack the goblin" ->
//     combat, target goblin; "Hello blacksmith" -> dialogue; then says the answer that comes
//     back; after "I pick up the rope" it reads the game state with campaign_read_state and
//     adds the item with campaign_update_state); a task "ACTION FROM ..." with route_to_*_agent
//     tools is the root (combat -> rules lawyer, then narrative with action_type
//     combat_description and the verdict in context; dialogue -> npc; exploration ->
//     narrative; a new campaign -> campaign creation; a new character -> character creation;
//     ...; then its reply tool combining the answers). When its conversation, earlier turns
//     included, shows a campaign (a campaign tool or route_to_campaign_creation_agent call),
//     combat and questions start with campaign_read_entry: the party goes to the rules lawyer
//     as game_state, the verdict's "N damage to NAME" is written back with
//     campaign_update_entry (hit_points), and a question about hit points, inventory,
//     location or quests is answered from the record. Other routed agents answer in their role
//     (from "You are the <Role> Agent"), after one query_lore look-up, with their reply tool
//     (send_response_to_root_agent); the rules lawyer adds the foe's blow at the first party
//     member its game state names; the campaign creation agent writes plans/campaign.md, then
//     campaign_create_entry (the hero the player named, "for Aria", with "N hit points"). The
//     character creation agent, routed or in a chat of its own, records the character the
//     player describes ("named Bram", "character: Bram, a dwarf cleric"; else Arin Vale)
//     with character_create_entry, adds them to the party of the campaign in play
//     (campaign_read_state, then campaign_update_state with 10 hit points), then says who
//     was recorded (or that the writer declined).
//   TextCraft: an agent offered assign_task is the architect (list_files manuscripts, write
//     plans/chN.md, assign the narrator, read the draft, assign the editor a "very X" phrase,
//     then sum up); asked for chapter N one past the last ("draft chapter 4: The Lamp Room"),
//     it has the narrator create it as manuscripts/chNN.md under a "# <title>" heading; a
//     "TASK FROM THE ARCHITECT" with write_file is the narrator (read the plan, write the
//     draft), with edit_file only the editor (edit_file the phrase).
//   An agent the app defined: an instruction it has no tool for goes to its first routing
//     tool; a routed agent runs the instruction in the player input and answers with its
//     reply tool. With planning (write_todos offered), an instruction it has the tool for
//     is planned first: write_todos, the call, write_todos with both items completed, then
//     "Done. Plan: 2 of 2 items done."
//   rentl: a task message of the jobs protocol ("Task for <agent>: ...", then "Scene: <id>",
//     "Route: <id>" or "Scope: the whole project", and "Overwrite allowed: yes|no") is played
//     by that subagent (or, with "rentl" in the system prompt, the one whose write tool is
//     offered): it reads first, writes only what this conversation's tool results support,
//     leaves a filled field alone unless overwrite is allowed, then sums up in a sentence.
//     Context: a summary from the scene's first sentences, tags from its salient words, the
//     characters and locations scene_read_overview found in its text, glossary entries for
//     its capitalised terms (searched first), a route synopsis from its scenes' summaries and
//     its characters from their entries, target-language names kept as the source names (or
//     the glossary's). Translation: every line of the scene, marked "[<code>] <line>" with
//     the glossary's terms (the target language from the style guide or UI notes).
//     Editing: style (line length, untranslated and pseudo-translated lines), review and
//     consistency (the glossary check on each line) findings, or one "passed" record.
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

const HELP = 'I am the offline demo model. I understand: replace "A" with "B"; note: some text; find "a phrase"; go to chapter 3; set notes of Bram to "some notes"; list chapters; read chapter 2; search "a phrase"; plan: some steps; research https://example.org/page; search the research for lighthouses; watch Mara; watch rule: some rule; goal: some goal; zen mode; highlight "a phrase" as warning: a note; show the analysis panel; scroll to the end; analyze the pacing. With the Dungeon Master preset: "Start a campaign for Aria", "I attack the goblin", "How many hit points do I have?", "I pick up the rope", "Hello blacksmith", "I look around", "Create a new character named Bram, a dwarf cleric". With TextCraft: "plan chapter 3 and draft it", or "draft chapter N" for the next chapter. The rentl pipelines (jobs) run offline too.';

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
  if ((m = text.match(/^watch\s+rule\s*:\s*(.+)$/i))) {
    return { name: 'watch_entity', arguments: { name: m[1].trim(), type: 'rule', reason: `The writer asked to watch the rule "${m[1].trim()}".` } };
  }
  if ((m = text.match(/^watch\s+(.+?)\.?$/i))) {
    return { name: 'watch_entity', arguments: { name: m[1].trim(), type: 'character', reason: `The writer asked to watch ${m[1].trim()}.` } };
  }
  if ((m = text.match(/^goal\s*:\s*(.+)$/i))) return { name: 'create_goal', arguments: { title: m[1].trim() } };
  if ((m = text.match(/go to chapter\s+(\S+)/i))) return { name: 'jump_to_chapter', arguments: { chapter: m[1] } };
  if ((m = text.match(/^research\s+(https?:\/\/\S+?)[.,]?$/i))) return { name: 'research_url', arguments: { url: m[1] } };
  if ((m = text.match(/^(?:search (?:the )?research (?:for|about)|what does (?:the|my) research say about)\s+(.+?)[.?!]*$/i))) {
    return { name: 'search_research', arguments: { query: m[1].replace(/^["“](.*)["”]$/, '$1') } };
  }
  return null;
}

/** What the demo model says after a research tool's result: the source it read or found. */
function sumUpResearch(call) {
  const data = call.result?.data ?? {};
  if (call.result?.status !== 'success') return `That did not work: ${data.message ?? 'no answer'}`;
  if (call.name === 'research_url') return `I read "${data.title}" (${data.url}) into the research notes.`;
  const hit = (data.hits ?? [])[0];
  if (!hit) return `I found nothing in the research about "${call.args.query}".`;
  // The page's words come quoted (`> ` lines inside an untrusted-content block, after its title).
  const quoted = String(hit.content ?? '').split('\n').filter((l) => l.startsWith('> ') && !l.startsWith('> Title: ')).map((l) => l.slice(2)).join(' ').trim();
  const first = quoted.split(/(?<=[.!?])\s/)[0];
  return `According to "${hit.title}" (${hit.url}): ${first}`;
}

/**
 * What the request holds for the model: the system prompt, the tools offered, the current
 * turn's user message and the calls made since (each with its parsed result).
 */
function readRequest(request) {
  const messages = request.messages ?? [];
  const system = messages.filter((m) => m.role === 'system').map((m) => String(m.content ?? '')).join('\n');
  const tools = new Set((request.tools ?? []).map((t) => t.function?.name ?? t.name).filter(Boolean));
  const definitions = (request.tools ?? []).map((t) => t.function ?? t);
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
  return { messages, system, tools, definitions, prompt, calls, last: messages[messages.length - 1] ?? {} };
}

/** A line `Label: value` of a task message (Context runs on to the Campaign ID line). */
const field = (text, label) =>
  (label === 'Context' ? text.match(/^Context:[ \t]*([\s\S]*?)\nCampaign ID:/m) : text.match(new RegExp(`^${label}:[ \\t]*(.*)$`, 'mi')))?.[1].trim() ?? '';

/** A routed task's action dictionary. */
const actionOf = (task) => ({ type: field(task, 'Action Type'), input: field(task, 'Player Input'), target: field(task, 'Target'), context: field(task, 'Context'), campaign: field(task, 'Campaign ID'), state: field(task, 'Game State') });

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
  // "hit points" names no blow.
  if (/\b(?:attack|hit|strike|stab|slash|shoot|fight|punch|kick|swing at|charge)\b/i.test(clean.replace(/\bhit points?\b/gi, ''))) {
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
  if (routed.result?.status !== 'success') return { text: `The game stumbles (${failure(routed)}). Try again?` };
  const told = content(routed) || 'The world holds its breath.';
  // "I pick up the rope": the item goes into the campaign's inventory (read first).
  const item = req.prompt.match(/^i\s+(?:pick up|take|grab)\s+(?:the\s+|a\s+|an\s+)?(.+?)[.!]*$/i)?.[1];
  if (item && req.tools.has('campaign_update_state')) {
    const read = req.calls.find((c) => c.name === 'campaign_read_state');
    if (!read) return { call: { name: 'campaign_read_state', arguments: {} } };
    const inventory = read.result?.data?.campaign?.inventory;
    const stored = req.calls.find((c) => c.name === 'campaign_update_state');
    if (inventory && !stored) return { call: { name: 'campaign_update_state', arguments: { inventory: [...inventory, item] } } };
    if (stored?.result?.status === 'success') return { text: `${told}\n\n(${item} is in your pack.)` };
  }
  return { text: told };
}

/** The party as the root passes it on in `game_state`: "Aria 12/12 HP, Bram 9/10 HP". */
const partyOf = (campaign) => (campaign?.party ?? []).map((m) => `${m.name} ${m.hp}/${m.max_hp} HP`).join(', ');

/** Whether the root's conversation (earlier turns too) shows a campaign in play. */
const knowsCampaign = (req) =>
  req.messages.some((m) => (m.tool_calls ?? []).some((c) => /^(?:route_to_campaign_creation_agent|campaign_(?:create|read|update)_entry)$/.test(c.function?.name ?? '')));

/** A character from the player's words: "named Bram", "character: Bram, a dwarf cleric". */
function characterOf(words) {
  const name = (words.match(/\b(?:named|called)\s+([A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)?)/) ?? words.match(/character:\s*([A-Z][^,.;]*)/))?.[1]?.trim();
  const what = words.match(/\b(an?\s+[a-z]+(?:\s+[a-z]+){0,2})(?=[,.;!]|$)/)?.[1];
  if (!name) return { name: 'Arin Vale', notes: 'A human fighter with a soldier’s background. Strength 16, Dexterity 12, Constitution 14, Intelligence 10, Wisdom 13, Charisma 8. Longsword, chain mail and a dented shield.' };
  return { name, notes: what ? `${what[0].toUpperCase()}${what.slice(1)}.` : 'A new adventurer.' };
}

/** The character creation agent, routed or talking to the player: it records the character. */
function characterCreation(req) {
  const routed = /^ACTION FROM /.test(req.prompt);
  const hero = characterOf(routed ? actionOf(req.prompt).input : req.prompt);
  const made = req.calls.find((c) => c.name === 'character_create_entry');
  if (!made && req.tools.has('character_create_entry')) {
    return { text: `Let me write ${hero.name} down.`, call: { name: 'character_create_entry', arguments: { name_src: hero.name, notes: hero.notes } } };
  }
  // Recorded: the hero joins the party of the campaign in play, if there is one.
  const recorded = made?.result?.status === 'success';
  const read = req.calls.find((c) => c.name === 'campaign_read_state');
  if (recorded && !read && req.tools.has('campaign_read_state')) return { call: { name: 'campaign_read_state', arguments: {} } };
  const party = read?.result?.status === 'success' ? read.result.data.campaign.party ?? [] : null;
  const joined = req.calls.find((c) => c.name === 'campaign_update_state');
  if (party && !joined && !party.some((m) => m.name === hero.name) && req.tools.has('campaign_update_state')) {
    return { call: { name: 'campaign_update_state', arguments: { party: [...party, { name: hero.name, hp: 10, max_hp: 10 }] } } };
  }
  const joining = joined?.result?.status === 'success' ? ` ${hero.name} joins the party with 10 hit points.` : '';
  const text = recorded
    ? `A new character: ${hero.name}. ${hero.notes} Recorded in the story bible.${joining}`
    : made?.result?.data?.code === 'denied'
      ? `You declined, so ${hero.name} was not recorded.`
      : `I could not record ${hero.name}: ${failure(made)}`;
  const reply = routed && replyToolOf(req);
  if (!reply) return { text };
  return { call: { name: reply, arguments: { agent_type: 'character_creation', response_content: text, action_type: 'character_creation', campaign_id: 'demo' } } };
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
  const reply = replyToolOf(req);
  // With a campaign in play, combat and questions start from its record.
  const read = req.calls.find((c) => c.name === 'campaign_read_entry');
  if (!read && req.tools.has('campaign_read_entry') && knowsCampaign(req) && ['combat', 'question'].includes(action.type)) {
    return { text: 'Checking the campaign.', call: { name: 'campaign_read_entry', arguments: {} } };
  }
  let campaign = read?.result?.status === 'success' ? read.result.data.campaign : null;
  if (campaign && action.type === 'question' && /\b(?:hit points|hp|health|hurt|wounded|inventory|carry|where am i|status|quests?)\b/i.test(action.input)) {
    const quests = (campaign.quests ?? []).filter((q) => q.status !== 'done').map((q) => q.title).join('; ') || 'none';
    const status = `${campaign.name}, ${campaign.time || 'now'}, at ${campaign.location || 'an unknown place'}. Party: ${partyOf(campaign) || 'nobody'}. Carrying: ${(campaign.inventory ?? []).join(', ') || 'nothing'}. Quests: ${quests}.`;
    return reply ? { call: { name: reply, arguments: { agent_type: 'root', response_content: status, action_type: action.type, campaign_id: campaign.id } } } : { text: status };
  }
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
      // The verdict's damage to the party goes into the campaign record.
      const hurt = agent === 'rules_lawyer' && campaign && content(done).match(/(\d+) damage to ([^.]+)\./);
      const member = hurt && campaign.party?.find((m) => m.name === hurt[2]);
      const updated = req.calls.find((c) => c.name === 'campaign_update_entry');
      if (member && !updated && req.tools.has('campaign_update_entry')) {
        return { text: `${member.name} takes ${hurt[1]} damage.`, call: { name: 'campaign_update_entry', arguments: { hit_points: [{ name: member.name, hp: Math.max(0, member.hp - Number(hurt[1])) }] } } };
      }
      if (updated?.result?.status === 'success') campaign = updated.result.data.campaign;
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
          ...(campaign ? { game_state: partyOf(campaign) } : {}),
          campaign_id: campaign?.id || action.campaign || 'demo',
        },
      },
    };
  }
  const narration = answers.find((a) => a.agent !== 'rules_lawyer')?.text;
  const rules = answers.find((a) => a.agent === 'rules_lawyer')?.text;
  let response = narration && rules ? `${narration}\n\n(${rules})` : narration ?? rules ?? `Nothing happens: the game has no agent for "${action.type}".`;
  if (campaign && action.type === 'combat') response += `\n\n(Party: ${partyOf(campaign)}.)`;
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

/** With the party in the game state ("Aria 12/12 HP, ..."), the foe's blow at its first member. */
function counterattack(action, verdict) {
  const hero = action.state.match(/^([^,]+?) \d+\/\d+ HP/)?.[1];
  if (action.type !== 'combat' || !hero) return verdict;
  const target = action.target || 'foe';
  const d6 = 1 + ((hash(`${action.input}|${hero}`) >>> 9) % 6);
  const blow = /\bfalls\b/.test(verdict) ? `Before it falls, the ${target} slashes back: ${d6} damage to ${hero}.` : `The ${target} strikes back: 1d6 (${d6}) = ${d6} damage to ${hero}.`;
  return `${verdict} ${blow}`;
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
      return lookUp(`Checking the rules for "${action.input}".`, `${action.target || action.type} rules`) ?? answer(counterattack(action, rulesAnswer(action)));
    case 'narrative':
      if (action.type === 'combat_description') return answer(narrativeAnswer(action));
      return lookUp('Looking up what the lore says.', action.target || action.input) ?? answer(narrativeAnswer(action));
    case 'npc': {
      const who = title(action.target || 'stranger');
      return lookUp(`Recalling who the ${action.target || 'stranger'} is.`, action.target || 'npc') ?? answer(`[${who}] Well met, traveler! Warm yourself by the forge. What can I do for you today?`);
    }
    case 'character_creation':
      return characterCreation(req);
    case 'campaign_creation': {
      const wrote = req.calls.find((c) => c.name === 'write_file');
      if (!wrote && req.tools.has('write_file')) {
        return { call: { name: 'write_file', arguments: { path: 'plans/campaign.md', content: '# The Drowned Crown\n\nSetting: a flooded coastal kingdom.\n\nFactions: the Tide Court, the Salt Brothers.\n\n1. The missing lighthouse keeper.\n2. The vault beneath the harbour.\n3. The crown rises.\n' } } };
      }
      if (wrote?.result?.status !== 'success') return answer('I could not save the outline.');
      // The record: the outline's campaign, with the hero the player named ("for Aria").
      const created = req.calls.find((c) => c.name === 'campaign_create_entry');
      if (!created && req.tools.has('campaign_create_entry')) {
        const hero = action.input.match(/\b(?:for|my character is|with)\s+([A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)?)/)?.[1] ?? 'Arin Vale';
        const hp = Number(action.input.match(/(\d+)\s*(?:hit points|hp)\b/i)?.[1] ?? 12);
        return {
          call: {
            name: 'campaign_create_entry',
            arguments: {
              name: 'The Drowned Crown',
              premise: 'A flooded coastal kingdom, where the Tide Court and the Salt Brothers fight over a drowned crown.',
              outline: 'plans/campaign.md',
              location: 'The harbour of Saltmere',
              party: [{ name: hero, hp, max_hp: hp }],
              inventory: ['rope', 'lantern'],
              quests: [{ title: 'The missing lighthouse keeper' }],
              time: 'Day 1, morning',
            },
          },
        };
      }
      if (created && created.result?.status !== 'success') return answer(`The outline is in plans/campaign.md, but I could not record the campaign: ${failure(created)}`);
      return answer('The campaign outline is in plans/campaign.md: The Drowned Crown, in three acts. The campaign is recorded; the party waits in the harbour of Saltmere.');
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
  const existing = entries.find((e) => new RegExp(`^0*${n}(?:-|\\.md$)`).test(e.name ?? ''))?.path;
  // The next number is a new chapter: write_file to manuscripts/chNN.md creates it, titled by
  // the draft's first heading (the title the request gives after "chapter N:", if any).
  const fresh = !existing && n === entries.length + 1;
  if (!existing && !fresh) return { text: `There is no chapter ${n} yet (the manuscript has ${entries.length}). I can draft the next one, chapter ${entries.length + 1}.` };
  const file = existing ?? `manuscripts/ch${nn}.md`;
  const asked = req.prompt.match(/chapter\s+\d+\s*[:–—-]\s*(.+?)\s*$/i)?.[1]?.replace(/[.!]+$/, '');
  const chapterTitle = fresh ? title(asked || `Chapter ${n}`) : title(file.replace(/^.*\/\d+-?/, '').replace(/\.md$/, '').replace(/-/g, ' ')) || `Chapter ${n}`;
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
        arguments: { target_agent: 'narrator', task_description: `Draft chapter ${n} following the plan in ${planPath}: one paragraph per beat, past tense. Write the whole draft to ${file}.${fresh ? ` It is a new chapter: begin the draft with its title as a heading, "# ${chapterTitle}".` : ''}`, target_file: file },
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
  const created = fresh ? ` Chapter ${n}, "${chapterTitle}", is new.` : '';
  return { text: `Done. The plan for chapter ${n} is in ${planPath}, and the narrator drafted ${file}.${created}${editorSaid} Files changed: ${[...files].join(', ')}.` };
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
    const heading = req.prompt.match(/begin the draft with its title as a heading, "(# [^"\n]+)"/)?.[1];
    const text = [heading, ...(beats.length ? beats : ['', '', '']).map((beat, i) => paragraphs[i] ?? `And then: ${beat.replace(/^\w+:\s*/, '')}`)].filter((p) => p !== undefined).join('\n\n');
    return { text: `Drafting ${target}.`, call: { name: 'write_file', arguments: { path: target, content: text } } };
  }
  if (wrote.result?.status !== 'success') return { text: `I could not write ${target}: ${failure(wrote)}` };
  const body = String(wrote.args.content ?? '').replace(/^# .*\n\n/, '');
  const words = body.split(/\s+/).filter(Boolean).length;
  const made = wrote.result.data?.created ? ` (a new chapter, number ${wrote.result.data.chapter?.number})` : '';
  return { text: `I drafted ${target}${made}: ${words} words in ${body.split(/\n\n/).length} paragraphs.` };
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

// rentl: single-purpose subagents that pipelines run, one unit at a time. The task message
// (the jobs protocol) names the agent ("Task for <agent>: ..."), its one target ("Scene: <id>",
// "Route: <id>" or "Scope: the whole project") and "Overwrite allowed: yes|no". Each agent
// reads first, then writes only what the tool results of this conversation support (a summary
// from the scene's first sentences, tags from its salient words, the characters and locations
// the overview found in its text, terms from its capitalised words, a route synopsis from its
// scenes' summaries, names kept as they are, marked pseudo-translations "[fr] <line>" with the
// glossary's terms, QA checks recording a pass or a concrete issue), then sums up in a sentence.

/** The tool only each rentl agent has (to tell them apart when the task names none). */
const RENTL_SIGNATURES = [
  ['translation_create_consistency_check', 'consistency_checker'],
  ['translation_create_review_check', 'scene_translation_reviewer'],
  ['translation_create_style_check', 'scene_style_checker'],
  ['translation_create_line', 'scene_translator'],
  ['route_update_synopsis', 'route_outline_builder'],
  ['glossary_merge_entries', 'meta_glossary_curator'],
  ['location_delete_entry', 'meta_location_curator'],
  ['character_delete_entry', 'meta_character_curator'],
  ['scene_update_summary', 'scene_summary_detailer'],
  ['scene_update_tags', 'scene_tag_detailer'],
  ['scene_update_primary_characters', 'scene_primary_character_detailer'],
  ['scene_update_locations', 'scene_location_detailer'],
  ['glossary_create_entry', 'scene_glossary_detailer'],
];

/** The rentl task of a request: the agent, its target and whether it may overwrite; or null. */
function rentlTask(req) {
  const text = req.prompt;
  const named = text.match(/^Task for (\w+):/m)?.[1];
  const target = text.match(/^(Scene|Route):[ \t]*(\S+)/m);
  const scope = /^Scope:/m.test(text);
  if (!named && !target && !scope) return null;
  const agents = new Set(RENTL_SIGNATURES.map(([, a]) => a));
  let agent = agents.has(named) ? named : null;
  if (!agent && /\brentl\b/.test(req.system)) agent = RENTL_SIGNATURES.find(([tool]) => req.tools.has(tool))?.[1] ?? null;
  if (!agent) return null;
  return {
    agent,
    scene: target?.[1] === 'Scene' ? target[2] : null,
    route: target?.[1] === 'Route' ? target[2] : null,
    overwrite: /^Overwrite allowed:[ \t]*yes\b/im.test(text),
  };
}

const succeeded = (call) => call?.result?.status === 'success';
const dataOf = (call) => call?.result?.data ?? {};
const blank = (v) => v === null || v === undefined || (typeof v === 'string' && !v.trim()) || (Array.isArray(v) && v.length === 0);
const quoteShort = (text, max = 80) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
/** "Line 2 has" or "Lines 1, 2 have": line numbers with a verb that agrees (`['has', 'have']`). */
const linesWith = (numbers, [one, many]) => (numbers.length === 1 ? `Line ${numbers[0]} ${one}` : `Lines ${numbers.join(', ')} ${many}`);

/** How a write went, for the closing sentence: `done` if it succeeded, else why `what` was not saved. */
function wrote(call, done, what) {
  if (succeeded(call)) return done;
  const code = call?.result?.data?.code;
  const why =
    code === 'denied' ? 'the writer declined it' : code === 'approval_required' ? "it waits for the writer's approval" : code === 'concurrent_update' ? 'someone changed it a moment ago' : failure(call);
  return `${what} was not saved (${why})`;
}

/** A value as JSON with sorted keys (arguments compare equal whatever their key order). */
const canonical = (v) =>
  Array.isArray(v) ? `[${v.map(canonical).join(',')}]` : v && typeof v === 'object' ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}` : JSON.stringify(v);
const sameArgs = (a, b) => canonical(a) === canonical(b);

/** The first call of `name` whose arguments pass `test`. */
const made = (req, name, test = () => true) => req.calls.find((c) => c.name === name && test(c.args ?? {}));

/** The sentences of a text, whitespace collapsed. */
const sentencesOf = (text) =>
  (String(text).replace(/\s+/g, ' ').trim().match(/[^.!?…]+(?:[.!?…]+["”’)]*|$)/g) ?? []).map((s) => s.trim()).filter(Boolean);

/** A summary from a text's first sentences (two or three, about 120 to 400 characters). */
function firstSentences(text) {
  const out = [];
  for (const s of sentencesOf(text)) {
    if (out.length && (out.join(' ').length >= 120 || out.length >= 3)) break;
    out.push(s);
  }
  return quoteShort(out.join(' '), 400);
}

/** Ordinary words that make poor tags. */
const STOPWORDS = new Set(
  'about above across after again against along also although always among another anything around away back because been before behind being below beneath beside between beyond both came cannot could does doing done down during each either else enough even ever every everything from further gone great have having here hers herself himself inside into just last least less like little long made make many might mine more most much must near never next nothing once only onto other others outside over past perhaps quite rather same several shall should since some something still such than that their them themselves then there these they this those though through till today tomorrow tonight toward towards twice under until upon very were what when where whether which while whole whom whose will with within without would yesterday your'.split(' '),
);

/** Up to `max` salient lowercase words of a text: frequent, long, not ordinary, not names. */
function salientWords(text, max) {
  const seen = new Map();
  let index = 0;
  for (const m of String(text).matchAll(/\p{L}[\p{L}'’-]*/gu)) {
    index++;
    const word = m[0].replace(/['’]s$/u, '');
    if (!/^\p{Ll}/u.test(word)) continue; // capitalised: a name, or a sentence's first word
    const w = word.toLowerCase();
    if (w.length < 4 || STOPWORDS.has(w) || /(?:ed|ing|ly)$/.test(w)) continue;
    const entry = seen.get(w) ?? { w, n: 0, first: index };
    entry.n++;
    seen.set(w, entry);
  }
  return [...seen.values()]
    .sort((a, b) => b.n - a.n || b.w.length - a.w.length || a.first - b.first)
    .slice(0, max)
    .map((e) => e.w);
}

/** The `id (Name)` pairs of the overview's "Mentioned in its text" line. */
function mentionedNames(overview) {
  const line = String(dataOf(overview).text ?? '').split('\n').find((l) => l.startsWith('Mentioned in its text:')) ?? '';
  return [...line.matchAll(/([\w-]+) \(([^)]+)\)/g)].map((m) => ({ id: m[1], name: m[2] }));
}

const ARTICLES = new Set(['The', 'A', 'An']);
const bare = (word) => word.replace(/['’]s$/u, '').toLowerCase();

/**
 * Glossary candidates of a text: runs of capitalised words, without a leading article, that
 * do not start a sentence on their own and share no word with a known name; most frequent
 * first.
 */
function capitalisedTerms(text, names) {
  const nameWords = new Set(names.flatMap((n) => n.split(/\s+/)).map(bare));
  const found = new Map();
  for (const sentence of sentencesOf(text)) {
    const words = [...sentence.matchAll(/[\p{L}][\p{L}'’-]*|[^\s\p{L}]+/gu)].map((m) => m[0]);
    let i = 0;
    // Skip opening punctuation (quotes) to find where the sentence's first word is.
    const firstWord = words.findIndex((w) => /^\p{L}/u.test(w));
    while (i < words.length) {
      if (!/^\p{Lu}/u.test(words[i])) {
        i++;
        continue;
      }
      let j = i;
      while (j < words.length && /^\p{Lu}/u.test(words[j])) j++;
      let run = words.slice(i, j);
      const atStart = i === firstWord;
      while (run.length && ARTICLES.has(run[0])) run = run.slice(1);
      const stripped = run.length < j - i;
      if (run.length && !(atStart && !stripped && run.length === 1) && run.every((w) => w !== 'I')) {
        if (!run.some((w) => nameWords.has(bare(w)))) {
          const term = run.join(' ').replace(/['’]s$/u, '');
          const entry = found.get(term) ?? { term, n: 0, first: found.size, sentence };
          entry.n++;
          found.set(term, entry);
        }
      }
      i = j;
    }
  }
  return [...found.values()].sort((a, b) => b.n - a.n || a.first - b.first);
}

/** The target language from the style guide and UI notes: {name, code}. */
const LANGUAGE_CODES = { french: 'fr', german: 'de', spanish: 'es', italian: 'it', portuguese: 'pt', japanese: 'ja', chinese: 'zh', korean: 'ko', english: 'en', dutch: 'nl', russian: 'ru', polish: 'pl' };
function targetLanguage(...texts) {
  for (const text of texts) {
    const m = String(text ?? '').match(/target language\s*(?:is|:)?\s*([A-Z][\p{L}]+)(?:\s*\(([a-z]{2,3})\))?/iu);
    if (m) return { name: m[1], code: m[2] ?? LANGUAGE_CODES[m[1].toLowerCase()] ?? m[1].slice(0, 2).toLowerCase() };
  }
  return null;
}

/** `text` with each `from` replaced by `to` (whole words, any case), longest first. */
function substitute(text, pairs) {
  let out = text;
  const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  for (const [from, to] of [...pairs].sort((a, b) => b[0].length - a[0].length)) {
    out = out.replace(new RegExp(`(?<![\\p{L}])${escape(from)}(?![\\p{L}])`, 'giu'), to);
  }
  return out;
}

// --- the context phase -----------------------------------------------------------------------

/** Read the task's scene (first call of every scene agent); null once it is read. */
function readScene(req, task, extra = {}) {
  const read = made(req, 'scene_read_overview', (a) => a.scene === task.scene);
  if (!read) return { step: { text: `Reading scene ${task.scene}.`, call: { name: 'scene_read_overview', arguments: { scene: task.scene, ...extra } } } };
  if (!succeeded(read)) return { step: { text: `I could not read scene ${task.scene}: ${failure(read)}` } };
  return { read, data: dataOf(read), entry: dataOf(read).entry ?? {} };
}

/** A scene field that is already set and may not be replaced: the closing sentence, or null. */
function keep(task, entry, field, what) {
  if (blank(entry[field]) || task.overwrite) return null;
  const origin = entry[`${field}_origin`] ? ` (by ${entry[`${field}_origin`]})` : '';
  return { text: `Scene ${task.scene} already has ${what}${origin}, and overwrite is not allowed, so I left it as it is.` };
}

function summaryDetailer(req, task) {
  const scene = readScene(req, task);
  if (scene.step) return scene.step;
  const write = made(req, 'scene_update_summary');
  if (!write) {
    const kept = keep(task, scene.entry, 'summary', 'a summary');
    if (kept) return kept;
    const summary = firstSentences(scene.data.excerpt ?? '');
    if (!summary) return { text: `Scene ${task.scene} has no text to summarise, so I wrote nothing.` };
    return { call: { name: 'scene_update_summary', arguments: { scene: task.scene, summary } } };
  }
  return { text: `${wrote(write, `I wrote the summary of scene ${task.scene}`, `The summary of scene ${task.scene}`)}: “${quoteShort(write.args.summary, 120)}”` };
}

function tagDetailer(req, task) {
  const scene = readScene(req, task);
  if (scene.step) return scene.step;
  const write = made(req, 'scene_update_tags');
  if (!write) {
    const kept = keep(task, scene.entry, 'tags', 'tags');
    if (kept) return kept;
    const tags = salientWords(scene.data.excerpt ?? '', 4);
    if (!tags.length) return { text: `Scene ${task.scene} has no words to tag it with, so I wrote nothing.` };
    return { call: { name: 'scene_update_tags', arguments: { scene: task.scene, tags } } };
  }
  return { text: `${wrote(write, `I tagged scene ${task.scene}`, `The tags of scene ${task.scene}`)}: ${write.args.tags.join(', ')}.` };
}

/** The scene's primary characters or locations: the bible's entities its text mentions. */
function listDetailer(req, task, { field, tool, arg, mentioned, what }) {
  const scene = readScene(req, task);
  if (scene.step) return scene.step;
  const write = made(req, tool);
  if (!write) {
    const kept = keep(task, scene.entry, field, what);
    if (kept) return kept;
    const ids = scene.data[mentioned] ?? [];
    if (!ids.length) return { text: `No ${what.replace(/^the /, '')} of the story bible appear in the text of scene ${task.scene}, so I listed none.` };
    return { call: { name: tool, arguments: { scene: task.scene, [arg]: ids } } };
  }
  return { text: `${wrote(write, `I listed the ${what.replace(/^the /, '')} of scene ${task.scene}`, `The list of ${what.replace(/^the /, '')} of scene ${task.scene}`)}: ${write.args[arg].join(', ')}.` };
}

function glossaryDetailer(req, task) {
  const scene = readScene(req, task);
  if (scene.step) return scene.step;
  const names = mentionedNames(scene.read).map((n) => n.name);
  const terms = capitalisedTerms(scene.data.excerpt ?? '', names).slice(0, 3);
  const added = [];
  const known = [];
  for (const { term, sentence } of terms) {
    const search = made(req, 'glossary_search_term', (a) => a.query === term);
    if (!search) return { call: { name: 'glossary_search_term', arguments: { query: term } } };
    const entries = dataOf(search).entries ?? [];
    const has = (e) => new RegExp(`(?<![\\p{L}])${term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\p{L}])`, 'iu').test(String(e.term_src ?? ''));
    if (entries.some(has)) {
      known.push(term);
      continue;
    }
    const create = made(req, 'glossary_create_entry', (a) => a.term_src === term);
    if (!create) {
      return { call: { name: 'glossary_create_entry', arguments: { term_src: term, notes: `Appears in scene ${task.scene}: “${quoteShort(sentence, 160)}”` } } };
    }
    if (succeeded(create)) added.push(term);
    else if (create.result?.data?.code === 'exists') known.push(term);
    else added.push(wrote(create, term, `${term}`));
  }
  if (!terms.length) return { text: `Scene ${task.scene} has no terms for the glossary beyond its characters and places.` };
  const parts = [];
  if (added.length) parts.push(`I added ${added.join(', ')} to the glossary`);
  if (known.length) parts.push(`${known.join(', ')} ${known.length === 1 ? 'was' : 'were'} already there`);
  return { text: `${parts.join('; ')}.` };
}

function routeOutlineBuilder(req, task) {
  if (!task.route) return { text: 'The task names no route, so I did nothing.' };
  const route = made(req, 'route_read_entry', (a) => a.route === task.route);
  if (!route) return { text: `Reading route ${task.route}.`, call: { name: 'route_read_entry', arguments: { route: task.route } } };
  if (!succeeded(route)) return { text: `I could not read route ${task.route}: ${failure(route)}` };
  const entry = dataOf(route).entry ?? {};
  const sceneIds = entry.scene_ids ?? [];
  const listing = made(req, 'scene_read_overview', (a) => !a.scene);
  if (!listing) return { call: { name: 'scene_read_overview', arguments: {} } };
  const summaries = new Map((dataOf(listing).scenes ?? []).map((s) => [s.id, s.summary]));
  const characters = made(req, 'character_read_entry', (a) => !a.character);
  if (!characters) return { call: { name: 'character_read_entry', arguments: {} } };
  // Who the route's scenes list: each character's entry names its scenes.
  const counts = [];
  for (const c of dataOf(characters).entries ?? []) {
    const read = made(req, 'character_read_entry', (a) => a.character === c.id);
    if (!read) return { call: { name: 'character_read_entry', arguments: { character: c.id } } };
    const n = (dataOf(read).scenes ?? []).filter((s) => sceneIds.includes(s)).length;
    if (n) counts.push({ id: c.id, n });
  }
  const notes = [];
  const synopsisCall = made(req, 'route_update_synopsis');
  if (!synopsisCall) {
    if (!blank(entry.synopsis) && !task.overwrite) {
      notes.push('its synopsis was already written');
    } else {
      const parts = sceneIds.map((id) => summaries.get(id)).filter((s) => !blank(s)).map((s) => sentencesOf(s)[0]);
      if (parts.length) return { call: { name: 'route_update_synopsis', arguments: { route: task.route, synopsis: quoteShort(parts.join(' '), 1200) } } };
      notes.push('its scenes have no summaries yet to outline it from');
    }
  } else {
    notes.push(wrote(synopsisCall, 'I wrote its synopsis', 'its synopsis'));
  }
  const listCall = made(req, 'route_update_primary_characters');
  if (!listCall) {
    const need = Math.max(1, Math.ceil(sceneIds.length / 2));
    counts.sort((a, b) => b.n - a.n);
    const central = counts.filter((c) => c.n >= need);
    const chosen = (central.length ? central : counts.slice(0, 3)).map((c) => c.id);
    if (!blank(entry.primary_characters) && !task.overwrite) notes.push('its primary characters were already listed');
    else if (chosen.length) return { call: { name: 'route_update_primary_characters', arguments: { route: task.route, characters: chosen } } };
    else notes.push('no scene of it lists a character yet');
  } else {
    notes.push(wrote(listCall, `I listed its primary characters (${listCall.args.characters.join(', ')})`, 'its list of primary characters'));
  }
  return { text: `Route ${task.route}: ${notes.join('; ')}.` };
}

/** Fill in the empty target-language names of every character or location. */
function nameCurator(req, kind) {
  const read = kind === 'character' ? 'character_read_entry' : 'location_read_entry';
  const update = `${kind}_update_name_tgt`;
  const listing = made(req, read, (a) => !a[kind]);
  if (!listing) return { text: `Listing every ${kind}.`, call: { name: read, arguments: {} } };
  if (!succeeded(listing)) return { text: `I could not list the ${kind}s: ${failure(listing)}` };
  const entries = dataOf(listing).entries ?? [];
  let glossary = new Map();
  if (kind === 'character' && req.tools.has('glossary_search_term')) {
    // A name the glossary translates takes that translation.
    const terms = made(req, 'glossary_search_term', (a) => a.query === '');
    if (!terms) return { call: { name: 'glossary_search_term', arguments: { query: '' } } };
    glossary = new Map((dataOf(terms).entries ?? []).filter((e) => !blank(e.term_tgt)).map((e) => [String(e.term_src).toLowerCase(), e.term_tgt]));
  }
  const done = [];
  for (const e of entries) {
    if (!blank(e.name_tgt) || blank(e.name_src)) continue;
    const call = made(req, update, (a) => a[kind] === e.id);
    if (!call) return { call: { name: update, arguments: { [kind]: e.id, name_tgt: glossary.get(String(e.name_src).toLowerCase()) ?? e.name_src } } };
    done.push(wrote(call, `${e.name_src} → ${call.args.name_tgt}`, `the name of ${e.name_src}`));
  }
  const missing = kind === 'location' ? entries.filter((e) => blank(e.description)).length : 0;
  const rest = missing ? ` ${missing} location${missing === 1 ? ' has' : 's have'} no description, and I have nothing to write one from.` : '';
  if (!entries.length) return { text: `The story bible has no ${kind}s.` };
  if (!done.length) return { text: `Every ${kind} already has a target-language name.${rest}` };
  const same = done.filter((d) => / → /.test(d) && d.split(' → ')[0] === d.split(' → ')[1]).map((d) => d.split(' → ')[0]);
  const other = done.filter((d) => !same.includes(d.split(' → ')[0]));
  const parts = [...(same.length ? [`kept as they are: ${same.join(', ')}`] : []), ...other];
  return { text: `I set the target-language names of ${done.length} ${kind}${done.length === 1 ? '' : 's'} (${parts.join('; ')}).${rest}` };
}

function glossaryCurator(req) {
  const listing = made(req, 'glossary_search_term', (a) => a.query === '');
  if (!listing) return { text: 'Listing the glossary.', call: { name: 'glossary_search_term', arguments: { query: '' } } };
  if (!succeeded(listing)) return { text: `I could not list the glossary: ${failure(listing)}` };
  const entries = dataOf(listing).entries ?? [];
  // Duplicates: the same term with or without an article, singular or plural, in any case.
  const key = (t) => String(t).toLowerCase().replace(/^(?:the|a|an)\s+/, '').replace(/(?<=\w{3})s$/, '').trim();
  const groups = new Map();
  for (const e of entries) groups.set(key(e.term_src), [...(groups.get(key(e.term_src)) ?? []), e]);
  const merged = [];
  for (const group of groups.values()) {
    if (group.length < 2) continue;
    const fullness = (e) => (blank(e.term_tgt) ? 0 : 2) + (blank(e.notes) ? 0 : 1);
    const [keepEntry, ...others] = [...group].sort((a, b) => fullness(b) - fullness(a) || String(a.id).localeCompare(String(b.id)));
    const call = made(req, 'glossary_merge_entries', (a) => a.keep === keepEntry.id);
    if (!call) return { call: { name: 'glossary_merge_entries', arguments: { keep: keepEntry.id, merge: others.map((e) => e.id) } } };
    merged.push(wrote(call, `I merged ${others.map((e) => e.id).join(', ')} into ${keepEntry.id}`, `The merge into ${keepEntry.id}`));
  }
  const untranslated = entries.filter((e) => blank(e.term_tgt)).map((e) => e.term_src);
  const rest = untranslated.length ? ` No translation yet for ${untranslated.join(', ')}; nothing in the glossary says what it should be.` : '';
  if (!merged.length) return { text: `The glossary has ${entries.length} entr${entries.length === 1 ? 'y' : 'ies'} and no duplicates.${rest}` };
  return { text: `${merged.join('; ')}.${rest}` };
}

// --- the translation phase -------------------------------------------------------------------

function sceneTranslator(req, task) {
  const reads = [
    ['styleguide_read_full', {}],
    ['ui_read_settings', {}],
    ['scene_read_overview', { scene: task.scene, max_chars: 50000 }],
    ['glossary_search_term', { query: '' }],
    ['character_read_entry', {}],
    ['location_read_entry', {}],
  ].filter(([name]) => req.tools.has(name));
  for (const [name, args] of reads) {
    if (!made(req, name, (a) => sameArgs(a, args))) return { text: name === 'styleguide_read_full' ? 'Reading the style guide first.' : undefined, call: { name, arguments: args } };
  }
  const got = (name) => dataOf(made(req, name));
  const overview = made(req, 'scene_read_overview', (a) => a.scene === task.scene);
  if (!succeeded(overview)) return { text: `I could not read scene ${task.scene}: ${failure(overview)}` };
  const language = targetLanguage(got('styleguide_read_full').markdown, got('ui_read_settings').notes);
  const marker = `[${language?.code ?? 'tgt'}]`;
  const pairs = [
    ...(got('glossary_search_term').entries ?? []).filter((e) => !blank(e.term_tgt)).map((e) => [e.term_src, e.term_tgt]),
    ...[...(got('character_read_entry').entries ?? []), ...(got('location_read_entry').entries ?? [])]
      .filter((e) => !blank(e.name_tgt) && e.name_tgt !== e.name_src)
      .map((e) => [e.name_src, e.name_tgt]),
  ];
  const lines = String(dataOf(overview).excerpt ?? '').split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const kept = [];
  for (const [i, source] of lines.entries()) {
    const line = i + 1;
    const target = `${marker} ${substitute(source, pairs)}`;
    const create = made(req, 'translation_create_line', (a) => a.scene === task.scene && a.line === line);
    if (!create) return { call: { name: 'translation_create_line', arguments: { scene: task.scene, line, target } } };
    if (create.result?.data?.code !== 'exists') continue;
    if (!task.overwrite || !req.tools.has('translation_update_line')) {
      kept.push(line);
      continue;
    }
    if (!made(req, 'translation_update_line', (a) => a.scene === task.scene && a.line === line)) {
      return { call: { name: 'translation_update_line', arguments: { scene: task.scene, line, target } } };
    }
  }
  const failed = req.calls.filter((c) => /^translation_(?:create|update)_line$/.test(c.name) && !succeeded(c) && c.result?.data?.code !== 'exists');
  const into = language ? `into ${language.name}` : 'into the target language (the style guide names none)';
  let text = `I translated the ${lines.length} lines of scene ${task.scene} ${into}, as pseudo-translations marked ${marker} (the offline demo model cannot really translate), with the glossary's terms.`;
  if (kept.length) text += ` ${linesWith(kept, ['already had', 'already had'])} a translation, which I left${task.overwrite ? '' : ' (overwrite is not allowed)'}.`;
  if (failed.length) text += ` ${failed.length} line${failed.length === 1 ? '' : 's'} could not be saved: ${failure(failed[0])}`;
  if (dataOf(overview).truncated) text += ' The scene is longer than one read shows; the rest is untranslated.';
  return { text };
}

// --- the editing phase -----------------------------------------------------------------------

/** Read every line of the task's scene with translation_read_scene (page by page); null when done. */
function readTranslations(req, task) {
  const pages = req.calls.filter((c) => c.name === 'translation_read_scene' && c.args.scene === task.scene);
  if (!pages.length) return { step: { text: `Reading the translation of scene ${task.scene}.`, call: { name: 'translation_read_scene', arguments: { scene: task.scene } } } };
  const last = pages[pages.length - 1];
  if (!succeeded(last)) return { step: { text: `I could not read the translation of scene ${task.scene}: ${failure(last)}` } };
  const lines = pages.filter(succeeded).flatMap((p) => dataOf(p).lines ?? []);
  const total = dataOf(last).total ?? lines.length;
  const shownTo = Math.max(0, ...lines.map((l) => l.line));
  if (shownTo < total && !pages.some((p) => p.args.from_line === shownTo + 1)) {
    return { step: { call: { name: 'translation_read_scene', arguments: { scene: task.scene, from_line: shownTo + 1 } } } };
  }
  return { lines, total, translated: lines.filter((l) => l.translated), untranslated: lines.filter((l) => !l.translated).map((l) => l.line) };
}

/** A marked pseudo-translation's marker ("[fr]"), or null. */
const pseudoMarker = (target) => String(target ?? '').match(/^\[([a-z]{2,3}|tgt)\]\s/)?.[0].trim() ?? null;

/** Make the next of `checks` (tool calls) not made yet; null when all are made. */
function nextCheck(req, checks) {
  for (const check of checks) {
    if (!made(req, check.name, (a) => sameArgs(a, check.arguments))) return { call: check };
  }
  return null;
}

/** What the check calls recorded, for the closing sentence. */
function recorded(req, tool) {
  const calls = req.calls.filter((c) => c.name === tool);
  const records = calls.filter((c) => succeeded(c) && dataOf(c).record);
  const failed = calls.filter((c) => !succeeded(c));
  return { calls, records, failed };
}

function closing(task, tool, what) {
  const { records, failed } = recorded(task.req, tool);
  const issues = records.map((c) => dataOf(c).record).filter((r) => r.severity !== 'info').length;
  let text = issues
    ? `I ${what} scene ${task.scene}: ${issues} issue${issues === 1 ? '' : 's'} recorded.`
    : `I ${what} scene ${task.scene}: it passed${records.length ? ', and I recorded that' : ''}.`;
  if (failed.length) text += ` ${failed.length} check${failed.length === 1 ? '' : 's'} failed: ${failure(failed[0])}`;
  return { text };
}

function styleChecker(req, task) {
  const read = readTranslations(req, task);
  if (read.step) return read.step;
  if (!made(req, 'ui_read_settings')) return { call: { name: 'ui_read_settings', arguments: {} } };
  if (!made(req, 'styleguide_read_full')) return { call: { name: 'styleguide_read_full', arguments: {} } };
  const ui = dataOf(made(req, 'ui_read_settings'));
  const limit = Number.isInteger(ui.line_length_limit) ? ui.line_length_limit : null;
  const perBox = Number.isInteger(ui.lines_per_box) ? ui.lines_per_box : null;
  const checks = [];
  for (const l of read.translated) {
    const display = String(l.target ?? '').split('\n');
    const tooLong = limit !== null && display.some((d) => [...d].length > limit);
    const tooMany = perBox !== null && display.length > perBox;
    if (tooLong || tooMany) checks.push({ name: 'translation_create_style_check', arguments: { scene: task.scene, line: l.line, severity: 'warning', check_line_length: true } });
  }
  if (read.untranslated.length) {
    checks.push({ name: 'translation_create_style_check', arguments: { scene: task.scene, severity: 'warning', message: `${linesWith(read.untranslated, ['has', 'have'])} no translation yet, so ${read.untranslated.length === 1 ? 'its' : 'their'} style cannot be checked.` } });
  }
  const pseudo = read.translated.filter((l) => pseudoMarker(l.target)).map((l) => l.line);
  if (pseudo.length) {
    checks.push({ name: 'translation_create_style_check', arguments: { scene: task.scene, severity: 'warning', message: `${linesWith(pseudo, ['is a marked pseudo-translation', 'are marked pseudo-translations'])} (${pseudoMarker(read.translated.find((l) => pseudoMarker(l.target)).target)} …): the source text with the glossary's terms, not a translation that follows the style guide. Translate them.` } });
  }
  if (!checks.length) {
    const fit = limit !== null ? ` fit the UI limit of ${limit} characters${perBox !== null ? ` and ${perBox} lines per box` : ''}` : ' were checked (the UI settings set no line length)';
    checks.push({ name: 'translation_create_style_check', arguments: { scene: task.scene, severity: 'info', message: `Style check passed: the ${read.translated.length} translated lines${fit}.` } });
  }
  return nextCheck(req, checks) ?? closing({ ...task, req }, 'translation_create_style_check', 'checked the style of');
}

function translationReviewer(req, task) {
  const read = readTranslations(req, task);
  if (read.step) return read.step;
  if (!made(req, 'scene_read_overview', (a) => a.scene === task.scene)) return { call: { name: 'scene_read_overview', arguments: { scene: task.scene } } };
  if (!made(req, 'styleguide_read_full')) return { call: { name: 'styleguide_read_full', arguments: {} } };
  const language = targetLanguage(dataOf(made(req, 'styleguide_read_full')).markdown);
  const plain = (s) => String(s ?? '').replace(/^\[[a-z]{2,3}\]\s*|^\[tgt\]\s*/, '').trim().toLowerCase();
  const echoes = read.translated.filter((l) => pseudoMarker(l.target) || plain(l.target) === plain(l.source)).map((l) => l.line);
  const checks = [];
  if (echoes.length) {
    checks.push({ name: 'translation_create_review_check', arguments: { scene: task.scene, severity: 'warning', message: `${linesWith(echoes, ['repeats its', 'repeat their'])} source text (marked pseudo-translations), so meaning and tone are not yet rendered${language ? ` in ${language.name}` : ''}: translate them, then review again.` } });
  }
  if (read.untranslated.length) {
    checks.push({ name: 'translation_create_review_check', arguments: { scene: task.scene, severity: 'warning', message: `${linesWith(read.untranslated, ['has', 'have'])} no translation to review.` } });
  }
  if (!checks.length) {
    checks.push({ name: 'translation_create_review_check', arguments: { scene: task.scene, severity: 'info', message: `Review passed: the ${read.translated.length} translated lines keep their source's meaning, and none repeats it untranslated.` } });
  }
  return nextCheck(req, checks) ?? closing({ ...task, req }, 'translation_create_review_check', 'reviewed');
}

function consistencyChecker(req, task) {
  const read = readTranslations(req, task);
  if (read.step) return read.step;
  const checks = read.translated.slice(0, 80).map((l) => ({ name: 'translation_create_consistency_check', arguments: { scene: task.scene, line: l.line, check_glossary: true } }));
  // The same source line translated two ways.
  const bySource = new Map();
  for (const l of read.translated) bySource.set(l.source, [...(bySource.get(l.source) ?? []), l]);
  for (const same of bySource.values()) {
    if (new Set(same.map((l) => l.target)).size > 1) {
      checks.push({ name: 'translation_create_consistency_check', arguments: { scene: task.scene, line: same[1].line, severity: 'warning', message: `${linesWith(same.map((l) => l.line), ['has', 'have'])} the same source but different translations; use the one of line ${same[0].line}.` } });
    }
  }
  const next = nextCheck(req, checks);
  if (next) return next;
  const { records } = recorded(req, 'translation_create_consistency_check');
  const pass = { name: 'translation_create_consistency_check', arguments: { scene: task.scene, severity: read.translated.length ? 'info' : 'warning', message: read.translated.length ? `Consistency check passed: ${read.translated.length} lines checked against the glossary and each other.` : 'The scene has no translated lines to check.' } };
  if (!records.length && !made(req, pass.name, (a) => a.message === pass.arguments.message)) return { call: pass };
  return closing({ ...task, req }, 'translation_create_consistency_check', 'checked the consistency of');
}

/** Play the rentl subagent a task names. */
function rentlAgent(req, task) {
  const sceneAgent = task.agent.startsWith('scene_') || ['consistency_checker'].includes(task.agent);
  if (sceneAgent && !task.scene) return { text: 'The task names no scene, so I did nothing.' };
  switch (task.agent) {
    case 'scene_summary_detailer':
      return summaryDetailer(req, task);
    case 'scene_tag_detailer':
      return tagDetailer(req, task);
    case 'scene_primary_character_detailer':
      return listDetailer(req, task, { field: 'primary_characters', tool: 'scene_update_primary_characters', arg: 'characters', mentioned: 'mentionedCharacters', what: 'the primary characters' });
    case 'scene_location_detailer':
      return listDetailer(req, task, { field: 'locations', tool: 'scene_update_locations', arg: 'locations', mentioned: 'mentionedLocations', what: 'the locations' });
    case 'scene_glossary_detailer':
      return glossaryDetailer(req, task);
    case 'route_outline_builder':
      return routeOutlineBuilder(req, task);
    case 'meta_character_curator':
      return nameCurator(req, 'character');
    case 'meta_location_curator':
      return nameCurator(req, 'location');
    case 'meta_glossary_curator':
      return glossaryCurator(req);
    case 'scene_translator':
      return sceneTranslator(req, task);
    case 'scene_style_checker':
      return styleChecker(req, task);
    case 'scene_translation_reviewer':
      return translationReviewer(req, task);
    default:
      return consistencyChecker(req, task);
  }
}

/** The `- item` lines under `Heading:` in a prompt (until the first line that is not one). */
function listUnder(prompt, heading) {
  const lines = prompt.split('\n');
  const at = lines.findIndex((l) => l.trim() === `${heading}:`);
  if (at < 0) return [];
  const out = [];
  for (const line of lines.slice(at + 1)) {
    if (!line.startsWith('- ')) break;
    out.push(line.slice(2).trim());
  }
  return out;
}

/** The idle thinker's answer: one suggestion made from what its prompt shows. */
function idleThinker(req) {
  const project = req.prompt.match(/^Project: (.*)$/m)?.[1] ?? 'the project';
  const goal = listUnder(req.prompt, 'Active goals')[0]?.replace(/: \d+%$/, '');
  const observation = listUnder(req.prompt, 'Recent observations')[0];
  const watched = listUnder(req.prompt, 'Watched entities')[0]?.split(' (')[0];
  let suggestion;
  if (goal) suggestion = { kind: 'goal', title: `Next step for ${goal}`, text: `Break "${goal}" into the next scene to write.` };
  else if (observation) suggestion = { kind: 'note', noteType: 'issue', title: `Follow up: ${observation.slice(0, 60)}`, text: `Look again at this: ${observation}` };
  else if (watched) suggestion = { kind: 'note', noteType: 'plan', title: `Keep an eye on ${watched}`, text: `Reread the scenes with ${watched} for consistency.` };
  else suggestion = { kind: 'goal', title: `Set a goal for ${project}`, text: 'Decide what the next writing session should finish.' };
  const pending = [...listUnder(req.prompt, 'Pending suggestions (do not repeat)'), ...listUnder(req.prompt, 'Dismissed suggestions (do not repeat)')];
  return { text: JSON.stringify(pending.includes(suggestion.title) ? [] : [suggestion]) };
}

/** The bedside plan: a line per active goal the status lists. */
function bedsidePlan(req) {
  const goals = listUnder(req.prompt, `Active goals (${req.prompt.match(/Active goals \((\d+)\)/)?.[1] ?? 0})`).map((g) => g.replace(/: \d+%.*$/, ''));
  if (!goals.length) return { text: '- Set a goal for the next session.' };
  return { text: goals.slice(0, 3).map((g) => `- Work on ${g}.`).join('\n') };
}

// ---------------------------------------------------------------- Quill's editor tools

/** The panels `switch_panel` takes, by the names a writer uses. */
const PANELS = { chat: 'chat', history: 'history', memory: 'memory', files: 'files', jobs: 'jobs', research: 'research', analysis: 'analysis', bible: 'bible', 'story bible': 'bible', settings: 'settings' };

/**
 * The plan of an editor-tool phrase (see the list at the top), or null: a function from the
 * calls made so far this turn to the next answer (`{call}` or the closing `{text}`).
 */
function editorPlan(prompt) {
  let m;
  const text = prompt.trim();
  const once = (call, say) => (calls) => (calls.length ? { text: say(calls[0].result?.data ?? {}) } : { call });
  if ((m = text.match(/^(?:(toggle)\s+zen mode|(?:turn\s+(on|off)\s+|(enter|leave|exit)\s+)?zen mode(?:\s+(on|off))?)[.!]?$/i))) {
    const word = (m[2] ?? m[3] ?? m[4] ?? 'on').toLowerCase();
    const args = m[1] ? {} : { enabled: !['off', 'leave', 'exit'].includes(word) };
    return once({ name: 'toggle_zen_mode', arguments: args }, (d) => (d.zenMode ? 'Zen mode is on: only the manuscript shows. Press Esc, or ask me, to leave it.' : 'Zen mode is off: the panels are back.'));
  }
  if ((m = text.match(/^highlight\s+["“](.+?)["”](?:\s+as\s+(warning|suggestion|info))?\s*(?::\s*([\s\S]+))?$/i))) {
    const args = { text: m[1] };
    if (m[2]) args.style = m[2].toLowerCase();
    if (m[3]?.trim()) args.note = m[3].trim();
    return once({ name: 'highlight_text', arguments: args }, (d) => `Highlighted "${m[1]}" as ${d.style ?? args.style ?? 'info'}${args.note ? `, with your note` : ''}.`);
  }
  if ((m = text.match(/^(?:clear|remove)\s+(?:all\s+)?(?:the\s+)?(highlights|warnings|suggestions)[.!]?$/i))) {
    const style = { warnings: 'warning', suggestions: 'suggestion' }[m[1].toLowerCase()];
    return once({ name: 'clear_highlights', arguments: style ? { style } : {} }, (d) => `Removed ${d.removed ?? 0} ${d.removed === 1 ? 'highlight' : 'highlights'}.`);
  }
  if ((m = text.match(/^(?:show|open|switch to)\s+(?:me\s+)?(?:the\s+)?(chat|history|memory|files|jobs|research|analysis|story bible|bible|settings)(?:\s+(?:panel|tab))?[.!]?$/i))) {
    const panel = PANELS[m[1].toLowerCase()];
    return once({ name: 'switch_panel', arguments: { panel } }, () => `The ${panel === 'bible' ? 'story bible' : panel} panel is open.`);
  }
  if (/^scroll\s+(?:down\s+)?to\s+the\s+(?:very\s+)?end\b/i.test(text)) {
    return (calls) => {
      if (!calls.length) return { call: { name: 'list_chapters', arguments: {} } };
      if (calls.length === 1) {
        const chapters = calls[0].result?.data?.chapters ?? [];
        const active = chapters.find((c) => c.active) ?? chapters.at(-1);
        if (!active) return { text: 'There is no chapter to scroll.' };
        return { call: { name: 'scroll_to_position', arguments: { chapter: active.id, position: active.chars } } };
      }
      const chapter = calls[0].result?.data?.chapters?.find((c) => c.id === calls[1].args.chapter);
      return { text: `Scrolled to the end of chapter ${chapter?.number ?? ''}${chapter ? ` (“${chapter.title}”)` : ''}.` };
    };
  }
  if ((m = text.match(/^scroll\s+(?:up\s+)?to\s+(?:the\s+)?(top|start|beginning|(?:position|char(?:acter)?)?\s*(\d+))\b/i))) {
    const position = m[2] === undefined ? 0 : Number(m[2]);
    return once({ name: 'scroll_to_position', arguments: { position } }, (d) => `Scrolled to position ${d.position ?? position}.`);
  }
  if ((m = text.match(/^(?:analy[sz]e|run(?: the)? analysis(?: of)?)(?:\s+the)?(?:\s+(pacing|characters|plot|setting|manuscript|book|story))?\b/i))) {
    const section = ['pacing', 'characters', 'plot', 'setting'].includes(m[1]?.toLowerCase()) ? m[1].toLowerCase() : null;
    return (calls) => {
      if (!calls.length) return { call: { name: 'run_analysis', arguments: section ? { section, interpret: false } : { interpret: false } } };
      if (calls.length === 1) return { call: { name: 'switch_panel', arguments: { panel: 'analysis' } } };
      const data = calls[0].result?.data ?? {};
      const pacing = data.section === 'full' ? data.pacing : data.section === 'pacing' ? data : null;
      const chapters = pacing?.chapters ?? [];
      const scenes = chapters.reduce((n, c) => n + (c.scenes?.length ?? 0), 0);
      const figures = pacing ? ` ${chapters.length} ${chapters.length === 1 ? 'chapter' : 'chapters'}, ${scenes} ${scenes === 1 ? 'scene' : 'scenes'}.` : '';
      return { text: `The ${section ?? 'full'} analysis of the ${data.scope ?? 'manuscript'} is in the Analysis panel.${figures}` };
    };
  }
  return null;
}

/** Quill's editor tools: the next step of an editor-tool phrase, or null (not one, or its tools are not offered). */
function editorTools(req) {
  const plan = editorPlan(req.prompt);
  if (!plan) return null;
  const failed = req.calls.find((c) => c.result && c.result.status !== 'success');
  if (failed) return { text: sumUp(failed.content) };
  const next = plan(req.calls);
  if (next.call && req.tools.size && !req.tools.has(next.call.name)) return null;
  return next;
}

/**
 * "check "TEXT" against the house style": the offered tool that speaks of style, called with
 * TEXT as its first required string argument; then what it answered (the quoted lines of its
 * result), or why it did not run. Null when the prompt is not that or no tool fits.
 */
function styleCheck(req) {
  const m = req.prompt.match(/^check\s+["“](.+?)["”]\s+(?:against|with)\s+the\s+(?:house\s+)?style/i);
  if (!m) return null;
  const done = req.calls.at(-1);
  if (done?.result) {
    if (done.result.status !== 'success') return { text: sumUp(done.content) };
    const quoted = String(done.result.data?.text ?? '').split('\n').filter((l) => l.startsWith('> ')).map((l) => l.slice(2));
    return { text: `The style checker says: ${quoted.join(' ').trim()}` };
  }
  const tool = req.definitions.find((d) => /style/i.test(`${d.name} ${d.description ?? ''}`) && !/^(?:highlight|clear)_/.test(d.name));
  if (!tool) return null;
  const schema = tool.parameters ?? tool.input_schema ?? {};
  const field = (schema.required ?? []).find((k) => schema.properties?.[k]?.type === 'string') ?? 'text';
  return { call: { name: tool.name, arguments: { [field]: m[1] } } };
}

/** The plain assistant, and any agent without a preset's role. */
function plain(req) {
  const checked = styleCheck(req);
  if (checked) return checked;
  const editing = editorTools(req);
  if (editing) return editing;
  const research = req.last.role === 'tool' && req.calls.at(-1);
  if (research && ['research_url', 'search_research'].includes(research.name)) return { text: sumUpResearch(research) };
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

/**
 * An agent with planning (it is offered write_todos) and an instruction it has the tool for:
 * it writes its to-do list first (the instruction, then reporting back), carries the
 * instruction out, marks both items completed, then sums up with the list's count.
 */
function planned(req) {
  const call = instruction(req.prompt);
  if (!call || !req.tools.has(call.name)) return null;
  const lists = req.calls.filter((c) => c.name === 'write_todos');
  const work = req.calls.filter((c) => c.name === call.name);
  const todos = (status) => [
    { content: `${call.name}: ${req.prompt.slice(0, 80)}`, status: status[0] },
    { content: 'Report back to the writer', status: status[1] },
  ];
  if (!lists.length) return { text: 'Planning first.', call: { name: 'write_todos', arguments: { todos: todos(['in_progress', 'pending']) } } };
  if (!work.length) return { call };
  if (lists.length === 1) return { call: { name: 'write_todos', arguments: { todos: todos(['completed', 'completed']) } } };
  const list = lists.at(-1).result?.data ?? {};
  return { text: `${sumUp(work.at(-1).content)} Plan: ${list.completed ?? 0} of ${(list.todos ?? []).length} items done.` };
}

/**
 * The demo model's answer to a chat-completions request body, from the request alone (system
 * prompt, tools offered, transcript): `{text?, call?: {name, arguments}}`.
 */
export function decide(request) {
  const req = readRequest(request);
  const task = req.prompt;
  if (!req.tools.size && req.system.startsWith('You are the proactive thinker')) return idleThinker(req);
  if (!req.tools.size && req.system.startsWith("You keep a novelist's bedside note")) return bedsidePlan(req);
  const rentl = rentlTask(req);
  if (rentl) return rentlAgent(req, rentl);
  if (req.tools.has('route_action_to_root_agent')) return playerInterface(req);
  if (/^ACTION FROM /.test(task)) {
    const routes = [...req.tools].filter((t) => /^route_to_\w+_agent$/.test(t) && t !== replyToolOf(req));
    return routes.length ? root(req) : routedSubAgent(req);
  }
  if (roleOf(req.system) === 'character_creation') return characterCreation(req);
  if (req.tools.has('assign_task')) return architect(req);
  if (/^TASK FROM THE /.test(task)) {
    if (req.tools.has('write_file')) return narrator(req);
    if (req.tools.has('edit_file')) return editor(req);
  }
  // A routing result back in an agent the app defined: say what came back.
  const routed = req.last.role === 'tool' && req.calls.at(-1);
  if (routed && /^route_/.test(routed.name) && routed.result?.status === 'success') return { text: content(routed) || 'Done.' };
  if (req.tools.has('write_todos')) return planned(req) ?? plain(req);
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

async function serveDemo(req, res, cors = false) {
  const jsonHeaders = { 'Content-Type': 'application/json', ...(cors ? MOCK_HEADERS : { 'X-Content-Type-Options': 'nosniff' }) };
  let request;
  try {
    request = JSON.parse(await readBody(req));
  } catch (err) {
    if (err.status) throw err;
    res.writeHead(400, jsonHeaders);
    return res.end(JSON.stringify({ error: { message: `invalid JSON: ${err.message}` } }));
  }
  const answer = decide(request);
  const model = request.model ?? 'draftsmith-demo';
  if (request.stream) {
    res.writeHead(200, sseHeaders({}, cors));
    for (const event of demoEvents(answer, model)) {
      res.write(`${event}\n\n`);
      await sleep(5);
    }
    return res.end();
  }
  const message = !answer.call
    ? { role: 'assistant', content: answer.text }
    : { role: 'assistant', content: answer.text ?? null, tool_calls: [{ id: `call_demo_${++demoCalls}`, type: 'function', function: { name: answer.call.name, arguments: JSON.stringify(answer.call.arguments) } }] };
  res.writeHead(200, jsonHeaders);
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
  if (mock && req.method === 'POST' && pathname === '/mock/demo/v1/chat/completions') {
    // The demo model for the browser tests, whose page runs on another origin (test mocks
    // only: CORS open).
    await serveDemo(req, res, true);
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

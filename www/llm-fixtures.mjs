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

const HELP = 'I am the offline demo model. I understand: replace "A" with "B"; note: some text; find "a phrase"; go to chapter 3; set notes of Mara to "some notes"; list chapters; read chapter 2; search "a phrase"; plan: some steps.';

/** What the demo model says after a tool result (the result's JSON text). */
function sumUp(content) {
  let result = null;
  try {
    result = JSON.parse(content);
  } catch {}
  const status = result?.status ?? 'done';
  if (status === 'success') return 'Done.';
  const code = result?.data?.code;
  if (code === 'denied') return 'You declined that change, so nothing was changed.';
  if (code === 'approval_required') return 'That change waits for your approval.';
  return `That did not work: ${String(content).slice(0, 200)}`;
}

function decide(messages) {
  const last = messages[messages.length - 1] ?? {};
  if (last.role === 'tool') return { text: sumUp(last.content) };
  const text = typeof last.content === 'string' ? last.content.trim() : '';
  let m;
  if ((m = text.match(/replace\s+["“](.+?)["”]\s+with\s+["“](.*?)["”]/i))) {
    return { call: { name: 'update_manuscript', arguments: { searchText: m[1], replacementText: m[2], description: 'Demo model edit' } } };
  }
  if ((m = text.match(/^(?:note|remember)\s*:?\s+(.+)$/is))) {
    return { call: { name: 'write_memory_note', arguments: { text: m[1], type: 'fact' } } };
  }
  if ((m = text.match(/find\s+["“](.+?)["”]/i))) {
    return { call: { name: 'navigate_to_text', arguments: { query: m[1], searchType: 'fuzzy' } } };
  }
  if ((m = text.match(/set\s+(?:the\s+)?notes\s+(?:of|for)\s+(.+?)\s+to\s+["“]([\s\S]*?)["”]/i))) {
    return { call: { name: 'character_update_notes', arguments: { character: m[1].trim(), notes: m[2] } } };
  }
  if (/^list (?:the )?chapters\b/i.test(text)) {
    return { call: { name: 'list_chapters', arguments: {} } };
  }
  if ((m = text.match(/^read chapter\s+(\S+)/i))) {
    return { call: { name: 'read_chapter', arguments: { chapter: m[1] } } };
  }
  if ((m = text.match(/^search\s+["“](.+?)["”]/i))) {
    return { call: { name: 'search_manuscript', arguments: { query: m[1] } } };
  }
  if ((m = text.match(/^plan\s*:\s*([\s\S]+)$/i))) {
    return { call: { name: 'write_file', arguments: { path: 'plans/plan.md', content: m[1].trim() } } };
  }
  if ((m = text.match(/go to chapter\s+(\S+)/i))) {
    return { call: { name: 'jump_to_chapter', arguments: { chapter: m[1] } } };
  }
  return { text: HELP };
}

let demoCalls = 0;

function demoEvents(answer, model) {
  const id = `demo-${++demoCalls}`;
  const base = { id, object: 'chat.completion.chunk', created: 0, model };
  const chunk = (delta, finish = null) => `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}`;
  const events = [chunk({ role: 'assistant', content: '' })];
  if (answer.text) {
    for (const piece of answer.text.match(/.{1,12}/gs)) events.push(chunk({ content: piece }));
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
  const answer = decide(request.messages ?? []);
  const model = request.model ?? 'draftsmith-demo';
  if (request.stream) {
    res.writeHead(200, sseHeaders({}, false));
    for (const event of demoEvents(answer, model)) {
      res.write(`${event}\n\n`);
      await sleep(5);
    }
    return res.end();
  }
  const message = answer.text
    ? { role: 'assistant', content: answer.text }
    : { role: 'assistant', content: null, tool_calls: [{ id: `call_demo_${++demoCalls}`, type: 'function', function: { name: answer.call.name, arguments: JSON.stringify(answer.call.arguments) } }] };
  res.writeHead(200, { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff' });
  res.end(JSON.stringify({
    id: `demo-${demoCalls}`, object: 'chat.completion', model,
    choices: [{ index: 0, message, finish_reason: answer.text ? 'stop' : 'tool_calls' }],
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

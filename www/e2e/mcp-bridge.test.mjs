// The MCP bridge (packages/draftsmith/mcp-client.js) on its own, in a module worker as the
// draftsmith worker runs it, against a real MCP server written with the official SDK
// (e2e/mcp-server.mjs) on another port: the page's origin reaches it through CORS. The tests
// share one page and run in order.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch } from './harness.mjs';
import { startMcpServer } from './mcp-server.mjs';

let env;
let page;
let mcp;
let call;
before(async () => {
  env = await launch();
  mcp = await startMcpServer();
  page = await env.newPage();
  await page.goto(`${env.url}e2e/fixtures/bridge.html?worker=mcp/worker.js`);
  await page.waitForFunction(() => window.harnessReady === true);
  call = (method, ...args) =>
    page.evaluate(
      ([method, args]) => window.call(method, ...args).then((value) => ({ value }), (err) => ({ error: { message: err.message, name: err.name } })),
      [method, args],
    );
});
after(async () => {
  await env?.close();
  await mcp?.stop();
});

const post = (path) => fetch(`${mcp.origin}${path}`, { method: 'POST' }).then((r) => r.json());
const byName = (tools) => Object.fromEntries(tools.map((t) => [t.name, t]));

test('the SDK is not loaded until a server is connected', { timeout: 20_000 }, async () => {
  assert.deepEqual((await call('status')).value, {});
  assert.equal((await call('sdkRequests')).value, 0);
});

test('connect lists the two tools with their JSON Schemas', { timeout: 20_000 }, async () => {
  const { value: tools, error } = await call('connect', { name: 'style', url: mcp.url, headers: { Authorization: 'Bearer sesame' } });
  assert.equal(error, undefined);
  assert.equal((await call('sdkRequests')).value, 1);
  assert.deepEqual(tools.map((t) => t.name).sort(), ['check_house_style', 'lookup_term']);
  const { check_house_style: style, lookup_term: lookup } = byName(tools);
  assert.equal(style.title, 'Check the house style');
  assert.match(style.description, /house style/);
  assert.equal(style.inputSchema.type, 'object');
  assert.deepEqual(style.inputSchema.required, ['text']);
  assert.equal(style.inputSchema.properties.text.type, 'string');
  assert.match(style.inputSchema.properties.text.description, /text to check/);
  assert.equal(style.outputSchema.properties.violations.type, 'array');
  assert.deepEqual(style.annotations, { readOnlyHint: true });
  assert.deepEqual(lookup.inputSchema.required, ['term']);
  assert.match(lookup.inputSchema.properties.term.description, /term to look up/);
  assert.deepEqual((await call('status')).value, { style: { url: mcp.url, connected: true } });
});

test('a call returns the SDK result as it is, and the headers reach the server', { timeout: 20_000 }, async () => {
  const { value } = await call('call', 'style', 'check_house_style', { text: 'That is okay  with me.' });
  assert.equal(value.error, undefined);
  const { result } = value;
  assert.deepEqual(
    result.structuredContent.violations.map((v) => [v.rule, v.at]),
    [
      ["use 'OK', not 'okay'", 8],
      ['no double spaces', 12],
    ],
  );
  assert.equal(result.content[0].type, 'text');
  assert.match(result.content[0].text, /use 'OK', not 'okay'/);
  assert.notEqual(result.isError, true);
  const calls = mcp.calls();
  assert.equal(calls.length, 1);
  assert.deepEqual(
    { tool: calls[0].tool, arguments: calls[0].arguments, authorization: calls[0].authorization },
    { tool: 'check_house_style', arguments: { text: 'That is okay  with me.' }, authorization: 'Bearer sesame' },
  );
});

test('an error result comes back as a result, not a rejection', { timeout: 20_000 }, async () => {
  const known = (await call('call', 'style', 'lookup_term', { term: 'Widow' })).value;
  assert.match(known.result.content[0].text, /alone at the top of a page/);
  const { value } = await call('call', 'style', 'lookup_term', { term: 'zeugma' });
  assert.equal(value.error, undefined);
  assert.equal(value.result.isError, true);
  assert.match(value.result.content[0].text, /no entry for "zeugma"/);
});

test('a new tool on the server reaches onTools with the whole list', { timeout: 20_000 }, async () => {
  assert.deepEqual((await call('heard', 'style')).value, []);
  await post('/add-tool');
  let heard;
  for (let i = 0; i < 50; i++) {
    heard = (await call('heard', 'style')).value;
    if (heard.length > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.deepEqual(heard.map((names) => names.sort()), [['check_house_style', 'count_words', 'lookup_term']]);
  const { value } = await call('call', 'style', 'count_words', { text: "The lighthouse keeper's log, page two." });
  assert.equal(value.result.content[0].text, '6 words');
});

test('every page of tools/list is followed, on connect and after a change', { timeout: 20_000 }, async () => {
  const paged = await startMcpServer({ pageSize: 1 });
  try {
    const { value: tools } = await call('connect', { name: 'paged', url: paged.url });
    assert.deepEqual(tools.map((t) => t.name), ['check_house_style', 'lookup_term']);
    assert.match(byName(tools).lookup_term.inputSchema.properties.term.description, /term to look up/);
    await fetch(`${paged.origin}/add-tool`, { method: 'POST' });
    let heard = [];
    for (let i = 0; i < 50 && heard.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      heard = (await call('heard', 'paged')).value;
    }
    assert.deepEqual(heard, [['check_house_style', 'lookup_term', 'count_words']]);
    assert.equal((await call('close', 'paged')).value, true);
  } finally {
    await paged.stop();
  }
});

test('a server that is not there is refused with a message naming it', { timeout: 20_000 }, async () => {
  const closed = await startMcpServer();
  const url = closed.url;
  await closed.stop();
  const { error } = await call('connect', { name: 'gone', url });
  assert.match(error.message, new RegExp(`^MCP server "gone" at ${url.replace(/[.]/g, '\\.')}: could not reach it`));
  const notMcp = await call('connect', { name: 'page', url: `${env.url}index.html` });
  assert.match(notMcp.error.message, /^MCP server "page" at http:\/\/127\.0\.0\.1:\d+\/index\.html: it answered HTTP 405/);
  const bad = await call('connect', { name: 'bad', url: 'ftp://example.org/mcp' });
  assert.match(bad.error.message, /MCP server "bad": the URL must be http or https/);
  const noName = await call('connect', { url: mcp.url });
  assert.match(noName.error.message, /needs a name/);
  assert.deepEqual(Object.keys((await call('status')).value), ['style']);
  const unknown = (await call('call', 'gone', 'lookup_term', { term: 'widow' })).value;
  assert.equal(unknown.error.message, 'MCP server "gone" is not connected');
});

test('aborting a slow call rejects at once with an AbortError', { timeout: 20_000 }, async () => {
  await post('/slow');
  try {
    const before = mcp.calls().length;
    const { value } = await call('call', 'style', 'lookup_term', { term: 'kenning' }, { abortAfterMs: 300 });
    assert.equal(value.error.name, 'AbortError');
    assert.ok(value.afterAbortMs < 200, `settled ${value.afterAbortMs} ms after the abort`);
    assert.equal(mcp.calls().length, before + 1);
  } finally {
    await post('/fast');
  }
  // The connection still serves calls.
  const { value } = await call('call', 'style', 'lookup_term', { term: 'orphan' });
  assert.match(value.result.content[0].text, /bottom of a page/);
});

test('closing forgets the server; connecting again replaces a connection', { timeout: 20_000 }, async () => {
  const again = await call('connect', { name: 'style', url: mcp.url, headers: { Authorization: 'Bearer other' } });
  assert.deepEqual(again.value.map((t) => t.name).sort(), ['check_house_style', 'count_words', 'lookup_term']);
  await call('call', 'style', 'lookup_term', { term: 'widow' });
  assert.equal(mcp.calls().at(-1).authorization, 'Bearer other');
  assert.equal((await call('close', 'style')).value, true);
  assert.equal((await call('close', 'style')).value, false);
  assert.deepEqual((await call('status')).value, {});
  assert.equal((await call('call', 'style', 'lookup_term', { term: 'widow' })).value.error.message, 'MCP server "style" is not connected');
});

test('a server that restarted (its sessions forgotten) gets a new session and the call', { timeout: 20_000 }, async () => {
  const first = await startMcpServer();
  const port = new URL(first.url).port;
  await call('connect', { name: 'restarts', url: first.url });
  await first.stop();
  const second = await startMcpServer({ port: Number(port) });
  try {
    // Two calls at once: both refused by the restarted server, one new session for both.
    const [{ value }, { value: other }] = await Promise.all([
      call('call', 'restarts', 'lookup_term', { term: 'em dash' }),
      call('call', 'restarts', 'check_house_style', { text: 'Fine.' }),
    ]);
    assert.equal(value.error, undefined, JSON.stringify(value.error));
    assert.match(value.result.content[0].text, /long dash/);
    assert.equal(other.result.content[0].text, 'No house style violations.');
    assert.deepEqual(second.calls().map((c) => c.tool).sort(), ['check_house_style', 'lookup_term']);
    assert.equal(second.sessions(), 1);
    assert.deepEqual((await call('status')).value.restarts, { url: second.url, connected: true });
    assert.match((await call('call', 'restarts', 'lookup_term', { term: 'orphan' })).value.result.content[0].text, /bottom of a page/);
    assert.deepEqual((await call('heard', 'restarts')).value, [['check_house_style', 'lookup_term']]);
  } finally {
    await second.stop();
  }
});

test('a server going down mid-call fails the call at once; later calls fail clearly', { timeout: 20_000 }, async () => {
  const server = await startMcpServer();
  await call('connect', { name: 'down', url: server.url });
  await fetch(`${server.origin}/slow`, { method: 'POST' });
  const pending = call('call', 'down', 'check_house_style', { text: 'Towards the end.' });
  for (let i = 0; i < 50 && server.calls().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(server.calls().length, 1);
  const stoppedAt = Date.now();
  await server.stop();
  const { value } = await pending;
  assert.ok(Date.now() - stoppedAt < 5000, `the call failed ${Date.now() - stoppedAt} ms after the server went down`);
  assert.match(value.error.message, /^MCP server "down" at http:\/\/127\.0\.0\.1:\d+\/mcp: the call of "check_house_style" failed: the connection broke off/);
  const later = (await call('call', 'down', 'lookup_term', { term: 'widow' })).value;
  assert.match(later.error.message, /^MCP server "down" at http:\/\/127\.0\.0\.1:\d+\/mcp: the call of "lookup_term" failed: could not reach it/);
});

// The dev server's attack surface (issue 15): a hostile page on another origin must not get
// HTML served from the origin of `make demo`'s server (where the page's IndexedDB, with a
// remembered key, lives). Under `make demo` the test mocks are off; with them on (tests only),
// a queued response still cannot choose its Content-Type, Location or cookies.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { chromium } from 'playwright-core';
import { startServer } from '../server.mjs';
import { CHROMIUM, CHROMIUM_ARGS } from './harness.mjs';

let browser;
let evil;
before(async () => {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<!doctype html><title>evil</title><form method="post"></form>');
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  evil = { server, url: `http://127.0.0.1:${server.address().port}/` };
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await new Promise((done) => (evil ? evil.server.close(done) : done()));
});

/**
 * From a page on another origin, queue an HTML answer on `target`'s mock and make the browser
 * navigate (a top-level form POST) to the mock's model endpoint. Returns what the browser got
 * there: the document's content type, its title and whether a script of the attacker ran.
 */
async function attack(target) {
  const context = await browser.newContext();
  const page = await context.newPage();
  // The attacker's page, from a server (an origin) of its own on loopback.
  await page.goto(evil.url);
  const queued = await page.evaluate(async (base) => {
    const html = '<!doctype html><title>pwned</title><script>window.pwned = true; document.title = "pwned"</script>';
    const answer = { status: 200, headers: { 'Content-Type': 'text/html', Location: `${base}x`, 'Set-Cookie': 'stolen=1' }, body: html };
    try {
      // A "simple" request: no preflight, so it reaches the server whatever CORS says.
      await fetch(`${base}mock/evil/responses`, { method: 'POST', mode: 'no-cors', body: JSON.stringify([answer, answer]) });
      return true;
    } catch (err) {
      return String(err);
    }
  }, target);
  const navigation = page.waitForNavigation();
  await page.evaluate((action) => {
    const form = document.querySelector('form');
    form.action = action;
    form.enctype = 'text/plain';
    form.submit();
  }, `${target}mock/evil/v1/chat/completions`);
  const response = await navigation;
  const got = {
    queued,
    status: response?.status(),
    contentType: response?.headers()['content-type'] ?? '',
    setCookie: response?.headers()['set-cookie'] ?? null,
    url: page.url(),
    documentType: await page.evaluate(() => document.contentType).catch(() => 'unknown'),
    title: await page.title().catch(() => ''),
    pwned: await page.evaluate(() => window.pwned === true).catch(() => false),
    cookies: (await context.cookies(target)).map((c) => c.name),
  };
  await context.close();
  return got;
}

test('make demo: a hostile page cannot get HTML served from the demo server origin', async () => {
  const demo = await startServer({ port: 0 }); // as `make demo` runs it: no --mock
  try {
    const got = await attack(demo.url);
    assert.equal(got.status, 404, JSON.stringify(got));
    assert.ok(!got.contentType.startsWith('text/html'), JSON.stringify(got));
    assert.equal(got.pwned, false);
    assert.notEqual(got.title, 'pwned');
    // Nothing under /mock exists, nothing is recorded to read back, and nothing else is
    // readable cross-origin: no CORS header on the page or the demo model.
    const requests = await fetch(`${demo.url}mock/evil/requests`);
    assert.equal(requests.status, 404);
    const index = await fetch(demo.url);
    assert.equal(index.status, 200);
    assert.equal(index.headers.get('access-control-allow-origin'), null);
    const model = await fetch(`${demo.url}demo/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }) });
    assert.equal(model.status, 200);
    assert.equal(model.headers.get('access-control-allow-origin'), null);
  } finally {
    await demo.close();
  }
});

test('test mocks on: a queued answer cannot set Content-Type, Location or Set-Cookie', async () => {
  const server = await startServer({ port: 0, mock: true });
  try {
    const got = await attack(server.url);
    assert.equal(got.queued, true);
    assert.equal(got.status, 200, JSON.stringify(got));
    assert.match(got.contentType, /^application\/json/);
    assert.equal(got.setCookie, null);
    assert.equal(got.url, `${server.url}mock/evil/v1/chat/completions`, 'no redirect');
    assert.equal(got.pwned, false);
    assert.notEqual(got.title, 'pwned');
    assert.deepEqual(got.cookies, []);
    // A body over the cap is refused.
    const big = await fetch(`${server.url}mock/big/responses`, { method: 'POST', body: 'x'.repeat(16 * 1024 * 1024 + 1) }).catch((e) => e);
    assert.equal(big.status, 413);
  } finally {
    await server.close();
  }
});

/**
 * From a page on another origin, navigate (a link) to `target`'s research proxy for `page`,
 * and read what a no-cors fetch of it can tell. Returns what the browser got.
 */
async function proxyAttack(target, page) {
  const context = await browser.newContext();
  const tab = await context.newPage();
  await tab.goto(evil.url);
  const proxied = `${target}proxy?url=${encodeURIComponent(page)}`;
  const fetched = await tab.evaluate(async (url) => {
    try {
      const r = await fetch(url);
      return { status: r.status, text: (await r.text()).slice(0, 40) };
    } catch (err) {
      return { error: String(err) };
    }
  }, proxied);
  const navigation = tab.waitForNavigation();
  await tab.evaluate((url) => {
    const a = document.createElement('a');
    a.href = url;
    document.body.append(a);
    a.click();
  }, proxied);
  const response = await navigation;
  const got = {
    fetched,
    status: response?.status(),
    contentType: response?.headers()['content-type'] ?? '',
    title: await tab.title().catch(() => ''),
    pwned: await tab.evaluate(() => window.pwned === true).catch(() => false),
  };
  await context.close();
  return got;
}

test('the research proxy is no open proxy: another origin gets nothing through it', async () => {
  // A page on the internet stands in as the evil server's own page, with a script.
  const hostile = `${evil.url}page.html`;
  const demo = await startServer({ port: 0 });
  try {
    // Under make demo: another origin's fetch and navigation are refused (403, not HTML).
    for (const page of [hostile, `${demo.url}index.html`]) {
      const got = await proxyAttack(demo.url, page);
      assert.ok(got.fetched.error || got.fetched.status !== 200, JSON.stringify(got));
      assert.equal(got.status, 403, JSON.stringify(got));
      assert.ok(!got.contentType.startsWith('text/html'), JSON.stringify(got));
      assert.equal(got.pwned, false);
    }
  } finally {
    await demo.close();
  }
  const mocked = await startServer({ port: 0, mock: true });
  try {
    // With the test mocks: another origin may read only the server's own pages, and never as
    // a page of this origin (text/plain, sandboxed).
    const other = await proxyAttack(mocked.url, hostile);
    assert.equal(other.status, 403, JSON.stringify(other));
    assert.equal(other.pwned, false);
    const own = await proxyAttack(mocked.url, `${mocked.url}e2e/fixtures/research/lighthouse.html`);
    assert.equal(own.status, 200, JSON.stringify(own));
    assert.match(own.contentType, /^text\/plain/);
    assert.notEqual(own.title, 'How a lighthouse lamp works | Coast Notes');
    assert.equal(own.pwned, false);
  } finally {
    await mocked.close();
  }
});

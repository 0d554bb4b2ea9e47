// The sync server (scripts/sync-server.mjs: Hocuspocus, SQLite, JWT, Redis) against real Yjs
// clients: @hocuspocus/provider over `ws`, the way a browser page would connect.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { HocuspocusProvider } from '@hocuspocus/provider';
import { SignJWT, UnsecuredJWT } from 'jose';
import WebSocket from 'ws';
import * as Y from 'yjs';
import { DEV_SECRET, freePort, startRedis, startSyncServer, token } from '../e2e/sync-harness.mjs';

const SYNC_TOKEN = fileURLToPath(new URL('../../scripts/sync-token.mjs', import.meta.url));
const SYNC_SERVER = fileURLToPath(new URL('../../scripts/sync-server.mjs', import.meta.url));
const SECRET = 'a-test-secret-that-is-long-enough-for-hs256';
const OTHER_SECRET = 'another-secret-that-is-long-enough-for-hs256';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, predicate, timeout = 10_000) {
  const deadline = Date.now() + timeout;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * A Yjs client of `name` on the server at `url`. Resolves once the server has answered the
 * token, with {doc, provider, scope} or {doc, provider, refused: reason}.
 */
function connect(url, name, tok, doc = new Y.Doc()) {
  return new Promise((resolve) => {
    const provider = new HocuspocusProvider({
      url,
      name,
      document: doc,
      token: tok,
      WebSocketPolyfill: WebSocket,
      onAuthenticated: ({ scope }) => resolve({ doc, provider, scope }),
      onAuthenticationFailed: ({ reason }) => resolve({ doc, provider, refused: reason }),
    });
  });
}

/** Waits until the client has the server's state and the server has acknowledged every update. */
async function settled(client) {
  await until('sync', () => client.provider.isSynced && !client.provider.hasUnsyncedChanges);
}

/**
 * Types `count` characters of its own (code points from `base`) at random places of the text,
 * a few milliseconds apart: a writer typing while the other one does.
 */
async function type(doc, base, count) {
  const text = doc.getText('text');
  for (let i = 0; i < count; i++) {
    text.insert(Math.floor(Math.random() * (text.length + 1)), String.fromCodePoint(base + i));
    await sleep(Math.floor(Math.random() * 4));
  }
}

/** Every character both typed, each exactly once. */
function assertAllTypedOnce(text, bases, count) {
  const expected = bases.flatMap((b) => Array.from({ length: count }, (_, i) => String.fromCodePoint(b + i)));
  assert.deepEqual([...text].sort(), expected.sort());
}

/**
 * Both clients type at the same time (both typing loops start before either is awaited) while
 * `a` announces a user in its awareness; then both must hold the same text with every character
 * typed exactly once, the server must have acknowledged everything, and `b` must see `a`'s user.
 */
async function typeAtOnceAndConverge(a, b, count = 60) {
  a.provider.setAwarenessField('user', { name: 'Ana' });
  await Promise.all([type(a.doc, 0x4e00, count), type(b.doc, 0xac00, count)]);

  const textOf = (c) => c.doc.getText('text').toString();
  await until('both texts to converge', () => textOf(a).length === 2 * count && textOf(a) === textOf(b));
  await Promise.all([settled(a), settled(b)]);
  assert.equal(textOf(a), textOf(b));
  assertAllTypedOnce(textOf(a), [0x4e00, 0xac00], count);

  await until("the other client's awareness", () =>
    [...b.provider.awareness.getStates().values()].some((s) => s.user?.name === 'Ana'),
  );
}

/** A JWT made by hand, for the shapes sync-token.mjs never mints. */
function signed(claims, alg = 'HS256', expiresIn = '1h') {
  const jwt = new SignJWT(claims).setProtectedHeader({ alg });
  if (expiresIn) jwt.setExpirationTime(expiresIn);
  return jwt.sign(new TextEncoder().encode(SECRET));
}

function run(script, args, env = {}) {
  return new Promise((resolve) => {
    execFile(process.execPath, [script, ...args], { env: { ...process.env, SYNC_SECRET: '', ...env } }, (error, stdout, stderr) =>
      resolve({ code: error ? error.code : 0, stdout, stderr }),
    );
  });
}

const clients = [];
function track(client) {
  clients.push(client);
  return client;
}
function closeClients() {
  while (clients.length) clients.pop().provider.destroy();
}

describe('one sync server', () => {
  let server;
  before(async () => {
    server = await startSyncServer({ secret: SECRET });
  });
  after(async () => {
    closeClients();
    await server.stop();
  });

  test('two clients with a valid token converge while both type at the same time', async () => {
    const a = track(await connect(server.url, 'novel', await token(['novel'], { secret: SECRET })));
    const b = track(await connect(server.url, 'novel', await token(['novel', 'other'], { secret: SECRET })));
    assert.equal(a.scope, 'read-write');
    assert.equal(b.scope, 'read-write');
    await Promise.all([settled(a), settled(b)]);

    await typeAtOnceAndConverge(a, b);
  });

  test('a connection without a valid token for the document gets nothing and changes nothing', async () => {
    // The server's copy of the project, written by an authorized client.
    const owner = track(await connect(server.url, 'secret-novel', await token(['secret-novel'], { secret: SECRET })));
    owner.doc.getText('text').insert(0, 'the server copy');
    await settled(owner);

    const cases = [
      ['no token', '', 'missing token'],
      ['not a JWT', 'not-a-jwt', 'invalid token'],
      ['signed with another secret', await token(['secret-novel'], { secret: OTHER_SECRET }), 'invalid token'],
      ['for another project', await token(['another-novel'], { secret: SECRET }), 'project not in token'],
      ['expired', await token(['secret-novel'], { secret: SECRET, expiresIn: '-1m' }), 'token expired'],
      ['signed with HS384', await signed({ projects: ['secret-novel'] }, 'HS384'), 'invalid token'],
      ['unsigned (alg none)', new UnsecuredJWT({ projects: ['secret-novel'] }).setExpirationTime('1h').encode(), 'invalid token'],
      ['without an expiry', await signed({ projects: ['secret-novel'] }, 'HS256', null), 'invalid token'],
      ['projects not a list', await signed({ projects: 'secret-novel' }), 'invalid token'],
    ];
    for (const [label, tok, reason] of cases) {
      const doc = new Y.Doc();
      doc.getText('text').insert(0, `local work (${label})`);
      const before = Y.encodeStateAsUpdate(doc);
      const client = track(await connect(server.url, 'secret-novel', tok, doc));
      assert.equal(client.refused, reason, label);
      assert.equal(client.provider.isAuthenticated, false, label);
      // Anything the server would send has had time to arrive.
      await sleep(300);
      assert.equal(doc.getText('text').toString(), `local work (${label})`, label);
      assert.deepEqual(Y.encodeStateAsUpdate(doc), before, label);
      assert.equal(client.provider.isSynced, false, label);
    }

    // Nor did the refused clients' sync messages reach the server's document.
    const reader = track(await connect(server.url, 'secret-novel', await token(['secret-novel'], { secret: SECRET })));
    await settled(reader);
    assert.equal(reader.doc.getText('text').toString(), 'the server copy');
  });

  test('sync-token.mjs mints a token this server accepts, for the named projects only', async () => {
    const minted = await run(SYNC_TOKEN, ['--name', 'Ana', 'manuscript', 'notes'], { SYNC_SECRET: SECRET });
    assert.equal(minted.code, 0, minted.stderr);
    const tok = minted.stdout.trim();
    const claims = JSON.parse(Buffer.from(tok.split('.')[1], 'base64url').toString());
    assert.deepEqual(claims.projects, ['manuscript', 'notes']);
    assert.equal(claims.sub, 'Ana');
    assert.ok(claims.exp - claims.iat === 7 * 24 * 3600, 'expires in 7 days by default');

    const ok = track(await connect(server.url, 'notes', tok));
    assert.equal(ok.scope, 'read-write');
    const other = track(await connect(server.url, 'elsewhere', tok));
    assert.equal(other.refused, 'project not in token');

    // Without SYNC_SECRET it signs with the development secret, which this server does not accept.
    const dev = await run(SYNC_TOKEN, ['notes']);
    assert.equal(dev.code, 0);
    assert.match(dev.stderr, /DEVELOPMENT secret/);
    const refused = track(await connect(server.url, 'notes', dev.stdout.trim()));
    assert.equal(refused.refused, 'invalid token');
  });
});

describe('sync-token.mjs and sync-server.mjs on bad input', () => {
  test('sync-token.mjs without a project id prints its usage and exits 2', async () => {
    const none = await run(SYNC_TOKEN, []);
    assert.equal(none.code, 2);
    assert.equal(none.stdout, '');
    assert.match(none.stderr, /usage: node scripts\/sync-token\.mjs/);

    const badSpan = await run(SYNC_TOKEN, ['--expires', 'soon', 'p1']);
    assert.equal(badSpan.code, 2);
    assert.equal(badSpan.stdout, '');

    const shortSecret = await run(SYNC_TOKEN, ['p1'], { SYNC_SECRET: 'short' });
    assert.equal(shortSecret.code, 2);
    assert.match(shortSecret.stderr, /at least 32 bytes/);
  });

  test('sync-server.mjs refuses to start without SYNC_SECRET unless --dev', async () => {
    const refused = await run(SYNC_SERVER, ['--port', '0', '--db', ':memory:']);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /SYNC_SECRET is not set/);
    assert.doesNotMatch(refused.stdout, /listening/);

    const badPort = await run(SYNC_SERVER, ['--dev', '--port', 'eighty']);
    assert.equal(badPort.code, 2);
    assert.match(badPort.stderr, /not a port number/);
  });

  test('sync-server.mjs with a --db file that is not a database exits with an error and leaves it alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'draftsmith-sync-'));
    try {
      const file = join(dir, 'notes.txt');
      writeFileSync(file, "a writer's notes, not a database\n".repeat(100));
      const result = await run(SYNC_SERVER, ['--dev', '--port', '0', '--db', file]);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /cannot start: cannot open the database .*notes\.txt: file is not a database/);
      assert.doesNotMatch(result.stdout, /listening/);
      assert.equal(readFileSync(file, 'utf8'), "a writer's notes, not a database\n".repeat(100));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('sync-server.mjs with a Redis that does not answer exits with an error', async () => {
    const nothing = await freePort();
    const result = await run(SYNC_SERVER, ['--dev', '--port', '0', '--db', ':memory:', '--redis', `redis://127.0.0.1:${nothing}`]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /cannot start: cannot reach Redis at redis:\/\/127\.0\.0\.1:\d+/);
    assert.doesNotMatch(result.stdout, /listening/);
  });

  test('--dev uses the development secret, the default of sync-token.mjs and the harness', async () => {
    const server = await startSyncServer();
    try {
      assert.match(server.output(), /DEVELOPMENT secret/);
      const minted = await run(SYNC_TOKEN, ['draft']);
      const client = await connect(server.url, 'draft', minted.stdout.trim());
      client.provider.destroy();
      assert.equal(client.scope, 'read-write');
      assert.ok(DEV_SECRET.length >= 32);
    } finally {
      await server.stop();
    }
  });

  test('during a rotation, tokens signed with SYNC_SECRET_PREVIOUS are still accepted', async () => {
    const env = { SYNC_SECRET: SECRET, SYNC_SECRET_PREVIOUS: OTHER_SECRET };
    const old = (await run(SYNC_TOKEN, ['draft'], { SYNC_SECRET: OTHER_SECRET })).stdout.trim();
    const server = await startSyncServer({ secret: SECRET, env });
    try {
      const client = await connect(server.url, 'draft', old);
      client.provider.destroy();
      assert.equal(client.scope, 'read-write');
    } finally {
      await server.stop();
    }
  });
});

describe('persistence', () => {
  let dir;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'draftsmith-sync-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('a restarted server with the same SQLite file still has the text', async () => {
    const db = join(dir, 'documents.sqlite');
    const tok = await token(['kept'], { secret: SECRET });

    let server = await startSyncServer({ secret: SECRET, db });
    const writer = await connect(server.url, 'kept', tok);
    writer.doc.getText('text').insert(0, 'Chapter one. It was a dark and stormy night.');
    await settled(writer);
    // Stopped while the writer is still connected: the server stores the document on the way out.
    assert.equal(await server.stop(), 0);
    writer.provider.destroy();

    server = await startSyncServer({ secret: SECRET, db });
    try {
      const reader = await connect(server.url, 'kept', tok);
      await settled(reader);
      reader.provider.destroy();
      assert.equal(reader.doc.getText('text').toString(), 'Chapter one. It was a dark and stormy night.');
    } finally {
      await server.stop();
    }
  });

  test('the document is stored when its last client leaves, even if the server is then killed', async () => {
    const db = join(dir, 'killed.sqlite');
    const tok = await token(['kept'], { secret: SECRET });

    let server = await startSyncServer({ secret: SECRET, db });
    const writer = await connect(server.url, 'kept', tok);
    writer.doc.getText('text').insert(0, 'saved before the crash');
    await settled(writer);
    writer.provider.destroy();
    await sleep(500);
    await server.kill();

    server = await startSyncServer({ secret: SECRET, db });
    try {
      const reader = await connect(server.url, 'kept', tok);
      await settled(reader);
      reader.provider.destroy();
      assert.equal(reader.doc.getText('text').toString(), 'saved before the crash');
    } finally {
      await server.stop();
    }
  });
});

describe('two instances sharing documents through Redis', () => {
  let redis;
  let one;
  let two;
  before(async () => {
    redis = await startRedis();
    [one, two] = await Promise.all([
      startSyncServer({ secret: SECRET, redisUrl: redis.url }),
      startSyncServer({ secret: SECRET, redisUrl: redis.url }),
    ]);
  });
  after(async () => {
    closeClients();
    await Promise.all([one?.stop(), two?.stop()]);
    await redis?.stop();
  });

  test('one client on each instance, both typing at the same time: they converge', async () => {
    const tok = await token(['shared'], { secret: SECRET });
    const a = track(await connect(one.url, 'shared', tok));
    const b = track(await connect(two.url, 'shared', tok));
    await Promise.all([settled(a), settled(b)]);

    await typeAtOnceAndConverge(a, b);
  });

  test('a refused token on one instance gets nothing that was written on the other', async () => {
    const a = track(await connect(one.url, 'shared-secret', await token(['shared-secret'], { secret: SECRET })));
    a.doc.getText('text').insert(0, 'only for the team');
    await settled(a);
    const outsider = track(await connect(two.url, 'shared-secret', await token(['elsewhere'], { secret: SECRET })));
    assert.equal(outsider.refused, 'project not in token');
    await sleep(300);
    assert.equal(outsider.doc.getText('text').toString(), '');
  });
});

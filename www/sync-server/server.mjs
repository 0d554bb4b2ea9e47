// The sync server: Hocuspocus with SQLite persistence, JWT authentication per document, and the
// Redis extension when several instances share documents. scripts/sync-server.mjs is its
// command line; the tests start it through that script.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { SQLite } from '@hocuspocus/extension-sqlite';
import { Redis } from '@hocuspocus/extension-redis';
import { Server } from '@hocuspocus/server';
import { AuthError, verifyToken } from './auth.mjs';

// How long startup waits for Redis to answer before giving up.
const REDIS_CONNECT_TIMEOUT_MS = 5000;

/**
 * The host, port and ioredis options of a `redis://[user:password@]host[:port][/db]` or
 * `rediss://…` (TLS) URL. Throws a clear error for anything else.
 */
export function redisConfigFromUrl(url) {
  let u;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`not a Redis URL: ${url}`);
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') {
    throw new Error(`not a Redis URL (redis:// or rediss://): ${url}`);
  }
  if (!u.hostname) throw new Error(`the Redis URL names no host: ${url}`);
  const port = u.port ? Number(u.port) : 6379;
  const options = {};
  if (u.username) options.username = decodeURIComponent(u.username);
  if (u.password) options.password = decodeURIComponent(u.password);
  const db = u.pathname.replace(/^\//, '');
  if (db) {
    if (!/^\d+$/.test(db)) throw new Error(`the Redis URL's database must be a number: ${url}`);
    options.db = Number(db);
  }
  if (u.protocol === 'rediss:') options.tls = {};
  return { host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port, options };
}

/**
 * The SQLite extension, with its opening made awaitable: `ready` rejects with a clear error when
 * the file cannot be opened as a database, where the extension alone would crash the process
 * after the server had started listening.
 */
class CheckedSQLite extends SQLite {
  constructor(configuration) {
    super(configuration);
    this.ready = new Promise((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    // Rejection is reported where `ready` is awaited.
    this.ready.catch(() => {});
  }

  async onConfigure(payload) {
    try {
      await super.onConfigure(payload);
      this.settle.resolve();
    } catch (e) {
      this.settle.reject(new Error(`cannot open the database ${this.configuration.database}: ${e.message}`));
    }
  }
}

/** Logs Redis connection errors once per distinct message instead of once per retry. */
function reportRedisErrors(extension, url, log) {
  let last = null;
  const report = (e) => {
    if (e.message !== last) log(`Redis at ${url}: ${e.message}`);
    last = e.message;
  };
  for (const client of [extension.pub, extension.sub]) {
    client.on('error', report);
    client.on('ready', () => {
      if (last !== null) log(`Redis at ${url}: connected again`);
      last = null;
    });
  }
}

async function redisReady(extension, url) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`cannot reach Redis at ${url} (no answer in ${REDIS_CONNECT_TIMEOUT_MS} ms)`)),
      REDIS_CONNECT_TIMEOUT_MS,
    );
  });
  try {
    await Promise.race([Promise.all([extension.pub.ping(), extension.sub.ping()]), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Starts a sync server and resolves once it listens.
 *   host, port   where to listen (port 0: any free port)
 *   db           SQLite file, or ':memory:'
 *   redisUrl     optional: share documents with other instances through this Redis
 *   secrets      the HS256 secrets tokens may be signed with (the first signs new ones)
 *   log          called with one line per refused connection or Redis connection error
 * Returns { host, port, url, stop() }.
 */
export async function startSyncServer({ host = '127.0.0.1', port = 1234, db, redisUrl, secrets, log = () => {} }) {
  if (!Array.isArray(secrets) || secrets.length === 0) throw new Error('no sync secret');
  if (typeof db !== 'string' || db.length === 0) throw new Error('no database given');
  if (db !== ':memory:') mkdirSync(dirname(db), { recursive: true });

  const sqlite = new CheckedSQLite({ database: db });
  const extensions = [sqlite];
  let redis = null;
  if (redisUrl) {
    redis = new Redis(redisConfigFromUrl(redisUrl));
    reportRedisErrors(redis, redisUrl, log);
    extensions.push(redis);
  }

  const server = new Server({
    name: 'draftsmith-sync',
    address: host,
    port,
    quiet: true,
    stopOnSignals: false,
    extensions,
    // The document name is the project id; the token must name it.
    async onAuthenticate({ token, documentName }) {
      try {
        const claims = await verifyToken(token, documentName, secrets);
        return { user: claims.sub ?? null };
      } catch (e) {
        const reason = e instanceof AuthError ? e.reason : 'server error';
        log(`refused a connection to ${JSON.stringify(documentName)}: ${e.message}`);
        // Hocuspocus sends `reason` in its permission-denied reply, and logs the error itself
        // when it has a `message`: a plain object keeps that to the one line above.
        throw { reason };
      }
    },
  });

  try {
    await sqlite.ready;
    if (redis) await redisReady(redis, redisUrl);
    await new Promise((resolve, reject) => {
      server.httpServer.once('error', reject);
      server.listen().then(() => {
        server.httpServer.off('error', reject);
        resolve();
      }, reject);
    });
  } catch (e) {
    // Released by hand: server.destroy() would wait forever on a Redis that never answered.
    if (redis) {
      redis.pub.disconnect();
      redis.sub.disconnect();
    }
    server.httpServer.close();
    if (sqlite.db?.open) sqlite.db.close();
    throw e;
  }

  const address = server.httpServer.address();
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    host,
    port: address.port,
    url: `ws://${shownHost}:${address.port}`,
    // Closes every connection and stores every open document before resolving.
    stop: () => server.destroy(),
  };
}

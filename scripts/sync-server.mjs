#!/usr/bin/env node
// The sync server for shared projects: Hocuspocus (@hocuspocus/server) with SQLite persistence,
// a JWT per connection that must name the project (the Yjs document), and the Redis extension
// when several instances serve the same documents. See docs/sync.md.
//
//   node scripts/sync-server.mjs [--dev] [--host H] [--port N] [--db FILE] [--redis URL]
//
// Environment (flags win): SYNC_SECRET (required unless --dev), SYNC_SECRET_PREVIOUS (still
// accepted during a rotation), SYNC_HOST (127.0.0.1), SYNC_PORT (1234), SYNC_DB
// (.sync/draftsmith.sqlite, or :memory:), REDIS_URL or REDIS_HOST/REDIS_PORT.
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEV_SECRET, secretsFromEnv } from '../www/sync-server/auth.mjs';
import { startSyncServer } from '../www/sync-server/server.mjs';

const USAGE = `usage: node scripts/sync-server.mjs [--dev] [--host HOST] [--port PORT] [--db FILE|:memory:] [--redis URL]
  --dev         without SYNC_SECRET, sign and verify with the public development secret
  --host HOST   address to listen on (SYNC_HOST, default 127.0.0.1)
  --port PORT   port to listen on, 0 for any free one (SYNC_PORT, default 1234)
  --db FILE     SQLite file for the documents, or :memory: (SYNC_DB, default .sync/draftsmith.sqlite)
  --redis URL   redis://[user:password@]host[:port][/db] shared with other instances
                (REDIS_URL, or REDIS_HOST and REDIS_PORT)
  SYNC_SECRET   the HS256 secret tokens are signed with (at least 32 bytes)
`;

const DEFAULT_DB = fileURLToPath(new URL('../.sync/draftsmith.sqlite', import.meta.url));

function usage(message) {
  if (message) process.stderr.write(`sync-server: ${message}\n`);
  process.stderr.write(USAGE);
  process.exit(2);
}

function parsePort(text, from) {
  if (!/^\d+$/.test(text) || Number(text) > 65535) usage(`${from} is not a port number: ${text}`);
  return Number(text);
}

let flags;
try {
  ({ values: flags } = parseArgs({
    options: {
      dev: { type: 'boolean', default: false },
      host: { type: 'string' },
      port: { type: 'string' },
      db: { type: 'string' },
      redis: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: false,
  }));
} catch (e) {
  usage(e.message);
}
if (flags.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

const env = process.env;
const host = flags.host ?? (env.SYNC_HOST || '127.0.0.1');
const port = flags.port !== undefined ? parsePort(flags.port, '--port') : parsePort(env.SYNC_PORT || '1234', 'SYNC_PORT');
const db = flags.db ?? (env.SYNC_DB || DEFAULT_DB);
let redisUrl = flags.redis ?? (env.REDIS_URL || undefined);
if (!redisUrl && (env.REDIS_HOST || env.REDIS_PORT)) {
  const redisHost = env.REDIS_HOST || '127.0.0.1';
  redisUrl = `redis://${redisHost.includes(':') ? `[${redisHost}]` : redisHost}:${parsePort(env.REDIS_PORT || '6379', 'REDIS_PORT')}`;
}

let secrets;
try {
  secrets = secretsFromEnv(env, { dev: flags.dev });
} catch (e) {
  usage(e.message);
}
if (!secrets) {
  usage('SYNC_SECRET is not set: set it to the token secret (at least 32 bytes), or pass --dev for local development');
}
if (secrets[0] === DEV_SECRET) {
  process.stderr.write('sync-server: using the public DEVELOPMENT secret (--dev): for local use only, set SYNC_SECRET to deploy\n');
}

let server;
try {
  server = await startSyncServer({
    host,
    port,
    db,
    redisUrl,
    secrets,
    log: (line) => process.stderr.write(`sync-server: ${line}\n`),
  });
} catch (e) {
  process.stderr.write(`sync-server: cannot start: ${e.message}\n`);
  process.exit(1);
}

let stopping = false;
async function shutdown(signal) {
  if (stopping) {
    process.stderr.write(`sync-server: ${signal} again, exiting without waiting\n`);
    process.exit(1);
  }
  stopping = true;
  process.stderr.write(`sync-server: ${signal}, storing open documents and stopping\n`);
  try {
    await server.stop();
    process.exit(0);
  } catch (e) {
    process.stderr.write(`sync-server: error while stopping: ${e.message}\n`);
    process.exit(1);
  }
}
process.on('SIGINT', () => shutdown('SIGINT'));
process.on('SIGTERM', () => shutdown('SIGTERM'));

const where = db === ':memory:' ? 'in memory (lost on exit)' : db;
process.stderr.write(`sync-server: documents ${where}${redisUrl ? `, shared through ${redisUrl.replace(/\/\/[^@/]*@/, '//***@')}` : ''}\n`);
process.stdout.write(`sync server listening on ${server.url}\n`);

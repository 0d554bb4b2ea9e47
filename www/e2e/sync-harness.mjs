// Test helpers for sync: a real redis-server and real sync servers (scripts/sync-server.mjs, i.e.
// Hocuspocus) as child processes on free ports, and tokens minted as the server expects them.
// Every process started here is killed when the test process exits.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { DEV_SECRET, mintToken } from '../sync-server/auth.mjs';

export { DEV_SECRET };

const SYNC_SERVER = fileURLToPath(new URL('../../scripts/sync-server.mjs', import.meta.url));
const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 10_000;

const running = new Set();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Spawns `command args` and resolves with the child once a line of its stdout matches `ready`.
 * Rejects with the output so far when it exits first or takes longer than START_TIMEOUT_MS.
 */
function spawnUntil(label, command, args, { env, ready }) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    child.output = '';
    let match = null;
    const onData = (chunk) => {
      child.output += chunk;
      if (!match) {
        match = child.output.match(ready);
        if (match) {
          clearTimeout(timer);
          resolve({ child, match });
        }
      }
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      child.output += chunk;
    });
    const fail = (why) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${label}: ${why}\n${child.output}`));
    };
    const timer = setTimeout(() => fail(`not ready after ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    child.once('error', (e) =>
      fail(e.code === 'ENOENT' ? `${command} is not installed (scripts/setup.sh test installs it)` : e.message),
    );
    child.once('exit', (code, signal) => {
      running.delete(child);
      if (!match) fail(`exited (${signal ?? code}) before it was ready`);
    });
  });
}

/** Sends `signal` and resolves with the exit code once the child is gone (SIGKILL after a timeout). */
function stopChild(child, signal = 'SIGTERM') {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    child.kill(signal);
  });
}

/** Starts redis-server without persistence; returns {port, url, stop()}. */
export async function startRedis({ port } = {}) {
  const p = port ?? (await freePort());
  const { child } = await spawnUntil(
    'redis-server',
    'redis-server',
    ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { ready: /Ready to accept connections/ },
  );
  return { port: p, url: `redis://127.0.0.1:${p}`, process: child, stop: () => stopChild(child) };
}

/**
 * Starts scripts/sync-server.mjs and resolves once it listens.
 *   port      default: any free port
 *   secret    SYNC_SECRET; default: the development secret (--dev)
 *   redisUrl  share documents through this Redis
 *   db        SQLite file; default ':memory:'
 *   env       more environment for the server, e.g. SYNC_SECRET_PREVIOUS
 * Returns {port, url, process, output(), stop(), kill()}: stop() sends SIGTERM, which stores the
 * open documents before the server exits; kill() ends it at once (SIGKILL).
 */
export async function startSyncServer({ port = 0, secret, redisUrl, db = ':memory:', env: extra = {} } = {}) {
  const args = [SYNC_SERVER, '--port', String(port), '--db', db];
  if (redisUrl) args.push('--redis', redisUrl);
  const env = { SYNC_SECRET: '', SYNC_SECRET_PREVIOUS: '', REDIS_URL: '', REDIS_HOST: '', REDIS_PORT: '' };
  if (secret === undefined) args.push('--dev');
  else env.SYNC_SECRET = secret;
  Object.assign(env, extra);
  const { child, match } = await spawnUntil('sync server', process.execPath, args, {
    env,
    ready: /sync server listening on (ws:\/\/\S+:(\d+))/,
  });
  return {
    port: Number(match[2]),
    url: match[1],
    process: child,
    output: () => child.output,
    stop: () => stopChild(child, 'SIGTERM'),
    kill: () => stopChild(child, 'SIGKILL'),
  };
}

/**
 * A token for the project ids, as scripts/sync-token.mjs mints it. `expiresIn` is a jose span:
 * "1h", or "-1h" for one that has already expired.
 */
export function token(ids, { secret = DEV_SECRET, expiresIn = '1h', name } = {}) {
  return mintToken(ids, { secret, expiresIn, name });
}

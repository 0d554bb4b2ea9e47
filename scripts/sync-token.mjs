#!/usr/bin/env node
// Prints a sync token (an HS256 JWT) that lets its bearer open the given projects on the sync
// server: node scripts/sync-token.mjs [--expires 7d] [--name NAME] PROJECT_ID [more ids]
// Signed with SYNC_SECRET, or the public development secret that `sync-server.mjs --dev` uses.
import { parseArgs } from 'node:util';
import { DEV_SECRET, checkProjectIds, mintToken, secretsFromEnv } from '../www/sync-server/auth.mjs';

const USAGE = `usage: node scripts/sync-token.mjs [--expires SPAN] [--name NAME] PROJECT_ID [more ids]
  --expires SPAN  how long the token is valid: 90m, 12h, 7d, 2w (default 7d)
  --name NAME     who the token is for (the sub claim)
  SYNC_SECRET     the server's secret; without it, the development secret of sync-server.mjs --dev
`;

function usage(message) {
  if (message) process.stderr.write(`sync-token: ${message}\n`);
  process.stderr.write(USAGE);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    options: {
      expires: { type: 'string', default: '7d' },
      name: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: true,
  });
} catch (e) {
  usage(e.message);
}
const { values, positionals } = parsed;
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (positionals.length === 0) usage('no project id given');
try {
  checkProjectIds(positionals);
} catch (e) {
  usage(e.message);
}
// A span like "7d"; an absolute date is not what a person minting a token types.
if (!/^\d+\s*(s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hr|hrs|hour|hours|d|day|days|w|week|weeks|y|yr|yrs|year|years)$/i.test(values.expires)) {
  usage(`--expires must be a span such as 90m, 12h, 7d or 2w, not ${JSON.stringify(values.expires)}`);
}
if (values.name !== undefined && values.name.trim() === '') usage('--name is empty');

let secret;
try {
  secret = secretsFromEnv(process.env, { dev: true })[0];
} catch (e) {
  usage(e.message);
}
if (secret === DEV_SECRET) {
  process.stderr.write('sync-token: signed with the public DEVELOPMENT secret (no SYNC_SECRET set)\n');
}

try {
  const token = await mintToken(positionals, { secret, expiresIn: values.expires, name: values.name });
  process.stdout.write(`${token}\n`);
} catch (e) {
  usage(e.message);
}

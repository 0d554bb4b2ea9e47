// Sync tokens: HS256 JWTs whose `projects` claim lists the project ids (Yjs document names) the
// bearer may open on the sync server. Shared by scripts/sync-server.mjs (verification),
// scripts/sync-token.mjs (minting) and the tests.
import { SignJWT, errors, jwtVerify } from 'jose';

// The development secret: public, in the source, for `make sync-server` and local tests only.
// A server started with it says so; a deployment sets SYNC_SECRET.
export const DEV_SECRET = 'draftsmith-development-sync-secret-not-for-deployment';

// HS256 keys shorter than the hash (32 bytes) weaken the signature (RFC 7518 §3.2).
export const MIN_SECRET_BYTES = 32;

const encoder = new TextEncoder();

/** Why a connection was refused; `reason` is what the client receives. */
export class AuthError extends Error {
  constructor(reason) {
    super(reason);
    this.name = 'AuthError';
    this.reason = reason;
  }
}

/** The secret's key bytes; throws a clear error for a secret too short to sign with. */
export function secretKey(secret) {
  if (typeof secret !== 'string' || encoder.encode(secret).length < MIN_SECRET_BYTES) {
    throw new Error(`the sync secret must be at least ${MIN_SECRET_BYTES} bytes long`);
  }
  return encoder.encode(secret);
}

/**
 * The secrets a server accepts and the one it signs with, from the environment: SYNC_SECRET, and
 * during a rotation SYNC_SECRET_PREVIOUS (tokens signed with it are still accepted). Without
 * SYNC_SECRET, `dev` selects DEV_SECRET; otherwise null.
 */
export function secretsFromEnv(env, { dev = false } = {}) {
  const current = env.SYNC_SECRET || (dev ? DEV_SECRET : null);
  if (!current) return null;
  const secrets = [current];
  if (env.SYNC_SECRET_PREVIOUS) secrets.push(env.SYNC_SECRET_PREVIOUS);
  for (const s of secrets) secretKey(s);
  return secrets;
}

/** The project ids from command-line style input: non-empty strings without control characters. */
export function checkProjectIds(ids) {
  if (!Array.isArray(ids) || ids.length === 0) throw new Error('at least one project id is needed');
  for (const id of ids) {
    if (typeof id !== 'string' || id.length === 0 || /[\u0000-\u001f]/.test(id)) {
      throw new Error(`not a project id: ${JSON.stringify(id)}`);
    }
  }
  return ids;
}

/**
 * Mints a token for `ids`. `expiresIn` is a jose time span ("7d", "2h", "90m") or an absolute
 * expiry in seconds since the epoch; `name` becomes the `sub` claim.
 */
export async function mintToken(ids, { secret = DEV_SECRET, expiresIn = '7d', name } = {}) {
  const jwt = new SignJWT({ projects: checkProjectIds(ids) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime(expiresIn);
  if (name !== undefined) jwt.setSubject(name);
  return jwt.sign(secretKey(secret));
}

/**
 * Verifies `token` for the document `documentName` against any of `secrets`. Returns the claims;
 * throws AuthError with a short reason otherwise.
 */
export async function verifyToken(token, documentName, secrets) {
  if (typeof token !== 'string' || token.length === 0) throw new AuthError('missing token');
  let payload = null;
  let expired = false;
  for (const secret of secrets) {
    try {
      ({ payload } = await jwtVerify(token, secretKey(secret), {
        algorithms: ['HS256'],
        requiredClaims: ['exp'],
      }));
      break;
    } catch (e) {
      if (e instanceof errors.JWTExpired) expired = true;
    }
  }
  if (!payload) throw new AuthError(expired ? 'token expired' : 'invalid token');
  const { projects } = payload;
  if (!Array.isArray(projects) || !projects.every((p) => typeof p === 'string')) {
    throw new AuthError('invalid token');
  }
  if (!projects.includes(documentName)) throw new AuthError('project not in token');
  return payload;
}

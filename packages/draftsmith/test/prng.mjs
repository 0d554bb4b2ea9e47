// A small seeded PRNG (mulberry32) and random texts and changes for the property tests.
// `SEED=<n>` reruns one failing case; every failure message names its seed.

export function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  return {
    next,
    /** An integer in [0, n). */
    int,
    /** An integer in [lo, hi]. */
    range: (lo, hi) => lo + int(hi - lo + 1),
    pick: (list) => list[int(list.length)],
    chance: (p) => next() < p,
  };
}

/** The seeds to run: `SEED` alone, or `count` seeds from `base`. */
export function seeds(count, base = 1) {
  if (process.env.SEED) return [Number(process.env.SEED)];
  return Array.from({ length: count }, (_, i) => base + i);
}

// Letters, a newline, accented letters, astral chars (UTF-16 pairs) and a line separator.
const ALPHABET = ['a', 'b', 'c', ' ', 'x', '\n', 'é', '🐉', '𝒳', '\u2028', 'Z'];

/** A random string of up to `max` chars. */
export function randomString(r, max = 6) {
  let s = '';
  for (let n = r.range(1, max); n > 0; n--) s += r.pick(ALPHABET);
  return s;
}

/** Chars of a string, as an array of code points. */
export const charsOf = (s) => Array.from(s);

/** A random change set (over chars) on a text. */
export function randomChange(r, text) {
  const chars = charsOf(text);
  const ops = [];
  let pos = 0;
  while (pos <= chars.length) {
    const roll = r.int(4);
    if (roll === 0 && pos < chars.length) {
      const n = r.range(1, Math.min(3, chars.length - pos));
      ops.push({ delete: n });
      pos += n;
    } else if (roll === 1) {
      ops.push({ insert: randomString(r, 3) });
    } else if (pos < chars.length) {
      const n = r.range(1, Math.min(5, chars.length - pos));
      ops.push({ retain: n });
      pos += n;
    }
    if (pos >= chars.length && r.chance(0.5)) break;
    if (r.chance(0.2)) break;
  }
  return ops;
}

/** Apply a change set to a text the simple way (code point arrays), as a reference. */
export function applySimple(text, ops) {
  const chars = charsOf(text);
  let out = '';
  let pos = 0;
  for (const op of ops) {
    if ('retain' in op) {
      if (pos + op.retain > chars.length) throw new RangeError('past the end');
      out += chars.slice(pos, pos + op.retain).join('');
      pos += op.retain;
    } else if ('delete' in op) {
      if (pos + op.delete > chars.length) throw new RangeError('past the end');
      pos += op.delete;
    } else {
      out += op.insert;
    }
  }
  return out + chars.slice(pos).join('');
}

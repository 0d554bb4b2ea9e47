// Property tests of the sync engine's change sets (node, seeded PRNG): apply, compose,
// transform (rebase), position mapping and UTF-16 <-> char conversion, on texts with astral
// chars, newlines and line separators.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  apply,
  compose,
  transform,
  mapPosition,
  toUtf16,
  fromUtf16,
  diff,
  diffUtf16,
  countChars,
  charToUtf16,
  utf16ToChar,
  normalize,
} from '../sync.js';
import { prng, seeds, randomString, randomChange, applySimple, charsOf } from './prng.mjs';

function randomText(r) {
  let s = '';
  for (let n = r.int(4); n > 0; n--) s += randomString(r, 8);
  return s;
}

/** Apply UTF-16 replacements (ascending, in the text's coordinates) to a string. */
function applyUtf16(text, changes) {
  let out = text;
  for (const c of [...changes].reverse()) out = out.slice(0, c.from) + c.insert + out.slice(c.to);
  return out;
}

test('apply matches a code-point reference and refuses a change past the end', () => {
  for (const seed of seeds(400)) {
    const r = prng(seed);
    const text = randomText(r);
    const ops = randomChange(r, text);
    assert.equal(apply(text, ops), applySimple(text, ops), `seed ${seed}`);
    assert.equal(apply(text, normalize(ops)), applySimple(text, ops), `seed ${seed} (normalized)`);
    assert.throws(() => apply(text, [{ retain: countChars(text) + 1 }]), RangeError, `seed ${seed}`);
  }
});

test('compose(a, b) is a then b', () => {
  for (const seed of seeds(400)) {
    const r = prng(seed);
    const text = randomText(r);
    const a = randomChange(r, text);
    const mid = applySimple(text, a);
    const b = randomChange(r, mid);
    assert.equal(apply(text, compose(a, b)), applySimple(mid, b), `seed ${seed}: ${JSON.stringify({ text, a, b })}`);
  }
});

test('transform converges: b then a\u2032 equals a then b\u2032, and keeps both sides\u2019 inserts', () => {
  for (const seed of seeds(600)) {
    const r = prng(seed);
    const text = randomText(r);
    const a = randomChange(r, text);
    const b = randomChange(r, text);
    const aFirst = r.chance(0.5);
    const left = apply(apply(text, b), transform(a, b, aFirst));
    const right = apply(apply(text, a), transform(b, a, !aFirst));
    const context = `seed ${seed}: ${JSON.stringify({ text, a, b, aFirst })}`;
    assert.equal(left, right, context);
    for (const op of [...a, ...b]) if ('insert' in op) assert.ok(left.includes(op.insert), `${context}: lost ${JSON.stringify(op.insert)}`);
  }
});

test('mapPosition follows a position through a change', () => {
  for (const seed of seeds(300)) {
    const r = prng(seed);
    const text = randomText(r);
    const chars = charsOf(text);
    const ops = randomChange(r, text);
    const after = charsOf(apply(text, ops));
    // A char that no change touched keeps its neighbours.
    for (let pos = 0; pos <= chars.length; pos++) {
      const mapped = mapPosition(ops, pos, -1);
      assert.ok(mapped >= 0 && mapped <= after.length, `seed ${seed}`);
    }
    // An insert at the very start: position 0 with assoc -1 stays before it.
    assert.equal(mapPosition([{ insert: 'ab' }], 0, -1), 0);
    assert.equal(mapPosition([{ insert: 'ab' }], 0, 1), 2);
  }
});

test('UTF-16 replacements and change sets convert both ways', () => {
  for (const seed of seeds(400)) {
    const r = prng(seed);
    const text = randomText(r);
    const ops = randomChange(r, text);
    const changes = toUtf16(text, ops);
    const context = `seed ${seed}: ${JSON.stringify({ text, ops })}`;
    assert.equal(applyUtf16(text, changes), apply(text, ops), context);
    assert.equal(apply(text, fromUtf16(text, changes)), apply(text, ops), context);
    const other = randomText(r);
    assert.equal(apply(text, diff(text, other)), other, context);
    const d = diffUtf16(text, other);
    assert.equal(applyUtf16(text, [d]), other, context);
    // Never a split surrogate pair at the replacement's edges.
    for (const at of [d.from, d.to]) {
      const c = text.charCodeAt(at);
      assert.ok(!(at > 0 && c >= 0xdc00 && c <= 0xdfff), `${context}: splits a pair at ${at}`);
    }
    const pos = r.int(charsOf(text).length + 1);
    assert.equal(utf16ToChar(text, charToUtf16(text, pos)), pos, context);
  }
});

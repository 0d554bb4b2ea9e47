// The browser bench's copy of the core's memory-search tokenizer (www/bench/tokenize.js)
// agrees with the core on every case of www/bench/tokenize-cases.json, which
// tests/memory_tokenize.rs checks against the core's `tokenize`. No browser needed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { STOPWORDS, tokenize } from '../bench/tokenize.js';

const { stopwords, cases } = JSON.parse(readFileSync(new URL('../bench/tokenize-cases.json', import.meta.url), 'utf8'));

test('the bench tokenizer drops the core stopwords and splits every case as the core does', () => {
  assert.deepEqual(STOPWORDS, stopwords);
  assert.ok(cases.length >= 10);
  for (const { text, terms } of cases) assert.deepEqual(tokenize(text), terms, JSON.stringify(text));
  for (const word of STOPWORDS) assert.deepEqual(tokenize(`lamp ${word.toUpperCase()} lamp`), ['lamp', 'lamp']);
});

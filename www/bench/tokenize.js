// The terms of a text as the core's memory search takes them (`tokenize` in
// src/memory/search.rs), for a JavaScript search engine that is to see the same terms:
// lowercase, split on every character that is not alphanumeric (Unicode's Alphabetic and
// Number, as Rust's `char::is_alphanumeric`), drop the same stopwords, strip the same simple
// English plurals. `tokenize-cases.json` holds cases that both implementations must agree on
// (tests/memory_tokenize.rs checks the core, e2e/tokenize.test.mjs this file).

export const STOPWORDS = [
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'd', 'do', 'for', 'from', 'had', 'has',
  'have', 'he', 'her', 'his', 'i', 'if', 'in', 'into', 'is', 'it', 'its', 'll', 'm', 'of', 'on',
  'or', 're', 's', 'she', 'so', 't', 'that', 'the', 'their', 'them', 'then', 'there', 'they',
  'this', 'to', 've', 'was', 'we', 'were', 'what', 'when', 'which', 'who', 'will', 'with', 'you',
];

const STOP = new Set(STOPWORDS);
const WORD = /[\p{Alphabetic}\p{N}]+/gu;
const ASCII_LOWER = /^[a-z]+$/;

// A simple English plural stripped (ASCII words of four letters or more).
function stripPlural(term) {
  const n = term.length;
  if (n < 4 || !ASCII_LOWER.test(term) || !term.endsWith('s')) return term;
  if (term.endsWith('ies') && n > 4) return `${term.slice(0, -3)}y`;
  if (['sses', 'xes', 'ches', 'shes'].some((end) => term.endsWith(end))) return term.slice(0, -2);
  if (term.endsWith('ss') || term.endsWith('us') || term.endsWith('is')) return term;
  return term.slice(0, -1);
}

// Lowercase one character at a time, as Rust's `char::to_lowercase` (no final-sigma rule).
function lower(word) {
  if (ASCII_LOWER.test(word)) return word;
  let out = '';
  for (const c of word) out += c.toLowerCase();
  return out;
}

/** The terms of `text`, in order, with repeats. */
export function tokenize(text) {
  const terms = [];
  for (const [word] of text.matchAll(WORD)) {
    const term = lower(word);
    if (!STOP.has(term)) terms.push(stripPlural(term));
  }
  return terms;
}

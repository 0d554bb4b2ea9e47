// Property tests of draftsmith/prosemirror (node, seeded PRNG), on the package as installed
// from its tarball in examples/tiptap (scripts/build-example.sh) with the ProseMirror there:
// random ProseMirror transactions map to exactly the text change they make, and random text
// changes of the core map to exactly the document of the changed text, selection kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { prng, seeds, randomString } from './prng.mjs';

const EXAMPLE = fileURLToPath(new URL('../../../examples/tiptap/', import.meta.url));
const INSTALLED = `${EXAMPLE}node_modules/draftsmith/prosemirror.js`;
if (!existsSync(INSTALLED)) throw new Error('examples/tiptap is not built: run scripts/package.sh and scripts/build-example.sh');
/** The ES module of a package installed there (the one the installed draftsmith imports). */
async function esm(name) {
  const manifest = `${EXAMPLE}node_modules/${name}/package.json`;
  const { exports } = JSON.parse(readFileSync(manifest, 'utf8'));
  const entry = exports['.']?.import ?? exports.import;
  return import(new URL(entry, pathToFileURL(manifest)).href);
}
const { Schema } = await esm('prosemirror-model');
const { EditorState, TextSelection } = await esm('prosemirror-state');
const pm = await import(pathToFileURL(INSTALLED).href);
const { docToText, textToDoc, textChange, applyTextChanges, textToPos, posToText, HARD_BREAK } = pm;

// Tiptap's names (hardBreak); paragraphs, text, hard breaks.
const schema = new Schema({
  nodes: {
    doc: { content: 'paragraph+' },
    paragraph: { content: 'inline*', group: 'block', toDOM: () => ['p', 0] },
    text: { group: 'inline' },
    hardBreak: { inline: true, group: 'inline', selectable: false, toDOM: () => ['br'] },
  },
  marks: { bold: { toDOM: () => ['strong', 0] } },
});

function randomText(r) {
  const lines = [];
  for (let n = r.range(1, 4); n > 0; n--) lines.push(r.chance(0.2) ? '' : randomString(r, 8).replace(/\n/g, ' '));
  return lines.join('\n');
}

/** Inline positions of a document (inside paragraphs). */
function inlinePositions(doc) {
  const out = [];
  doc.forEach((block, offset) => {
    for (let i = 0; i <= block.content.size; i++) out.push(offset + 1 + i);
  });
  return out;
}

/** A random ProseMirror transaction: typing, deleting (across paragraphs too), Enter, hard
 *  breaks, pasting paragraphs, bold. */
function randomTransaction(r, state) {
  const tr = state.tr;
  for (let n = r.range(1, 3); n > 0; n--) {
    const positions = inlinePositions(tr.doc);
    const a = r.pick(positions);
    const b = r.pick(positions);
    const [from, to] = a <= b ? [a, b] : [b, a];
    const kind = r.int(6);
    if (kind === 0) tr.insertText(randomString(r, 4).replace(/[\n\u2028]/g, 'n'), from, r.chance(0.5) ? from : to);
    else if (kind === 1 && to > from) tr.delete(from, to);
    else if (kind === 2) tr.split(from);
    else if (kind === 3) tr.insert(from, schema.nodes.hardBreak.create());
    else if (kind === 4) {
      const pasted = textToDoc(schema, randomText(r));
      tr.replace(from, to, pasted.slice(1, pasted.content.size - 1));
    }
    else if (to > from) tr.addMark(from, to, schema.marks.bold.create());
  }
  return tr;
}

function applyUtf16(text, changes) {
  let out = text;
  for (const c of [...changes].reverse()) out = out.slice(0, c.from) + c.insert + out.slice(c.to);
  return out;
}

test('text and documents convert both ways, one paragraph a line, hard breaks as U+2028', () => {
  const text = `One${HARD_BREAK}two\n\nthree 🐉`;
  const doc = textToDoc(schema, text);
  assert.equal(doc.childCount, 3);
  assert.equal(doc.child(0).childCount, 3, 'text, hard break, text');
  assert.equal(docToText(doc), text);
  for (const seed of seeds(200)) {
    const r = prng(seed);
    const t = randomText(r);
    assert.equal(docToText(textToDoc(schema, t)), t, `seed ${seed}`);
    const d = textToDoc(schema, t);
    for (let offset = 0; offset <= t.length; offset++) assert.equal(posToText(d, textToPos(d, offset)), offset, `seed ${seed} offset ${offset}`);
  }
});

test('a ProseMirror transaction maps to exactly the text change it makes', () => {
  for (const seed of seeds(500)) {
    const r = prng(seed);
    const state = EditorState.create({ doc: textToDoc(schema, randomText(r)) });
    const tr = randomTransaction(r, state);
    const before = docToText(state.doc);
    const after = docToText(tr.doc);
    const change = textChange(state.doc, tr.doc);
    const context = `seed ${seed}: ${JSON.stringify({ before, after, change })}`;
    if (before === after) assert.equal(change, null, context);
    else assert.equal(applyUtf16(before, [change]), after, context);
  }
});

test('the core\u2019s text changes map to exactly the document of the changed text, the caret before text inserted at it', () => {
  for (const seed of seeds(500)) {
    const r = prng(seed);
    const text = randomText(r);
    const doc = textToDoc(schema, text);
    const changes = [];
    let at = 0;
    while (at <= text.length && changes.length < 3) {
      const from = r.range(at, text.length);
      const to = r.range(from, Math.min(text.length, from + 4));
      changes.push({ from, to, insert: r.chance(0.7) ? randomString(r, 5) : '' });
      at = to + 1;
    }
    const caret = r.range(0, text.length);
    const state = EditorState.create({ doc, selection: TextSelection.create(doc, textToPos(doc, caret)) });
    const tr = applyTextChanges(state.tr, changes);
    const expected = applyUtf16(text, changes);
    const context = `seed ${seed}: ${JSON.stringify({ text, changes, caret })}`;
    assert.equal(docToText(tr.doc), expected, context);
    assert.ok(tr.doc.eq(textToDoc(schema, expected)), `${context}: the document is the text's`);
    // The caret keeps its place among the text around it (before text inserted at it).
    let want = caret;
    for (const c of changes) {
      if (c.to < caret) want += c.insert.length - (c.to - c.from);
      else if (c.from < caret) want += c.from - caret;
    }
    assert.ok(tr.selection.empty, context);
    assert.equal(posToText(tr.doc, tr.selection.head), want, `${context}: caret`);
  }
});

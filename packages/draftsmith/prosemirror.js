// draftsmith/prosemirror: keeps a ProseMirror (or Tiptap) editor and one chapter in the
// draftsmith core in step, on the editor-neutral engine of ./sync.js. Types: ./prosemirror.d.ts.
//
// The document is plain paragraphs: top-level textblocks holding text and hard breaks. As the
// core's plain text, paragraphs are lines (joined by "\n") and a hard break is U+2028 (LINE
// SEPARATOR), so every text is exactly one document and back. Marks are not part of the text
// (they are kept where the text they cover is kept). Any other inline leaf node counts as
// U+FFFC; other block structure (lists, quotes) is not supported.
//
// The writer's changes are found by comparing the document before and after each update
// (unchanged paragraphs are the same nodes, so only the changed ones are read); the core's
// changes are applied as one transaction (kept out of the undo history, since undo is the
// core's), mapping the selection so that it keeps covering the same text.
//
//   const sync = new ProseMirrorSync({ client, chapter: ch.id, version: ch.version, text: ch.text });
//   // plain ProseMirror: plugins: [sync.plugin] (the plugin sets the document to the chapter)
//   // Tiptap:            editor.registerPlugin(sync.plugin)
//   // and Mod-z / Mod-Shift-z: sync.undo() / sync.redo() (the core's shared history)
//
// When an agent scrolls or navigates (`scroll_to_position`, `navigate_to_text`, ...), the
// editor's scrolling ancestor scrolls the place to its middle (and what was found is selected,
// a transaction with ProseMirror's `scrollIntoView`).
import { Plugin, PluginKey, TextSelection } from 'prosemirror-state';
import { SyncEngine, diffUtf16 } from './sync.js';

/** The char a hard break is in the core's text. */
export const HARD_BREAK = '\u2028';
/** The char any other inline leaf node is in the core's text. */
export const OBJECT = '\uFFFC';

function hardBreakType(schema) {
  return schema.nodes.hard_break ?? schema.nodes.hardBreak ?? schema.linebreakReplacement ?? null;
}

function isHardBreak(node) {
  const name = node.type.name;
  return name === 'hard_break' || name === 'hardBreak' || node.type === node.type.schema.linebreakReplacement;
}

/** The plain text of a textblock. */
export function blockText(block) {
  let text = '';
  block.forEach((child) => {
    text += child.isText ? child.text : isHardBreak(child) ? HARD_BREAK : OBJECT;
  });
  return text;
}

/** The plain text of a document: its paragraphs as lines. */
export function docToText(doc) {
  const lines = [];
  doc.forEach((block) => lines.push(blockText(block)));
  return lines.join('\n');
}

/** The inline nodes of one line of text (hard breaks for U+2028). */
function inlineNodes(schema, line) {
  const hardBreak = hardBreakType(schema);
  const parts = hardBreak ? line.split(HARD_BREAK) : [line];
  const nodes = [];
  parts.forEach((part, i) => {
    if (i > 0) nodes.push(hardBreak.create());
    if (part) nodes.push(schema.text(part));
  });
  return nodes;
}

/** The document of a plain text: one paragraph a line. */
export function textToDoc(schema, text) {
  const paragraph = schema.nodes.paragraph;
  return schema.topNodeType.create(
    null,
    text.split('\n').map((line) => paragraph.create(null, inlineNodes(schema, line))),
  );
}

/** The plain-text offset (UTF-16) of a document position. */
export function posToText(doc, pos) {
  const index = doc.resolve(pos).index(0);
  return Math.max(0, pos - 1 - index);
}

/** The document position (inside a paragraph) of a plain-text offset (UTF-16). */
export function textToPos(doc, offset) {
  let start = 0;
  for (let i = 0; i < doc.childCount; i++) {
    const size = doc.child(i).content.size;
    if (offset <= start + size) return offset + 1 + i;
    start += size + 1;
  }
  return Math.max(0, doc.content.size - 1);
}

const same = (a, b) => a === b || a.eq(b);

/**
 * The writer's change between two documents as one UTF-16 replacement on the plain text of
 * the first, or null when the text is the same.
 */
export function textChange(before, after) {
  const na = before.childCount;
  const nb = after.childCount;
  let start = 0;
  while (start < na && start < nb && same(before.child(start), after.child(start))) start++;
  if (start === na && start === nb) return null;
  let endA = na;
  let endB = nb;
  while (endA > start && endB > start && same(before.child(endA - 1), after.child(endB - 1))) {
    endA--;
    endB--;
  }
  // Whole paragraphs added or removed: take a neighbour in, for the line break between.
  if (start === endA || start === endB) {
    if (start > 0) start--;
    else {
      endA++;
      endB++;
    }
  }
  let offset = 0;
  for (let i = 0; i < start; i++) offset += before.child(i).content.size + 1;
  const lines = (doc, from, to) => {
    const out = [];
    for (let i = from; i < to; i++) out.push(blockText(doc.child(i)));
    return out.join('\n');
  };
  const d = diffUtf16(lines(before, start, endA), lines(after, start, endB));
  if (d.from === d.to && !d.insert) return null;
  return { from: offset + d.from, to: offset + d.to, insert: d.insert };
}

/** Insert plain text (lines, hard breaks) at a position inside a paragraph; the end position. */
function insertText(tr, pos, text) {
  const schema = tr.doc.type.schema;
  text.split('\n').forEach((line, i) => {
    if (i > 0) {
      tr.split(pos);
      pos += 2;
    }
    for (const node of inlineNodes(schema, line)) {
      tr.insert(pos, node);
      pos += node.nodeSize;
    }
  });
  return pos;
}

/**
 * Apply UTF-16 replacements on a document's plain text (ascending, in its coordinates) to a
 * transaction; the selection keeps covering the same text (a caret stays before text
 * inserted at it). Returns the transaction.
 */
export function applyTextChanges(tr, changes) {
  const selection = tr.selection;
  for (const c of [...changes].reverse()) {
    const from = textToPos(tr.doc, c.from);
    if (c.to > c.from) tr.delete(from, textToPos(tr.doc, c.to));
    if (c.insert) insertText(tr, from, c.insert);
  }
  // (`$cursor` is TextSelection's own, for a second copy of prosemirror-state too.)
  if (selection instanceof TextSelection || selection.$cursor !== undefined) {
    const forward = selection.anchor <= selection.head;
    let from = tr.mapping.map(selection.from, selection.empty ? -1 : 1);
    const to = selection.empty ? from : Math.max(from, tr.mapping.map(selection.to, -1));
    from = Math.min(from, to);
    const [anchor, head] = forward ? [from, to] : [to, from];
    tr.setSelection(TextSelection.between(tr.doc.resolve(anchor), tr.doc.resolve(head)));
  }
  return tr;
}

/** The nearest ancestor of `node` that scrolls vertically, or null (the page scrolls). */
function scroller(node) {
  for (let el = node; el; el = el.parentElement) {
    if (el.scrollHeight > el.clientHeight && /(auto|scroll)/.test(getComputedStyle(el).overflowY)) return el;
  }
  return null;
}

/**
 * Show a place of the plain text (UTF-16 offsets) in a view: select `selection` if given (a
 * transaction kept out of the undo history, scrolled into view), then scroll `scroll` to the
 * middle of the editor's scrolling ancestor (or of the window).
 */
export function revealIn(view, { scroll, selection }, key = null) {
  const doc = view.state.doc;
  if (selection) {
    const tr = view.state.tr.setSelection(TextSelection.between(doc.resolve(textToPos(doc, selection.from)), doc.resolve(textToPos(doc, selection.to))));
    tr.setMeta('addToHistory', false);
    if (key) tr.setMeta(key, 'core');
    view.dispatch(tr.scrollIntoView());
  }
  const { top, bottom } = view.coordsAtPos(textToPos(view.state.doc, scroll));
  const middle = (top + bottom) / 2;
  const box = scroller(view.dom);
  if (box) {
    const rect = box.getBoundingClientRect();
    box.scrollTop += middle - (rect.top + box.clientHeight / 2);
  } else {
    window.scrollBy(0, middle - window.innerHeight / 2);
  }
}

export class ProseMirrorSync extends SyncEngine {
  /**
   * @param {import('./prosemirror').ProseMirrorSyncOptions} options
   */
  constructor({ view = null, ...options }) {
    super({
      ...options,
      editor: {
        text: () => (this.view ? docToText(this.view.state.doc) : this.shadow),
        apply: (changes) => this._applyToView(changes),
        reveal: (place) => this.view && revealIn(this.view, place, this.pluginKey),
      },
    });
    this.view = null;
    /** The document last in step with the engine. */
    this.doc = null;
    /** The key of `plugin` (Tiptap: `editor.unregisterPlugin(sync.pluginKey)`). */
    this.pluginKey = new PluginKey('draftsmith');
    /** Add to the editor state's plugins (Tiptap: `editor.registerPlugin(sync.plugin)`). */
    this.plugin = new Plugin({
      key: this.pluginKey,
      view: (v) => {
        if (this.view !== v) this.attach(v);
        return {
          update: (v2) => this._update(v2),
          destroy: () => {
            if (this.view === v) this.view = null;
          },
        };
      },
    });
    if (view) this.attach(view);
  }

  /** Follow an editor view; it is made to show the chapter if it shows something else. */
  attach(view) {
    this.view = view;
    this.doc = view.state.doc;
    if (docToText(this.doc) !== this.shadow) {
      // Not during the view's own update (a plugin view is made inside one).
      queueMicrotask(() => {
        if (this.view !== view || this.closed) return;
        const tr = view.state.tr.replaceWith(0, view.state.doc.content.size, textToDoc(view.state.schema, this.shadow).content);
        this._dispatch(tr);
      });
    }
  }

  _update(view) {
    if (view !== this.view || this.doc === null) return;
    const doc = view.state.doc;
    if (doc === this.doc) return;
    const before = this.doc;
    this.doc = doc;
    const change = textChange(before, doc);
    if (change) this.localUtf16([change]);
  }

  /** Show the core's change (UTF-16 replacements on the shadow text). */
  _applyToView(changes) {
    const view = this.view;
    if (!view) return; // shown when a view is attached (it is loaded from the text)
    this._dispatch(applyTextChanges(view.state.tr, changes));
  }

  _dispatch(tr) {
    tr.setMeta('addToHistory', false);
    tr.setMeta(this.pluginKey, 'core');
    this.doc = tr.doc;
    this.view.dispatch(tr);
  }

  close() {
    super.close();
    this.view = null;
  }
}

/** Whether a transaction shows a change of the core (rather than the writer's). */
export function isFromCore(tr, sync) {
  return tr.getMeta(sync.pluginKey) === 'core';
}

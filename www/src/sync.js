// Keeps a CodeMirror editor and one chapter in the draftsmith core in step.
//
// Positions: the core counts chars (Unicode scalar values), CodeMirror counts UTF-16 code
// units; every change crossing the seam is converted against the document it applies to.
//
// Protocol (the classic OT client): `serverDoc` is the chapter at `version` as the core has it.
// The editor shows serverDoc + `inflight` (one change sent, not yet acknowledged) + `buffer`
// (changes typed since, composed). The writer's change goes out with its base version and a
// tag; the core answers with an `edit` event carrying the tag (the change as it was applied,
// rebased if an agent edited meanwhile). Other `edit` events (agents, undo, redo) are mapped
// over inflight and buffer before they reach the editor, so typing during an agent run loses
// nothing and the cursor stays where the writer is. If the editor and the core ever disagree,
// `resync` replays the core's changes since the editor's version and sends again what the
// core does not have; if even that cannot work, the writer's text is kept as a conflict copy.
import { ChangeSet, Text, Annotation } from '@codemirror/state';

/** Marks transactions that come from the core (not to be sent back). */
export const fromCore = Annotation.define();

const SURROGATE = /[\uD800-\uDFFF]/;

/** Chars (code points) in a string. */
export function countChars(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff && i > 0) {
      const p = s.charCodeAt(i - 1);
      if (p >= 0xd800 && p <= 0xdbff) continue;
    }
    n++;
  }
  return n;
}

/** UTF-16 length of the first `chars` chars of `doc` starting at UTF-16 offset `from`. */
function utf16Span(doc, from, chars, astral) {
  if (!astral) return chars;
  const s = doc.sliceString(from, Math.min(doc.length, from + 2 * chars));
  let units = 0;
  let seen = 0;
  while (seen < chars && units < s.length) {
    const c = s.charCodeAt(units);
    units += c >= 0xd800 && c <= 0xdbff && units + 1 < s.length ? 2 : 1;
    seen++;
  }
  return units;
}

/** A char offset in `doc` as a UTF-16 offset. */
export function charToUtf16(doc, chars, astral = true) {
  return Math.min(doc.length, utf16Span(doc, 0, chars, astral));
}

/** A UTF-16 offset in `doc` as a char offset. */
export function utf16ToChar(doc, pos, astral = true) {
  return astral ? countChars(doc.sliceString(0, pos)) : pos;
}

/** A CodeMirror ChangeSet on `doc` as draftsmith change ops (over chars). */
export function toOps(changes, doc, astral = true) {
  const ops = [];
  let last = 0;
  const push = (op, n) => {
    if (op === 'insert' ? n.length === 0 : n === 0) return;
    ops.push({ [op]: n });
  };
  changes.iterChanges((fromA, toA, _fromB, _toB, inserted) => {
    push('retain', astral ? countChars(doc.sliceString(last, fromA)) : fromA - last);
    push('delete', astral ? countChars(doc.sliceString(fromA, toA)) : toA - fromA);
    push('insert', inserted.toString());
    last = toA;
  });
  return ops;
}

/** Draftsmith change ops (over chars) on `doc` as a CodeMirror ChangeSet. */
export function fromOps(ops, doc, astral = true) {
  const specs = [];
  let pos = 0;
  for (const op of ops) {
    if ('retain' in op) {
      pos += utf16Span(doc, pos, op.retain, astral);
    } else if ('delete' in op) {
      const len = utf16Span(doc, pos, op.delete, astral);
      specs.push({ from: pos, to: pos + len });
      pos += len;
    } else if ('insert' in op) {
      specs.push({ from: pos, insert: op.insert });
    }
  }
  return ChangeSet.of(specs, doc.length);
}

/** The smallest single replacement turning text `a` into text `b` (a CodeMirror change spec). */
function diff(a, b) {
  let start = 0;
  const max = Math.min(a.length, b.length);
  while (start < max && a.charCodeAt(start) === b.charCodeAt(start)) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a.charCodeAt(endA - 1) === b.charCodeAt(endB - 1)) {
    endA--;
    endB--;
  }
  // Never split a surrogate pair.
  if (start > 0 && SURROGATE.test(a[start - 1] ?? '')) start--;
  return { from: start, to: Math.max(start, endA), insert: b.slice(start, Math.max(start, endB)) };
}

let tags = 0;
// Tags are unique across tabs: every tab hears every tab's edits of a chapter.
const PAGE = Math.random().toString(36).slice(2, 10);

export class ChapterSync {
  /**
   * @param {{client: any, view: import('@codemirror/view').EditorView, chapter: string,
   *   version: number, text: string, onError?: (err: Error) => void,
   *   onConflict?: (conflict: {chapter: string, text: string, coreText: string, version: number}) => void}} options
   */
  constructor({ client, view, chapter, version, text, onError, onConflict }) {
    this.client = client;
    this.view = view;
    this.chapter = chapter;
    this.version = version;
    this.serverDoc = Text.of(text.split('\n'));
    this.inflight = null;
    this.buffer = null;
    this.astral = SURROGATE.test(text);
    this.onError = onError ?? (() => {});
    this.onConflict = onConflict ?? (() => {});
    this.waiters = [];
    this.closed = false;
  }

  /** Whether every change typed here has been applied by the core. */
  get synced() {
    return !this.inflight && !this.buffer;
  }

  /** Resolves once every change typed so far has been applied by the core. */
  whenSynced() {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  _settle() {
    if (!this.synced) return;
    const waiters = this.waiters.splice(0);
    for (const w of waiters) w();
  }

  /** The writer changed the editor (a CodeMirror ChangeSet on the doc before it). */
  local(changes, insertedText) {
    if (this.closed) return;
    if (SURROGATE.test(insertedText)) this.astral = true;
    if (!this.inflight) this._send(changes);
    else this.buffer = this.buffer ? this.buffer.compose(changes) : changes;
  }

  _send(changes, tag = `${PAGE}-t${++tags}`) {
    const ops = toOps(changes, this.serverDoc, this.astral);
    const sent = this.client.applyUserChange(this.chapter, this.version, ops, { tag });
    // `done` settles once the core answered (the change's edit event came first).
    const done = sent.then(
      () => true,
      () => false,
    );
    this.inflight = { changes, tag, done };
    sent.catch((err) => {
      if (this.closed || this.inflight?.tag !== tag) return;
      this.onError(err);
      this.resync();
    });
  }

  /** An `edit` event for this chapter. */
  remote(event) {
    if (this.closed) return;
    if (this.inflight && event.tag === this.inflight.tag && !event.replay) {
      const applied = fromOps(event.changeset, this.serverDoc, this.astral);
      this.serverDoc = applied.apply(this.serverDoc);
      this.version = event.version;
      this.inflight = null;
      if (this.buffer) {
        const next = this.buffer;
        this.buffer = null;
        this._send(next);
      } else if (!this.serverDoc.eq(this.view.state.doc)) {
        this._correct();
      }
      this._settle();
      return;
    }
    if (event.version <= this.version) return; // already known
    if (event.version !== this.version + 1) return void this.resync();
    if (SURROGATE.test(JSON.stringify(event.changeset))) this.astral = true;
    let change = fromOps(event.changeset, this.serverDoc, this.astral);
    this.serverDoc = change.apply(this.serverDoc);
    this.version = event.version;
    if (this.inflight) {
      const a = this.inflight.changes;
      this.inflight.changes = a.map(change);
      change = change.map(a, true);
    }
    if (this.buffer) {
      const b = this.buffer;
      this.buffer = b.map(change);
      change = change.map(b, true);
    }
    this.view.dispatch({ changes: change, annotations: fromCore.of(true) });
  }

  /** Make the editor show the core's text (keeping the writer's unsent text, if any). */
  _correct() {
    const current = this.view.state.doc.toString();
    const wanted = this.serverDoc.toString();
    if (current === wanted) return;
    this.view.dispatch({ changes: diff(current, wanted), annotations: fromCore.of(true) });
  }

  /**
   * Catch up with the core after something went wrong (a failed request, a missed event, a
   * restarted core, a new writing tab). The core's changes since this editor's version are
   * replayed: this editor's own change is recognised by its tag (the core applies a tagged
   * change once, so sending it again is safe), the others are transformed over what the
   * writer typed, and what the core does not have yet is sent again. Unsent typing is never
   * thrown away: when the core cannot say what changed (its history no longer reaches back,
   * or it lost changes), the editor takes the core's text and the writer's text is kept as a
   * conflict copy (`onConflict`).
   */
  async resync() {
    if (this.closed) return;
    if (this.resyncing) {
      this.resyncAgain = true;
      return;
    }
    this.resyncing = true;
    try {
      do {
        this.resyncAgain = false;
        await this._catchUp();
      } while (this.resyncAgain && !this.closed);
    } finally {
      this.resyncing = false;
    }
  }

  async _catchUp() {
    // A change still on its way is answered first (applied, or failed), so that what the
    // core says next includes it or not for certain.
    for (let pending = this.inflight; pending && !this.closed; pending = this.inflight) {
      const applied = await pending.done;
      if (!applied || this.inflight === pending) break;
    }
    if (this.closed) return;
    const since = this.version;
    let chapter;
    try {
      chapter = await this.client.getChapter(this.chapter, { since });
    } catch (err) {
      this.onError(err);
      return;
    }
    if (this.closed) return;
    if (this.version > since && this.version >= chapter.version) return; // events got here first
    if (SURROGATE.test(chapter.text)) this.astral = true;
    const behind = chapter.version < this.version;
    const replayed = !behind && Array.isArray(chapter.changes) && this._replay(chapter.changes);
    if (replayed && this.version === chapter.version && this.serverDoc.toString() === chapter.text) {
      if (this.inflight) {
        // Not applied by the core: send it again, under the same tag.
        const { changes, tag } = this.inflight;
        this._send(changes, tag);
      } else if (this.buffer) {
        const next = this.buffer;
        this.buffer = null;
        this._send(next);
      } else {
        this._correct();
      }
      this._settle();
      return;
    }
    // The core cannot say how its text came to be (or lost changes it had taken): take its
    // text, and keep the writer's as a conflict copy when the core lacks any of it.
    const mine = this.view.state.doc.toString();
    const lost = !this.synced || behind;
    this.serverDoc = Text.of(chapter.text.split('\n'));
    this.version = chapter.version;
    this.inflight = null;
    this.buffer = null;
    if (lost && mine !== chapter.text) {
      this.onConflict({ chapter: this.chapter, text: mine, coreText: chapter.text, version: chapter.version });
    }
    this._correct();
    this._settle();
  }

  /** Apply the core's changes after `version` (acknowledging this editor's own). */
  _replay(changes) {
    for (const c of changes) {
      if (c.version <= this.version) continue;
      if (c.version !== this.version + 1) return false;
      if (this.inflight && c.tag === this.inflight.tag) {
        this.serverDoc = fromOps(c.changeset, this.serverDoc, this.astral).apply(this.serverDoc);
        this.version = c.version;
        this.inflight = null;
        continue;
      }
      this.remote({ ...c, chapter: this.chapter, replay: true });
    }
    return true;
  }

  close() {
    this.closed = true;
    this._settle();
  }
}

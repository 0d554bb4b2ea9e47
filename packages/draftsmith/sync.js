// draftsmith/sync: keeps an editor and one chapter in the draftsmith core in step, whatever the
// editor. Types: ./sync.d.ts.
//
// Positions: the core counts chars (Unicode scalar values); editors count UTF-16 code units.
// Change sets here are the core's: arrays of `{retain: n}`, `{delete: n}` and `{insert: s}`
// over chars, which may stop short of the end (the rest is retained). Every change crossing
// the seam is converted against the text it applies to.
//
// Protocol (the classic OT client): `text` is the chapter at `version` as the core has it. The
// editor shows text + `inflight` (one change sent, not yet acknowledged) + `buffer` (changes
// typed since, composed). The writer's change goes out with its base version and a tag; the
// core answers with an `edit` event carrying the tag (the change as it was applied, rebased if
// an agent edited meanwhile). Other `edit` events (agents, undo, redo, other tabs) are
// rebased over inflight and buffer before they reach the editor, exactly as the core rebases
// the writer's change over them (at one position the core's insert comes first), so typing
// during an agent run loses nothing. If the editor and the core ever disagree, `resync`
// replays the core's changes since the editor's version and sends again what the core does
// not have; if even that cannot work, the writer's text is kept as a conflict copy.

// ------------------------------------------------------------------ chars and UTF-16

const SURROGATE = /[\uD800-\uDFFF]/;

const isHigh = (c) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c) => c >= 0xdc00 && c <= 0xdfff;

/** Whether a string has UTF-16 surrogates (chars and UTF-16 units then differ). */
export function hasAstral(s) {
  return SURROGATE.test(s);
}

/** Chars (Unicode scalar values; a lone surrogate counts as one) in a string. */
export function countChars(s) {
  if (!SURROGATE.test(s)) return s.length;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    if (isLow(s.charCodeAt(i)) && i > 0 && isHigh(s.charCodeAt(i - 1))) continue;
    n++;
  }
  return n;
}

/**
 * The UTF-16 offset `chars` chars after UTF-16 offset `from` in `text` (clamped to its end).
 * `astral: false` promises the text has no surrogates (chars are then UTF-16 units).
 */
export function advanceChars(text, from, chars, astral = true) {
  if (!astral) return Math.min(text.length, from + chars);
  let unit = from;
  for (let seen = 0; seen < chars && unit < text.length; seen++) {
    unit += isHigh(text.charCodeAt(unit)) && unit + 1 < text.length && isLow(text.charCodeAt(unit + 1)) ? 2 : 1;
  }
  return unit;
}

/** A char offset in `text` as a UTF-16 offset. */
export function charToUtf16(text, chars, astral = hasAstral(text)) {
  return advanceChars(text, 0, chars, astral);
}

/** A UTF-16 offset in `text` as a char offset. */
export function utf16ToChar(text, pos, astral = hasAstral(text)) {
  return astral ? countChars(text.slice(0, pos)) : Math.min(pos, text.length);
}

/** The chars `from` to `to` of a string (a slice by chars, not UTF-16 units). */
function sliceChars(s, from, to) {
  if (!SURROGATE.test(s)) return s.slice(from, to);
  const start = advanceChars(s, 0, from);
  return s.slice(start, advanceChars(s, start, to - from));
}

// ------------------------------------------------------------------ change sets

const opKind = (op) => ('retain' in op ? 'retain' : 'delete' in op ? 'delete' : 'insert');
const opLen = (op) => ('retain' in op ? op.retain : 'delete' in op ? op.delete : countChars(op.insert));

/** Builds a normalized change set: no empty operations, neighbours of a kind merged, an insert
 *  before an adjacent delete (so equal changes have one form), no trailing retain. */
class Builder {
  constructor() {
    this.ops = [];
  }
  retain(n) {
    if (n <= 0) return;
    const last = this.ops[this.ops.length - 1];
    if (last && 'retain' in last) last.retain += n;
    else this.ops.push({ retain: n });
  }
  delete(n) {
    if (n <= 0) return;
    const last = this.ops[this.ops.length - 1];
    if (last && 'delete' in last) last.delete += n;
    else this.ops.push({ delete: n });
  }
  insert(s) {
    if (!s) return;
    const ops = this.ops;
    const last = ops[ops.length - 1];
    if (last && 'insert' in last) {
      last.insert += s;
    } else if (last && 'delete' in last) {
      const before = ops[ops.length - 2];
      if (before && 'insert' in before) before.insert += s;
      else ops.splice(ops.length - 1, 0, { insert: s });
    } else {
      ops.push({ insert: s });
    }
  }
  push(kind, value) {
    this[kind](value);
  }
  done() {
    const last = this.ops[this.ops.length - 1];
    if (last && 'retain' in last) this.ops.pop();
    return this.ops;
  }
}

/** Walks a change set, consuming operations in part. */
class Cursor {
  constructor(ops) {
    this.ops = ops;
    this.i = 0;
    this.off = 0;
  }
  peek() {
    return this.ops[this.i];
  }
  rest(op) {
    return opLen(op) - this.off;
  }
  take(n) {
    const op = this.ops[this.i];
    this.off += n;
    if (this.off >= opLen(op)) this.next();
  }
  next() {
    this.i++;
    this.off = 0;
  }
}

/** A change set in its normalized form (see Builder). */
export function normalize(ops) {
  const b = new Builder();
  for (const op of ops) b.push(opKind(op), op[opKind(op)]);
  return b.done();
}

/** Whether a change set changes nothing. */
export function isIdentity(ops) {
  return ops.every((op) => ('retain' in op ? true : 'delete' in op ? op.delete === 0 : op.insert === ''));
}

/** Whether two change sets are the same change. */
export function sameChange(a, b) {
  const x = normalize(a);
  const y = normalize(b);
  return x.length === y.length && x.every((op, i) => opKind(op) === opKind(y[i]) && op[opKind(op)] === y[i][opKind(op)]);
}

/** How many chars a change set reads (retains and deletes, not counting an implicit tail). */
export function lengthBefore(ops) {
  let n = 0;
  for (const op of ops) if (!('insert' in op)) n += opLen(op);
  return n;
}

/** The UTF-16 offset `chars` chars after `from`, or -1 when the text ends first. */
function advanceExactly(text, from, chars, astral) {
  if (!astral) return from + chars <= text.length ? from + chars : -1;
  let unit = from;
  for (let seen = 0; seen < chars; seen++) {
    if (unit >= text.length) return -1;
    unit += isHigh(text.charCodeAt(unit)) && unit + 1 < text.length && isLow(text.charCodeAt(unit + 1)) ? 2 : 1;
  }
  return unit;
}

/** Apply a change set to a text; throws a RangeError if it reads past the end. */
export function apply(text, ops, astral = hasAstral(text)) {
  let out = '';
  let unit = 0;
  for (const op of ops) {
    if ('insert' in op) {
      out += op.insert;
      continue;
    }
    const end = advanceExactly(text, unit, 'retain' in op ? op.retain : op.delete, astral);
    if (end < 0) throw new RangeError(`the change reads ${lengthBefore(ops)} chars, the text has ${countChars(text)}`);
    if ('retain' in op) out += text.slice(unit, end);
    unit = end;
  }
  return out + text.slice(unit);
}

/** `a` then `b` as one change set. */
export function compose(a, b) {
  const out = new Builder();
  const ca = new Cursor(a);
  const cb = new Cursor(b);
  for (;;) {
    const opA = ca.peek();
    const opB = cb.peek();
    if (!opA && !opB) break;
    if (opA && 'delete' in opA) {
      out.delete(ca.rest(opA));
      ca.next();
    } else if (opB && 'insert' in opB) {
      out.insert(opB.insert);
      cb.next();
    } else if (!opA) {
      // `a` retains the rest.
      out.push(opKind(opB), cb.rest(opB));
      cb.next();
    } else if (!opB) {
      // `b` retains the rest.
      if ('insert' in opA) out.insert(sliceChars(opA.insert, ca.off, opLen(opA)));
      else out.retain(ca.rest(opA));
      ca.next();
    } else {
      const n = Math.min(ca.rest(opA), cb.rest(opB));
      if ('insert' in opA) {
        if ('retain' in opB) out.insert(sliceChars(opA.insert, ca.off, ca.off + n));
        // inserted by `a`, deleted by `b`: nothing.
      } else if ('retain' in opB) {
        out.retain(n);
      } else {
        out.delete(n);
      }
      ca.take(n);
      cb.take(n);
    }
  }
  return out.done();
}

/**
 * Rebase `a` over `b`, a change made concurrently to the same text: the result applies after
 * `b` and keeps `a`'s inserts and deletes (text both delete is deleted once). At one position
 * `b`'s insert comes first, unless `aFirst`. Transforming `a` over `b` with `aFirst` and `b`
 * over `a` without converges: `b` then `a'` equals `a` then `b'`. This is the core's
 * `ChangeSet::transform_side`, so both sides rebase the same way.
 */
export function transform(a, b, aFirst = false) {
  const out = new Builder();
  const ca = new Cursor(a);
  const cb = new Cursor(b);
  for (;;) {
    const opA = ca.peek();
    const opB = cb.peek();
    if (!opA) break;
    if ('insert' in opA && aFirst) {
      out.insert(opA.insert);
      ca.next();
    } else if (opB && 'insert' in opB) {
      out.retain(opLen(opB));
      cb.next();
    } else if ('insert' in opA) {
      out.insert(opA.insert);
      ca.next();
    } else if (!opB) {
      out.push(opKind(opA), ca.rest(opA));
      ca.next();
    } else {
      const n = Math.min(ca.rest(opA), cb.rest(opB));
      if ('retain' in opB) out.push(opKind(opA), n);
      // Deleted by `b`: `a` neither retains nor deletes it again.
      ca.take(n);
      cb.take(n);
    }
  }
  return out.done();
}

/**
 * Where char position `pos` of the old text is after the change. Positions inside a deleted
 * range map to where the range was; `assoc < 0` stays before text inserted at the position.
 */
export function mapPosition(ops, pos, assoc = 1) {
  let oldPos = 0;
  let newPos = 0;
  for (const op of ops) {
    if ('retain' in op) {
      if (pos < oldPos + op.retain) return newPos + (pos - oldPos);
      oldPos += op.retain;
      newPos += op.retain;
    } else if ('delete' in op) {
      if (pos < oldPos + op.delete) return newPos;
      oldPos += op.delete;
    } else {
      if (pos === oldPos && assoc < 0) return newPos;
      newPos += countChars(op.insert);
    }
  }
  return newPos + (pos - oldPos);
}

/** A change set on `text` as UTF-16 replacements `{from, to, insert}` (ascending, in the
 *  coordinates of `text`). */
export function toUtf16(text, ops, astral = hasAstral(text)) {
  const out = [];
  let unit = 0;
  for (const op of ops) {
    if ('retain' in op) {
      unit = advanceChars(text, unit, op.retain, astral);
      continue;
    }
    let last = out[out.length - 1];
    if (!last || last.to !== unit) {
      last = { from: unit, to: unit, insert: '' };
      out.push(last);
    }
    if ('delete' in op) {
      unit = advanceChars(text, unit, op.delete, astral);
      last.to = unit;
    } else {
      last.insert += op.insert;
    }
  }
  return out;
}

/** UTF-16 replacements `{from, to, insert}` on `text` (ascending, not overlapping, in the
 *  coordinates of `text`) as a change set over chars. */
export function fromUtf16(text, changes, astral = hasAstral(text)) {
  const out = new Builder();
  let last = 0;
  const chars = astral ? countChars : (s) => s.length;
  for (const { from, to, insert } of changes) {
    if (from < last || to < from || to > text.length) {
      throw new RangeError(`replacement ${from}..${to} is out of order or past the end (${text.length})`);
    }
    out.retain(chars(text.slice(last, from)));
    out.delete(chars(text.slice(from, to)));
    out.insert(insert ?? '');
    last = to;
  }
  return out.done();
}

/** The smallest single UTF-16 replacement turning `a` into `b`, never splitting a surrogate pair. */
export function diffUtf16(a, b) {
  let start = 0;
  const max = Math.min(a.length, b.length);
  while (start < max && a.charCodeAt(start) === b.charCodeAt(start)) start++;
  if (start > 0 && isHigh(a.charCodeAt(start - 1))) start--;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a.charCodeAt(endA - 1) === b.charCodeAt(endB - 1)) {
    endA--;
    endB--;
  }
  if (endA < a.length && isLow(a.charCodeAt(endA)) && endA > start) {
    endA++;
    endB++;
  }
  return { from: start, to: endA, insert: b.slice(start, endB) };
}

/** A change set (over chars) turning text `a` into text `b`: one replacement, or none. */
export function diff(a, b) {
  if (a === b) return [];
  return fromUtf16(a, [diffUtf16(a, b)]);
}

// ------------------------------------------------------------------ the sync engine

let tags = 0;
// Tags are unique across tabs: every tab hears every tab's edits of a chapter.
const PAGE = Math.random().toString(36).slice(2, 10);

/** A fresh tag for a writer's change. */
export function nextTag() {
  return `${PAGE}-t${++tags}`;
}

/**
 * Keeps an editor and one chapter of the core in step. Editor-neutral: an adapter reports the
 * writer's changes (`local` in chars, or `localUtf16`) and gives the engine an `editor` with
 * `text()` (what it shows, as plain text) and `apply(changes, ops)` (show a change of the core:
 * UTF-16 replacements on that text, ascending, in its coordinates; `ops` is the same change
 * over chars), which must not be reported back as the writer's. An editor that can scroll
 * gives `reveal({scroll, selection})` too: the core asks it to show a place (an agent scrolled
 * or navigated there; see `ui`).
 */
export class SyncEngine {
  /**
   * @param {import('./sync').SyncOptions & {editor?: import('./sync').SyncEditor}} options
   */
  constructor({ client, chapter, version, text, editor = null, onError, onConflict, listen = true, reveal = null }) {
    this.client = client;
    this.chapter = chapter;
    this.version = version;
    /** The chapter at `version`, as the core has it. */
    this.text = text;
    /** What the editor shows: text + inflight + buffer. */
    this.shadow = text;
    this.astral = hasAstral(text);
    this.inflight = null;
    this.buffer = null;
    this.editor = editor;
    this.onError = onError ?? (() => {});
    this.onConflict = onConflict ?? (() => {});
    this.waiters = [];
    this.closed = false;
    this.resyncing = false;
    this.resyncAgain = false;
    this.offs = [];
    /** The `reveal` count of the core's UI state last seen (null: not yet known). */
    this.revealed = reveal;
    if (listen && client && typeof client.on === 'function') {
      this.offs.push(
        client.on('edit', (e) => {
          if (e.chapter === this.chapter) this.remote(e);
        }),
        client.on('ui', (ui) => this.ui(ui)),
        client.on('core_restarted', () => this.resync()),
        client.on('project_reloaded', () => this.resync()),
        client.on('writer_changed', () => this.resync()),
      );
    }
  }

  /** Whether every change typed here has been applied by the core. */
  get synced() {
    return !this.inflight && !this.buffer;
  }

  /** Resolves once every change typed so far has been applied by the core. */
  whenSynced() {
    if (this.synced || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Undo through the core's shared history, once what was typed has been applied. */
  async undo(options = {}) {
    await this.whenSynced();
    return this.client.undo(options);
  }

  /** Redo through the core's shared history, once what was typed has been applied. */
  async redo(options) {
    await this.whenSynced();
    return this.client.redo(options);
  }

  _settle() {
    if (!this.synced && !this.closed) return;
    const waiters = this.waiters.splice(0);
    for (const w of waiters) w();
  }

  _see(s) {
    if (!this.astral && hasAstral(s)) this.astral = true;
  }

  /** The writer changed the editor: UTF-16 replacements on the text it showed before. */
  localUtf16(changes) {
    if (this.closed || changes.length === 0) return;
    for (const c of changes) this._see(c.insert ?? '');
    this.local(fromUtf16(this.shadow, changes, this.astral));
  }

  /** The writer changed the editor: a change set over chars, on the text it showed before. */
  local(ops) {
    if (this.closed || isIdentity(ops)) return;
    for (const op of ops) if ('insert' in op) this._see(op.insert);
    this.shadow = apply(this.shadow, ops, this.astral);
    if (!this.inflight) this._send(ops);
    else this.buffer = this.buffer ? compose(this.buffer, ops) : ops;
  }

  _send(ops, tag = nextTag()) {
    const sent = this.client.applyUserChange(this.chapter, this.version, ops, { tag });
    // `done` settles once the core answered (the change's edit event came first).
    const done = sent.then(
      () => true,
      () => false,
    );
    this.inflight = { ops, tag, done };
    // Sent again, and applied before (under its tag): its edit event went missing.
    sent.then((result) => {
      if (result?.duplicate && !this.closed && this.inflight?.tag === tag) this.resync();
    }, () => {});
    sent.catch((err) => {
      if (this.closed || this.inflight?.tag !== tag) return;
      this.onError(err);
      this.resync();
    });
  }

  /** An `edit` event of the core for this chapter. */
  remote(event) {
    if (this.closed) return;
    const change = event.changeset;
    if (this.inflight && event.tag === this.inflight.tag && !event.replay) {
      // A change that came to nothing keeps the version; after a missed event the change no
      // longer applies to `text`: catch up instead.
      const nothing = event.version === this.version && isIdentity(change);
      if (event.version !== this.version + 1 && !nothing) return void this.resync();
      this._see(JSON.stringify(change));
      this.text = apply(this.text, change, this.astral);
      this.version = event.version;
      const sent = this.inflight.ops;
      this.inflight = null;
      const exact = sameChange(sent, change);
      if (this.buffer) {
        // The buffer applies after the change as it was sent: when the core applied it
        // otherwise, what is left to send is what the editor shows beyond the core's text.
        const next = exact ? this.buffer : diff(this.text, this.shadow);
        this.buffer = null;
        if (!isIdentity(next)) this._send(next);
      } else if (!exact && this.shadow !== this.text) {
        this._correct();
      }
      this._settle();
      return;
    }
    if (event.version <= this.version) return; // already known
    if (event.version !== this.version + 1) return void this.resync();
    this._see(JSON.stringify(change));
    this.text = apply(this.text, change, this.astral);
    this.version = event.version;
    let mine = change;
    if (this.inflight) {
      const a = this.inflight.ops;
      this.inflight.ops = transform(a, mine, false);
      mine = transform(mine, a, true);
    }
    if (this.buffer) {
      const b = this.buffer;
      this.buffer = transform(b, mine, false);
      mine = transform(mine, b, true);
    }
    this._show(mine);
  }

  /** Show a change (over chars, on the shadow) in the editor. */
  _show(ops) {
    if (isIdentity(ops)) return;
    const changes = toUtf16(this.shadow, ops, this.astral);
    this.shadow = apply(this.shadow, ops, this.astral);
    this.editor?.apply(changes, ops);
  }

  /** Make the editor show the core's text (there is nothing unsent). */
  _correct() {
    this._show(diff(this.shadow, this.text));
  }

  /**
   * Catch up with the core after something went wrong (a failed request, a missed event, a
   * restarted core, a new writing tab). The core's changes since this editor's version are
   * replayed: this editor's own change is recognised by its tag (the core applies a tagged
   * change once, so sending it again is safe), the others are rebased over what the writer
   * typed, and what the core does not have yet is sent again. Unsent typing is never thrown
   * away: when the core cannot say what changed (its history no longer reaches back, or it
   * lost changes), the editor takes the core's text and the writer's text is kept as a
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
    this._see(chapter.text);
    const shown = this.editor ? this.editor.text() : this.shadow;
    const behind = chapter.version < this.version;
    const replayed = shown === this.shadow && !behind && Array.isArray(chapter.changes) && this._replay(chapter.changes);
    if (replayed && this.version === chapter.version && this.text === chapter.text) {
      if (this.inflight) {
        // Not applied by the core: send it again, under the same tag.
        const { ops, tag } = this.inflight;
        this._send(ops, tag);
      } else if (this.buffer) {
        const next = this.buffer;
        this.buffer = null;
        this._send(next);
      } else if (this.shadow !== this.text) {
        this._correct();
      }
      this._settle();
      return;
    }
    // The core cannot say how its text came to be (or lost changes it had taken): take its
    // text, and keep the writer's as a conflict copy when the core lacks any of it.
    const lost = !this.synced || behind || shown !== this.shadow;
    this.shadow = shown;
    this.text = chapter.text;
    this.version = chapter.version;
    this.inflight = null;
    this.buffer = null;
    if (lost && shown !== chapter.text) {
      this.onConflict({ chapter: this.chapter, text: shown, coreText: chapter.text, version: chapter.version });
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
        this._see(JSON.stringify(c.changeset));
        this.text = apply(this.text, c.changeset, this.astral);
        this.version = c.version;
        // What the editor shows beyond the core's text is still to be sent.
        const rest = sameChange(this.inflight.ops, c.changeset) ? this.buffer : diff(this.text, this.shadow);
        this.inflight = null;
        this.buffer = rest && !isIdentity(rest) ? rest : null;
        continue;
      }
      this.remote({ ...c, chapter: this.chapter, replay: true });
    }
    return true;
  }

  /**
   * A `ui` event of the core (not needed with `listen`): when its `reveal` count moved on since
   * the last one seen (a tool scrolled, navigated or opened a chapter) and it is this chapter's,
   * the editor shows the place. Returns whether it did.
   */
  ui(state) {
    const seen = this.revealed;
    this.revealed = state?.reveal ?? 0;
    if (seen === null || seen === this.revealed) return false;
    return this.reveal(state);
  }

  /**
   * Show the core's place in the editor now: scroll its `scroll` position to the middle of the
   * view and, when the selection (or the caret) starts there (a navigation), select it. The
   * positions are the core's chars, read on the text the editor shows. Returns false when the
   * state is another chapter's, or the editor cannot scroll.
   */
  reveal(state) {
    if (this.closed || !state || state.active_chapter !== this.chapter || typeof this.editor?.reveal !== 'function') return false;
    const at = (chars) => charToUtf16(this.shadow, chars ?? 0, this.astral);
    const scroll = state.scroll ?? 0;
    const [start, end] = state.selection ?? [state.cursor, state.cursor];
    const selection = start === scroll && end !== undefined ? { from: at(start), to: at(end) } : null;
    this.editor.reveal({ scroll: at(scroll), selection });
    return true;
  }

  /** Stop following the core (pending changes stay with the core; nothing more is sent). */
  close() {
    this.closed = true;
    for (const off of this.offs.splice(0)) off?.();
    this._settle();
  }
}

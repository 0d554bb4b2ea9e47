// draftsmith/codemirror: keeps a CodeMirror 6 editor and one chapter in the draftsmith core in
// step, on the editor-neutral engine of ./sync.js. Types: ./codemirror.d.ts.
//
// It imports nothing from CodeMirror (it uses the view and the changes it is given), so it
// works with whichever copy of @codemirror/state the app has.
//
//   const sync = new ChapterSync({ client, view, chapter: ch.id, version: ch.version, text: ch.text });
//   // in the view's extensions:
//   EditorView.updateListener.of((update) => sync.update(update))
//   // and Mod-z / Mod-Shift-z: sync.undo() / sync.redo() (the core's shared history)
//
// When an agent scrolls or navigates (`scroll_to_position`, `navigate_to_text`, ...), the view
// scrolls there (an `EditorView.scrollIntoView` effect, centred) and selects what was found.
import { SyncEngine, charToUtf16, utf16ToChar, countChars } from './sync.js';

export { charToUtf16, utf16ToChar, countChars };

/** The `userEvent` of transactions that show the core's changes (not to be sent back). */
export const CORE_EVENT = 'draftsmith.core';

/** Whether a transaction shows a change of the core (rather than the writer's). */
export function isFromCore(tr) {
  return tr.isUserEvent(CORE_EVENT);
}

/** A CodeMirror ChangeSet as UTF-16 replacements on the document before it. */
export function replacements(changes) {
  const out = [];
  changes.iterChanges((fromA, toA, _fromB, _toB, inserted) => {
    out.push({ from: fromA, to: toA, insert: inserted.toString() });
  });
  return out;
}

/**
 * Scroll a view to a place (UTF-16 offsets) and select it if given. The scroll effect comes
 * from the view's own class (`EditorView.scrollIntoView`), so no copy of CodeMirror is imported.
 */
export function revealIn(view, { scroll, selection }) {
  const length = view.state.doc.length;
  const clamp = (pos) => Math.max(0, Math.min(pos, length));
  view.dispatch({
    selection: selection ? { anchor: clamp(selection.from), head: clamp(selection.to) } : undefined,
    effects: view.constructor.scrollIntoView(clamp(scroll), { y: 'center' }),
    userEvent: CORE_EVENT,
  });
}

export class ChapterSync extends SyncEngine {
  /**
   * @param {import('./codemirror').ChapterSyncOptions} options
   */
  constructor({ view, ...options }) {
    super({
      ...options,
      editor: {
        text: () => view.state.doc.toString(),
        apply: (changes) => view.dispatch({ changes, userEvent: CORE_EVENT }),
        reveal: (place) => revealIn(view, place),
      },
    });
    this.view = view;
  }

  /** Send the writer's changes of a view update (those not from the core). */
  update(update) {
    let local = false;
    for (const tr of update.transactions) {
      if (!tr.docChanged || isFromCore(tr)) continue;
      this.local(tr.changes);
      local = true;
    }
    return local;
  }

  /**
   * The writer changed the editor: a CodeMirror ChangeSet on the document before it, or a
   * change set over chars.
   */
  local(changes) {
    if (Array.isArray(changes)) super.local(changes);
    else this.localUtf16(replacements(changes));
  }
}

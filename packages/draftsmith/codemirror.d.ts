// Type declarations for draftsmith/codemirror (./codemirror.js).
import type { ChangeSet as CodeMirrorChanges, Transaction } from '@codemirror/state';
import type { EditorView, ViewUpdate } from '@codemirror/view';
import { SyncEngine } from './sync.js';
import type { SyncOptions, Replacement, ChangeSet, RevealPlace } from './sync.js';

export { charToUtf16, utf16ToChar, countChars } from './sync.js';

/** The `userEvent` of transactions that show the core's changes. */
export declare const CORE_EVENT: 'draftsmith.core';
/** Whether a transaction shows a change of the core (rather than the writer's). */
export declare function isFromCore(tr: Transaction): boolean;
/** A CodeMirror ChangeSet as UTF-16 replacements on the document before it. */
export declare function replacements(changes: CodeMirrorChanges): Replacement[];

/** Scroll a view to a place (centred) and select it if given (what `reveal` does). */
export declare function revealIn(view: EditorView, place: RevealPlace): void;

export interface ChapterSyncOptions extends SyncOptions {
  view: EditorView;
}

/** Keeps a CodeMirror 6 view and one chapter in step. */
export declare class ChapterSync extends SyncEngine {
  constructor(options: ChapterSyncOptions);
  readonly view: EditorView;
  /** Send the writer's changes of an update (`EditorView.updateListener`); true if any. */
  update(update: ViewUpdate): boolean;
  /** The writer changed the editor: a CodeMirror ChangeSet, or a change set over chars. */
  local(changes: CodeMirrorChanges | ChangeSet): void;
}

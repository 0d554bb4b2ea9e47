// Type declarations for draftsmith/prosemirror (./prosemirror.js).
import type { Node, Schema } from 'prosemirror-model';
import type { Plugin, PluginKey, Transaction } from 'prosemirror-state';
import type { EditorView } from 'prosemirror-view';
import { SyncEngine } from './sync.js';
import type { SyncOptions, Replacement, RevealPlace } from './sync.js';

/** The char a hard break is in the core's text (U+2028). */
export declare const HARD_BREAK: '\u2028';
/** The char any other inline leaf node is in the core's text (U+FFFC). */
export declare const OBJECT: '\uFFFC';

/** The plain text of a textblock. */
export declare function blockText(block: Node): string;
/** The plain text of a document: its paragraphs as lines, hard breaks as U+2028. */
export declare function docToText(doc: Node): string;
/** The document of a plain text: one paragraph a line. */
export declare function textToDoc(schema: Schema, text: string): Node;
/** The plain-text offset (UTF-16) of a document position. */
export declare function posToText(doc: Node, pos: number): number;
/** The document position (inside a paragraph) of a plain-text offset (UTF-16). */
export declare function textToPos(doc: Node, offset: number): number;
/** The text change between two documents as one replacement, or null. */
export declare function textChange(before: Node, after: Node): Replacement | null;
/** Apply replacements on the document's plain text to a transaction, keeping the selection. */
export declare function applyTextChanges(tr: Transaction, changes: Replacement[]): Transaction;

/**
 * Show a place of the plain text (UTF-16 offsets): select `selection` if given, and scroll
 * `scroll` to the middle of the editor's scrolling ancestor (or the window).
 */
export declare function revealIn(view: EditorView, place: RevealPlace, key?: PluginKey | null): void;

export interface ProseMirrorSyncOptions extends SyncOptions {
  /** The view to follow now (or add `plugin` to its state, which attaches it). */
  view?: EditorView | null;
}

/** Keeps a ProseMirror or Tiptap editor and one chapter in step. */
export declare class ProseMirrorSync extends SyncEngine {
  constructor(options: ProseMirrorSyncOptions);
  readonly view: EditorView | null;
  /** Add to the state's plugins; Tiptap: `editor.registerPlugin(sync.plugin)`. */
  readonly plugin: Plugin;
  readonly pluginKey: PluginKey;
  /** Follow a view; it is made to show the chapter if it shows something else. */
  attach(view: EditorView): void;
}

/** Whether a transaction shows a change of the core (rather than the writer's). */
export declare function isFromCore(tr: Transaction, sync: ProseMirrorSync): boolean;

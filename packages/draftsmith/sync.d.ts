// Type declarations for draftsmith/sync (./sync.js): the editor-neutral sync engine.
import type { ChangeSet, ChapterChange, Draftsmith, EventMap } from './draftsmith.js';

export type { ChangeSet, ChangeOp } from './draftsmith.js';

/** A replacement on an editor's plain text, in UTF-16 code units. */
export interface Replacement { from: number; to: number; insert: string }

/** What the engine needs of an editor. */
export interface SyncEditor {
  /** The editor's text, as plain text. */
  text(): string;
  /**
   * Show a change of the core: replacements on the text the editor shows (ascending, in its
   * coordinates); `ops` is the same change over chars. Must not come back as `local`.
   */
  apply(changes: Replacement[], ops: ChangeSet): void;
  /**
   * Show a place the core asks for (an agent scrolled or navigated): scroll `scroll` (UTF-16,
   * on the text the editor shows) to the middle of the view, and select `selection` if given.
   * Optional: an editor without it is never scrolled.
   */
  reveal?(place: RevealPlace): void;
}

/** A place to show, in UTF-16 offsets on the editor's text. */
export interface RevealPlace { scroll: number; selection: { from: number; to: number } | null }

/** What the engine needs of the client (a `Draftsmith` has it all). */
export type SyncClient = Pick<Draftsmith, 'applyUserChange' | 'getChapter'> &
  Partial<Pick<Draftsmith, 'on' | 'undo' | 'redo'>>;

/** The core could not take some of the writer's text: the editor now shows `coreText`. */
export interface SyncConflict { chapter: string; text: string; coreText: string; version: number }

export interface SyncOptions {
  client: SyncClient;
  /** The chapter's id. */
  chapter: string;
  /** The chapter's version and text, as `getChapter` gave them. */
  version: number;
  text: string;
  /** A request failed (the engine catches up by itself). */
  onError?: (err: Error) => void;
  /** The writer's text that the core could not take (keep it somewhere). */
  onConflict?: (conflict: SyncConflict) => void;
  /**
   * Follow the client's `edit` events of this chapter and its `ui` events (scrolling the
   * editor when asked), and catch up on `core_restarted`, `project_reloaded` and
   * `writer_changed` (default true). With false, call `remote`, `ui` and `resync` yourself.
   */
  listen?: boolean;
  /**
   * The `reveal` count of the project's UI state (`project.ui.reveal`) when the editor was
   * opened: a later `ui` event with another count scrolls the editor. Without it, the first
   * `ui` event only sets the count.
   */
  reveal?: number | null;
}

/** What `remote` takes: an `edit` event, or a change replayed from `getChapter(…, {since})`. */
export type RemoteEdit = EventMap['edit'] | (ChapterChange & { chapter: string; replay?: boolean });

export declare class SyncEngine {
  constructor(options: SyncOptions & { editor?: SyncEditor | null });
  readonly client: SyncClient;
  readonly chapter: string;
  /** The chapter's version as the core has it (what the editor shows is built on it). */
  readonly version: number;
  /** The chapter's text at `version`. */
  readonly text: string;
  /** What the editor shows: `text` with the writer's changes not yet applied by the core. */
  readonly shadow: string;
  /** Whether every change typed here has been applied by the core. */
  readonly synced: boolean;
  /** Resolves once every change typed so far has been applied by the core. */
  whenSynced(): Promise<void>;
  /** The writer changed the editor: a change set over chars, on the text it showed before. */
  local(ops: ChangeSet): void;
  /** The writer changed the editor: UTF-16 replacements on the text it showed before. */
  localUtf16(changes: Replacement[]): void;
  /** An `edit` event of the core for this chapter (not needed with `listen`). */
  remote(event: RemoteEdit): void;
  /** Catch up with the core (replays its changes; resends what it lacks). */
  resync(): Promise<void>;
  /** Undo / redo in the core's shared history, once what was typed has been applied. */
  undo(options?: Parameters<Draftsmith['undo']>[0]): ReturnType<Draftsmith['undo']>;
  redo(options?: Parameters<Draftsmith['redo']>[0]): ReturnType<Draftsmith['redo']>;
  /**
   * A `ui` event (not needed with `listen`): when its `reveal` count moved on and it is this
   * chapter's, the editor shows the place (`reveal`). True if it did.
   */
  ui(state: EventMap['ui']): boolean;
  /**
   * Show the core's place now: `scroll` in the middle of the view, and the selection when it
   * starts there. False for another chapter's state, or an editor without `reveal`.
   */
  reveal(state: EventMap['ui']): boolean;
  /** Stop following the core. */
  close(): void;
}

/** A fresh tag for a writer's change (unique across tabs). */
export declare function nextTag(): string;

// Change sets over chars (the core's), and their conversion to UTF-16.
export declare function apply(text: string, ops: ChangeSet): string;
export declare function compose(a: ChangeSet, b: ChangeSet): ChangeSet;
/** Rebase `a` over `b` (concurrent); at one position `b`'s insert comes first unless `aFirst`. */
export declare function transform(a: ChangeSet, b: ChangeSet, aFirst?: boolean): ChangeSet;
/** Where a char position is after the change; `assoc < 0` stays before text inserted at it. */
export declare function mapPosition(ops: ChangeSet, pos: number, assoc?: number): number;
export declare function normalize(ops: ChangeSet): ChangeSet;
export declare function isIdentity(ops: ChangeSet): boolean;
export declare function sameChange(a: ChangeSet, b: ChangeSet): boolean;
export declare function lengthBefore(ops: ChangeSet): number;
export declare function diff(a: string, b: string): ChangeSet;
export declare function diffUtf16(a: string, b: string): Replacement;
export declare function toUtf16(text: string, ops: ChangeSet): Replacement[];
export declare function fromUtf16(text: string, changes: Replacement[]): ChangeSet;
export declare function countChars(s: string): number;
export declare function hasAstral(s: string): boolean;
export declare function advanceChars(text: string, from: number, chars: number, astral?: boolean): number;
export declare function charToUtf16(text: string, chars: number, astral?: boolean): number;
export declare function utf16ToChar(text: string, pos: number, astral?: boolean): number;

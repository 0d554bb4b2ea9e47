// Generated from src/core/requests.rs by ts-rs; do not edit.
// Regenerate: DRAFTSMITH_WRITE_TS=1 cargo test --test protocol_types

/** The request types the core serves. */
export type RequestType =
  | 'hello'
  | 'create_project'
  | 'open_project'
  | 'list_projects'
  | 'rename_project'
  | 'delete_project'
  | 'export_project'
  | 'import_project'
  | 'export_markdown'
  | 'reload_project'
  | 'checkpoint'
  | 'memory'
  | 'memory_context'
  | 'write_memory_notes'
  | 'memory_trash'
  | 'memory_restore'
  | 'suggestions'
  | 'accept_suggestion'
  | 'dismiss_suggestion'
  | 'writer_idle'
  | 'storage_estimate'
  | 'get_chapter'
  | 'add_chapter'
  | 'rename_chapter'
  | 'move_chapter'
  | 'delete_chapter'
  | 'execute'
  | 'apply_user_change'
  | 'undo'
  | 'redo'
  | 'close_group'
  | 'history'
  | 'list_tools'
  | 'get_settings'
  | 'set_settings'
  | 'run'
  | 'abort_run'
  | 'start_job'
  | 'job_status'
  | 'list_jobs'
  | 'pause_job'
  | 'resume_job'
  | 'cancel_job'
  | 'job_unit'
  | 'research_list'
  | 'research_delete'
  | 'define_agent'
  | 'list_agents'
  | 'delete_agent'
  | 'list_approvals'
  | 'approve'
  | 'bible_list'
  | 'bible_save'
  | 'bible_delete'
  | 'debug_panic'
  | 'debug_fail_saves'
;

/** Each request's parameters, by request type. */
export interface RequestParams {
  /** Who we are: name, version, build profile, protocol version and these capabilities. */
  hello: NoParams;
  /** Create a project (with chapters) and make it the open one. */
  create_project: CreateProjectParams;
  /** Make an existing project the open one. */
  open_project: OpenProjectParams;
  /** Every stored project, most recently changed first. */
  list_projects: NoParams;
  /** Rename a project (the open one by default). */
  rename_project: RenameProjectParams;
  /** Delete a project and everything in it. */
  delete_project: OpenProjectParams;
  /** The project as one JSON document. */
  export_project: ProjectRefParams;
  /** Import an exported document as a new project. */
  import_project: ImportProjectParams;
  /** The manuscript as Markdown. */
  export_markdown: ProjectRefParams;
  /** Read a project again from the store (another writer changed it). */
  reload_project: OpenProjectParams;
  /** Save each changed chapter's whole text and the lazily saved state. */
  checkpoint: ProjectRefParams;
  /** The agent's memory: notes, goals, watched entities. */
  memory: NoParams;
  /** The memory block a run's prompt would get for a request. */
  memory_context: MemoryContextParams;
  /** Write notes as the writer. */
  write_memory_notes: WriteMemoryNotesParams;
  /** The deleted notes that can still be restored. */
  memory_trash: NoParams;
  /** Bring a deleted note back. */
  memory_restore: MemoryRestoreParams;
  /** The proactive memory's suggestions. */
  suggestions: SuggestionsParams;
  /** A pending suggestion becomes a goal or a note. */
  accept_suggestion: SuggestionRefParams;
  /** Set a pending suggestion aside. */
  dismiss_suggestion: SuggestionRefParams;
  /** The writer stopped typing: the idle thinker may think. */
  writer_idle: WriterIdleParams;
  /** Storage use and quota. */
  storage_estimate: NoParams;
  /** A chapter's text, or its changes since a version. */
  get_chapter: GetChapterParams;
  /** Add a chapter. */
  add_chapter: AddChapterParams;
  /** Rename a chapter. */
  rename_chapter: RenameChapterParams;
  /** Move a chapter to a position. */
  move_chapter: MoveChapterParams;
  /** Delete a chapter (never the last one). */
  delete_chapter: DeleteChapterParams;
  /** Run one tool call. */
  execute: ExecuteParams;
  /** The writer's change, made on a chapter version. */
  apply_user_change: ApplyUserChangeParams;
  /** Undo the newest group (of an origin). */
  undo: UndoParams;
  /** Redo the last undone group. */
  redo: NoParams;
  /** End the open undo group. */
  close_group: NoParams;
  /** The undo history, newest first. */
  history: NoParams;
  /** The tool catalog in a provider's format, or neutral definitions. */
  list_tools: ListToolsParams;
  /** The model settings. */
  get_settings: NoParams;
  /** Change the model settings. */
  set_settings: SettingsPatch;
  /** Start an agent run on the open project. */
  run: RunParams;
  /** Abort a run. */
  abort_run: AbortRunParams;
  /** Start a background job. */
  start_job: StartJobParams;
  /** A job with its units. */
  job_status: JobRefParams;
  /** The open project's jobs. */
  list_jobs: NoParams;
  /** Pause a job. */
  pause_job: JobRefParams;
  /** Resume a paused job. */
  resume_job: JobRefParams;
  /** Cancel a job. */
  cancel_job: JobRefParams;
  /** A job's unit and its transcript. */
  job_unit: JobUnitParams;
  /** The open project's research notes. */
  research_list: NoParams;
  /** Delete a research note. */
  research_delete: ResearchDeleteParams;
  /** Define or replace an agent of the open project. */
  define_agent: DefineAgentParams;
  /** The presets and every agent. */
  list_agents: NoParams;
  /** Delete an agent the open project defined. */
  delete_agent: DeleteAgentParams;
  /** Calls waiting for the writer's approval. */
  list_approvals: ListApprovalsParams;
  /** Decide a call waiting for approval. */
  approve: ApproveParams;
  /** The story bible's entities. */
  bible_list: BibleListParams;
  /** Create or update a story-bible entity as the writer. */
  bible_save: BibleSaveParams;
  /** Delete a story-bible entity. */
  bible_delete: BibleDeleteParams;
  /** Panic inside the core (tests of the worker's recovery). */
  debug_panic: DebugPanicParams;
  /** Make the next saves fail (tests of failed saves). */
  debug_fail_saves: DebugFailSavesParams;
}

export type AbortRunParams = { 
/**
 * The run; all runs when absent.
 */
runId?: string, };

export type AddChapterParams = { title?: string, text?: string, after?: ChapterRef, };

export type AgentChoice = string | CustomAgent;

export type ApplyUserChangeParams = { chapter: string, baseVersion: number, changes: Array<ChangeOp>, 
/**
 * The page's label for this change, echoed in its `edit` event and the result (so an
 * editor can tell its own change from others').
 */
tag?: string, };

export type ApproveParams = { callId: string, decision: Decision, 
/**
 * The writer's edit of the call's arguments (approve only).
 */
args?: JsonValue, 
/**
 * Why (told to the model with a rejection).
 */
reason?: string, 
/**
 * The run, when the same call id waits in more than one.
 */
runId?: string, 
/**
 * The digest of the card the writer saw (`digest` of the card); when given, a call
 * waiting under this id that is not that card is refused with `conflict`.
 */
digest?: string, };

export type BibleDeleteParams = { kind: string, id: string, baseVersion?: number, };

export type BibleListParams = { 
/**
 * Only this kind.
 */
kind?: string, };

export type BibleSaveParams = { kind: string, 
/**
 * The entity; a new one (id made from its name) when absent.
 */
id?: string, 
/**
 * Fields to set (`null` clears one).
 */
fields: { [key in string]: JsonValue }, 
/**
 * The version the writer's form showed.
 */
baseVersion?: number, };

export type ChangeOp = { "retain": number } | { "delete": number } | { "insert": string };

export type ChapterRef = string | number;

export type CreateProjectParams = { name: string, chapters?: Array<NewChapter>, };

export type CustomAgent = { name?: string, systemPrompt?: string, };

export type DebugFailSavesParams = { count: number, };

export type DebugPanicParams = { message?: string, };

export type Decision = "approve" | "reject";

export type DefineAgentParams = { agent: JsonValue, };

export type DeleteAgentParams = { name: string, };

export type DeleteChapterParams = { chapter: ChapterRef, };

export type ExecuteParams = { tool: string, args?: JsonValue, origin?: string, callId?: string, };

export type GetChapterParams = { chapter?: string, since?: number, };

export type IdleThinkingPatch = { enabled?: boolean, afterMs?: number, maxCallsPerDay?: number, };

export type ImportProjectParams = { document: JsonValue, };

export type JobKind = "pipeline" | "run" | "research";

export type JobRefParams = { job: string, };

export type JobUnitParams = { job: string, unit: string, };

export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]: JsonValue } | null;

export type ListApprovalsParams = { 
/**
 * Only this run's.
 */
runId?: string, };

export type ListToolsParams = { format?: string, toolset?: string, };

export type MemoryContextParams = { request?: string, budget?: number, };

export type MemoryRestoreParams = { 
/**
 * The deleted note.
 */
id: string, };

export type MoveChapterParams = { chapter: ChapterRef, to: number, };

export type NewChapter = { title?: string, text?: string, };

export type NewNote = { 
/**
 * The content.
 */
text: string, 
/**
 * What kind of note.
 */
noteType: NoteType, 
/**
 * Where it is visible.
 */
scope?: NoteScope, 
/**
 * Tags (normalized on write).
 */
tags?: Array<string>, 
/**
 * 1 to 5; [`DEFAULT_IMPORTANCE`] when `None`.
 */
importance?: number, };

export type NoParams = Record<symbol, never>;

export type NoteScope = "project" | "global";

export type NoteType = "fact" | "observation" | "plan" | "preference" | "issue";

export type OpenProjectParams = { id: string, };

export type ProjectRefParams = { id?: string, };

export type RenameChapterParams = { chapter: ChapterRef, title: string, };

export type RenameProjectParams = { id?: string, name: string, };

export type ResearchDeleteParams = { id: string, };

export type RunParams = { prompt: string, 
/**
 * The page's id for the run (so it can match events before the response); one is
 * made up when absent.
 */
runId?: string, agent?: AgentChoice, 
/**
 * A preset (`quill`, `dungeon_master`, `textcraft`): the run starts with its entry agent
 * (`rentl` has none: its agents run in pipeline jobs).
 */
preset?: string, toolset?: string, maxSteps?: number, tokenBudget?: number, 
/**
 * Forget the earlier conversation first.
 */
newConversation?: boolean, };

export type SettingsPatch = { 
/**
 * `openai`, `anthropic` or `gemini`; '' forgets it.
 */
provider?: string, baseUrl?: string, model?: string, 
/**
 * The API key; `null` or '' forgets it.
 */
apiKey?: string | null, 
/**
 * Extra request headers (replace the whole set).
 */
extraHeaders?: Record<string, string>, 
/**
 * Store the key (and headers) on this device.
 */
rememberKey?: boolean, toolset?: string, 
/**
 * 1 to 100.
 */
maxSteps?: number, tokenBudget?: number | null, 
/**
 * 0 to 2.
 */
temperature?: number | null, maxTokens?: number | null, 
/**
 * 1 000 to 600 000.
 */
connectTimeoutMs?: number, 
/**
 * 1 000 to 600 000.
 */
idleTimeoutMs?: number, 
/**
 * Modes by tool name; a `null` mode goes back to the default.
 */
approvalPolicies?: Record<string, 'permissive' | 'standard' | 'strict' | null>, 
/**
 * At most 86 400 000 (a day).
 */
recentUpdateWindowMs?: number, 
/**
 * http:// or https://; '' forgets it.
 */
mtlEndpoint?: string, 
/**
 * The idle thinker (fields left out keep their value).
 */
idleThinking?: IdleThinkingPatch, 
/**
 * Add a short model-written plan to the bedside note's automatic update.
 */
bedsidePlan?: boolean, 
/**
 * Timeouts by tool name (ms); a `null` goes back to the default.
 */
toolTimeoutsMs?: Record<string, number | null>, 
/**
 * An http(s) URL template with `{url}`; '' fetches pages directly.
 */
researchProxy?: string, researchAllowPrivate?: boolean, 
/**
 * 1 to 100.
 */
researchPerRun?: number, };

export type StartJobParams = { kind: JobKind, phases?: Array<string>, scope?: JsonValue, allowOverwrite?: boolean, concurrency?: number, 
/**
 * For `kind: "run"`: the run's prompt, and its agent or preset.
 */
prompt?: string, agent?: JsonValue, preset?: string, 
/**
 * For `kind: "research"`: the pages to read.
 */
urls?: Array<string>, };

export type SuggestionRefParams = { id: string, };

export type SuggestionsParams = { 
/**
 * Also the accepted and dismissed ones.
 */
all?: boolean, };

export type UndoParams = { origin?: string, by?: string, };

export type WriteMemoryNotesParams = { notes: Array<NewNote>, };

export type WriterIdleParams = { 
/**
 * How long the page saw no typing (informative: the core checks with its own clock).
 */
idleMs?: number, };

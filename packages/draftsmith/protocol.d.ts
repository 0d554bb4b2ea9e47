// Generated from src/core/requests.rs and src/core/events.rs by ts-rs; do not edit.
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
  | 'sync_connect'
  | 'sync_disconnect'
  | 'sync_status'
  | 'sync_network'
  | 'memory'
  | 'memory_context'
  | 'editor_context'
  | 'write_memory_notes'
  | 'memory_trash'
  | 'memory_restore'
  | 'suggestions'
  | 'accept_suggestion'
  | 'dismiss_suggestion'
  | 'writer_idle'
  | 'storage_estimate'
  | 'local_models'
  | 'load_local_model'
  | 'delete_local_model'
  | 'mcp_servers'
  | 'mcp_connect'
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
  | 'bible_revisions'
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
  /** Share the open project through a sync server, or, with `project`, fetch one that exists only there and open it. */
  sync_connect: SyncConnectParams;
  /** Stop sharing a project (it stays here as it is). */
  sync_disconnect: SyncProjectParams;
  /** How a project's sync connection stands. */
  sync_status: SyncProjectParams;
  /** The device lost or regained its network: links drop their connections or reconnect. */
  sync_network: SyncNetworkParams;
  /** The agent's memory: notes, goals, watched entities. */
  memory: NoParams;
  /** The memory block a run's prompt would get for a request. */
  memory_context: MemoryContextParams;
  /** The editor-context block a run's prompt gets: the project, the active chapter, the cursor, the selection and the paragraph at the cursor, the bible and the toolset. */
  editor_context: EditorContextParams;
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
  /** The model files the browser keeps for the local provider. */
  local_models: NoParams;
  /** Download (unless kept) and load the local model the settings name. */
  load_local_model: NoParams;
  /** Delete a kept model file. */
  delete_local_model: DeleteLocalModel;
  /** The MCP servers the settings list: their connection and tools. */
  mcp_servers: NoParams;
  /** Connect an MCP server again and list its tools anew. */
  mcp_connect: McpConnectParams;
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
  /** The writes of a story-bible entity's fields (from every device), newest first. */
  bible_revisions: BibleRevisionsParams;
  /** Delete a story-bible entity. */
  bible_delete: BibleDeleteParams;
  /** Panic inside the core (tests of the worker's recovery). */
  debug_panic: DebugPanicParams;
  /** Make the next saves fail (tests of failed saves). */
  debug_fail_saves: DebugFailSavesParams;
}

/** Each request's result, by request type. */
export interface RequestResults {
  hello: Hello;
  create_project: ProjectSummary;
  open_project: ProjectSummary;
  list_projects: ProjectList;
  rename_project: ProjectSummary;
  delete_project: Deleted;
  export_project: ExportDocument;
  import_project: ProjectSummary;
  export_markdown: Markdown;
  reload_project: Reloaded;
  checkpoint: CheckpointResult;
  sync_connect: SyncStatus;
  sync_disconnect: SyncStatus;
  sync_status: SyncStatus;
  sync_network: Array<SyncStatus>;
  memory: MemoryView;
  memory_context: MemoryBlock;
  editor_context: EditorBlock;
  write_memory_notes: Written;
  memory_trash: MemoryTrash;
  memory_restore: NoteRestored;
  suggestions: SuggestionList;
  accept_suggestion: SuggestionAccepted;
  dismiss_suggestion: SuggestionDismissed;
  writer_idle: IdleResult;
  storage_estimate: StorageEstimate;
  local_models: LocalModels;
  load_local_model: LocalModelLoaded;
  delete_local_model: LocalModelDeleted;
  mcp_servers: McpServers;
  mcp_connect: McpServers;
  get_chapter: ChapterText;
  add_chapter: ChapterInProject;
  rename_chapter: ChapterInProject;
  move_chapter: ChapterInProject;
  delete_chapter: DeletedChapter;
  execute: ToolCallResult;
  apply_user_change: UserChangeResult;
  undo: HistoryMove;
  redo: HistoryMove;
  close_group: Done;
  history: HistoryList;
  list_tools: ToolList;
  get_settings: Settings;
  set_settings: Settings;
  run: RunResult;
  abort_run: RunsAborted;
  start_job: JobView;
  job_status: JobView;
  list_jobs: JobList;
  pause_job: JobView;
  resume_job: JobView;
  cancel_job: JobView;
  job_unit: JobUnitDetail;
  research_list: ResearchListing;
  research_delete: ResearchDeleted;
  define_agent: AgentDefined;
  list_agents: AgentListing;
  delete_agent: AgentDeleted;
  list_approvals: ApprovalList;
  approve: ApprovalResult;
  bible_list: BibleListing;
  bible_save: BibleEntity;
  bible_revisions: BibleRevisions;
  bible_delete: BibleDeleted;
  debug_panic: Never;
  debug_fail_saves: FailingSaves;
}

/** What the worker adds to an event caused by another tab's request: `remote: true`. */
export interface Relayed {
  remote?: boolean;
}

/** The events the core pushes, by type: each one's payload. */
export interface CoreEventMap {
  /** A chapter changed (by the writer, an agent, undo or redo). */
  edit: EditEvent & Relayed;
  /** Editor UI state changed (a ui or navigation tool ran). */
  ui: UiState & Relayed;
  /** `run_analysis` produced a result (the writer's or an agent's): the page's Analysis panel shows it. */
  analysis: AnalysisEvent & Relayed;
  /** The undo history changed. */
  history_changed: HistoryChangedEvent & Relayed;
  /** A change was stored. */
  saved: SavedEvent & Relayed;
  /** A change could not be stored; it is kept in memory and saved with the next change. */
  storage_error: StorageErrorEvent & Relayed;
  /** Projects were created, renamed or deleted (here or, with `remote`, in another tab). */
  projects_changed: ProjectsChangedEvent & Relayed;
  /** Another tab saved the open project; this is its new state. */
  project_reloaded: ProjectReloadedEvent & Relayed;
  /** Another tab deleted a project that was open here. */
  project_deleted: ProjectDeletedEvent & Relayed;
  /** An agent run's event (see `run()`, which filters them by run). */
  run: RunEvent & Relayed;
  /** The settings changed. */
  settings_changed: Settings & Relayed;
  /** A model running in the browser is being downloaded or loaded, is ready, or failed. */
  model_progress: ModelProgressEvent & Relayed;
  /** An MCP server connected, failed, or listed other tools; or the server list changed. */
  mcp_changed: McpServers & Relayed;
  /** Chapters were added, renamed, moved or deleted. */
  chapters_changed: ProjectSummary & Relayed;
  /** The agent's memory changed (`bedside`: its automatic update; `monitor`: an observation note). */
  memory_changed: MemoryChangedEvent & Relayed;
  /** A suggestion was added or updated (a pending one), or accepted or dismissed. */
  suggestion: SuggestionEvent & Relayed;
  /** A story-bible entity changed (by the writer, an agent or an import); `entity` is null once deleted. */
  bible_changed: BibleChangedEvent & Relayed;
  /** A free file of the data/ view (under plans/ or notes/) was written or deleted. */
  files_changed: FilesChangedEvent & Relayed;
  /** An agent of the project was defined (or replaced), or deleted (`defined: false`). */
  agents_changed: AgentsChangedEvent & Relayed;
  /** Approvals were requested (`requested`: the new card) or decided (`requested: null`). */
  approvals_changed: ApprovalsChangedEvent & Relayed;
  /** A waiting call was decided (here or in another tab). */
  approval_decided: ApprovalDecidedEvent & Relayed;
  /** A job's or one of its units' state changed. */
  job_progress: JobProgressEvent & Relayed;
  /** A research note was added, updated (the same address read again) or deleted. */
  research_changed: ResearchChangedEvent & Relayed;
  /** A job ended: `done`, `failed` or `cancelled`. */
  job_finished: JobFinishedEvent & Relayed;
  /** A shared project's sync connection changed: its state, unsent updates or peers. */
  sync_status: SyncStatus & Relayed;
  /** How far a long piece of work has come: opening a project, `run_analysis`. */
  progress: ProgressEvent & Relayed;
}

export type AbortRunParams = { 
/**
 * The run; all runs when absent.
 */
runId?: string, };

export type AddChapterParams = { title?: string, text?: string, after?: ChapterRef, };

export type AgentChoice = string | CustomAgent;

export type AgentDefined = { 
/**
 * The agent.
 */
agent: AgentInfo, 
/**
 * Whether it replaced a definition of the same name.
 */
replaced: boolean, };

export type AgentDeleted = { 
/**
 * Its name.
 */
deleted: string, };

export type AgentInfo = { 
/**
 * Its name (its edits have origin `agent:<name>`).
 */
name: string, 
/**
 * What it is for.
 */
description: string, 
/**
 * Its role and its definition of done.
 */
systemPrompt: string, 
/**
 * The toolset whose tools it may call.
 */
toolset: string | null, 
/**
 * More tools it may call, by exact name.
 */
tools: Array<string>, 
/**
 * The sub-agents it may call.
 */
subAgents: Array<SubAgent>, 
/**
 * How it calls them.
 */
delegation: Delegation, 
/**
 * Its model settings over the writer's settings.
 */
model: AgentModel | null, 
/**
 * Most model calls per task.
 */
maxSteps: number, 
/**
 * Most tokens (input + output) per run, if bounded.
 */
tokenBudget: number | null, 
/**
 * Whether a run may start with it (it talks to the writer).
 */
talksToWriter: boolean, 
/**
 * Tools that always ask the writer when this agent calls them (empty: none).
 */
interruptOn: Array<string>, 
/**
 * Whether it must call a tool on the first step of each task: `auto`, `required` or a
 * tool's name.
 */
toolChoice: string, 
/**
 * Whether it keeps one long-running session (conversation per project and campaign)
 * instead of a fresh temporary session per call.
 */
longRunning: boolean, 
/**
 * Whether it plans with a to-do list (`write_todos`, `read_todos`).
 */
planning: boolean, 
/**
 * A preset's agent (cannot be redefined or deleted).
 */
builtin: boolean, 
/**
 * The preset it belongs to, if any.
 */
preset: string | null, 
/**
 * Every tool it may call (its toolset's and its own).
 */
toolbox: Array<string>, 
/**
 * The tools its calls to its sub-agents go through.
 */
routingTools: Array<string>, };

export type AgentListing = { 
/**
 * The presets.
 */
presets: Array<Preset>, 
/**
 * The presets' agents and the project's.
 */
agents: Array<AgentInfo>, };

export type AgentLoopEvent = { "type": "text_delta", 
/**
 * The text.
 */
text: string, } | { "type": "tool_call_proposed", 
/**
 * Call id.
 */
id: string, 
/**
 * Tool name.
 */
name: string, } | { "type": "tool_call_started", 
/**
 * Call id.
 */
id: string, 
/**
 * Tool name.
 */
name: string, 
/**
 * Its arguments.
 */
arguments: Record<string, unknown>, } | { "type": "tool_call_finished", 
/**
 * Call id.
 */
id: string, 
/**
 * Tool name.
 */
name: string, 
/**
 * How it came out.
 */
status: ToolCallStatus, } | { "type": "edit_applied", 
/**
 * Call id.
 */
id: string, 
/**
 * Chapter id.
 */
chapter: string, 
/**
 * The chapter's version after the edit.
 */
version: number, } | { "type": "step_finished", 
/**
 * Step number, from 1.
 */
step: number, } | { "type": "usage", 
/**
 * The sum.
 */
usage: Usage, } | { "type": "compacted", 
/**
 * The request's estimated tokens before.
 */
before: number, 
/**
 * And after.
 */
after: number, 
/**
 * Messages replaced by the summary.
 */
removed: number, 
/**
 * Tool results shortened.
 */
shortened: number, };

export type AgentModel = { 
/**
 * The wire format (`openai`, `anthropic`, `gemini`); must be the configured one, whose
 * key and base URL are used.
 */
provider: string | null, 
/**
 * The model name.
 */
model: string | null, 
/**
 * Sampling temperature (0 to 2).
 */
temperature: number | null, 
/**
 * The model's context window in tokens, when the settings' (or the model's known one)
 * does not fit this agent.
 */
contextWindow?: number | null, };

export type AgentsChangedEvent = { 
/**
 * The project.
 */
project: string, 
/**
 * The agent.
 */
name: string, 
/**
 * True when defined (or replaced), false when deleted.
 */
defined: boolean, };

export type AnalysisEvent = { 
/**
 * The project analysed.
 */
project: string, 
/**
 * Who ran it (`user`, `agent:<name>`).
 */
origin: Origin, 
/**
 * When (ms since the epoch).
 */
atMs: number, 
/**
 * The result's data: `section` (`full`, or the one section), `scope`, the section
 * reports, `suggestions`, and `interpretation` when the model read the figures.
 */
result: Record<string, unknown>, };

export type AppliedChange = { 
/**
 * The chapter.
 */
chapter: string, 
/**
 * The change.
 */
changeset: Array<ChangeOp>, 
/**
 * The chapter's version after it.
 */
version: number, };

export type ApplyUserChangeParams = { chapter: string, baseVersion: number, changes: Array<ChangeOp>, 
/**
 * The page's label for this change, echoed in its `edit` event and the result (so an
 * editor can tell its own change from others').
 */
tag?: string, };

export type ApprovalCard = { 
/**
 * A digest of what the card shows; `approve {digest}` decides only this card.
 */
digest: string, 
/**
 * The call's id.
 */
callId: string, 
/**
 * The same as `callId` (snake_case spelling).
 */
call_id: string, 
/**
 * The paused run it belongs to (`null` for a call made outside a run).
 */
run: string | null, 
/**
 * Where the decision stands.
 */
state: 'pending' | 'approved' | 'rejected' | 'done' | 'cancelled', 
/**
 * The tool called.
 */
tool: string, 
/**
 * Its arguments.
 */
args: Record<string, unknown>, 
/**
 * The agent that asked, `agent:<name>` (a sub-agent's own name, deep in a run's tree too).
 */
origin: Origin, 
/**
 * The kind of the entity (a story-bible kind, or `memory_note`).
 */
kind: string | null, 
/**
 * The entity's id.
 */
entityId: string | null, 
/**
 * The entity's version the request was made on.
 */
version: number | null, 
/**
 * Why the call needs approval.
 */
reason: string | null, 
/**
 * The fields it would change.
 */
fields: Array<ApprovalField>, 
/**
 * For a call that changes several entries (a glossary merge): every entry it updates or
 * deletes, with its fields.
 */
changes: Array<{ kind: string, id: string, action: 'update' | 'delete', title: string, fields: Array<ApprovalField> }>, 
/**
 * Each field's value now.
 */
current: Record<string, unknown>, 
/**
 * What the call would make each field.
 */
proposed: Record<string, unknown>, 
/**
 * When the call asked (ms since the epoch).
 */
createdMs: number, };

export type ApprovalDecidedEvent = { 
/**
 * The project.
 */
project: string, 
/**
 * The decided call.
 */
callId: string, 
/**
 * Its run (`null` for a call made outside a run).
 */
run: string | null, 
/**
 * The writer's decision.
 */
decision: Decision, 
/**
 * The call's result status.
 */
status: ToolCallStatus, };

export type ApprovalField = { 
/**
 * Field name.
 */
field: string, 
/**
 * Its value now.
 */
current: unknown, 
/**
 * Who wrote it.
 */
current_origin: string | null, 
/**
 * What the call would make it (`null` for a delete).
 */
proposed: unknown, };

export type ApprovalList = { 
/**
 * The project.
 */
project: string, 
/**
 * The waiting calls, oldest first.
 */
approvals: Array<ApprovalCard>, 
/**
 * The paused runs.
 */
pausedRuns: Array<PausedRunInfo>, };

export type ApprovalPolicy = "permissive" | "standard" | "strict";

export type ApprovalResult = { 
/**
 * The decided call.
 */
callId: string, 
/**
 * The writer's decision.
 */
decision: Decision, 
/**
 * The call's result status: `denied` after a rejection, `pending` if an edited call
 * needs another approval.
 */
status: 'success' | 'error' | 'aborted' | 'denied' | 'pending', 
/**
 * The call's tool result.
 */
result: ToolCallResult, 
/**
 * The resumed run's result, once it ended or paused again; `null` when no run resumed.
 */
run: ResumedRun | null, };

export type ApprovalsChangedEvent = { 
/**
 * The project.
 */
project: string, 
/**
 * The new card, or `null` when a call was decided (or cancelled).
 */
requested: ApprovalCard | null, };

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

export type BibleChangedEvent = { 
/**
 * The project.
 */
project: string, 
/**
 * The entity's kind.
 */
kind: BibleKind, 
/**
 * The entity's id.
 */
id: string, 
/**
 * Who changed it.
 */
origin: Origin, 
/**
 * The entity, flat (its fields and their origins); `null` once deleted.
 */
entity: BibleEntity | null, };

export type BibleDeleteParams = { kind: string, id: string, baseVersion?: number, };

export type BibleDeleted = { 
/**
 * The deleted entity.
 */
deleted: BibleEntity, };

export type BibleEntity<K extends BibleKind = BibleKind> = K extends BibleKind
  ? { kind: K, id: string, version: number } & BibleFields[K] & { [F in keyof BibleFields[K] as `${F & string}_origin`]: FieldOrigin | null }
  : never;

export type BibleFields = {
  scene: { chapter: string | null, span: { start: number, end: number } | null, summary: string | null, tags: Array<string> | null, primary_characters: Array<string> | null, locations: Array<string> | null },
  character: { name_src: string | null, name_tgt: string | null, aliases: Array<string> | null, pronouns: string | null, notes: string | null },
  location: { name_src: string | null, name_tgt: string | null, description: string | null },
  route: { synopsis: string | null, primary_characters: Array<string> | null, scene_ids: Array<string> | null },
  glossary: { term_src: string | null, term_tgt: string | null, notes: string | null },
  styleguide: { markdown: string | null },
  ui_settings: { line_length_limit: number | null, lines_per_box: number | null, notes: string | null },
  contextdoc: { title: string | null, text: string | null },
  translation: { scene: string | null, line: number | null, source: string | null, target: string | null },
  qa: { check: string | null, scene: string | null, line: number | null, severity: string | null, message: string | null },
  campaign: { name: string | null, premise: string | null, outline: string | null, location: string | null, party: Array<PartyMember> | null, inventory: Array<string> | null, quests: Array<Quest> | null, time: string | null },
};

export type BibleKind = "scene" | "character" | "location" | "route" | "glossary" | "styleguide" | "ui_settings" | "contextdoc" | "translation" | "qa" | "campaign";

export type BibleListParams = { 
/**
 * Only this kind.
 */
kind?: string, };

export type BibleListing = { 
/**
 * The open project.
 */
project: string, 
/**
 * Each kind's entities (every kind, or the one asked for), by kind.
 */
kinds: { [K in BibleKind]?: Array<BibleEntity<K>> }, };

export type BibleRecord = { 
/**
 * Kind.
 */
kind: BibleKind, 
/**
 * Id (unique within its kind).
 */
id: string, 
/**
 * Bumped by every change.
 */
version: number, 
/**
 * Field values.
 */
fields: { [key in string]: JsonValue }, 
/**
 * Field origins (a few per entity, saved as a JSON object).
 */
origins: { [key in string]: string }, 
/**
 * The last write of each field.
 */
stamps: { [key in string]: FieldStamp }, };

export type BibleRevision = { 
/**
 * The field.
 */
field: string, 
/**
 * The value written (`null`: cleared).
 */
value: unknown, 
/**
 * Who wrote it (`human`, `agent:<name>:<date>`, `import`), on whichever device.
 */
origin: string, 
/**
 * When (ms).
 */
at: number, 
/**
 * Whether it is the field's value now.
 */
current: boolean, };

export type BibleRevisions = { 
/**
 * The entity's kind.
 */
kind: BibleKind, 
/**
 * The entity's id.
 */
id: string, 
/**
 * Its fields' writes, newest first: restore one with `bible_save`.
 */
revisions: Array<BibleRevision>, };

export type BibleRevisionsParams = { kind: string, id: string, 
/**
 * Only this field.
 */
field?: string, };

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

export type ChapterChange = { 
/**
 * The chapter's version after it.
 */
version: number, 
/**
 * The change.
 */
changeset: Array<ChangeOp>, 
/**
 * Who made it (`user`, `import`, `agent:<name>`).
 */
origin: string, 
/**
 * The page's label for it, when the page sent one.
 */
tag?: string, };

export type ChapterEffect = { 
/**
 * Chapter id.
 */
chapter: string, 
/**
 * Its 0-based place in the chapter list (where it was added, or where it was).
 */
index: number, 
/**
 * Its title.
 */
title: string, 
/**
 * True: the entry added it; false: the entry took it out.
 */
added: boolean, };

export type ChapterInProject = { 
/**
 * The project, after the change.
 */
project: ProjectSummary, 
/**
 * Its id.
 */
id: string, 
/**
 * Its title.
 */
title: string, 
/**
 * Its position, from 1.
 */
number: number, 
/**
 * Its version (one more per change).
 */
version: number, 
/**
 * Its length in chars.
 */
length: number, };

export type ChapterRecord = { 
/**
 * Chapter id.
 */
id: string, 
/**
 * Its project.
 */
project: string, 
/**
 * Title.
 */
title: string, 
/**
 * Text.
 */
text: string, 
/**
 * Version.
 */
version: number, };

export type ChapterRef = string | number;

export type ChapterRemoved = { 
/**
 * Its id.
 */
id: string, 
/**
 * Its title.
 */
title: string, 
/**
 * The position it had, from 1.
 */
number: number, 
/**
 * Its whole text.
 */
text: string, };

export type ChapterSummary = { 
/**
 * Its id.
 */
id: string, 
/**
 * Its title.
 */
title: string, 
/**
 * Its position, from 1.
 */
number: number, 
/**
 * Its version (one more per change).
 */
version: number, 
/**
 * Its length in chars.
 */
length: number, };

export type ChapterText = { 
/**
 * Its id.
 */
id: string, 
/**
 * Its title.
 */
title: string, 
/**
 * Its position, from 1.
 */
number: number, 
/**
 * Its whole text.
 */
text: string, 
/**
 * Its version.
 */
version: number, 
/**
 * With `since`: the changes after that version, oldest first; `null` when the change
 * feed no longer holds all of them.
 */
changes?: Array<ChapterChange> | null, };

export type CheckpointResult = { 
/**
 * The ids of the chapters whose whole text was written.
 */
checkpointed: Array<string>, 
/**
 * `false` after a failed save (also a `storage_error` event; it stays pending).
 */
saved: boolean, };

export type CreateProjectParams = { name: string, chapters?: Array<NewChapter>, };

export type CustomAgent = { name?: string, systemPrompt?: string, };

export type DebugFailSavesParams = { count: number, };

export type DebugPanicParams = { message?: string, };

export type Decision = "approve" | "reject";

export type DefineAgentParams = { agent: JsonValue, };

export type Delegation = "route" | "assign_task";

export type DeleteAgentParams = { name: string, };

export type DeleteChapterParams = { chapter: ChapterRef, };

export type DeleteLocalModel = { 
/**
 * The model's URL, as `local_models` lists it.
 */
url: string, };

export type Deleted = { 
/**
 * The id (or name) of what was deleted.
 */
deleted: string, };

export type DeletedChapter = { 
/**
 * The chapter as it was.
 */
deleted: ChapterRemoved, 
/**
 * What the history forgot with it.
 */
history: HistoryForgot, 
/**
 * The project, after the change.
 */
project: ProjectSummary, };

export type DeletedNote = Omit<MemoryNote, 'previous' | 'deletedMs' | 'deletedBy'> & { deletedMs: number, deletedBy: Origin, restorableUntilMs: number };

export type Done = Record<symbol, never>;

export type EditEvent = { 
/**
 * The chapter.
 */
chapter: string, 
/**
 * The change.
 */
changeset: Array<ChangeOp>, 
/**
 * The chapter's version after it.
 */
version: number, 
/**
 * Who made it.
 */
origin: Origin, 
/**
 * The tag the writer's change was sent with.
 */
tag?: string, };

export type EditorBlock = { 
/**
 * The block's text.
 */
block: string, };

export type EditorContextParams = { 
/**
 * The toolset the block names (default `all`).
 */
toolset?: string, 
/**
 * Tokens at most (default: what a run's prompt gives it).
 */
budget?: number, };

export type EntityRef = { 
/**
 * Its id.
 */
id: string, 
/**
 * Its name.
 */
name: string, 
/**
 * Its type (`character`, `item`, `rule`, …).
 */
type: string, };

export type EntityType = "character" | "item" | "rule" | "location" | "plot_thread";

export type ExecuteParams = { tool: string, args?: JsonValue, origin?: string, callId?: string, };

export type ExportDocument = { 
/**
 * Always [`EXPORT_FORMAT`].
 */
format: 'draftsmith-project', 
/**
 * [`EXPORT_VERSION`].
 */
version: number, 
/**
 * When it was exported (ms).
 */
exportedMs: number, 
/**
 * The project record.
 */
project: ProjectRecord, 
/**
 * Chapters, in reading order.
 */
chapters: Array<ChapterRecord>, 
/**
 * Undo entries, oldest first.
 */
history: Array<HistoryRecord>, 
/**
 * The rest of the history.
 */
historyState: HistoryState, 
/**
 * The project's memory notes (global notes are not part of a project).
 */
notes: Array<MemoryNote>, 
/**
 * The project's goals.
 */
goals: Array<Goal>, 
/**
 * The project's watched entities.
 */
watched: Array<WatchedEntity>, 
/**
 * The story bible's entities, with their provenance and versions.
 */
bible: Array<BibleRecord>, 
/**
 * The free files of the `data/` view (`plans/`, `notes/`), by path.
 */
files: Array<FreeFile>, 
/**
 * The agents the app defined for the project, as `define_agent` takes them (checked by
 * the core on import).
 */
agents?: Array<JsonValue>, 
/**
 * The project's research notes (web pages read for it; checked by the core on import).
 */
research?: Array<ResearchRecord>, };

export type FailingSaves = { 
/**
 * The number of saves that fail (0: none).
 */
failing: number, };

export type FieldOrigin = 'human' | 'import' | `agent:${string}`;

export type FieldStamp = { 
/**
 * Time (ms).
 */
at: number, 
/**
 * Origin string.
 */
origin: string, 
/**
 * The entity's version that write made (0: a record from before field versions), so
 * an approval can tell whether the fields it is about changed since.
 */
version?: number, };

export type FileEffect = { 
/**
 * Its path in the `data/` view (such as `plans/ch3.md`).
 */
path: string, 
/**
 * The file before the change (`None`: it did not exist).
 */
before: FileState | null, 
/**
 * The file after the change (`None`: it was removed).
 */
after: FileState | null, };

export type FileState = { 
/**
 * Its text.
 */
content: string, 
/**
 * When it was written (ms).
 */
modTime: number, 
/**
 * Who wrote it: `human`, `agent:<name>` or `import`.
 */
origin: string, };

export type FilesChangedEvent = { 
/**
 * The project.
 */
project: string, 
/**
 * The file's path.
 */
path: string, 
/**
 * Who changed it: `human`, `agent:<name>` or `import`.
 */
origin: string, 
/**
 * Its size in bytes (absent once deleted).
 */
size?: number, 
/**
 * When it was last written (ms since the epoch; absent once deleted).
 */
mod_time?: number, 
/**
 * True when it was deleted.
 */
deleted?: boolean, };

export type FreeFile = { 
/**
 * Its path relative to `data/` (such as `plans/outline.md`).
 */
path: string, 
/**
 * Its text.
 */
content: string, 
/**
 * When it was last written (ms).
 */
modTime: number, 
/**
 * Who wrote it last: `human`, `agent:<name>` or `import`.
 */
origin: string, };

export type GetChapterParams = { chapter?: string, since?: number, };

export type Goal = { 
/**
 * Unique id.
 */
id: string, 
/**
 * The project it belongs to.
 */
project: string, 
/**
 * A short title.
 */
title: string, 
/**
 * More detail (may be empty).
 */
description: string, 
/**
 * Where it stands.
 */
status: GoalStatus, 
/**
 * Percent done, 0 to 100.
 */
progress: number, 
/**
 * When it was created.
 */
createdMs: number, 
/**
 * When it last changed.
 */
updatedMs: number, };

export type GoalStatus = "active" | "completed" | "paused" | "abandoned";

export type Hello = { 
/**
 * Always `draftsmith`.
 */
name: 'draftsmith', 
/**
 * The crate's version.
 */
version: string, 
/**
 * The build profile.
 */
profile: Profile, 
/**
 * The protocol's version.
 */
protocol: number, 
/**
 * The request types the core serves.
 */
capabilities: Array<string>, };

export type Highlight = { 
/**
 * Chapter id.
 */
chapter: string, 
/**
 * Char range start.
 */
start: number, 
/**
 * Char range end.
 */
end: number, 
/**
 * `warning`, `suggestion` or `info`.
 */
style: string, 
/**
 * Optional note shown with the highlight.
 */
note?: string, };

export type HistoryChangedEvent = { 
/**
 * Whether there is a group to undo.
 */
canUndo: boolean, 
/**
 * Whether there is a group to redo.
 */
canRedo: boolean, 
/**
 * How many groups can be undone.
 */
groups: number, };

export type HistoryEffect = { 
/**
 * Chapter id.
 */
chapter: string, 
/**
 * The change as applied.
 */
change: Array<ChangeOp>, 
/**
 * The change that undoes it (applies to the text right after `change`).
 */
inverse: Array<ChangeOp>, };

export type HistoryEntry = { 
/**
 * Its id.
 */
id: string, 
/**
 * The group it is undone with.
 */
group: string, 
/**
 * Who made it.
 */
origin: Origin, 
/**
 * What it did, for a person.
 */
description: string, 
/**
 * When (ms since the epoch).
 */
timestamp: number, 
/**
 * The tool call that made it.
 */
toolCallId: string | null, 
/**
 * The command (tool) that made it.
 */
command: string | null, 
/**
 * An edit, a revert or a restore.
 */
kind: HistoryEntryKind, 
/**
 * Whether a later entry reverted it.
 */
reverted: boolean, 
/**
 * The free files it wrote (paths).
 */
files: Array<string>, };

export type HistoryEntryKind = { "type": "edit" } | { "type": "revert", 
/**
 * Ids of the reverted entries.
 */
targets: Array<string>, } | { "type": "restore", 
/**
 * The revert entry's id.
 */
revert: string, 
/**
 * Ids of the restored entries.
 */
targets: Array<string>, };

export type HistoryForgot = { 
/**
 * Entries that only changed that chapter, dropped.
 */
dropped: number, 
/**
 * Entries that also changed others, trimmed to those.
 */
trimmed: number, 
/**
 * Whether there is anything to undo.
 */
canUndo: boolean, 
/**
 * Whether there is anything to redo.
 */
canRedo: boolean, };

export type HistoryLimits = { 
/**
 * Most undo groups kept.
 */
max_groups: number, 
/**
 * Most bytes (estimated) kept across undo and redo.
 */
max_bytes: number, };

export type HistoryList = { 
/**
 * The entries that can be undone, newest first.
 */
entries: Array<HistoryEntry>, 
/**
 * The entries that can be redone, the next one first.
 */
redo: Array<HistoryEntry>, 
/**
 * Whether there is anything to undo.
 */
canUndo: boolean, 
/**
 * Whether there is anything to redo.
 */
canRedo: boolean, 
/**
 * The history's size in memory, in bytes.
 */
memoryBytes: number, };

export type HistoryMove = { 
/**
 * The chapter changes applied.
 */
applied: Array<AppliedChange>, 
/**
 * The free files put back.
 */
files: Array<string>, 
/**
 * The free files a later write changed, kept as it made them.
 */
filesKept: Array<string>, 
/**
 * Why files were kept.
 */
note?: string, 
/**
 * Whether there is anything to undo.
 */
canUndo: boolean, 
/**
 * Whether there is anything to redo.
 */
canRedo: boolean, };

export type HistoryRecord = { 
/**
 * Entry id.
 */
id: string, 
/**
 * Group id: entries of one group are undone together.
 */
group: string, 
/**
 * Who made it.
 */
origin: Origin, 
/**
 * What it did, for people.
 */
description: string, 
/**
 * When (ms since the epoch).
 */
timestamp_ms: number, 
/**
 * The tool call that produced it, if any.
 */
tool_call_id: string | null, 
/**
 * The command (tool) name, if any.
 */
command: string | null, 
/**
 * Edit, revert or restore.
 */
kind: HistoryEntryKind, 
/**
 * Its text changes, in the order applied.
 */
effects: Array<HistoryEffect>, 
/**
 * Its free-file changes, in the order applied (absent in entries stored before free files
 * were undoable).
 */
files?: Array<FileEffect>, 
/**
 * The chapters it added or took out (see [`ChapterEffect`]).
 */
chapters?: Array<ChapterEffect>, 
/**
 * The revert entry that currently takes this entry back, if any.
 */
reverted_by: string | null, 
/**
 * Position in the undo stack (increasing), so stored entries load in order.
 */
seq: number, };

export type HistoryState = { 
/**
 * Runs that can be redone.
 */
redo: Array<Array<HistoryRecord>>, 
/**
 * The open group and its origin.
 */
open: [string, Origin] | null, 
/**
 * More origins whose entries join the open group.
 */
openMembers?: Array<Origin>, 
/**
 * Whether the newest group accepts more typing.
 */
sealed: boolean, 
/**
 * Bounds.
 */
limits: HistoryLimits, 
/**
 * The next entry's `seq`.
 */
nextSeq: number, };

export type IdleReason = "disabled" | "no_model" | "not_idle" | "budget_spent" | "nothing_new" | "busy" | "failed";

export type IdleResult = { 
/**
 * Whether it thought (called the model).
 */
thought: boolean, 
/**
 * Why it did not think.
 */
reason?: IdleReason, 
/**
 * With `not_idle`: how much longer the core waits for quiet, in ms.
 */
waitMs?: number, 
/**
 * With `failed`: what went wrong.
 */
message?: string, 
/**
 * The suggestions it added.
 */
suggestions: Array<Suggestion>, 
/**
 * The thinker's model calls today, across projects.
 */
callsToday: number, 
/**
 * The most it may make a day.
 */
maxCallsPerDay: number, };

export type IdleThinking = { 
/**
 * Whether it may think at all (it also needs a model).
 */
enabled: boolean, 
/**
 * How long the writer must have been idle (no typing), in ms.
 */
afterMs: number, 
/**
 * Most model calls a day (across projects); 0 stops it.
 */
maxCallsPerDay: number, };

export type IdleThinkingPatch = { enabled?: boolean, afterMs?: number, maxCallsPerDay?: number, };

export type ImportProjectParams = { document: JsonValue, };

export type JobFinishedEvent = { 
/**
 * The project.
 */
project: string, 
/**
 * The job (without its units).
 */
job: JobView, };

export type JobKind = "pipeline" | "run" | "research";

export type JobList = { 
/**
 * The jobs (without their units).
 */
jobs: Array<JobView>, };

export type JobPhase = "context" | "translation" | "editing";

export type JobProgress = { 
/**
 * Units done.
 */
done: number, 
/**
 * Units failed.
 */
failed: number, 
/**
 * Units waiting for the writer's approval.
 */
waiting: number, 
/**
 * Every unit.
 */
total: number, 
/**
 * The ids of the units running now.
 */
current: Array<string>, };

export type JobProgressEvent = { 
/**
 * The project.
 */
project: string, 
/**
 * The job (without its units).
 */
job: JobView, 
/**
 * The unit that changed.
 */
unit?: UnitView, 
/**
 * True when a new worker took up an unfinished job of the project it opened.
 */
resumed?: boolean, };

export type JobRefParams = { job: string, };

export type JobState = "queued" | "running" | "waiting_approval" | "paused" | "done" | "failed" | "cancelled";

export type JobUnitDetail = { 
/**
 * The unit.
 */
unit: UnitView, 
/**
 * Its run's messages (saved when the unit ends or waits for approval; empty before).
 */
transcript: Array<TranscriptMessage>, };

export type JobUnitOrigin = { 
/**
 * The job.
 */
job?: string, 
/**
 * The unit.
 */
unit?: string, };

export type JobUnitParams = { job: string, unit: string, };

export type JobView = { 
/**
 * Its id.
 */
id: string, 
/**
 * Its project.
 */
project: string, 
/**
 * What it does.
 */
kind: JobKind, 
/**
 * Its parameters as the core keeps them (every default filled in; no `kind`, which is
 * the job's): a pipeline's, a background run's or a research job's.
 */
params: { phases: Array<JobPhase>, scope: 'all' | { scenes: Array<string> } | { route: string }, allowOverwrite: boolean, concurrency: number } | { prompt: string, agent?: string | { name?: string, systemPrompt?: string }, preset?: string } | { urls: Array<string>, concurrency: number }, 
/**
 * Its state.
 */
state: JobState, 
/**
 * When it was created (ms since the epoch).
 */
createdMs: number, 
/**
 * When it last changed (ms since the epoch).
 */
updatedMs: number, 
/**
 * Why it failed.
 */
error?: string, 
/**
 * Its progress over its units.
 */
progress: JobProgress, 
/**
 * Each phase's units done out of its total, in order (one phase named `run` for a
 * background run, `research` for a research job).
 */
phases: Array<PhaseProgress>, 
/**
 * Its units.
 */
units?: Array<UnitView>, };

export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]: JsonValue } | null;

export type ListApprovalsParams = { 
/**
 * Only this run's.
 */
runId?: string, };

export type ListToolsParams = { format?: string, toolset?: string, };

export type LocalModelDeleted = { 
/**
 * `false` when the browser kept no model of that URL.
 */
deleted: boolean, };

export type LocalModelLoaded = { 
/**
 * Its URL, absolute.
 */
url: string, 
/**
 * Its size in bytes.
 */
size: number, 
/**
 * The context window it was loaded with.
 */
contextSize: number, 
/**
 * The CPU threads it runs on.
 */
threads: number, 
/**
 * Whether it runs on several threads (the page is cross-origin isolated).
 */
multiThread: boolean, 
/**
 * Whether its chat template takes tools.
 */
toolTemplate: boolean, };

export type LocalModelView = { 
/**
 * The URL it was downloaded from.
 */
url: string, 
/**
 * Its size in bytes.
 */
size: number, 
/**
 * Whether it is the model loaded now.
 */
loaded: boolean, };

export type LocalModels = { 
/**
 * Whether this core can run models in the browser at all.
 */
available: boolean, 
/**
 * The kept files.
 */
models: Array<LocalModelView>, 
/**
 * Their sizes together, in bytes.
 */
total: number, };

export type Markdown = { 
/**
 * The Markdown text.
 */
markdown: string, };

export type McpConnectParams = { 
/**
 * The server's name.
 */
name: string, };

export type McpServerPatch = { 
/**
 * Its name in tool names (`mcp__<name>__<tool>`): letters, digits, - and _.
 */
name: string, 
/**
 * Its Streamable HTTP endpoint (http:// or https://).
 */
url: string, 
/**
 * Request headers (such as `Authorization`); left out, a server of the same name and
 * URL origin keeps the ones it has.
 */
headers?: Record<string, string>, };

export type McpServerSettings = { 
/**
 * Its name in tool names (`mcp__<name>__<tool>`).
 */
name: string, 
/**
 * Its Streamable HTTP endpoint.
 */
url: string, 
/**
 * The names of the headers sent with every request (their values are secrets, kept apart).
 */
headerNames: Array<string>, };

export type McpServerStatus = "connecting" | "ready" | "failed";

export type McpServerView = { 
/**
 * Its name.
 */
name: string, 
/**
 * Its endpoint.
 */
url: string, 
/**
 * Its connection.
 */
status: McpServerStatus, 
/**
 * Why it failed.
 */
error?: string, 
/**
 * Its tools.
 */
tools: Array<McpToolView>, };

export type McpServers = { 
/**
 * The servers, by name.
 */
servers: Array<McpServerView>, 
/**
 * Whether this core can reach MCP servers at all (the worker's client).
 */
available: boolean, };

export type McpToolView = { 
/**
 * Its name in the catalog (`mcp__<server>__<tool>`).
 */
name: string, 
/**
 * Its name on the server.
 */
tool: string, 
/**
 * What it does.
 */
description: string, };

export type MemoryBlock = { 
/**
 * The block's text.
 */
block: string, };

export type MemoryChangedEvent = { 
/**
 * The project.
 */
project: string, 
/**
 * The tool whose call changed it.
 */
tool?: string, 
/**
 * How many notes the writer wrote.
 */
written?: number, 
/**
 * The deleted note that was restored.
 */
restored?: string, 
/**
 * The bedside note was updated by itself.
 */
bedside?: boolean, 
/**
 * The kind of finding the monitor wrote an observation note about.
 */
monitor?: string, 
/**
 * The suggestion whose acceptance wrote a goal or a note.
 */
suggestion?: string, };

export type MemoryContextParams = { request?: string, budget?: number, };

export type MemoryNote = { 
/**
 * Unique id.
 */
id: string, 
/**
 * The project it belongs to; `None` for a global note.
 */
project: string | null, 
/**
 * The content (trimmed, 1 to [`MAX_NOTE_CHARS`] characters).
 */
text: string, 
/**
 * What kind of note.
 */
noteType: NoteType, 
/**
 * Where it is visible.
 */
scope: NoteScope, 
/**
 * Normalized tags: trimmed, lowercase, unique.
 */
tags: Array<string>, 
/**
 * 1 (trivia) to 5 (essential).
 */
importance: number, 
/**
 * When it was written.
 */
createdMs: number, 
/**
 * When it last changed.
 */
updatedMs: number, 
/**
 * 1 when written, one more per change.
 */
version: number, 
/**
 * Earlier texts, oldest first. Kept for the bedside note (at most
 * [`MAX_BEDSIDE_VERSIONS`]); other notes keep only their current text.
 */
previous: Array<NoteVersion>, 
/**
 * Who wrote it: the writer (`user`), an agent (`agent:<name>`) or an `import`. A stored
 * note from before authors were recorded loads as the writer's (the protected case).
 */
author: Origin, 
/**
 * When it was deleted (ms); `None` while it is live. A deleted note is in the trash: it
 * shows nowhere but can be restored for [`TRASH_RETENTION_MS`].
 */
deletedMs?: number | null, 
/**
 * Who deleted it (with `deleted_ms`).
 */
deletedBy?: Origin | null, };

export type MemoryRestoreParams = { 
/**
 * The deleted note.
 */
id: string, };

export type MemoryTrash = { 
/**
 * The open project.
 */
project: string, 
/**
 * Its deleted notes and the global ones, most recently deleted first.
 */
notes: Array<DeletedNote>, };

export type MemoryView = { 
/**
 * The bedside note.
 */
bedside: MemoryNote | null, 
/**
 * The project's goals.
 */
goals: Array<Goal>, 
/**
 * The entities the monitor watches.
 */
watched: Array<WatchedEntity>, 
/**
 * The notes visible from the project, newest first (without the bedside note).
 */
notes: Array<MemoryNote>, };

export type ModelPhase = "downloading" | "loading" | "ready" | "failed";

export type ModelProgressEvent = { 
/**
 * The model's URL.
 */
url: string, 
/**
 * Where it stands.
 */
phase: ModelPhase, 
/**
 * Bytes downloaded (the whole size once it is here).
 */
loaded: number, 
/**
 * Bytes in all (0 while unknown).
 */
total: number, 
/**
 * Why it failed.
 */
error?: string, };

export type MoveChapterParams = { chapter: ChapterRef, to: number, };

export type Never = never;

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

export type NoteRestored = { 
/**
 * The note as it is now (live again: no `deletedMs`, `restorableUntilMs` null).
 */
note: Omit<MemoryNote, 'previous'> & { restorableUntilMs: null }, };

export type NoteScope = "project" | "global";

export type NoteType = "fact" | "observation" | "plan" | "preference" | "issue";

export type NoteVersion = { 
/**
 * The text as it was.
 */
text: string, 
/**
 * When that text was written.
 */
updatedMs: number, 
/**
 * Its version number.
 */
version: number, };

export type OpenProjectParams = { id: string, };

export type Origin = 'user' | 'import' | `agent:${string}` | `remote:${string}`;

export type OutputParams = { 
/**
 * A JSON Schema of `type: "object"`.
 */
schema: Record<string, unknown>, 
/**
 * Its name (letters, digits, `_`, `-`; default `final_answer`).
 */
name?: string, };

export type PartyMember = { 
/**
 * The character's name (as in the story bible's characters, if recorded there).
 */
name: string, 
/**
 * Current hit points (0: down).
 */
hp: number, 
/**
 * Maximum hit points.
 */
max_hp: number, 
/**
 * Conditions such as poisoned or prone.
 */
conditions?: Array<string>, };

export type PausedRunInfo = { 
/**
 * The run's id.
 */
run: string, 
/**
 * How many calls wait for the writer.
 */
pending: number, };

export type PhaseProgress = { 
/**
 * The phase, or `run` (a background run) or `research` (a research job).
 */
name: JobPhase | 'run' | 'research', 
/**
 * Its units done.
 */
done: number, 
/**
 * Its units.
 */
total: number, };

export type Preset = { 
/**
 * Name (`quill`, `dungeon_master`, `textcraft`, `rentl`).
 */
name: string, 
/**
 * What it is.
 */
description: string, 
/**
 * The agent a run starts with; none for a preset whose agents only run in pipelines.
 */
entry?: string, 
/**
 * Its agents.
 */
agents: Array<string>, 
/**
 * The pipelines it exposes, started with `start_job {kind: "pipeline", phases}`
 * (`context`, `translation`, `editing`).
 */
pipelines?: Array<string>, };

export type Priority = "low" | "medium" | "high";

export type Profile = "debug" | "release";

export type ProgressEvent = { 
/**
 * The project.
 */
project: string, 
/**
 * The work: `open_project`, or the tool (`run_analysis`).
 */
task: string, 
/**
 * Steps done.
 */
done: number, 
/**
 * Steps in all.
 */
total: number, 
/**
 * The step under way (`done` at the end), such as `chapters` or `characters`.
 */
stage: string, };

export type ProjectDeletedEvent = { 
/**
 * The project.
 */
id: string, };

export type ProjectList = { 
/**
 * The projects.
 */
projects: Array<ProjectListing>, 
/**
 * This client's open project.
 */
current: string | null, };

export type ProjectListing = { 
/**
 * Its id.
 */
id: string, 
/**
 * Its name.
 */
name: string, 
/**
 * How many chapters it has.
 */
chapters: number, 
/**
 * When it was created (ms since the epoch).
 */
createdMs: number, 
/**
 * When it last changed (ms since the epoch).
 */
updatedMs: number, };

export type ProjectRecord = { 
/**
 * Project id.
 */
id: string, 
/**
 * Name.
 */
name: string, 
/**
 * Creation time (ms).
 */
createdMs: number, 
/**
 * Last change (ms).
 */
updatedMs: number, 
/**
 * Chapter ids in reading order.
 */
chapters: Array<string>, 
/**
 * Editor UI state.
 */
ui: UiState, };

export type ProjectRefParams = { id?: string, };

export type ProjectReloadedEvent = { 
/**
 * The project.
 */
project: string, 
/**
 * True when this tab's unsaved changes were rebased over the stored project.
 */
rebased?: boolean, 
/**
 * What the rebase kept as copies (it could not merge them).
 */
copies?: Array<string>, 
/**
 * What the rebase overrode in the stored project.
 */
overridden?: Array<string>, 
/**
 * Its id.
 */
id: string, 
/**
 * Its name.
 */
name: string, 
/**
 * Its chapters, in order.
 */
chapters: Array<ChapterSummary>, 
/**
 * The editor's state.
 */
ui: UiState, 
/**
 * What was damaged in its stored data and could not be read (only when something was).
 */
problems?: Array<string>, };

export type ProjectSummary = { 
/**
 * Its id.
 */
id: string, 
/**
 * Its name.
 */
name: string, 
/**
 * Its chapters, in order.
 */
chapters: Array<ChapterSummary>, 
/**
 * The editor's state.
 */
ui: UiState, 
/**
 * What was damaged in its stored data and could not be read (only when something was).
 */
problems?: Array<string>, };

export type ProjectsChangedEvent = { 
/**
 * The open project (absent when another tab without a writer lock relayed it).
 */
current?: string | null, };

export type ProviderKind = "openai" | "anthropic" | "gemini" | "local";

export type Quest = { 
/**
 * The quest's title.
 */
title: string, 
/**
 * Where it stands (default active).
 */
status: QuestStatus, 
/**
 * What is known about it.
 */
notes?: string, };

export type QuestStatus = "active" | "done" | "failed";

export type Reloaded = { 
/**
 * Read again from the store (or found deleted there).
 */
reloaded: boolean, 
/**
 * Not read again: this core has work that could not be saved first.
 */
unsaved?: boolean, };

export type RenameChapterParams = { chapter: ChapterRef, title: string, };

export type RenameProjectParams = { id?: string, name: string, };

export type ResearchAction = "added" | "updated" | "deleted";

export type ResearchChangedEvent = { 
/**
 * The project.
 */
project: string, 
/**
 * What happened.
 */
action: ResearchAction, 
/**
 * The note (a preview of its text).
 */
note: ResearchNote, 
/**
 * Notes dropped to stay within the caps (on `added` and `updated`).
 */
evicted?: Array<string>, };

export type ResearchDeleteParams = { id: string, };

export type ResearchDeleted = { 
/**
 * Its id.
 */
deleted: string, };

export type ResearchLimits = { 
/**
 * Most notes.
 */
notes: number, 
/**
 * Most bytes of text.
 */
bytes: number, };

export type ResearchListing = { 
/**
 * The notes (previews, not whole texts).
 */
notes: Array<ResearchNote>, 
/**
 * How many notes there are.
 */
count: number, 
/**
 * How many bytes of text they keep.
 */
bytes: number, 
/**
 * The caps: beyond them the notes read longest ago go first.
 */
limits: ResearchLimits, };

export type ResearchNote = { 
/**
 * Its id.
 */
id: string, 
/**
 * The address as asked for.
 */
url: string, 
/**
 * The normalised address: one note per normalised address.
 */
normalized: string, 
/**
 * The page's title.
 */
title: string, 
/**
 * The first 500 characters of its text.
 */
preview: string, 
/**
 * How many characters its text has.
 */
chars: number, 
/**
 * The page's own description, if it has one.
 */
description?: string, 
/**
 * When it was (last) fetched (ms since the epoch).
 */
fetchedMs: number, 
/**
 * When the note was first made (ms since the epoch).
 */
createdMs: number, 
/**
 * `agent:<name>` or `human` (the writer).
 */
askedBy: string, 
/**
 * Who asked, as the page marks it.
 */
source: 'agent' | 'human', 
/**
 * How many times the page was read.
 */
fetches: number, };

export type ResearchRecord = { 
/**
 * Its id.
 */
id: string, 
/**
 * The project.
 */
project: string, 
/**
 * The address as it was asked for.
 */
url: string, 
/**
 * The normalised address (one note per normalised address).
 */
normalized: string, 
/**
 * The page's title.
 */
title: string, 
/**
 * Its readable main text.
 */
text: string, 
/**
 * The page's own description, if it has one.
 */
description?: string, 
/**
 * When it was (last) fetched, ms.
 */
fetchedMs: number, 
/**
 * When the note was first made, ms.
 */
createdMs: number, 
/**
 * Who asked: `agent:<name>` or `human` (the writer).
 */
askedBy: string, 
/**
 * How many times it was fetched.
 */
fetches: number, };

export type ResultMeta = { execution_time_ms: number, 
/**
 * Seconds.
 */
execution_time?: number, command_id?: string, bytes_written?: number, };

export type ResumedRun = RunResult | { 
/**
 * The run's id.
 */
run: string, 
/**
 * `paused`.
 */
status: RunStatus, };

export type RunEvent = { 
/**
 * The run's id (it wins over a `run` of the event's own fields, which is the same).
 */
run: string, } & (AgentLoopEvent | RunProgress) & { 
/**
 * The agent.
 */
agent?: string, 
/**
 * Agent names from the root to this one, joined by ` › `.
 */
path?: string, 
/**
 * The sub-agent's session.
 */
session?: string, 
/**
 * The job.
 */
job?: string, 
/**
 * The unit.
 */
unit?: string, };

export type RunFailure = RunResult | { 
/**
 * `failed`.
 */
status: 'failed', 
/**
 * Why.
 */
message: string, };

export type RunMode = "text" | "voice";

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
preset?: string, toolset?: string, 
/**
 * `text` (the default) or `voice`: a voice run offers only the `voice_safe` tools
 * (nothing that waits on the network or on a model). `toolset` still picks the
 * assistant's tools.
 */
mode?: RunMode, maxSteps?: number, tokenBudget?: number, 
/**
 * Forget the earlier conversation first.
 */
newConversation?: boolean, 
/**
 * Whether the turn's first model call must call a tool: `auto`, `required`, or the name
 * of a tool of the run's toolbox (default: the agent's own choice).
 */
toolChoice?: string, 
/**
 * End with a structured answer: a JSON object valid against `schema`, in the result's
 * `output`. Tools may be called before it.
 */
output?: OutputParams, };

export type RunPaused = { 
/**
 * The run's id.
 */
run: string, 
/**
 * `paused`.
 */
status: 'paused', 
/**
 * The model's last text.
 */
text: string, 
/**
 * Model calls made.
 */
steps: number, 
/**
 * Tokens used.
 */
usage: Usage, 
/**
 * The calls waiting for approval.
 */
pending: Array<ApprovalCard>, };

export type RunProgress = { "type": "run_started" } & RunStarted | { "type": "run_finished" } & RunResult | { "type": "run_failed" } & RunFailure | { "type": "run_aborted" } & RunResult | { "type": "run_paused" } & RunPaused | { "type": "approval_requested" } & ApprovalCard | { "type": "run_resumed", 
/**
 * The project.
 */
project: string, 
/**
 * The agent the run started with.
 */
agent: string, 
/**
 * Model calls made so far.
 */
steps: number, } | { "type": "session_started" } & SessionOpened | { "type": "session_resumed" } & SessionOpened | { "type": "session_ended" } & SessionEnded | { "type": "session_paused" } & SessionPaused;

export type RunResult = { 
/**
 * The run's id.
 */
run: string, 
/**
 * How it ended, or `paused`.
 */
status: RunStatus, 
/**
 * The agent the run started with (not when paused).
 */
agent?: string, 
/**
 * The model's last text.
 */
text: string, 
/**
 * Model calls made.
 */
steps: number, 
/**
 * Tokens used.
 */
usage: Usage, 
/**
 * Why it failed (`failed` and `invalid_output` only).
 */
message?: string, 
/**
 * The structured answer, valid against the run's `output` schema (a run that asked
 * for one and finished).
 */
output: Record<string, unknown>, 
/**
 * The calls waiting for approval (`paused` only).
 */
pending?: Array<ApprovalCard>, 
/**
 * The agent's to-do list as the run ended (an agent with `planning` that wrote one).
 */
todos?: Array<TodoItem>, };

export type RunStarted = { 
/**
 * The project.
 */
project: string, 
/**
 * The agent it starts with.
 */
agent: string, 
/**
 * The preset the writer's `run` named (`null`: none; absent on a job's run).
 */
preset?: string | null, 
/**
 * The toolset of the agent the writer's `run` starts with (`null`: its own toolbox;
 * absent on a job's run).
 */
toolset?: string | null, 
/**
 * True on a job's run, which runs in the background.
 */
background?: true, 
/**
 * Most model calls.
 */
maxSteps: number, 
/**
 * The model.
 */
model: string, 
/**
 * The writer's request (or the job's prompt).
 */
prompt: string, };

export type RunStatus = "finished" | "max_steps" | "budget_spent" | "failed" | "invalid_output" | "aborted" | "paused";

export type RunsAborted = { 
/**
 * Their ids (a paused run's too).
 */
aborted: Array<string>, };

export type SavedEvent = { 
/**
 * The project.
 */
project: string, 
/**
 * When (ms since the epoch).
 */
at: number, 
/**
 * False when the save held nothing another tab shows (an audit record only).
 */
changed: boolean, };

export type SessionEnded = { 
/**
 * The sub-agent.
 */
agent: string, 
/**
 * Agent names from the root to it, joined by ` › `.
 */
path: string, 
/**
 * Its session.
 */
session: string, 
/**
 * The routing call.
 */
callId: string, 
/**
 * How it ended.
 */
status: SessionStatus, 
/**
 * Model calls it made.
 */
steps: number, };

export type SessionOpened = { 
/**
 * The sub-agent.
 */
agent: string, 
/**
 * Agent names from the root to it, joined by ` › `.
 */
path: string, 
/**
 * Its session.
 */
session: string, 
/**
 * The routing call.
 */
callId: string, 
/**
 * The calling agent.
 */
caller: string | null, };

export type SessionPaused = { 
/**
 * The sub-agent.
 */
agent: string, 
/**
 * Agent names from the root to it, joined by ` › `.
 */
path: string, 
/**
 * Its session.
 */
session: string, 
/**
 * The routing call.
 */
callId: string, 
/**
 * `paused`.
 */
status: 'paused', 
/**
 * Model calls it made.
 */
steps: number, };

export type SessionStatus = "finished" | "max_steps" | "budget_spent" | "failed" | "aborted";

export type Settings = { 
/**
 * Whether an API key is set (in the worker's memory).
 */
hasKey: boolean, 
/**
 * The names of the extra request headers.
 */
extraHeaderNames: Array<string>, 
/**
 * Whether provider, base URL and model are all set.
 */
configured: boolean, 
/**
 * The wire format; `None` until a model is configured.
 */
provider: ProviderKind | null, 
/**
 * The API root (see [`ProviderConfig::base_url`]).
 */
baseUrl: string, 
/**
 * The model name (for `local`: the URL of its `.gguf` file).
 */
model: string, 
/**
 * `local`: the context window in tokens (the runtime's default when unset).
 */
contextSize: number | null, 
/**
 * `local`: CPU threads (the runtime's default when unset).
 */
threads: number | null, 
/**
 * The model's context window in tokens (unset: the model's known one, or for `local`
 * its `contextSize`).
 */
contextWindow: number | null, 
/**
 * Keep runs within the context window: shorten old tool results and summarize older
 * turns when a request would not fit (off: a request that does not fit fails).
 */
compaction: boolean, 
/**
 * The share of the window the newest turns keep verbatim when older ones are
 * summarized (0.1 to 0.9).
 */
keepVerbatim: number, 
/**
 * Store the key and headers on this device.
 */
rememberKey: boolean, 
/**
 * The default toolset of runs.
 */
toolset: string, 
/**
 * The default most model calls per run.
 */
maxSteps: number, 
/**
 * The default token budget per run.
 */
tokenBudget: number | null, 
/**
 * Sampling temperature.
 */
temperature: number | null, 
/**
 * Output token limit per model call.
 */
maxTokens: number | null, 
/**
 * How long to wait for response headers (ms).
 */
connectTimeoutMs: number, 
/**
 * How long a stream may go without a byte (ms).
 */
idleTimeoutMs: number, 
/**
 * The window in which a run sends at most one `text_delta` event, gathering the pieces
 * the model streams meanwhile (ms, 0 to [`MAX_STREAM_BATCH_MS`]; 0: one event per
 * piece). About one animation frame by default: the page redraws no more often.
 */
streamBatchMs: number, 
/**
 * Approval policies by tool name (over the defaults of [`crate::policy`]; a sorted
 * vector, saved as a JSON object).
 */
approvalPolicies: { [key in string]: ApprovalPolicy }, 
/**
 * The recent-update window of conflict detection (ms).
 */
recentUpdateWindowMs: number, 
/**
 * A machine-translation endpoint (LibreTranslate-compatible `POST <url>` taking
 * `{q, source, target, format}` and answering `{translatedText}`), if any.
 */
mtlEndpoint: string, 
/**
 * Timeouts of asynchronous tools by tool name (ms); others get
 * [`DEFAULT_TOOL_TIMEOUT_MS`]. (Saved as a JSON object.)
 */
toolTimeoutsMs: { [key in string]: number }, 
/**
 * The fetch proxy of `research_url`: a URL template whose `{url}` is replaced by the
 * page's address, percent-encoded (`http://127.0.0.1:8080/proxy?url={url}`); empty:
 * pages are fetched directly (most sites then fail for want of CORS headers).
 */
researchProxy: string, 
/**
 * Let research reach loopback and private addresses.
 */
researchAllowPrivate: boolean, 
/**
 * Most `research_url` calls per run.
 */
researchPerRun: number, 
/**
 * The idle thinker: when it may think, and how many model calls a day it may make.
 */
idleThinking: IdleThinking, 
/**
 * Add a short model-written plan to the bedside note's automatic update (opt-in).
 */
bedsidePlan: boolean, 
/**
 * The MCP servers whose tools agents may call (their header values never serialized with
 * the rest, like the key).
 */
mcpServers: Array<McpServerSettings>, };

export type SettingsPatch = { 
/**
 * `openai`, `anthropic`, `gemini` or `local`; '' forgets it.
 */
provider?: string, baseUrl?: string, 
/**
 * The model name; for `local`, the URL of a `.gguf` file.
 */
model?: string, 
/**
 * `local`: 256 to 131 072 tokens; `null` goes back to the default.
 */
contextSize?: number | null, 
/**
 * `local`: 1 to 64; `null` goes back to the default.
 */
threads?: number | null, 
/**
 * 256 to 10 000 000 tokens; `null` goes back to the model's known window.
 */
contextWindow?: number | null, compaction?: boolean, 
/**
 * 0.1 to 0.9.
 */
keepVerbatim?: number, 
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
 * 0 to 1 000.
 */
streamBatchMs?: number, 
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
researchPerRun?: number, 
/**
 * MCP tool servers (replace the whole list).
 */
mcpServers?: Array<McpServerPatch>, };

export type StartJobParams = { kind: JobKind, phases?: Array<string>, scope?: JsonValue, allowOverwrite?: boolean, concurrency?: number, 
/**
 * For `kind: "run"`: the run's prompt, and its agent or preset.
 */
prompt?: string, agent?: JsonValue, preset?: string, 
/**
 * For `kind: "research"`: the pages to read.
 */
urls?: Array<string>, };

export type StorageErrorEvent = { 
/**
 * The project.
 */
project: string, 
/**
 * `quota_exceeded` when storage is full, else `storage_failed`.
 */
code: 'quota_exceeded' | 'storage_failed', 
/**
 * What failed, for the writer.
 */
message: string, };

export type StorageEstimate = { 
/**
 * Bytes used.
 */
usage: number | null, 
/**
 * Bytes available in all.
 */
quota: number | null, 
/**
 * Bytes of the model files kept for the local provider (counted in `usage` too;
 * `null` where this core runs no models in the browser).
 */
models: number | null, };

export type SubAgent = { 
/**
 * The agent's name.
 */
agent: string, 
/**
 * The routing tool's name (`route_to_<agent>_agent` when absent).
 */
tool: string | null, 
/**
 * The tool the sub-agent answers with (`send_response_to_<caller>_agent` when absent).
 */
replyTool: string | null, };

export type SubAgentOrigin = { 
/**
 * The agent.
 */
agent?: string, 
/**
 * Agent names from the root to this one, joined by ` › `.
 */
path?: string, 
/**
 * The sub-agent's session.
 */
session?: string, };

export type Suggestion = { 
/**
 * Unique id.
 */
id: string, 
/**
 * The project it belongs to.
 */
project: string, 
/**
 * Who made it.
 */
source: SuggestionSource, 
/**
 * What accepting it makes.
 */
kind: SuggestionKind, 
/**
 * A short title (a goal's title).
 */
title: string, 
/**
 * The text (a note's text, a goal's description).
 */
text: string, 
/**
 * The note's type, for a note.
 */
noteType?: NoteType, 
/**
 * What identifies a monitor finding (the same finding updates its pending suggestion).
 */
key?: string, 
/**
 * What the monitor found: a mention, a misspelt name, a contradicted rule, a mention an
 * edit removed or changed (`lineText` is the line as it read before), or a watched
 * character's or location's story-bible entry an agent changed (`word` names the fields,
 * `lineText` their new values; no chapter or line).
 */
finding?: 'mention' | 'misspelling' | 'contradiction' | 'changed' | 'entry_changed', 
/**
 * The watched entity it is about.
 */
entity?: EntityRef, 
/**
 * The chapter (id) of the finding.
 */
chapter?: string, 
/**
 * The chapter's number (1-based), when it was found.
 */
chapterNumber?: number, 
/**
 * The chapter's title, when it was found.
 */
chapterTitle?: string, 
/**
 * The line (1-based).
 */
line?: number, 
/**
 * The line's text.
 */
lineText?: string, 
/**
 * The word found (the name as written, the misspelt word, the rule's keyword).
 */
word?: string, 
/**
 * The observation note the monitor wrote about it.
 */
observation?: string, 
/**
 * Where it stands.
 */
state: SuggestionState, 
/**
 * When it was made.
 */
createdMs: number, 
/**
 * When it last changed.
 */
updatedMs: number, 
/**
 * When the writer decided.
 */
decidedMs?: number, 
/**
 * What accepting it made: `{goal: id}` or `{note: id}`.
 */
acceptedAs?: { goal?: string, note?: string }, };

export type SuggestionAccepted = { 
/**
 * The suggestion, accepted.
 */
suggestion: Suggestion, 
/**
 * The goal it became.
 */
goal?: Goal, 
/**
 * The note it became.
 */
note?: MemoryNote, };

export type SuggestionAction = "added" | "updated" | "accepted" | "dismissed";

export type SuggestionDismissed = { 
/**
 * The suggestion, dismissed.
 */
suggestion: Suggestion, };

export type SuggestionEvent = { 
/**
 * The project.
 */
project: string, 
/**
 * What happened.
 */
action: SuggestionAction, 
/**
 * The suggestion as it is now.
 */
suggestion: Suggestion, };

export type SuggestionKind = "goal" | "note";

export type SuggestionList = { 
/**
 * The project.
 */
project: string, 
/**
 * Its suggestions.
 */
suggestions: Array<Suggestion>, };

export type SuggestionRefParams = { id: string, };

export type SuggestionSource = "monitor" | "thinker";

export type SuggestionState = "pending" | "accepted" | "dismissed";

export type SuggestionsParams = { 
/**
 * Also the accepted and dismissed ones.
 */
all?: boolean, };

export type SyncConnectParams = { 
/**
 * The server's address (`ws://` or `wss://`).
 */
url: string, 
/**
 * A token the server accepts for the project.
 */
token: string, 
/**
 * A project that exists only on the server: fetched, then opened. Without it, the open
 * project is shared.
 */
project?: string, 
/**
 * The name this device goes by for the others (default `writer`).
 */
name?: string, };

export type SyncNetworkParams = { 
/**
 * Whether the device has a network.
 */
online: boolean, };

export type SyncPeer = { 
/**
 * Its Yjs client id.
 */
client: number, 
/**
 * The name it goes by.
 */
name: string, 
/**
 * The chapter its cursor is in.
 */
chapter?: string, 
/**
 * Its cursor (a char offset in that chapter).
 */
cursor?: number, };

export type SyncProjectParams = { 
/**
 * The project (default: the open one).
 */
project?: string, };

export type SyncState = "disconnected" | "connecting" | "connected" | "offline" | "unauthorized";

export type SyncStatus = { 
/**
 * The project.
 */
project: string, 
/**
 * How its connection stands.
 */
status: SyncState, 
/**
 * Updates made here that the server has not yet acknowledged.
 */
unsent: number, 
/**
 * The server, while shared.
 */
url?: string, 
/**
 * Why it is offline or unauthorized.
 */
reason?: string, 
/**
 * The other clients connected to the project.
 */
peers: Array<SyncPeer>, };

export type TodoItem = { 
/**
 * What to do.
 */
content: string, 
/**
 * Where it stands.
 */
status: TodoStatus, };

export type TodoStatus = "pending" | "in_progress" | "completed";

export type ToolCallResult = { 
/**
 * Success or error.
 */
status: ToolResultStatus, 
/**
 * The result, or `{code, message, details?}` for an error.
 */
data: JsonValue, 
/**
 * Execution facts.
 */
meta: ResultMeta, };

export type ToolCallStatus = "success" | "error" | "aborted" | "pending" | "denied";

export type ToolCategory = "navigation" | "editing" | "analysis" | "ui" | "knowledge" | "generation" | "memory" | "bible";

export type ToolDefinition = { 
/**
 * Name (generated tools, such as an agent's routing tools, own theirs).
 */
name: string, 
/**
 * Description.
 */
description: string, 
/**
 * Category.
 */
category: ToolCategory, 
/**
 * Whether its edits are undoable.
 */
reversible: boolean, 
/**
 * Whether it changes nothing of the project's session (see [`ToolSpec::READ_ONLY`]).
 */
read_only: boolean, 
/**
 * Whether the core runs it asynchronously, under a timeout (see [`ToolSpec::ASYNC`]).
 */
asynchronous?: boolean, 
/**
 * JSON Schema of the arguments (an object schema, provider-neutral).
 */
parameters: JsonValue, };

export type ToolList = { 
/**
 * The toolset's tools, in registration order.
 */
tools: Array<ToolDefinition>, } | JsonValue;

export type ToolResultStatus = "success" | "error";

export type TranscriptMessage = { 
/**
 * Who wrote it.
 */
role: 'user' | 'assistant' | 'tool', 
/**
 * Its text (absent when empty).
 */
text?: string, 
/**
 * The assistant's tool calls.
 */
toolCalls?: Array<TranscriptToolCall>, 
/**
 * A tool result's call id.
 */
toolCallId?: string, 
/**
 * A tool result's tool name.
 */
name?: string, };

export type TranscriptToolCall = { 
/**
 * The call id.
 */
id: string, 
/**
 * The tool's name.
 */
name: string, 
/**
 * Its arguments (a JSON object).
 */
arguments: Record<string, unknown>, };

export type UiState = { 
/**
 * The chapter shown in the editor.
 */
active_chapter: string | null, 
/**
 * Cursor position (chars) in the active chapter.
 */
cursor: number, 
/**
 * Selected char range in the active chapter.
 */
selection: [number, number] | null, 
/**
 * The side panel shown.
 */
panel: string, 
/**
 * Distraction-free mode.
 */
zen_mode: boolean, 
/**
 * Highlights shown in the editor.
 */
highlights: Array<Highlight>, 
/**
 * Position (chars) scrolled into view.
 */
scroll: number, 
/**
 * How many times a tool asked the editor to bring `scroll` (and the selection) into
 * view: scrolling, navigating to text or a scene, opening a chapter. The editor scrolls
 * whenever it changes, so asking twice for the same place scrolls twice.
 */
reveal: number, };

export type UndoParams = { origin?: string, by?: string, };

export type UnitTarget = { "kind": "scene", "id": string } | { "kind": "route", "id": string } | { "kind": "project" };

export type UnitView = { 
/**
 * `<phase>:<agent>:<target>` (`context:scene_summary_detailer:scene_1`), or `run` for a
 * background run's one unit.
 */
id: string, 
/**
 * Its phase (`null` for a background run's or a research job's unit).
 */
phase: JobPhase | null, 
/**
 * The agent it runs.
 */
agent: string, 
/**
 * What it works on.
 */
target: UnitTarget, 
/**
 * Its state.
 */
state: JobState, 
/**
 * Its run id.
 */
run: string, 
/**
 * How its run ended (once it did); for a research unit, the note it kept.
 */
result?: { status: string, text: string, steps: number } | { id: string, title: string, url: string, updated: boolean, text: string }, 
/**
 * Why it failed.
 */
error?: string, 
/**
 * A research unit's page.
 */
url?: string, 
/**
 * Its agent's to-do list as its run ended (an agent with `planning` that wrote one).
 */
todos?: Array<TodoItem>, };

export type Usage = { 
/**
 * Prompt (input) tokens.
 */
input_tokens: number, 
/**
 * Completion (output) tokens.
 */
output_tokens: number, };

export type UserChangeResult = { 
/**
 * Whether it was rebased over newer changes.
 */
rebased: boolean, 
/**
 * The page's label for it, when the page sent one.
 */
tag?: string, 
/**
 * The change with this tag had been applied already (sent again): nothing changed now.
 */
duplicate?: boolean, 
/**
 * The chapter.
 */
chapter: string, 
/**
 * The change.
 */
changeset: Array<ChangeOp>, 
/**
 * The chapter's version after it.
 */
version: number, };

export type WatchedEntity = { 
/**
 * Unique id.
 */
id: string, 
/**
 * The project it belongs to.
 */
project: string, 
/**
 * The entity's name.
 */
name: string, 
/**
 * What kind of entity.
 */
entityType: EntityType, 
/**
 * Why it is watched.
 */
reason: string, 
/**
 * How much it matters.
 */
priority: Priority, 
/**
 * When it was first watched.
 */
createdMs: number, };

export type WriteMemoryNotesParams = { notes: Array<NewNote>, };

export type WriterIdleParams = { 
/**
 * How long the page saw no typing (informative: the core checks with its own clock).
 */
idleMs?: number, };

export type Written = { 
/**
 * Their ids, in the order given.
 */
written: Array<string>, };

// Type declarations for the draftsmith JS client (./draftsmith.js).

import type {
  AgentDefined,
  AgentDeleted,
  AgentInfo,
  AgentListing,
  AppliedChange,
  ApprovalCard,
  ApprovalField,
  ApprovalList,
  ApprovalPolicy,
  ApprovalResult,
  BibleEntity,
  BibleFields,
  BibleKind,
  BibleListing,
  BibleRevisions,
  ChangeOp,
  ChapterChange,
  ChapterInProject,
  ChapterSummary,
  ChapterText,
  CheckpointResult,
  CoreEventMap,
  DeletedChapter,
  ExportDocument,
  Hello,
  HistoryEntry,
  HistoryList,
  HistoryMove,
  IdleResult,
  IdleThinking,
  JobList,
  JobPhase,
  JobState,
  JobUnitDetail,
  JobView,
  LocalModelDeleted,
  LocalModelLoaded,
  LocalModels,
  McpServers,
  MemoryTrash,
  MemoryView,
  NewNote,
  NoteRestored,
  NoteScope,
  NoteType,
  Origin,
  Preset,
  ProjectListing,
  ProjectSummary,
  ProviderKind,
  RequestParams,
  RequestResults,
  RequestType,
  ResearchDeleted,
  ResearchListing,
  ResearchNote,
  RunEvent,
  RunMode,
  RunResult,
  Settings,
  SettingsPatch,
  StorageEstimate,
  Suggestion,
  SuggestionAccepted,
  SuggestionDismissed,
  SuggestionList,
  SyncStatus,
  ToolCallResult,
  ToolList,
  UiState,
  UnitView,
  Usage,
  UserChangeResult,
} from './protocol.js';

// The protocol's requests, their parameters and results, generated from the core's Rust types.
export type * from './protocol.js';
import type { LocalModelStatus } from './local-model.js';
export type { LocalModelStatus, LocalModelInfo, LocalModelSpec, StoredModel } from './local-model.js';

/** `sync.connect`'s parameters. */
export interface SyncConnectOptions {
  /** The server's address, `ws://` or `wss://`. */
  url: string;
  /** A token the server accepts for the project (a JWT naming it). */
  token: string;
  /** A project that exists only on the server, to fetch and open. */
  project?: string;
  /** How the other devices and co-authors see this one (default `writer`). */
  name?: string;
}

/** A change to a chapter's text: operations over its chars, in order. */
export type ChangeSet = ChangeOp[];

/** Stable error codes. */
export type ErrorCode =
  | 'interrupted'
  | 'malformed'
  | 'unknown_request'
  | 'invalid_params'
  | 'not_found'
  | 'conflict'
  | 'no_project'
  | 'quota_exceeded'
  | 'storage_failed'
  | 'no_model'
  | 'busy'
  | 'offline'
  | 'internal'
  | 'timeout'
  | 'closed';

/** An error from draftsmith. */
export declare class DraftsmithError extends Error {
  readonly name: 'DraftsmithError';
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string);
}

export interface StartOptions {
  /** URL of worker.js; defaults to the worker.js beside this module. */
  workerUrl?: string | URL;
  /** Default per-request timeout in milliseconds (30 000). 0 or Infinity: none. */
  timeoutMs?: number;
  /** How long to wait for the core to load (30 000 ms). */
  startTimeoutMs?: number;
  /** Ask the browser to keep storage (navigator.storage.persist()) on start; default true. */
  persist?: boolean;
}

export interface RequestOptions {
  /** This request's timeout in milliseconds; overrides StartOptions.timeoutMs. */
  timeoutMs?: number;
}

/** The one shape of every tool result (`ToolCallResult`), with its `data` typed as `T`. */
export type ToolResult<T = unknown> = Omit<ToolCallResult, 'data'> & {
  data: T | { code: string; message: string; details?: unknown };
};

export type CatalogFormat = 'openai' | 'anthropic' | 'gemini' | 'local';

export interface ApproveOptions extends RequestOptions {
  /** The writer's edit of the call's arguments (approve only). */
  args?: Record<string, unknown>;
  /** Why (a rejection's reason is told to the model). */
  reason?: string;
  /** The run, when the same call id waits in more than one. */
  runId?: string;
  /** The digest of the card the writer saw (`ApprovalCard.digest`); a different call waiting under this id rejects with `conflict`. */
  digest?: string;
}

/** A sub-agent an agent may call. */
export interface SubAgentLink {
  /** The agent's name. */
  agent: string;
  /** The routing tool's name (`route_to_<agent>_agent` when absent). */
  tool?: string | null;
  /** The tool the sub-agent answers with (`send_response_to_<caller>_agent` when absent). */
  replyTool?: string | null;
}

/** An agent's model settings, over the writer's settings. */
export interface AgentModelSettings {
  /** Must be the configured provider (its key and base URL are used). */
  provider?: ProviderKind | null;
  model?: string | null;
  /** 0 to 2. */
  temperature?: number | null;
}

/** An agent as data (what `defineAgent` takes). */
export interface AgentSpec {
  /** Lowercase letters, digits and `_`, starting with a letter; its edits get origin `agent:<name>`. */
  name: string;
  description?: string;
  /** Its role and its definition of done. */
  systemPrompt: string;
  /** A toolset whose tools it may call (`all`, `quick`, `voice_safe`...). */
  toolset?: string | null;
  /** More tools it may call, by exact name. */
  tools?: string[];
  /** The sub-agents it may call (each through a routing tool). */
  subAgents?: SubAgentLink[];
  /** `route`: one routing tool per sub-agent, taking the action dictionary; `assign_task`: one `assign_task(target_agent, task_description, target_file)`. */
  delegation?: 'route' | 'assign_task';
  model?: AgentModelSettings | null;
  /** Most model calls per task (1 to 100; default 20). */
  maxSteps?: number;
  tokenBudget?: number | null;
  /** Whether a run may start with it (it talks to the writer). */
  talksToWriter?: boolean;
  /** Tools of its toolbox that always ask the writer when this agent calls them (rentl's `interrupt_on`). */
  interruptOn?: string[];
  /**
   * Whether it must call a tool on the first model call of each task (the one answering the
   * prompt or the task it was given): `auto` (default), `required` (any of its tools) or a
   * tool's name. Later steps are free, so a routing agent can answer once the routed answer is in.
   */
  toolChoice?: 'auto' | 'required' | (string & {});
  /** Whether it keeps one long-running session (its conversation, per project and campaign, persisted) instead of a fresh temporary session per call. */
  longRunning?: boolean;
  /** Whether it plans its task with a to-do list of its own (`write_todos`, `read_todos`), kept with its run or job unit. */
  planning?: boolean;
}

export interface RunOptions {
  /** A preset (`quill`, `dungeon_master`, `textcraft`): the run starts with its entry agent. Not with `agent`. */
  preset?: string;
  /**
   * The agent the run starts with: the name of an agent that talks to the writer (a preset's
   * or a defined one; edits get origin `agent:<name>`), or the quill assistant under another
   * name and system prompt.
   */
  agent?: string | { name?: string; systemPrompt?: string };
  /** Toolset of the quill assistant (default: the settings'); other agents have their own toolbox. */
  toolset?: string;
  /** `voice` offers only the `voice_safe` tools (nothing that waits on the network or a model); `toolset` still overrides. Default `text`. */
  mode?: RunMode;
  /** Most model calls (default: the settings'). */
  maxSteps?: number;
  /** Most tokens (input + output). */
  tokenBudget?: number;
  /** Forget the earlier conversation of this project first. */
  newConversation?: boolean;
  /** Whether the turn's first model call must call a tool: `auto`, `required`, or a tool of the run's toolbox. */
  toolChoice?: 'auto' | 'required' | (string & {});
  /** End with a structured answer: a JSON object valid against `schema` (an object schema), in the result's `output`. */
  output?: { schema: Record<string, unknown>; name?: string };
  /** Aborts the run. */
  signal?: AbortSignal;
  /** The run's id (made up when absent). */
  runId?: string;
}

/**
 * A run in progress: iterate it for its events, until `run_finished`, `run_failed`,
 * `run_aborted` or `run_paused`. A paused run resumes when its calls are approved or
 * rejected (`approve()`); its later events arrive through `on('run', ...)` under the same
 * run id, and `approve()` resolves with its result.
 */
export interface RunHandle extends AsyncIterable<RunEvent> {
  readonly id: string;
  /** Resolves when the run ends or pauses; rejects if it could not start (`no_model`, `busy`, ...). */
  readonly result: Promise<RunResult>;
  /** Stop the run: a command in progress completes, nothing after it runs. */
  abort(): void;
}

/** Which scenes a pipeline works on: every scene, a list of scenes, or a route's. */
export type JobScope = 'all' | { scenes: string[] } | { route: string };

/** A pipeline job: rentl's subagents over the story bible's scenes, in code-defined stages. */
export interface PipelineJobParams {
  kind: 'pipeline';
  /** The phases to run (default `['context']`); they run in the order context, translation, editing. */
  phases?: JobPhase[];
  /** Default `'all'`. */
  scope?: JobScope;
  /** Whether subagents may overwrite what is already filled in (default false). */
  allowOverwrite?: boolean;
  /** How many units run at once, 1 to 8 (default 3). */
  concurrency?: number;
}

/** One agent run in the background (a job of one unit). */
export interface RunJobParams {
  kind: 'run';
  prompt: string;
  /** An agent that talks to the writer (see `listAgents`), or the quill assistant under another name and prompt (as in `run`). */
  agent?: string | { name?: string; systemPrompt?: string };
  /** A preset (its entry agent). */
  preset?: string;
}

/** A research job: web pages read into research notes, as the writer, one unit per URL. */
export interface ResearchJobParams {
  kind: 'research';
  /** 1 to 50 http(s) addresses (refused at once if one is not allowed). */
  urls: string[];
  /** 1 to 8 pages read at once (3). */
  concurrency?: number;
}

/** What `startJob` takes. */
export type JobParams = PipelineJobParams | RunJobParams | ResearchJobParams;

/** A job's parameters as the core keeps them (every default filled in; no `kind`, which is the job's). */
export type JobViewParams = JobView['params'];

/** A unit's state. */
export type UnitState = 'queued' | 'running' | 'waiting_approval' | 'done' | 'failed' | 'cancelled';

/** What a research job's unit kept. */
export interface ResearchUnitResult {
  id: string;
  title: string;
  url: string;
  /** True when it updated the note of an address read before. */
  updated: boolean;
  text: string;
}

/**
 * Events pushed by the worker, by type: the core's (`CoreEventMap`, generated from its Rust
 * types) and those the worker and the client make themselves.
 */
export interface EventMap extends CoreEventMap {
  /** The core (re)loaded; `instance` counts loads in this worker. */
  ready: { version: string; instance: number };
  /** The writing core restarted after a panic (here or in the writing tab): state not yet saved
   * may be gone, so an editor catches up (`getChapter` with `since`) and sends again what it lacks. */
  core_restarted: { version: string; instance: number; remote?: boolean };
  /** The tab that applies and saves every tab's changes closed; `writer` says which tab took over.
   * Requests that may have been applied by the old writer failed with `interrupted`. */
  writer_changed: { writer: 'this tab' | 'another tab' };
  /** The core could not be loaded. */
  fatal: { message: string };
  /** The core panicked; requests in flight failed with `internal`, and a new core is loading. */
  panic: { message: string };
  /** A response that matched no request (its id was unreadable). */
  error: { code: ErrorCode; message: string };
}

export type EventHandler<K extends keyof EventMap> = (data: EventMap[K], type: K) => void;

export declare class Draftsmith {
  /** Start a worker and resolve once its core is ready. */
  static start(options?: StartOptions): Promise<Draftsmith>;
  /**
   * Start a worker and return its client at once: requests sent before the core is ready wait
   * in the worker and run in order once it is. `ready` says when (or why it failed to start).
   */
  static launch(options?: StartOptions): Draftsmith;
  /** Resolves once the core is ready; rejects (the client closed) if it failed to start. */
  readonly ready: Promise<Draftsmith>;
  /** Send a request by type with its typed parameters; resolves with its typed result. */
  request<K extends RequestType>(type: K, params?: RequestParams[K], options?: RequestOptions): Promise<RequestResults[K]>;
  /** Version, build profile and capabilities of the core. */
  hello(options?: RequestOptions): Promise<Hello>;
  /** Whether the browser agreed to keep storage. */
  persisted: boolean;
  /** Ask the browser to keep this origin's storage; resolves to whether it is persistent. */
  requestPersistence(): Promise<boolean>;
  /** Storage use and quota in bytes (null where the browser does not say). */
  storageEstimate(options?: RequestOptions): Promise<StorageEstimate>;
  /** Every stored project, most recently changed first. */
  listProjects(options?: RequestOptions): Promise<{ projects: ProjectListing[]; current: string | null }>;
  /** Rename a project (the open one by default). */
  renameProject(name: string, id?: string, options?: RequestOptions): Promise<ProjectSummary>;
  /** Delete a project and everything in it. */
  deleteProject(id: string, options?: RequestOptions): Promise<{ deleted: string }>;
  /** The project as one JSON document (chapters, history, UI state, memory). */
  exportProject(id?: string, options?: RequestOptions): Promise<ExportDocument>;
  /** Import an exported document; rejected with `invalid_params` (nothing changes) if malformed. */
  importProject(document: unknown, options?: RequestOptions): Promise<ProjectSummary>;
  /** The manuscript as Markdown. */
  exportMarkdown(id?: string, options?: RequestOptions): Promise<{ markdown: string }>;
  /**
   * Checkpoint a project (the open one by default): the whole text of each chapter changed
   * since its last checkpoint, and the lazily saved state (cursor, selection). The worker does
   * it by itself after two idle seconds. `saved: false` after a failed save (also a
   * `storage_error` event; it stays pending).
   */
  checkpoint(id?: string, options?: RequestOptions): Promise<CheckpointResult>;
  /**
   * This tab's worker (not the core): `writer` when it applies and saves the projects for
   * every tab, `follower` when it relays to the tab that does; `clients`: how many other tabs a
   * writer serves (a closed tab's client is dropped); `localModel`: this worker's in-browser
   * model (the `local` provider): whether it runs multi-threaded (the page must be
   * cross-origin isolated), with how many threads, and which model is loaded (in the writing
   * tab, which runs the agents).
   */
  workerStatus(options?: RequestOptions): Promise<{ role: 'writer' | 'follower' | 'electing'; soleWriter: boolean; clients: number; localModel: LocalModelStatus }>;
  /** Create a project and make it the open one. */
  createProject(name: string, chapters?: { title?: string; text?: string }[], options?: RequestOptions): Promise<ProjectSummary>;
  /** Make an existing project the open one. */
  openProject(id: string, options?: RequestOptions): Promise<ProjectSummary>;
  /** A chapter by id, number or title (the active one by default). */
  getChapter(chapter?: string, options?: RequestOptions & { since?: number }): Promise<ChapterText>;
  /** Run one tool call. */
  execute<T = unknown>(tool: string, args?: Record<string, unknown>, options?: RequestOptions & { origin?: Origin; callId?: string }): Promise<ToolResult<T>>;
  /** Send the writer's change made on `baseVersion`; it is rebased if the chapter moved on. */
  applyUserChange(chapter: string, baseVersion: number, changes: ChangeSet, options?: RequestOptions & { tag?: string }): Promise<UserChangeResult>;
  /** Projects. */
  readonly projects: {
    list(options?: RequestOptions): Promise<{ projects: ProjectListing[]; current: string | null }>;
    create(name: string, chapters?: { title?: string; text?: string }[], options?: RequestOptions): Promise<ProjectSummary>;
    open(id: string, options?: RequestOptions): Promise<ProjectSummary>;
    rename(name: string, id?: string, options?: RequestOptions): Promise<ProjectSummary>;
    delete(id: string, options?: RequestOptions): Promise<{ deleted: string }>;
    export(id?: string, options?: RequestOptions): Promise<ExportDocument>;
    import(document: unknown, options?: RequestOptions): Promise<ProjectSummary>;
    markdown(id?: string, options?: RequestOptions): Promise<{ markdown: string }>;
  };
  /** The open project's chapters (by id, number or title). */
  readonly chapters: {
    get(chapter?: string, options?: RequestOptions): Promise<ChapterText>;
    /** Add a chapter after `after` (id, number or title), or at the end. */
    add(chapter?: { title?: string; text?: string; after?: string | number }, options?: RequestOptions): Promise<ChapterInProject>;
    rename(chapter: string | number, title: string, options?: RequestOptions): Promise<ChapterInProject>;
    /** Move to a 1-based position. */
    move(chapter: string | number, to: number, options?: RequestOptions): Promise<ChapterInProject>;
    /** Delete a chapter (never the last one); its text comes back, and its history is forgotten. */
    delete(chapter: string | number, options?: RequestOptions): Promise<DeletedChapter>;
  };
  /** The editor-context block a run's prompt gets: the project, the active chapter, cursor, selection, the paragraph at the cursor, the bible, the toolset. */
  editorContext(options?: RequestOptions & { toolset?: string; budget?: number }): Promise<{ block: string }>;
  /** The agent's memory. */
  readonly memory: {
    list(options?: RequestOptions): Promise<MemoryView>;
    search(query: string, options?: RequestOptions & { limit?: number }): Promise<ToolResult>;
    context(request: string, budget?: number, options?: RequestOptions): Promise<{ block: string }>;
    write(notes: NewNote[], options?: RequestOptions): Promise<{ written: string[] }>;
    /** Delete a note as the writer (no approval); it stays restorable for 30 days. */
    delete(id: string, options?: RequestOptions): Promise<ToolResult>;
    /** The deleted notes that can still be restored, most recently deleted first. */
    trash(options?: RequestOptions): Promise<MemoryTrash>;
    /** Bring a deleted note back. */
    restore(id: string, options?: RequestOptions): Promise<NoteRestored>;
  };
  /** Suggestions of the proactive memory (the watched-entity monitor, the idle thinker). */
  readonly suggestions: {
    /** The pending ones, newest first (with `all`, the accepted and dismissed ones too). */
    list(options?: RequestOptions & { all?: boolean }): Promise<SuggestionList>;
    /** A pending suggestion becomes a goal or a note (`conflict` if already decided). */
    accept(id: string, options?: RequestOptions): Promise<SuggestionAccepted>;
    /** Set a pending suggestion aside (a monitor finding with the same key is not raised again). */
    dismiss(id: string, options?: RequestOptions): Promise<SuggestionDismissed>;
  };
  /** The writer stopped typing: the idle thinker may think (see `IdleResult`). */
  writerIdle(idleMs?: number, options?: RequestOptions): Promise<IdleResult>;
  /**
   * Decide a call waiting for approval. Resolves when its paused run (if this was its last
   * waiting call) has resumed and ended or paused again; the resumed run's events arrive
   * through `on('run', ...)`. No timeout unless `timeoutMs` is given. A call already decided
   * rejects with `conflict`.
   */
  approve(callId: string, decision: 'approve' | 'reject', options?: ApproveOptions): Promise<ApprovalResult>;
  /** The open project's story bible. */
  readonly bible: {
    /** Every kind's entities, or one kind's. */
    list(kind?: BibleKind, options?: RequestOptions): Promise<BibleListing>;
    /**
     * Create (no `id`: made from the name) or update an entity; the fields get origin
     * `human`. `null` clears a field. With `baseVersion`, rejects with `conflict` (and
     * changes nothing) if the entity changed since.
     */
    save<K extends BibleKind>(kind: K, fields: Partial<BibleFields[K]>, options?: RequestOptions & { id?: string | null; baseVersion?: number | null }): Promise<BibleEntity<K>>;
    /** Delete an entity (`conflict` if it changed since `baseVersion`). */
    delete<K extends BibleKind>(kind: K, id: string, options?: RequestOptions & { baseVersion?: number | null }): Promise<{ deleted: BibleEntity<K> }>;
    /**
     * The writes of an entity's fields that the project keeps (from every device), newest
     * first; restore one with `save`.
     */
    revisions(kind: BibleKind, id: string, options?: RequestOptions & { field?: string | null }): Promise<BibleRevisions>;
  };
  /** Calls waiting for the writer's approval. */
  readonly approvals: {
    /** The open project's waiting calls (oldest first) and paused runs. */
    list(options?: RequestOptions & { runId?: string }): Promise<ApprovalList>;
    /** The same as `Draftsmith.approve`. */
    approve(callId: string, decision: 'approve' | 'reject', options?: ApproveOptions): Promise<ApprovalResult>;
  };
  /** The presets and every agent (the presets' and the project's). */
  listAgents(options?: RequestOptions): Promise<AgentListing>;
  /** Define or replace an agent of the open project (`invalid_params`, and nothing changes, if it is not valid). */
  defineAgent(spec: AgentSpec, options?: RequestOptions): Promise<AgentDefined>;
  /** Delete an agent the open project defined. */
  deleteAgent(name: string, options?: RequestOptions): Promise<AgentDeleted>;
  /** The agents: list, define, delete. */
  readonly agents: {
    list(options?: RequestOptions): Promise<AgentListing>;
    define(spec: AgentSpec, options?: RequestOptions): Promise<AgentDefined>;
    delete(name: string, options?: RequestOptions): Promise<AgentDeleted>;
  };
  /**
   * Start a background job (a pipeline, or one agent run) on the open project; resolves at
   * once with the job. Progress: `job_progress` events; the end: `job_finished`. A job
   * resumes after a reload.
   */
  startJob(params: JobParams, options?: RequestOptions): Promise<JobView>;
  /** A job with its units. */
  jobStatus(job: string, options?: RequestOptions): Promise<JobView & { units: UnitView[] }>;
  /** The open project's jobs, newest first (without units). */
  listJobs(options?: RequestOptions): Promise<JobList>;
  /** Pause a job: no new unit starts until it resumes; running ones finish (it stays `running` until then). */
  pauseJob(job: string, options?: RequestOptions): Promise<JobView>;
  /** Resume a paused job. */
  resumeJob(job: string, options?: RequestOptions): Promise<JobView>;
  /** Cancel a job: running units are aborted, waiting calls no longer asked, queued units never start. */
  cancelJob(job: string, options?: RequestOptions): Promise<JobView>;
  /** A unit and its transcript (saved when the unit ends or waits for approval; empty before). */
  jobUnit(job: string, unit: string, options?: RequestOptions): Promise<JobUnitDetail>;
  /** The open project's research notes, newest first. */
  researchList(options?: RequestOptions): Promise<ResearchListing>;
  /** Delete a research note (`not_found` if there is none). */
  researchDelete(id: string, options?: RequestOptions): Promise<ResearchDeleted>;
  /** Read pages into research notes as the writer: a research job. */
  researchUrls(urls: string[], options?: RequestOptions & { concurrency?: number }): Promise<JobView>;
  /** Research: the same requests, grouped. */
  readonly research: {
    list(options?: RequestOptions): Promise<ResearchListing>;
    delete(id: string, options?: RequestOptions): Promise<{ deleted: string }>;
    start(urls: string[], options?: RequestOptions & { concurrency?: number }): Promise<JobView>;
  };
  /** Background jobs: the same requests, grouped. */
  readonly jobs: {
    start(params: JobParams, options?: RequestOptions): Promise<JobView>;
    status(job: string, options?: RequestOptions): Promise<JobView & { units: UnitView[] }>;
    list(options?: RequestOptions): Promise<JobList>;
    pause(job: string, options?: RequestOptions): Promise<JobView>;
    resume(job: string, options?: RequestOptions): Promise<JobView>;
    cancel(job: string, options?: RequestOptions): Promise<JobView>;
    unit(job: string, unit: string, options?: RequestOptions): Promise<JobUnitDetail>;
  };
  /**
   * Sync through a Yjs server (Hocuspocus) with other devices and co-authors; its changes
   * arrive as `sync_status` events, co-authors' edits as `edit` events of origin
   * `remote:<name>`.
   */
  readonly sync: {
    /**
     * Share the open project (`project` absent) or fetch a project that exists only on the
     * server and open it (`project`: its id; rejects with `no_project` when the server
     * refuses the token or does not send it). `name` is how the others see this device
     * (default `writer`). Bad input rejects with `invalid_params` and changes nothing.
     */
    connect(params: SyncConnectOptions, options?: RequestOptions): Promise<SyncStatus>;
    /** Stop sharing a project (the open one by default); it stays here as it is. */
    disconnect(project?: string, options?: RequestOptions): Promise<SyncStatus>;
    /** How a project's (the open one's by default) link stands, and who else is connected. */
    status(project?: string, options?: RequestOptions): Promise<SyncStatus>;
  };
  /**
   * The model files the browser keeps for the `local` provider (a model running in the page);
   * its download and load arrive as `model_progress` events.
   */
  readonly localModels: {
    /** The kept model files, their sizes and which one is loaded. */
    list(options?: RequestOptions): Promise<LocalModels>;
    /** Download (unless kept) and load the local model the settings name. */
    load(options?: RequestOptions): Promise<LocalModelLoaded>;
    /** Delete a kept model file (unloaded first if loaded); `deleted: false` if there was none. */
    delete(url: string, options?: RequestOptions): Promise<LocalModelDeleted>;
  };
  /**
   * The MCP tool servers the settings list (`mcpServers`); their changes arrive as
   * `mcp_changed` events. Agents call their tools as `mcp__<server>__<tool>`, each call
   * approved by the writer unless `approvalPolicies` relaxes it.
   */
  readonly mcp: {
    /** Each server's connection and tools. */
    servers(options?: RequestOptions): Promise<McpServers>;
    /** Connect a server again and list its tools anew. */
    connect(name: string, options?: RequestOptions): Promise<McpServers>;
  };
  /** Undo the newest group, or the newest of an origin ('agent', 'agent:<name>', 'user'). */
  undo(options?: RequestOptions & { origin?: 'agent' | Origin }): Promise<HistoryMove>;
  /** Redo the last undone group. */
  redo(options?: RequestOptions): Promise<HistoryMove>;
  /** End the writer's current undo group: the next change starts a new one. */
  closeGroup(options?: RequestOptions): Promise<Record<string, never>>;
  /** The undo history, newest first. */
  history(options?: RequestOptions): Promise<HistoryList>;
  /** The tool catalog in a provider's format, or neutral definitions. */
  tools(options?: RequestOptions & { format?: CatalogFormat; toolset?: string }): Promise<ToolList>;
  /** The model settings. */
  readonly settings: {
    get(options?: RequestOptions): Promise<Settings>;
    set(patch: SettingsPatch, options?: RequestOptions): Promise<Settings>;
  };
  /** Start an agent run on the open project. */
  run(prompt: string, options?: RunOptions): RunHandle;
  /** Listen to one event type; returns a function that stops listening. */
  on<K extends keyof EventMap>(type: K, handler: EventHandler<K>): () => void;
  /** Listen to every event. */
  on(type: '*', handler: (data: unknown, type: string) => void): () => void;
  /** Stop the worker; pending requests reject with code `closed`. */
  close(): void;
}

export default Draftsmith;

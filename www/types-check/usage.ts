// Uses the whole JS client API as an embedder would; `tsc --noEmit` (in `make test`) checks
// it against packages/draftsmith/draftsmith.d.ts. Nothing here runs.
import { Draftsmith, DraftsmithError } from '../../packages/draftsmith/draftsmith.js';
import { LocalModel } from '../../packages/draftsmith/local-model.js';
import type { LocalModelInfo, StoredModel } from '../../packages/draftsmith/draftsmith.js';
import type {
  AgentInfo,
  LocalModelLoaded,
  LocalModels,
  McpServers,
  AgentListing,
  AgentSpec,
  ApprovalCard,
  ApprovalResult,
  BibleEntity,
  BibleListing,
  ChangeSet,
  CheckpointResult,
  ErrorCode,
  HistoryList,
  JobParams,
  JobUnitDetail,
  JobView,
  RequestType,
  TranscriptMessage,
  UnitView,
  MemoryView,
  MemoryNote,
  Suggestion,
  SyncPeer,
  SyncState,
  SyncStatus,
  IdleResult,
  NewNote,
  NoteType,
  DeletedNote,
  ProjectSummary,
  ResearchListing,
  ResearchNote,
  RunEvent,
  RunResult,
  Settings,
  ToolResult,
} from '../../packages/draftsmith/draftsmith.js';

export async function everything(): Promise<void> {
  const client: Draftsmith = await Draftsmith.start({ workerUrl: new URL('../worker.js', import.meta.url), timeoutMs: 10_000, persist: true });
  // A client at once; requests wait in the worker until its core is ready.
  const early: Draftsmith = Draftsmith.launch({ startTimeoutMs: 20_000 });
  const readyClient: Draftsmith = await early.ready;
  const hello = await client.hello({ timeoutMs: 1_000 });
  const capabilities: string[] = hello.capabilities;
  const persisted: boolean = await client.requestPersistence();
  const estimate = await client.storageEstimate();
  const usage: number | null = estimate.usage;

  // Projects.
  const created: ProjectSummary = await client.projects.create('Novel', [{ title: 'One', text: 'It was dark.' }]);
  const listed = await client.projects.list();
  const first: string = listed.projects[0].id;
  await client.projects.open(first);
  await client.projects.rename('Renamed', first);
  const doc = await client.projects.export(first);
  await client.projects.import(doc);
  const md: string = (await client.projects.markdown()).markdown;
  await client.projects.delete(created.id);

  // Chapters.
  const added = await client.chapters.add({ title: 'Two', text: 'Morning.', after: '1' });
  const chapterId: string = added.id;
  const order: number = added.project.chapters.length;
  await client.chapters.rename(chapterId, 'Second');
  await client.chapters.move(chapterId, 1);
  const text: string = (await client.chapters.get(chapterId)).text;
  const since = await client.getChapter(chapterId, { since: 3 });
  const caughtUp: string[] = (since.changes ?? []).map((c) => `${c.version}:${c.tag ?? ''}:${c.origin}`);
  client.on('writer_changed', (e) => console.log(e.writer));
  client.on('core_restarted', (e) => console.log(e.instance));
  const removed = await client.chapters.delete(chapterId);
  const kept: string = removed.deleted.text;

  // Tools, the writer's changes and the shared history.
  const result: ToolResult = await client.execute('update_manuscript', { searchText: 'dark', replacementText: 'lit' }, { origin: 'agent:editor', callId: 'c1' });
  const ok: boolean = result.status === 'success';
  const change: ChangeSet = [{ retain: 3 }, { insert: 'x' }, { delete: 1 }];
  const applied = await client.applyUserChange(chapterId, 4, change, { tag: 't1' });
  const rebased: boolean = applied.rebased;
  await client.undo();
  await client.undo({ origin: 'agent' });
  await client.redo();
  await client.closeGroup();
  const history: HistoryList = await client.history();
  const checkpoint: CheckpointResult = await client.checkpoint();
  const checkpointed: string[] = (await client.checkpoint('p1', { timeoutMs: 5_000 })).checkpointed;
  const committed: boolean = checkpoint.saved;
  const catalog = await client.tools({ format: 'anthropic', toolset: 'quick' });

  // Memory.
  const memory: MemoryView = await client.memory.list();
  const found: ToolResult = await client.memory.search('lamp', { limit: 5 });
  const block: string = (await client.memory.context('the lamp', 500)).block;
  const editorBlock: string = (await client.editorContext({ toolset: 'quick', budget: 800 })).block;
  const note: NewNote = { text: 'Mara fears the dark.', noteType: 'fact', scope: 'project', tags: ['mara'], importance: 4 };
  const written: string[] = (await client.memory.write([note, { text: 'Fix the storm scene.', noteType: 'issue' }])).written;
  // @ts-expect-error: the kind is `noteType` (`type` is the agents' tool argument, not the page's)
  await client.memory.write([{ text: 'Mara fears the dark.', type: 'fact' }]);
  const kind: NoteType = memory.notes[0].noteType;
  const updatedMs: number = memory.notes[0].updatedMs;
  const trashed: ToolResult = await client.memory.delete(written[0]);
  const trash: DeletedNote[] = (await client.memory.trash()).notes;
  const until: number = trash[0].restorableUntilMs;
  const restored: Omit<MemoryNote, 'previous'> = (await client.memory.restore(written[0])).note;
  // Suggestions of the proactive memory.
  const pendingSuggestions: Suggestion[] = (await client.suggestions.list()).suggestions;
  const allSuggestions: Suggestion[] = (await client.suggestions.list({ all: true, timeoutMs: 1_000 })).suggestions;
  const line: number | undefined = pendingSuggestions[0]?.line;
  const acceptedAs = (await client.suggestions.accept(pendingSuggestions[0].id)).suggestion.acceptedAs;
  await client.suggestions.dismiss(allSuggestions[0].id);
  const idle: IdleResult = await client.writerIdle(60_000);
  const thought: boolean = idle.thought && idle.callsToday <= idle.maxCallsPerDay;
  await client.settings.set({ idleThinking: { afterMs: 30_000 }, bedsidePlan: true });
  const afterMs: number = (await client.settings.get()).idleThinking.afterMs;
  client.on('suggestion', (data) => console.log(data.action, data.suggestion.chapterNumber, data.suggestion.lineText));

  // Settings and runs.
  const settings: Settings = await client.settings.set({ provider: 'openai', baseUrl: 'http://localhost:11434/v1', model: 'llama3.1', apiKey: null, rememberKey: false, maxSteps: 8 });
  const current: Settings = await client.settings.get();
  const controller = new AbortController();
  const run = client.run('Make the lamp lit.', { agent: { name: 'editor', systemPrompt: 'Be brief.' }, toolset: 'quick', maxSteps: 4, tokenBudget: 10_000, newConversation: true, signal: controller.signal });
  for await (const event of run) {
    const e: RunEvent = event;
    if (e.type === 'text_delta') console.log(e.text);
    if (e.type === 'tool_call_finished') console.log(e.name, e.status);
    if (e.type === 'approval_requested') console.log(e.callId, e.fields.length);
    if (e.type === 'run_paused') console.log(e.pending.map((c) => c.tool));
    if (e.type === 'edit_applied') console.log(e.chapter, e.version);
  }
  run.abort();
  const end: RunResult = await run.result;
  const status: 'finished' | 'max_steps' | 'budget_spent' | 'failed' | 'invalid_output' | 'aborted' | 'paused' = end.status;
  const waiting: ApprovalCard[] = end.pending ?? [];

  // Agents as data: presets, defined agents, runs as trees.
  const listing: AgentListing = await client.listAgents();
  const entry: string = listing.presets.find((p) => p.name === 'dungeon_master')?.entry ?? 'player_interface';
  const speakers: string[] = listing.agents.filter((a: AgentInfo) => a.talksToWriter && !a.builtin).map((a) => a.name);
  const routing: string[] = listing.agents[0].routingTools.concat(listing.agents[0].toolbox, listing.agents[0].interruptOn);
  const pipelines: string[] = listing.presets.find((p) => p.name === 'rentl')?.pipelines ?? [];
  const spec: AgentSpec = {
    name: 'keeper',
    description: 'Keeps the bible.',
    systemPrompt: 'You keep the story bible. Done when the change is made.',
    tools: ['character_update_notes'],
    subAgents: [{ agent: 'archivist', tool: 'ask_archivist', replyTool: null }],
    delegation: 'route',
    model: { provider: 'openai', model: 'small', temperature: 0.2 },
    maxSteps: 6,
    tokenBudget: null,
    talksToWriter: true,
    interruptOn: ['character_update_notes'],
  };
  const defined = await client.defineAgent(spec);
  const replaced: boolean = defined.replaced;
  const toolbox: string[] = defined.agent.toolbox;
  await client.agents.define({ name: 'archivist', systemPrompt: 'Answer from the bible.', toolset: 'quick' });
  const deleted: string = (await client.deleteAgent('keeper')).deleted;
  await client.agents.delete('archivist');
  const agentsNow: AgentListing = await client.agents.list();
  client.on('agents_changed', (e) => console.log(e.project, e.name, e.defined));
  const tree = client.run('I attack the goblin', { preset: 'dungeon_master' });
  for await (const e of tree) {
    if (e.type === 'session_started') console.log(e.agent, e.path, e.session, e.callId, e.caller);
    if (e.type === 'session_ended') console.log(e.session, e.status, e.steps);
    if (e.type === 'session_paused' || e.type === 'session_resumed') console.log(e.session);
    if (e.type === 'tool_call_started' && e.session) console.log(e.agent, e.path, e.name);
    if (e.type === 'run_started') console.log(e.preset, e.agent);
  }
  const treeEnd: RunResult = await tree.result;
  const startedWith: string | undefined = treeEnd.agent;
  client.run('Draft chapter 3.', { agent: 'architect' });

  // Settings for approvals and conflict detection.
  const policies = await client.settings.set({ approvalPolicies: { character_update_notes: 'strict', scene_update_summary: null }, recentUpdateWindowMs: 5_000, mtlEndpoint: '' });
  const strict: 'permissive' | 'standard' | 'strict' | undefined = policies.approvalPolicies['character_update_notes'];
  const windowMs: number = policies.recentUpdateWindowMs;
  const mtl: string = policies.mtlEndpoint;

  // The story bible.
  const bible: BibleListing = await client.bible.list();
  const characters = bible.kinds.character ?? [];
  const onlyScenes = await client.bible.list('scene');
  const span = onlyScenes.kinds.scene?.[0]?.span;
  const mara: BibleEntity<'character'> = await client.bible.save('character', { name_src: 'Mara', notes: 'Fears the dark.', aliases: ['M.'] });
  const notesOrigin: 'human' | 'import' | `agent:${string}` | null = mara.notes_origin;
  try {
    await client.bible.save('character', { notes: 'Loves storms.' }, { id: mara.id, baseVersion: mara.version });
  } catch (err) {
    if (err instanceof DraftsmithError && err.code === 'conflict') await client.bible.list('character');
  }
  // Each field's writes from every device, newest first: restore one that lost with `save`.
  const writes = await client.bible.revisions('character', mara.id, { field: 'notes' });
  const lost = writes.revisions.find((r) => !r.current);
  if (lost) await client.bible.save('character', { notes: lost.value as string }, { id: mara.id });
  const gone: BibleEntity<'character'> = (await client.bible.delete('character', mara.id, { baseVersion: mara.version + 1 })).deleted;

  // Approvals: cards, decisions, and a paused run that resumes.
  const pending = await client.approvals.list();
  const cards: ApprovalCard[] = pending.approvals;
  for (const card of cards) {
    for (const f of card.fields) console.log(f.field, f.current, f.current_origin, f.proposed);
  }
  const pausedRuns: number = pending.pausedRuns.length;
  const offResumed = client.on('run', (e) => {
    if (e.type === 'run_resumed') console.log('resumed', e.run, e.steps);
    if (e.type === 'approval_requested') console.log(e.tool, e.entityId, e.proposed);
    if (e.type === 'run_paused') console.log(e.pending.length);
  });
  const decided: ApprovalResult = await client.approve('call-1', 'approve', { args: { character: 'Mara', notes: 'Edited.' }, runId: 'run-1' });
  // The resumed run's result; only `{run, status: 'paused'}` while other calls of it wait.
  const resumed: RunResult | null = decided.run && 'text' in decided.run ? decided.run : null;
  const rejected: ApprovalResult = await client.approvals.approve('call-2', 'reject', { reason: 'Keep my notes.', timeoutMs: 60_000, digest: 'abc' });
  const denied: boolean = rejected.status === 'denied';
  offResumed();

  // Background jobs: rentl's pipelines and background runs.
  const params: JobParams = { kind: 'pipeline', phases: ['context', 'translation'], scope: 'all', allowOverwrite: false, concurrency: 3 };
  const job: JobView = await client.startJob(params);
  await client.jobs.start({ kind: 'pipeline', scope: { scenes: ['scene_1', 'scene_2'] } });
  await client.jobs.start({ kind: 'pipeline', phases: ['editing'], scope: { route: 'common' } });
  await client.startJob({ kind: 'run', prompt: 'Tidy the glossary.', agent: 'meta_glossary_curator' });
  // @ts-expect-error: a pipeline phase is context, translation or editing
  await client.startJob({ kind: 'pipeline', phases: ['drafting'] });
  const jobState: 'queued' | 'running' | 'waiting_approval' | 'paused' | 'done' | 'failed' | 'cancelled' = job.state;
  const phaseBars: string[] = job.phases.map((p) => `${p.name} ${p.done}/${p.total}`);
  const runningNow: string[] = job.progress.current;
  const atOnce: number = 'phases' in job.params ? job.params.concurrency : 1;
  await client.startJob({ kind: 'run', prompt: 'Check the names.', agent: { name: 'checker', systemPrompt: 'Be brief.' } });
  const withUnits = await client.jobStatus(job.id);
  const units: UnitView[] = withUnits.units;
  const target: string = units[0].target.kind === 'project' ? 'project' : units[0].target.id ?? '';
  const unitText: string | undefined = units[0].result?.text;
  const unitPhase: 'context' | 'translation' | 'editing' | null = units[0].phase;
  const jobs: JobView[] = (await client.listJobs()).jobs;
  await client.pauseJob(job.id);
  await client.resumeJob(job.id);
  const cancelled: JobView = await client.jobs.cancel(job.id);
  const detail: JobUnitDetail = await client.jobUnit(job.id, units[0].id);
  const transcript: TranscriptMessage[] = detail.transcript;
  for (const m of transcript) {
    if (m.role === 'assistant') for (const call of m.toolCalls ?? []) console.log(call.id, call.name, call.arguments);
    if (m.role === 'tool') console.log(m.toolCallId, m.name, m.text);
  }
  const offJobs = client.on('job_progress', (e) => console.log(e.project, e.job.progress.done, e.job.progress.total, e.unit?.state, e.resumed === true));
  client.on('job_finished', (e) => console.log(e.job.id, e.job.state));
  client.on('run', (e) => {
    if (e.job !== undefined && e.type === 'approval_requested') console.log(e.job, e.unit, e.tool);
  });
  offJobs();
  void [jobState, phaseBars, runningNow, atOnce, target, unitText, unitPhase, jobs, cancelled];

  // Research: pages read into research notes by agents and the writer.
  await client.settings.set({ researchProxy: 'http://127.0.0.1:8080/proxy?url={url}', researchAllowPrivate: false, researchPerRun: 5, toolTimeoutsMs: { research_url: 20_000 } });
  const researchSettings: Settings = await client.settings.get();
  const proxy: string = researchSettings.researchProxy;
  const timeouts: Record<string, number> = researchSettings.toolTimeoutsMs;
  const reading: JobView = await client.researchUrls(['https://example.org/lighthouses'], { concurrency: 2 });
  await client.research.start(['https://example.org/a', 'https://example.org/b']);
  await client.startJob({ kind: 'research', urls: ['https://example.org/c'] });
  // @ts-expect-error: a research job takes urls, not a prompt
  await client.startJob({ kind: 'research', prompt: 'Read the web.' });
  const researchListing: ResearchListing = await client.researchList();
  const notes: ResearchNote[] = (await client.research.list()).notes;
  for (const note of researchListing.notes) {
    const who: 'agent' | 'human' = note.source;
    console.log(note.title, note.url, note.preview.length, note.askedBy, who, note.fetchedMs, note.fetches);
  }
  if (notes[0]) await client.researchDelete(notes[0].id);
  const researchUnits = (await client.jobStatus(reading.id)).units;
  const page: string | undefined = researchUnits[0].url;
  const offResearch = client.on('research_changed', (e) => {
    const action: 'added' | 'updated' | 'deleted' = e.action;
    console.log(action, e.note.title, e.note.source, e.evicted?.length);
  });
  offResearch();
  void [proxy, timeouts, researchListing.limits.notes, researchListing.bytes, page];

  // Events and errors.
  const off = client.on('edit', (data) => {
    const tag: string | undefined = data.tag;
    const version: number = data.version;
  });
  off();
  client.on('run', (data) => console.log(data.run, data.type));
  client.on('history_changed', (data) => console.log(data.canUndo));
  client.on('memory_changed', (data) => console.log(data.project));
  client.on('ui', (data) => console.log(data.cursor));
  client.on('saved', (data) => console.log(data.at));
  client.on('chapters_changed', (data) => console.log(data.chapters.length));
  client.on('bible_changed', (data) => console.log(data.kind, data.id, data.origin, data.entity?.version));
  client.on('approvals_changed', (data) => console.log(data.project, data.requested?.callId));
  client.on('approval_decided', (data) => console.log(data.callId, data.decision, data.status));
  client.on('*', (data, type) => console.log(type, data));
  // Sync: share the open project, fetch one from the server, follow the link's state.
  const shared: SyncStatus = await client.sync.connect({ url: 'ws://127.0.0.1:1234', token: 'jwt', name: 'Ann' });
  const fetched = await client.sync.connect({ url: 'wss://sync.example', token: 'jwt', project: shared.project });
  const syncState: SyncState = fetched.status;
  const unsent: number = (await client.sync.status()).unsent;
  const offSync = client.on('sync_status', (e) => {
    const who: string[] = e.peers.map((p: SyncPeer) => `${p.name} ${p.chapter ?? ''} ${p.cursor ?? 0}`);
    console.log(e.project, e.status, e.unsent, e.reason, e.url, who);
  });
  offSync();
  await client.sync.disconnect(shared.project);
  // @ts-expect-error: a token is required.
  await client.sync.connect({ url: 'ws://127.0.0.1:1234' });
  void [syncState, unsent];
  // A model running in the browser: its files, its loading, and its progress.
  await client.settings.set({ provider: 'local', model: '/models/SmolLM2-135M-Instruct.Q4_1.gguf', contextSize: 2048, threads: null });
  const offProgress = client.on('model_progress', (e) => console.log(e.url, e.phase, e.loaded, e.total, e.error));
  const ready: LocalModelLoaded = await client.localModels.load();
  const keptModels: LocalModels = await client.localModels.list();
  const keptBytes: number = keptModels.models.reduce((sum, m) => sum + m.size, 0) + ready.size;
  const modelBytes: number | null = (await client.storageEstimate()).models;
  if (keptModels.models[0]) await client.localModels.delete(keptModels.models[0].url);
  offProgress();
  await client.run('List the chapters.', { toolset: 'quick', toolChoice: 'required' });
  const card = await client.run('Describe chapter 1.', { output: { schema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] }, name: 'card' } }).result;
  const structured: Record<string, unknown> | undefined = card.output;
  void structured;
  void [keptBytes, modelBytes];
  // MCP tool servers: configured in the settings, listed with their tools.
  await client.settings.set({ mcpServers: [{ name: 'style', url: 'http://127.0.0.1:8790/mcp', headers: { Authorization: 'Bearer t' } }], approvalPolicies: { 'mcp__style__*': 'permissive' } });
  const offMcp = client.on('mcp_changed', (e) => console.log(e.servers.map((s) => s.status)));
  const mcpServers: McpServers = await client.mcp.servers();
  const mcpTools: string[] = mcpServers.servers.flatMap((s) => s.tools.map((t) => t.name));
  await client.mcp.connect('style');
  offMcp();
  void mcpTools;
  // A request by type: its params and result are the generated protocol types.
  const reopened: ProjectSummary = await client.request('open_project', { id: created.id });
  const all = await client.request('list_projects');
  console.log(reopened.chapters.length, all.projects[0]?.createdMs, all.current);
  // @ts-expect-error: `open_project` takes `id`, not `name`.
  await client.request('open_project', { name: 'Novel' });
  try {
    await client.request('no_such_request' as RequestType);
  } catch (err) {
    if (err instanceof DraftsmithError) {
      const code: ErrorCode = err.code;
      console.log(code, err.message);
    }
  }
  // This tab's worker, with the in-browser model's runtime.
  const worker = await client.workerStatus();
  const runtime: 'multi-thread' | 'single-thread' = worker.localModel.runtime;
  const loadedModel: string | null = worker.localModel.loaded;
  console.log(worker.role, runtime, loadedModel, worker.localModel.threads, worker.localModel.crossOriginIsolated);
  // The bridge the worker hands the core, on its own.
  const bridge = new LocalModel();
  const info: LocalModelInfo = await bridge.load({ url: '/models/model.gguf', contextSize: 2048, threads: 2 }, (loaded, total) => console.log(loaded / total));
  const answer = await bridge.chat(JSON.stringify({ model: info.url, messages: [{ role: 'user', content: 'Hi' }] }), new AbortController().signal);
  const events: ReadableStream<Uint8Array> = answer.body;
  const stored: StoredModel[] = await bridge.list();
  const deletedModel: boolean = await bridge.remove(info.url);
  console.log(answer.status, events.locked, stored.length, deletedModel, bridge.status().runtime, info.multiThread, info.toolTemplate);
  await bridge.exit();
  client.close();
  void [entry, pipelines, speakers, routing, replaced, toolbox, deleted, agentsNow, startedWith];
  void [pendingSuggestions, line, acceptedAs, thought, afterMs];
  void [order, capabilities, persisted, usage, md, text, kept, ok, rebased, history, catalog, memory, found, block, written, trashed, until, restored, settings, current, status, waiting, strict, windowMs, mtl, characters, span, notesOrigin, gone, pausedRuns, resumed, denied];
}

// What the Jobs panel says about a job, its units and a unit's transcript, as plain data and
// text (no DOM): titles, progress, the start form's parameters and a transcript's entries.
// Kept apart from jobs.js so that node tests can check it without a browser.

/** rentl's phases, in the order a pipeline runs them. */
export const PHASES = [
  { name: 'context', label: 'Context', about: 'per scene: summary, tags, characters, locations, glossary; per route: the outline; then the three curators' },
  { name: 'translation', label: 'Translation', about: 'per scene: the translator' },
  { name: 'editing', label: 'Editing', about: 'per scene: style check, translation review, consistency' },
];

/** Job states after which nothing more happens. */
export const FINAL_STATES = new Set(['done', 'failed', 'cancelled']);

/** How each state reads. */
const STATE_TEXT = {
  queued: 'queued',
  running: 'running',
  waiting_approval: 'waiting for your approval',
  paused: 'paused',
  done: 'done',
  failed: 'failed',
  cancelled: 'cancelled',
};

export const stateText = (state) => STATE_TEXT[state] ?? String(state ?? '').replace(/_/g, ' ');

/** A phase's label (its name when unknown; `run` for a background run's one unit). */
export const phaseLabel = (name) => (name === 'run' ? 'Run' : PHASES.find((p) => p.name === name)?.label ?? String(name ?? ''));

/** Whole percent of `done` out of `total` (a job of no units is complete: 100). */
export function percent(done, total) {
  if (!(total > 0)) return 100;
  return Math.max(0, Math.min(100, Math.floor((done * 100) / total)));
}

/** The units a job has finished with (done or failed): what its overall bar shows. */
export const finishedUnits = (job) => (job?.progress?.done ?? 0) + (job?.progress?.failed ?? 0);

/** Text cut to `max` chars on one line. */
export function clip(text, max = 80) {
  const line = String(text ?? '').replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** What a pipeline works on, as the writer reads it. */
export function scopeText(scope) {
  if (scope === undefined || scope === null || scope === 'all') return 'all scenes';
  if (Array.isArray(scope.scenes)) return scope.scenes.length === 1 ? `scene ${scope.scenes[0]}` : `${scope.scenes.length} scenes`;
  if (scope.route) return `route ${scope.route}`;
  return 'all scenes';
}

/** A job's one-line title: `Pipeline · context → translation` or `Run · “the prompt”`. */
export function jobTitle(job) {
  const params = job?.params ?? {};
  if (job?.kind === 'run' || params.kind === 'run') {
    const who = params.agent ?? params.preset;
    return `Run${who ? ` · ${who}` : ''} · “${clip(params.prompt, 48)}”`;
  }
  if (job?.kind === 'research') {
    const urls = params.urls ?? [];
    return urls.length === 1 ? `Research · ${clip(urls[0], 60)}` : `Research · ${urls.length} pages`;
  }
  const phases = params.phases?.length ? params.phases : job?.phases?.length ? job.phases.map((p) => p.name) : ['context'];
  return `Pipeline · ${phases.map(phaseLabel).join(' → ')}`;
}

/** The job's parameters in a line: scope, overwrite, concurrency. */
export function jobDetails(job) {
  const params = job?.params ?? {};
  if (job?.kind === 'run' || params.kind === 'run') return 'a background agent run';
  if (job?.kind === 'research') return `web pages read into research notes · ${params.concurrency ?? 3} at once`;
  const parts = [scopeText(params.scope), params.allowOverwrite ? 'overwrite allowed' : 'no overwrite', `${params.concurrency ?? 3} at once`];
  return parts.join(' · ');
}

/** The counts line: `12 of 40 units done · 1 failed · 2 waiting for you`. */
export function countsText(job) {
  const p = job?.progress ?? { done: 0, failed: 0, waiting: 0, total: 0 };
  const parts = [`${p.done} of ${p.total} ${p.total === 1 ? 'unit' : 'units'} done`];
  if (p.failed) parts.push(`${p.failed} failed`);
  if (p.waiting) parts.push(`${p.waiting} waiting for you`);
  return parts.join(' · ');
}

/** A unit's target as the writer reads it. */
export function targetText(target) {
  if (!target || target.kind === 'project') return 'the whole project';
  const id = String(target.id ?? '');
  return id.toLowerCase().startsWith(target.kind) ? id : `${target.kind} ${id}`.trim();
}

/** The agent and target of a unit id (`<phase>:<agent>:<target>`), when only its id is known. */
export function unitIdText(id) {
  const [, agent, ...rest] = String(id ?? '').split(':');
  if (!agent) return String(id ?? '');
  const target = rest.join(':');
  return `${agent} on ${target === 'project' || !target ? 'the whole project' : target}`;
}

/** A unit's line: `scene_summary_detailer on scene scene_1`. */
export const unitText = (unit) => `${unit.agent} on ${targetText(unit.target)}`;

/** The running units, as a line ('' when none). */
export function currentText(job) {
  const current = job?.progress?.current ?? [];
  if (!current.length) return '';
  const shown = current.slice(0, 4).map(unitIdText);
  return `Running: ${shown.join(', ')}${current.length > shown.length ? ` and ${current.length - shown.length} more` : ''}`;
}

/**
 * Which actions a job in this state offers. `pausing`: the writer paused it and its running
 * units are finishing (the core keeps it `running` until they have): it offers Resume.
 */
export function jobActions(state, pausing = false) {
  if (FINAL_STATES.has(state)) return { pause: false, resume: false, cancel: false };
  const paused = state === 'paused' || pausing;
  return { pause: !paused, resume: paused, cancel: true };
}

/** The job id of a job unit's run id (`job:<job>:<unit>`), given the known job ids; else null. */
export function jobOfRun(run, jobIds = []) {
  if (typeof run !== 'string' || !run.startsWith('job:')) return null;
  const rest = run.slice(4);
  const known = [...jobIds].filter((id) => rest.startsWith(`${id}:`)).sort((a, b) => b.length - a.length)[0];
  if (known) return known;
  const colon = rest.indexOf(':');
  return colon > 0 ? rest.slice(0, colon) : rest || null;
}

/** The unit id of a job unit's run id, given its job id. */
export function unitOfRun(run, job) {
  const prefix = `job:${job}:`;
  return typeof run === 'string' && run.startsWith(prefix) ? run.slice(prefix.length) : null;
}

/**
 * The start form's values -> `start_job` params, or `{error}`.
 * `values`: {phases: [names], scope: 'all' | 'route:<id>' | 'scenes', scenes: [ids], allowOverwrite, concurrency}.
 */
export function startParams(values) {
  const phases = PHASES.map((p) => p.name).filter((name) => values.phases?.includes(name));
  if (!phases.length) return { error: 'Choose at least one phase.' };
  const concurrency = Number(values.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 8) return { error: 'Concurrency is a whole number from 1 to 8.' };
  let scope = 'all';
  if (typeof values.scope === 'string' && values.scope.startsWith('route:')) scope = { route: values.scope.slice(6) };
  else if (values.scope === 'scenes') {
    const scenes = (values.scenes ?? []).filter(Boolean);
    if (!scenes.length) return { error: 'Choose at least one scene.' };
    scope = { scenes };
  }
  return { params: { kind: 'pipeline', phases, scope, allowOverwrite: !!values.allowOverwrite, concurrency } };
}

/** A tool result's text, parsed: `{status, text}` (the data as indented JSON when it is one). */
export function resultText(text) {
  let parsed = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { status: null, text: String(text ?? '') };
  }
  if (parsed && typeof parsed === 'object' && 'status' in parsed && 'data' in parsed) {
    const data = parsed.data;
    if (parsed.status === 'error' && data && typeof data === 'object' && data.message) {
      return { status: 'error', text: `${data.code ? `${data.code}: ` : ''}${data.message}` };
    }
    return { status: String(parsed.status), text: typeof data === 'string' ? data : JSON.stringify(data, null, 2) };
  }
  return { status: null, text: JSON.stringify(parsed, null, 2) };
}

/**
 * A transcript as entries to show, in order: `{kind: 'task'|'assistant'|'user', text}`, the
 * assistant's calls as `{kind: 'call', id, name, arguments, result: {status, text} | null}`
 * (each result under its call), and a result whose call is not in the transcript as
 * `{kind: 'result', name, status, text}`.
 */
export function transcriptEntries(transcript) {
  const entries = [];
  const calls = new Map();
  let first = true;
  for (const m of transcript ?? []) {
    if (m.role === 'user') {
      entries.push({ kind: first ? 'task' : 'user', text: m.text ?? '' });
      first = false;
    } else if (m.role === 'assistant') {
      if (m.text) entries.push({ kind: 'assistant', text: m.text });
      for (const call of m.toolCalls ?? []) {
        const entry = { kind: 'call', id: call.id, name: call.name, arguments: call.arguments ?? {}, result: null };
        calls.set(call.id, entry);
        entries.push(entry);
      }
    } else if (m.role === 'tool') {
      const parsed = resultText(m.text);
      const call = m.toolCallId ? calls.get(m.toolCallId) : null;
      if (call && !call.result) call.result = parsed;
      else entries.push({ kind: 'result', name: m.name ?? '', ...parsed });
    }
  }
  return entries;
}

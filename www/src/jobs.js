// The Jobs panel: start one of rentl's pipelines on the story bible's scenes (its phases,
// scope, overwrite and concurrency), follow each job (a progress bar overall and one per
// phase, the units running now), pause, resume or cancel it, list its units and read a unit's
// transcript. Calls a job's subagents ask the writer to approve show here under their job
// (and in the chat). `job_progress` / `job_finished` events keep it live; after a reload it
// lists the project's jobs again, and an unfinished job goes on in the new worker.
import { $, el } from './dom.js';
import {
  PHASES,
  FINAL_STATES,
  stateText,
  phaseLabel,
  percent,
  finishedUnits,
  clip,
  jobTitle,
  jobDetails,
  countsText,
  currentText,
  jobActions,
  jobOfRun,
  unitText,
  targetText,
  startParams,
  transcriptEntries,
} from './jobs-view.js';

const state = {
  client: null,
  project: null,
  /** id -> JobView (without units) */
  jobs: new Map(),
  /** id -> its node */
  nodes: new Map(),
  /** job id -> Map(unit id -> UnitView), for the jobs whose units were listed */
  units: new Map(),
  /** Makes an approval card's node (app.js: the same card as in the chat). */
  cardNode: null,
  /** Jobs the writer paused whose running units are still finishing (the core says `running`). */
  pausing: new Set(),
  /** Approval cards waiting to be shown until their job is known: job id -> [card] */
  orphanCards: new Map(),
  /** Bible entities by kind (the story bible panel's state). */
  bible: null,
  loadSeq: 0,
};

// ---------------------------------------------------------------- progress bars

/** A labelled progress bar, with its ARIA values (`progressbar` role). */
function bar(label, testid) {
  return el('progress', { class: 'job-bar', testid, 'aria-label': label, max: '1', value: '0', 'aria-valuemin': '0', 'aria-valuemax': '100', 'aria-valuenow': '0' });
}

function setBar(node, done, total) {
  const pct = percent(done, total);
  node.max = Math.max(total, 1);
  node.value = total > 0 ? done : 1;
  node.setAttribute('aria-valuenow', String(pct));
  node.setAttribute('aria-valuetext', `${pct} % (${done} of ${total})`);
  node.dataset.done = String(done);
  node.dataset.total = String(total);
}

// ---------------------------------------------------------------- a job

function jobNode(job) {
  const title = jobTitle(job);
  const titleId = `job-title-${job.id}`;
  const action = (name, text, run) =>
    el('button', { type: 'button', class: `job-${name}`, testid: `job-${name}`, 'aria-label': `${text} job: ${title}`, onclick: () => act(job.id, run) }, text);
  const node = el(
    'li',
    { class: 'job', testid: 'job', 'data-job': job.id, 'aria-labelledby': titleId },
    el(
      'div',
      { class: 'job-head' },
      el('strong', { class: 'job-title', testid: 'job-title', id: titleId }, title),
      el('span', { class: 'job-state', testid: 'job-state' }),
    ),
    el('div', { class: 'job-details', testid: 'job-details' }),
    el(
      'div',
      { class: 'job-overall' },
      el('span', { class: 'job-bar-label' }, 'Overall'),
      bar(`Overall progress: ${title}`, 'job-progress'),
      el('span', { class: 'job-percent', testid: 'job-percent' }),
    ),
    el('div', { class: 'job-counts', testid: 'job-counts' }),
    el('ul', { class: 'job-phases', testid: 'job-phases', 'aria-label': 'Phases' }),
    el('div', { class: 'job-current', testid: 'job-current' }),
    el('p', { class: 'job-error', testid: 'job-error', role: 'alert', hidden: true }),
    el(
      'div',
      { class: 'job-buttons' },
      action('pause', 'Pause', (c, id) => (state.pausing.add(id), c.pauseJob(id))),
      action('resume', 'Resume', (c, id) => (state.pausing.delete(id), c.resumeJob(id))),
      action('cancel', 'Cancel', (c, id) => c.cancelJob(id)),
    ),
    el('p', { class: 'job-message message', testid: 'job-message', role: 'status' }),
    el('ol', { class: 'job-approvals', testid: 'job-approvals', 'aria-label': `Waiting for your approval: ${title}` }),
    el(
      'details',
      { class: 'job-units', testid: 'job-units', ontoggle: (e) => e.target.open && loadUnits(job.id) },
      el('summary', {}, 'Units'),
      el('ol', { class: 'unit-list', testid: 'unit-list' }),
    ),
  );
  return node;
}

/** Show a job's state, bars, counts and buttons (making its node if it has none). */
function renderJob(job) {
  let node = state.nodes.get(job.id);
  if (!node) {
    node = jobNode(job);
    state.nodes.set(job.id, node);
    placeJob(node, job);
    for (const card of state.orphanCards.get(job.id) ?? []) showJobApproval(card);
    state.orphanCards.delete(job.id);
  }
  node.dataset.state = job.state;
  if (job.state !== 'running') state.pausing.delete(job.id);
  const pausing = state.pausing.has(job.id);
  const q = (id) => node.querySelector(`[data-testid="${id}"]`);
  q('job-state').textContent = pausing ? 'pausing: the running units finish' : stateText(job.state);
  q('job-details').textContent = `${jobDetails(job)} · started ${new Date(job.createdMs).toLocaleTimeString()}`;
  const total = job.progress?.total ?? 0;
  const finished = finishedUnits(job);
  setBar(q('job-progress'), finished, total);
  q('job-percent').textContent = `${percent(finished, total)} %`;
  q('job-counts').textContent = countsText(job);
  renderPhases(q('job-phases'), job);
  q('job-current').textContent = FINAL_STATES.has(job.state) ? '' : currentText(job);
  const error = q('job-error');
  error.textContent = job.error ?? '';
  error.hidden = !job.error;
  const actions = jobActions(job.state, pausing);
  for (const name of ['pause', 'resume', 'cancel']) {
    const button = q(`job-${name}`);
    button.hidden = !actions[name];
  }
  const units = node.querySelector('[data-testid="job-units"] > summary');
  units.textContent = `Units (${total})`;
}

function renderPhases(list, job) {
  const phases = job.phases ?? [];
  for (const [i, phase] of phases.entries()) {
    let item = list.children[i];
    if (!item || item.dataset.phase !== phase.name) {
      const label = phaseLabel(phase.name);
      item = el(
        'li',
        { class: 'job-phase', testid: 'job-phase', 'data-phase': phase.name },
        el('span', { class: 'job-bar-label' }, label),
        bar(`${label} phase`, 'phase-progress'),
        el('span', { class: 'phase-count', testid: 'phase-count' }),
      );
      if (list.children[i]) list.children[i].replaceWith(item);
      else list.append(item);
    }
    setBar(item.querySelector('progress'), phase.done, phase.total);
    item.querySelector('.phase-count').textContent = `${phase.done} / ${phase.total}`;
  }
  while (list.children.length > phases.length) list.lastElementChild.remove();
}

/** Newest first. */
function placeJob(node, job) {
  const list = $('jobs-list');
  const after = [...list.children].find((n) => (state.jobs.get(n.dataset.job)?.createdMs ?? 0) < job.createdMs);
  list.insertBefore(node, after ?? null);
  $('jobs-empty').hidden = true;
}

function setJob(job) {
  if (!job?.id) return;
  const { units, ...view } = job;
  state.jobs.set(job.id, view);
  renderJob(view);
  if (units) {
    state.units.set(job.id, new Map(units.map((u) => [u.id, u])));
    renderUnits(job.id);
  }
}

/** Pause, resume or cancel. */
async function act(id, run) {
  const node = state.nodes.get(id);
  const message = node?.querySelector('[data-testid="job-message"]');
  const buttons = node ? [...node.querySelectorAll('.job-buttons button')] : [];
  for (const b of buttons) b.disabled = true;
  try {
    setJob(await run(state.client, id));
    if (message) message.textContent = '';
  } catch (err) {
    state.pausing.delete(id);
    if (message) {
      message.textContent = err.message;
      message.classList.add('error');
    }
  } finally {
    for (const b of buttons) b.disabled = false;
  }
}

// ---------------------------------------------------------------- units

async function loadUnits(id) {
  try {
    setJob(await state.client.jobStatus(id));
  } catch (err) {
    const list = state.nodes.get(id)?.querySelector('[data-testid="unit-list"]');
    list?.replaceChildren(el('li', { class: 'error' }, `Could not list the units: ${err.message}`));
  }
}

function unitRow(jobId, unit) {
  const label = unitText(unit);
  return el(
    'li',
    { class: 'unit', testid: 'job-unit', 'data-unit': unit.id, 'data-phase': unit.phase, 'data-agent': unit.agent },
    unit.phase ? el('span', { class: 'unit-phase' }, `${phaseLabel(unit.phase)} `) : null,
    el('span', { class: 'unit-agent', testid: 'unit-agent' }, unit.agent),
    ' on ',
    el('span', { class: 'unit-target', testid: 'unit-target' }, targetText(unit.target)),
    ' ',
    el('span', { class: 'unit-state', testid: 'unit-state' }),
    el('div', { class: 'unit-result', testid: 'unit-result' }),
    el('button', { type: 'button', class: 'link', testid: 'unit-open', 'aria-label': `Transcript of ${label}`, onclick: () => openTranscript(jobId, unit.id) }, 'Transcript'),
  );
}

function updateUnitRow(row, unit) {
  row.dataset.state = unit.state;
  row.querySelector('.unit-state').textContent = stateText(unit.state);
  const result = unit.error ? `Error: ${unit.error}` : unit.result ? clip(unit.result.text || `(${unit.result.status}, ${unit.result.steps} steps)`, 160) : '';
  const node = row.querySelector('.unit-result');
  node.textContent = result;
  node.title = unit.error ?? unit.result?.text ?? '';
  node.hidden = !result;
}

function renderUnits(jobId) {
  const list = state.nodes.get(jobId)?.querySelector('[data-testid="unit-list"]');
  const units = state.units.get(jobId);
  if (!list || !units) return;
  const rows = new Map([...list.querySelectorAll(':scope > .unit')].map((r) => [r.dataset.unit, r]));
  const ordered = [...units.values()].map((u) => {
    const row = rows.get(u.id) ?? unitRow(jobId, u);
    updateUnitRow(row, u);
    return row;
  });
  list.replaceChildren(...ordered);
}

function unitChanged(jobId, unit) {
  const units = state.units.get(jobId);
  if (!units || !unit?.id) return;
  units.set(unit.id, unit);
  const list = state.nodes.get(jobId)?.querySelector('[data-testid="unit-list"]');
  const row = list?.querySelector(`:scope > .unit[data-unit="${CSS.escape(unit.id)}"]`);
  if (row) updateUnitRow(row, unit);
  else renderUnits(jobId);
}

// ---------------------------------------------------------------- transcript

const pretty = (value) => JSON.stringify(value ?? {}, (_, v) => (typeof v === 'string' && v.length > 600 ? `${v.slice(0, 600)}… (${v.length} chars)` : v), 2);

function entryNode(e) {
  switch (e.kind) {
    case 'task':
      return el('li', { class: 'tr-task', testid: 'transcript-task' }, el('div', { class: 'tr-role' }, 'Task'), el('pre', {}, e.text));
    case 'user':
      return el('li', { class: 'tr-user' }, el('div', { class: 'tr-role' }, 'Writer'), el('pre', {}, e.text));
    case 'assistant':
      return el('li', { class: 'tr-assistant', testid: 'transcript-assistant' }, el('div', { class: 'tr-role' }, 'Agent'), el('div', { class: 'tr-text' }, e.text));
    case 'call':
      return el(
        'li',
        { class: 'tr-call', testid: 'transcript-call', 'data-tool': e.name, 'data-status': e.result?.status ?? '' },
        el('div', { class: 'tr-role' }, 'Tool call ', el('code', {}, e.name), e.result?.status ? el('span', { class: `tr-status ${e.result.status}` }, ` ${e.result.status}`) : null),
        el('details', {}, el('summary', {}, 'arguments'), el('pre', {}, pretty(e.arguments))),
        e.result ? el('details', { testid: 'transcript-result' }, el('summary', {}, `result: ${clip(e.result.text, 90)}`), el('pre', {}, e.result.text)) : el('div', { class: 'tr-none' }, 'no result'),
      );
    default:
      return el('li', { class: 'tr-call', testid: 'transcript-result' }, el('div', { class: 'tr-role' }, 'Result of ', el('code', {}, e.name || 'a call')), el('pre', {}, e.text));
  }
}

/** What an empty transcript means, by the unit's state (a unit's transcript is saved when it ends or waits). */
const EMPTY_TRANSCRIPT = {
  queued: 'Nothing yet: this unit has not started.',
  running: 'This unit is running: its transcript is shown once it ends or waits for you.',
  cancelled: 'This unit was cancelled before it ended.',
};

async function openTranscript(jobId, unitId) {
  const dialog = $('unit-transcript');
  const body = $('unit-transcript-body');
  $('unit-transcript-title').textContent = `Transcript · ${unitId}`;
  body.replaceChildren(el('p', {}, 'Loading…'));
  dialog.dataset.job = jobId;
  dialog.dataset.unit = unitId;
  if (!dialog.open) dialog.showModal();
  try {
    const { unit, transcript } = await state.client.jobUnit(jobId, unitId);
    $('unit-transcript-title').textContent = `${unitText(unit)} · ${stateText(unit.state)}`;
    const entries = transcriptEntries(transcript);
    body.replaceChildren(
      ...(unit.error ? [el('p', { class: 'error' }, unit.error)] : []),
      entries.length ? el('ol', { class: 'transcript-log', testid: 'transcript-log' }, ...entries.map(entryNode)) : el('p', { testid: 'transcript-empty' }, EMPTY_TRANSCRIPT[unit.state] ?? 'No transcript was kept for this unit.'),
    );
  } catch (err) {
    body.replaceChildren(el('p', { class: 'error' }, `Could not load the transcript: ${err.message}`));
  }
}

// ---------------------------------------------------------------- approvals

/** Show a job unit's waiting call under its job (once). */
export function showJobApproval(card) {
  const jobId = jobOfRun(card?.run, state.jobs.keys());
  if (!jobId || !state.cardNode) return;
  const node = state.nodes.get(jobId);
  if (!node) {
    const list = state.orphanCards.get(jobId) ?? [];
    if (!list.some((c) => c.callId === card.callId && c.run === card.run)) list.push(card);
    state.orphanCards.set(jobId, list);
    return;
  }
  const approvals = node.querySelector('[data-testid="job-approvals"]');
  const key = `${card.run ?? '-'}:${card.callId}`;
  if ([...approvals.children].some((n) => n.dataset.key === key)) return;
  approvals.append(state.cardNode(card));
}

// ---------------------------------------------------------------- the start form

function scopeOptions() {
  const scenes = state.bible?.entities.scene ?? new Map();
  const routes = state.bible?.entities.route ?? new Map();
  const select = $('jobs-scope');
  const wanted = select.value || 'all';
  select.replaceChildren(
    el('option', { value: 'all' }, `All scenes (${scenes.size})`),
    ...[...routes.values()].map((r) => el('option', { value: `route:${r.id}` }, `Route ${r.id} (${r.scene_ids?.length ?? 0} scenes)`)),
    el('option', { value: 'scenes' }, 'Chosen scenes…'),
  );
  select.value = [...select.options].some((o) => o.value === wanted) ? wanted : 'all';
  const picker = $('jobs-scenes');
  const chosen = new Set([...picker.selectedOptions].map((o) => o.value));
  picker.replaceChildren(...[...scenes.values()].map((s) => el('option', { value: s.id, selected: chosen.has(s.id) }, s.chapter ? `${s.id} (chapter ${s.chapter})` : s.id)));
  picker.hidden = select.value !== 'scenes';
  $('jobs-scenes-label').hidden = picker.hidden;
  $('jobs-no-scenes').hidden = scenes.size > 0;
  $('jobs-start').disabled = scenes.size === 0;
}

/** The story bible changed: the scope choices follow. */
export function jobsBibleChanged() {
  if (state.client) scopeOptions();
}

function formMessage(text, isError = false) {
  const node = $('jobs-message');
  node.textContent = text;
  node.classList.toggle('error', isError);
}

async function start(event) {
  event.preventDefault();
  const form = $('jobs-form');
  const { params, error } = startParams({
    phases: [...form.querySelectorAll('input[name="phase"]:checked')].map((i) => i.value),
    scope: $('jobs-scope').value,
    scenes: [...$('jobs-scenes').selectedOptions].map((o) => o.value),
    allowOverwrite: $('jobs-overwrite').checked,
    concurrency: $('jobs-concurrency').value,
  });
  if (error) return formMessage(error, true);
  const button = $('jobs-start');
  button.disabled = true;
  try {
    const job = await state.client.startJob(params);
    setJob(job);
    formMessage(`Started: ${jobTitle(job)} (${job.progress?.total ?? 0} units).`);
  } catch (err) {
    formMessage(`Could not start the pipeline: ${err.message}`, true);
  } finally {
    scopeOptions();
  }
}

// ---------------------------------------------------------------- events and loading

/** A `job_progress` event. */
export function jobProgress(e) {
  if (!state.client || (state.project && e.project !== state.project)) return;
  setJob(e.job);
  if (e.unit) unitChanged(e.job.id, e.unit);
  const dialog = $('unit-transcript');
  if (e.unit && dialog.open && dialog.dataset.job === e.job.id && dialog.dataset.unit === e.unit.id) openTranscript(e.job.id, e.unit.id);
}

/** A `job_finished` event. */
export function jobFinished(e) {
  if (!state.client || (state.project && e.project !== state.project)) return;
  setJob(e.job);
  if (state.units.has(e.job.id)) loadUnits(e.job.id);
}

/** Show the open project's jobs (on boot, after a reload, when another project opens). */
export async function loadJobs(project) {
  const seq = ++state.loadSeq;
  let listing;
  try {
    listing = await state.client.listJobs();
  } catch (err) {
    // A core without jobs (or no project yet): the panel says so.
    $('jobs-empty').textContent = `Jobs are not available: ${err.message}`;
    $('jobs-empty').hidden = false;
    return;
  }
  if (seq !== state.loadSeq) return;
  if (project !== state.project) {
    state.project = project;
    state.jobs.clear();
    state.nodes.clear();
    state.units.clear();
    state.orphanCards.clear();
    $('jobs-list').replaceChildren();
  }
  for (const job of listing.jobs ?? []) {
    setJob(job);
    if (state.units.has(job.id)) loadUnits(job.id);
  }
  $('jobs-empty').textContent = 'No jobs yet.';
  $('jobs-empty').hidden = state.jobs.size > 0;
  scopeOptions();
}

/** Set up the panel: `cardNode(card)` makes an approval card (the chat's). */
export function initJobs(client, { cardNode, bible }) {
  state.client = client;
  state.cardNode = cardNode;
  state.bible = bible;
  const phases = $('jobs-phases');
  phases.append(
    ...PHASES.map((p) =>
      el('label', { class: 'check', title: p.about }, el('input', { type: 'checkbox', name: 'phase', value: p.name, testid: `jobs-phase-${p.name}`, checked: p.name === 'context' }), ` ${p.label}`),
    ),
  );
  $('jobs-form').addEventListener('submit', start);
  $('jobs-scope').addEventListener('change', scopeOptions);
  $('unit-transcript-close').addEventListener('click', () => $('unit-transcript').close());
  scopeOptions();
}

/** For tests and the console. */
export const jobsState = state;

// The Research panel: the writer reads web pages into research notes (a URL field starts a
// background research job, one unit per page, with its progress), and one list shows every
// research note of the project, the agents' (`research_url`) and the writer's, marked by
// source, newest first, with a delete button each. `research_changed` keeps the list live,
// `job_progress` / `job_finished` the jobs'.
import { $, el } from './dom.js';

const state = {
  client: null,
  project: null,
  /** Research jobs shown: id -> JobView. */
  jobs: new Map(),
  loadSeq: 0,
};

/** The URLs typed in the field (separated by spaces, commas or lines). */
export function urlsOf(text) {
  return String(text)
    .split(/[\s,]+/)
    .map((u) => u.trim())
    .filter(Boolean);
}

function message(text, error = false) {
  const node = $('research-message');
  node.textContent = text;
  node.classList.toggle('error', error);
}

const when = (ms) => new Date(ms).toLocaleString();

/** Who asked, as the list says it. */
export function sourceText(note) {
  return note.source === 'agent' ? `agent ${note.askedBy.replace(/^agent:/, '')}` : 'you';
}

function noteNode(note) {
  const titleId = `research-title-${note.id}`;
  return el(
    'li',
    { class: `research-note source-${note.source}`, testid: 'research-note', 'data-note': note.id, 'data-source': note.source, 'aria-labelledby': titleId },
    el(
      'div',
      { class: 'research-head' },
      el('a', { id: titleId, class: 'research-title', testid: 'research-title', href: note.url, target: '_blank', rel: 'noopener noreferrer' }, note.title),
      el('span', { class: `badge research-source ${note.source}`, testid: 'research-source', title: note.askedBy }, sourceText(note)),
    ),
    el('div', { class: 'research-url', testid: 'research-url' }, note.url),
    el('div', { class: 'research-meta hint' }, `${when(note.fetchedMs)} · ${note.chars} characters${note.fetches > 1 ? ` · read ${note.fetches} times` : ''}`),
    el('p', { class: 'research-preview', testid: 'research-preview' }, note.preview),
    el(
      'button',
      { type: 'button', class: 'research-delete', testid: 'research-delete', 'aria-label': `Delete research note: ${note.title}`, onclick: () => remove(note) },
      'Delete',
    ),
  );
}

async function remove(note) {
  try {
    await state.client.researchDelete(note.id);
    message(`Deleted “${note.title}”.`);
  } catch (err) {
    message(err.message, true);
  }
  await loadNotes();
}

/** Show the project's notes (again). */
export async function loadNotes() {
  if (!state.client || !state.project) return;
  const seq = ++state.loadSeq;
  let listing;
  try {
    listing = await state.client.researchList();
  } catch (err) {
    message(`could not list the research: ${err.message}`, true);
    return;
  }
  if (seq !== state.loadSeq) return;
  $('research-list').replaceChildren(...listing.notes.map(noteNode));
  $('research-empty').hidden = listing.notes.length > 0;
  $('research-count').textContent = listing.count
    ? `${listing.count} notes, ${Math.round(listing.bytes / 1024)} KB (at most ${listing.limits.notes} notes; the oldest go first)`
    : '';
}

// ---------------------------------------------------------------- jobs

function jobNode(job) {
  return el(
    'li',
    { class: 'research-job', testid: 'research-job', 'data-job': job.id },
    el('span', { class: 'research-job-state', testid: 'research-job-state' }),
    el('progress', { class: 'job-bar', testid: 'research-job-progress', 'aria-label': 'Research progress', max: '1', value: '0', 'aria-valuemin': '0', 'aria-valuemax': '100', 'aria-valuenow': '0' }),
    el('ul', { class: 'research-job-units', testid: 'research-job-units' }),
  );
}

function renderJob(job, unit) {
  let node = document.querySelector(`[data-testid="research-job"][data-job="${CSS.escape(job.id)}"]`);
  if (!node) {
    node = jobNode(job);
    $('research-jobs').prepend(node);
  }
  const { done, failed, total } = job.progress;
  const settled = done + failed;
  const pct = total ? Math.round((100 * settled) / total) : 100;
  const bar = node.querySelector('progress');
  bar.max = Math.max(total, 1);
  bar.value = settled;
  bar.setAttribute('aria-valuenow', String(pct));
  bar.setAttribute('aria-valuetext', `${pct} % (${settled} of ${total})`);
  node.querySelector('[data-testid="research-job-state"]').textContent = `${job.state.replace('_', ' ')}: ${done} of ${total} pages read${failed ? `, ${failed} failed` : ''}`;
  node.dataset.state = job.state;
  if (unit?.url) {
    const list = node.querySelector('ul');
    let item = [...list.children].find((li) => li.dataset.unit === unit.id);
    if (!item) {
      item = el('li', { 'data-unit': unit.id, testid: 'research-job-unit' });
      list.append(item);
    }
    item.dataset.state = unit.state;
    item.textContent = `${unit.url}: ${unit.state === 'done' ? `read “${unit.result?.title ?? ''}”` : unit.state === 'failed' ? unit.error ?? 'failed' : unit.state}`;
    item.classList.toggle('error', unit.state === 'failed');
  }
}

/** A `job_progress` or `job_finished` event of the open project. */
export function researchJobEvent(e) {
  if (e.job?.kind !== 'research') return;
  state.jobs.set(e.job.id, e.job);
  renderJob(e.job, e.unit);
}

async function start(event) {
  event.preventDefault();
  const urls = urlsOf($('research-url').value);
  if (!urls.length) {
    message('Type the address of a page (https://…), or several separated by spaces.', true);
    return;
  }
  const button = $('research-start');
  button.disabled = true;
  try {
    const job = await state.client.researchUrls(urls);
    state.jobs.set(job.id, job);
    renderJob(job);
    $('research-url').value = '';
    message(urls.length === 1 ? `Reading ${urls[0]}…` : `Reading ${urls.length} pages…`);
  } catch (err) {
    message(err.message, true);
  } finally {
    button.disabled = false;
  }
}

/** Show the research of `project` (after opening or reloading it). */
export async function loadResearch(project) {
  state.project = project ?? null;
  state.jobs.clear();
  $('research-jobs').replaceChildren();
  message('');
  if (!project) return;
  await loadNotes();
  try {
    const { jobs } = await state.client.listJobs();
    for (const listed of jobs.filter((j) => j.kind === 'research').slice(0, 5).reverse()) {
      const job = await state.client.jobStatus(listed.id);
      researchJobEvent({ job });
      for (const unit of job.units ?? []) researchJobEvent({ job, unit });
    }
  } catch {
    // The jobs list is only a convenience here.
  }
}

/** A `research_changed` event. */
export function researchChanged(e) {
  if (e.project && e.project !== state.project) return;
  loadNotes();
}

export function initResearch(client) {
  state.client = client;
  $('research-form').addEventListener('submit', start);
}

// The Analysis panel: the latest `run_analysis` result of the open project, whoever asked for
// it (the writer here, an agent in the chat or a job), as the core announces it with the
// `analysis` event; and a form to run one: the full analysis or one section (pacing,
// characters, plot, setting), over the manuscript or the open chapter. A scene's heading
// scrolls the editor to it. The latest result is kept in this browser (localStorage, per
// project), so a reload shows it again.
import { $, el } from './dom.js';

const state = {
  client: null,
  project: null,
  /** The open chapter's id (the form's "this chapter"). */
  chapter: () => null,
  /** The latest `analysis` event of the open project. */
  latest: null,
};

const SECTIONS = [
  ['', 'Full analysis'],
  ['pacing', 'Pacing'],
  ['characters', 'Characters'],
  ['plot', 'Plot outline'],
  ['setting', 'Setting'],
];

/** The pacing figures a scene reports, as the panel labels them. */
const PACING = [
  ['avg_sentence_words', 'words per sentence', (v) => v.toFixed(1)],
  ['short_sentence_ratio', 'short sentences', (v) => `${Math.round(v * 100)}%`],
  ['dialogue_ratio', 'dialogue', (v) => `${Math.round(v * 100)}%`],
  ['action_density', 'action', (v) => `${(v * 100).toFixed(1)}%`],
  ['paragraphs_per_1000_words', 'paragraphs per 1000 words', (v) => v.toFixed(1)],
];

function message(text, error = false) {
  const node = $('analysis-message');
  node.textContent = text;
  node.classList.toggle('error', error);
}

const who = (origin) => (origin === 'user' ? 'you' : String(origin).replace(/^agent:/, 'agent '));

/** A chapter's line: "Chapter 2 · Morning · 1,234 words". */
const chapterHead = (c) => [`Chapter ${c.chapterNumber}`, c.chapterTitle, c.words != null ? `${c.words.toLocaleString()} words` : null].filter(Boolean).join(' · ');

/** Scroll the editor to a scene (the writer's own navigation). */
function goTo(chapter, position) {
  state.client.execute('scroll_to_position', { chapter, position }, { origin: 'user' }).catch((err) => message(err.message, true));
}

function sceneTitle(chapter, scene) {
  const title = scene.heading || `Scene ${scene.index + 1}`;
  return el('button', { type: 'button', class: 'link', testid: 'analysis-scene', title: 'Show in the editor', onclick: () => goTo(chapter.chapter, scene.start) }, title);
}

/** A per-chapter section (pacing, plot): each chapter's head, then a line per scene. */
function chaptersNode(section, label, report, sceneLine) {
  return el(
    'section',
    { class: 'analysis-section', testid: `analysis-${section}`, 'data-section': section },
    el('h4', {}, label),
    ...(report?.chapters ?? []).map((c) =>
      el('div', { class: 'analysis-chapter' }, el('div', { class: 'analysis-chapter-head' }, chapterHead(c)), el('ol', { class: 'analysis-scenes' }, ...(c.scenes ?? []).map((s) => el('li', {}, sceneTitle(c, s), ...sceneLine(s))))),
    ),
  );
}

const pacingNode = (report) =>
  chaptersNode('pacing', 'Pacing', report, (s) => [
    ` · ${s.words} words`,
    ...PACING.filter(([key]) => typeof s.pacing?.[key] === 'number').map(([key, label, show]) => ` · ${label} ${show(s.pacing[key])}`),
  ]);

const plotNode = (report) => chaptersNode('plot', 'Plot outline', report, (s) => [s.kind ? ` (${s.kind})` : '', s.opening ? `: ${s.opening}` : '']);

function charactersNode(report) {
  const names = report?.characters ?? [];
  return el(
    'section',
    { class: 'analysis-section', testid: 'analysis-characters', 'data-section': 'characters' },
    el('h4', {}, 'Characters'),
    names.length
      ? el('ul', {}, ...names.map((n) => el('li', { 'data-name': n.name }, el('strong', {}, n.name), ` · ${n.mentions} mentions`, n.chapters?.length ? ` · chapters ${n.chapters.map((c) => c.chapterNumber).join(', ')}` : '')))
      : el('p', { class: 'hint' }, 'No names found.'),
    report?.note ? el('p', { class: 'hint' }, report.note) : null,
  );
}

function settingNode(report) {
  const places = report?.places ?? [];
  return el(
    'section',
    { class: 'analysis-section', testid: 'analysis-setting', 'data-section': 'setting' },
    el('h4', {}, 'Setting'),
    places.length ? el('ul', {}, ...places.map((p) => el('li', { 'data-place': p.place }, el('strong', {}, p.place), ` · ${p.mentions} mentions`))) : el('p', { class: 'hint' }, 'No places found.'),
  );
}

const SECTION_NODES = { pacing: pacingNode, plot: plotNode, characters: charactersNode, setting: settingNode };

/** The model's reading of the figures, or why there is none. */
function interpretationNode(reading) {
  if (reading === undefined || reading === null) return null;
  const text = typeof reading === 'string' ? reading : reading.error ? `No reading: ${reading.error}` : JSON.stringify(reading);
  return el('section', { class: 'analysis-section', testid: 'analysis-interpretation' }, el('h4', {}, 'Reading'), el('p', { class: 'analysis-reading' }, text));
}

/** Show the latest result (or say there is none yet). */
function render() {
  const latest = state.latest;
  $('analysis-empty').hidden = Boolean(latest);
  const body = $('analysis-result');
  if (!latest) {
    body.replaceChildren();
    return;
  }
  const r = latest.result ?? {};
  const sections = r.section === 'full' ? ['pacing', 'characters', 'plot', 'setting'].map((s) => SECTION_NODES[s](r[s])) : [SECTION_NODES[r.section]?.(r)];
  body.dataset.section = r.section ?? '';
  const parts = [
    el(
      'p',
      { class: 'analysis-meta', testid: 'analysis-meta' },
      `${r.section === 'full' ? 'Full analysis' : `${r.section ?? 'Analysis'}`} of the ${r.scope ?? 'manuscript'}, by ${who(latest.origin)}, ${new Date(latest.atMs).toLocaleTimeString()}`,
    ),
    interpretationNode(r.interpretation),
    ...sections,
    r.suggestions?.length ? el('section', { class: 'analysis-section' }, el('h4', {}, 'Suggestions'), el('ul', {}, ...r.suggestions.map((s) => el('li', {}, s)))) : null,
  ];
  body.replaceChildren(...parts.filter(Boolean));
}

const storageKey = (project) => `draftsmith.analysis.${project}`;

/** The latest result kept for a project, or null. */
function kept(project) {
  try {
    const e = JSON.parse(localStorage.getItem(storageKey(project)) ?? 'null');
    return e?.project === project ? e : null;
  } catch {
    return null; // storage off, or not JSON
  }
}

/** An `analysis` event: the latest result, kept and shown if it is the open project's. */
export function analysisEvent(e) {
  const { remote, ...event } = e;
  try {
    localStorage.setItem(storageKey(event.project), JSON.stringify(event));
  } catch {
    // Storage off or full: the panel still shows it until the page closes.
  }
  if (event.project !== state.project) return;
  state.latest = event;
  render();
}

/** The open project changed: its latest result, as this browser kept it. */
export function analysisProject(project) {
  if (project === state.project) return;
  state.project = project;
  state.latest = project ? kept(project) : null;
  render();
}

/**
 * A `progress` event of `run_analysis` in the open project (the writer's, an agent's or a
 * job's): the panel says which section is under way.
 */
export function analysisProgress(e) {
  if (e.task !== 'run_analysis' || e.project !== state.project || e.done >= e.total) return;
  message(`Analyzing… ${e.stage} (${e.done + 1} of ${e.total})`);
}

async function run(event) {
  event.preventDefault();
  const args = { interpret: $('analysis-interpret').checked };
  const section = $('analysis-section').value;
  if (section) args.section = section;
  if ($('analysis-scope').value === 'chapter') {
    const chapter = state.chapter();
    if (!chapter) return message('Open a chapter first.', true);
    args.chapter = chapter;
  }
  const button = $('analysis-run');
  button.disabled = true;
  message('Analyzing…');
  try {
    // The result is shown from the `analysis` event, as an agent's is.
    const result = await state.client.execute('run_analysis', args, { origin: 'user' });
    message(result.status === 'success' ? '' : result.data?.message ?? 'The analysis failed.', result.status !== 'success');
  } catch (err) {
    message(err.message, true);
  } finally {
    button.disabled = false;
  }
}

export function initAnalysis(client, { chapter }) {
  state.client = client;
  state.chapter = chapter;
  $('analysis-section').replaceChildren(...SECTIONS.map(([value, label]) => el('option', { value }, label)));
  $('analysis-form').addEventListener('submit', run);
  render();
}

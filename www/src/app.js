// The demo editor: a CodeMirror 6 editor driven by the draftsmith core in a worker, with
// chapters, the story bible, a chat with the agent (and approval cards for the changes it
// must ask for), the shared undo history, the agent's memory, background jobs, research, the
// latest analysis and settings. The UI tools show here: zen mode (body.zen), panels
// (switch_panel), highlights with their style and note, and scrolling (ui.reveal).
// Bundled by esbuild into dist/app.js (scripts/build-page.sh).
import { EditorView, keymap, Decoration } from '@codemirror/view';
import { EditorState, EditorSelection, StateEffect } from '@codemirror/state';
import { defaultKeymap } from '@codemirror/commands';
import { Draftsmith } from '../../packages/draftsmith/draftsmith.js';
import { ChapterSync, CORE_EVENT, isFromCore, charToUtf16, utf16ToChar } from '../../packages/draftsmith/codemirror.js';
import { $, el } from './dom.js';
import { decorationField } from './decorations.js';
import { initFiles, renderFiles, filesChanged, openFile } from './files.js';
import { initBible, loadBible, bibleChanged, entityTitle, fieldLabel, originBadge, showValue, bibleState } from './bible.js';
import { initJobs, loadJobs, jobProgress, jobFinished, showJobApproval, jobsBibleChanged, jobsState } from './jobs.js';
import { jobOfRun, unitOfRun, unitIdText, jobTitle } from './jobs-view.js';
import { initResearch, loadResearch, researchChanged, researchJobEvent } from './research.js';
import { initAnalysis, analysisEvent, analysisProject, analysisProgress } from './analysis.js';
import { createDemoProject } from './demo-story.js';
import { initSuggestions, loadSuggestions, idleSettings, writerTyped, suggestionsEdited } from './suggestions.js';
import { initSync, syncProject, peerCursors, showPeerCursors } from './sync.js';
import { initMcp, loadMcp, mcpChanged } from './mcp.js';
import { readKept, keptShown, keep } from './kept.js';

const app = {
  client: null,
  project: null,
  chapter: null, // the open chapter's id
  sync: null,
  view: null,
  run: null, // the run the chat follows: {abort()}
  settings: null,
  selectionTimer: null,
  deciding: new Set(), // approval cards being decided here, by key
  decided: new Set(), // approval cards decided (here or in another tab), by key
  conflicts: [], // the writer's text the core could not take, kept as copies
  cardSeq: 0,
  bible: bibleState,
};

// ---------------------------------------------------------------- status bar

function status(text, isError = false) {
  const node = $('status');
  node.textContent = text;
  node.classList.toggle('error', isError);
}

function saveStatus(text) {
  $('save-status').textContent = text;
}

function showNetwork() {
  const online = navigator.onLine;
  const node = $('network');
  node.textContent = online ? 'online' : 'offline: writing and saving still work';
  node.classList.toggle('offline', !online);
}

async function showStorage() {
  try {
    const { usage } = await app.client.storageEstimate();
    if (usage !== null) $('storage').textContent = `storage ${(usage / 1e6).toFixed(1)} MB`;
  } catch {
    // Not every browser says.
  }
}

/**
 * A `progress` event: opening a project in the status bar (which says again what it said
 * before once the project is open), an analysis in its panel.
 */
function showProgress(e) {
  if (e.task === 'open_project') {
    const node = $('status');
    if (e.done === 0) app.statusBeforeOpening ??= { text: node.textContent, error: node.classList.contains('error') };
    if (e.done < e.total) {
      const name = app.project?.id === e.project ? `“${app.project.name}”` : 'the project';
      status(`opening ${name}: ${e.stage} (${e.done + 1} of ${e.total})`);
    } else if (app.statusBeforeOpening) {
      status(app.statusBeforeOpening.text, app.statusBeforeOpening.error);
      app.statusBeforeOpening = null;
    }
  } else {
    analysisProgress(e);
  }
}

// ---------------------------------------------------------------- editor

const setHighlights = StateEffect.define();
const HIGHLIGHT_STYLES = ['warning', 'suggestion', 'info'];

/** A highlight's mark: its style's class (and colour), its note as the tooltip and `data-note`. */
function highlightMark(h) {
  const style = HIGHLIGHT_STYLES.includes(h.style) ? h.style : 'info';
  const attributes = { 'data-style': style };
  if (h.note) {
    attributes.title = h.note;
    attributes['data-note'] = h.note;
  }
  return Decoration.mark({ class: `cm-highlight cm-highlight-${style}`, attributes });
}
const highlights = decorationField(setHighlights);

function editorState(text) {
  return EditorState.create({
    doc: text,
    extensions: [
      EditorView.lineWrapping,
      highlights,
      peerCursors,
      keymap.of([
        { key: 'Mod-z', run: () => (undo(), true), preventDefault: true },
        { key: 'Mod-Shift-z', run: () => (redo(), true), preventDefault: true },
        { key: 'Mod-y', run: () => (redo(), true), preventDefault: true },
        ...defaultKeymap,
      ]),
      EditorView.updateListener.of(onEditorUpdate),
      EditorView.contentAttributes.of({ 'aria-label': 'Chapter text', spellcheck: 'true' }),
    ],
  });
}

function onEditorUpdate(update) {
  let local = false;
  for (const tr of update.transactions) {
    if (!tr.docChanged || isFromCore(tr)) continue;
    app.sync?.local(tr.changes);
    local = true;
  }
  if (local) saveStatus('saving…');
  const fromTheCore = update.transactions.some(isFromCore);
  if (update.selectionSet && !fromTheCore) {
    clearTimeout(app.selectionTimer);
    app.selectionTimer = setTimeout(sendSelection, 400);
  }
}

/** The editor's selection in chars. */
function selectionChars() {
  const { doc, selection } = app.view.state;
  const range = selection.main;
  const text = doc.sliceString(0, range.to);
  return [utf16ToChar(text, range.from), utf16ToChar(text, range.to)];
}

/** Tell the core where the writer's selection is (the agent's rewrite_selection uses it). */
async function sendSelection() {
  if (!app.sync || !app.view) return;
  await app.sync.whenSynced();
  const [start, end] = selectionChars();
  // The core maps its copy of the selection through every edit, so what it holds is only
  // known to match what was last sent while the chapter's version has not moved since.
  const version = app.project?.chapters.find((ch) => ch.id === app.chapter)?.version;
  const last = app.sentSelection;
  if (last && last.chapter === app.chapter && last.start === start && last.end === end && last.version === version) return;
  app.sentSelection = { chapter: app.chapter, start, end, version };
  await app.client.execute('set_selection', { chapter: app.chapter, start, end }).catch(() => {
    app.sentSelection = null;
  });
}

/**
 * The core could not take some of the writer's text (it restarted and lost changes, or its
 * history no longer reaches back): the editor now shows the core's text, and the writer's is
 * kept as a conflict copy, a file under notes/conflicts/ shown from a banner.
 */
async function keepConflictCopy(conflict, title) {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const slug = (title || 'chapter').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'chapter';
  const path = `notes/conflicts/${slug}-${stamp}.md`;
  app.conflicts.push({ ...conflict, path });
  const banner = $('conflict');
  banner.hidden = false;
  banner.dataset.path = path;
  $('conflict-message').textContent = `Some of your text in “${title}” could not be merged with the saved chapter. Your version is kept as ${path}.`;
  try {
    await app.client.execute('write_file', { path, content: conflict.text }, { origin: 'user' });
  } catch (err) {
    $('conflict-message').textContent = `Some of your text in “${title}” could not be merged with the saved chapter, and keeping a copy failed (${err.message}). Copy it from “Show my text” before closing this tab.`;
  }
}

async function showConflict() {
  const path = $('conflict').dataset.path;
  const conflict = app.conflicts.find((c) => c.path === path);
  selectTab('files');
  try {
    await openFile(path);
  } catch (err) {
    if (conflict) window.alert(conflict.text);
  }
}

/** The writing core restarted, or another tab now writes: catch up and show what it has. */
async function catchUp() {
  if (!app.project) return;
  try {
    app.project = await app.client.projects.open(app.project.id);
    renderChapters();
    await app.sync?.resync();
    await showProjectExtras();
  } catch (err) {
    // A project deleted meanwhile is announced by `project_deleted`.
    if (err.code !== 'no_project') status(`could not catch up with the core: ${err.message}`, true);
  }
}

async function openChapter(id) {
  if (app.sync) {
    await app.sync.whenSynced();
    app.sync.close();
  }
  const chapter = await app.client.getChapter(id);
  bindChapter(chapter);
  await chapterShown(chapter.id);
}

/**
 * The open chapter `id` is bound and shown: kept for the next start, listed, with the peers'
 * cursors, and made the core's active chapter.
 */
async function chapterShown(id) {
  app.shownAt = Date.now();
  keepOpenChapter();
  renderChapters();
  showPeerCursors();
  if (app.project?.ui?.active_chapter !== id) {
    await app.client.execute('jump_to_chapter', { chapter: id }).catch(() => {});
  }
}

/** Show `chapter` ({id, title, version, text}) in the editor, bound to the core. */
function bindChapter(chapter) {
  app.chapter = chapter.id;
  const state = editorState(chapter.text);
  if (!app.view) {
    $('editor').replaceChildren();
    app.view = new EditorView({ state, parent: $('editor') });
  } else {
    app.view.setState(state);
  }
  app.sync = new ChapterSync({
    client: app.client,
    view: app.view,
    chapter: chapter.id,
    version: chapter.version,
    text: chapter.text,
    onError: (err) => saveStatus(`could not save a change: ${err.message}`),
    onConflict: (conflict) => keepConflictCopy(conflict, chapter.title),
    // The page routes `edit` events and catching up itself (see wire()).
    listen: false,
  });
  $('chapter-title').value = chapter.title ?? '';
}

/**
 * Keep the open chapter as the core has it, for the next start to show at once: the chapter
 * of the project shown last in any tab (as a start without it would open the project opened
 * last), so a tab left on an older project does not replace it.
 */
function keepOpenChapter() {
  if (!app.project || !app.sync || app.sync.chapter !== app.chapter) return;
  const shown = keptShown();
  if (shown && shown.project !== app.project.id && (shown.shownAt ?? 0) > (app.shownAt ?? 0)) return;
  const title = app.project.chapters.find((ch) => ch.id === app.chapter)?.title ?? '';
  // Hiding the page then leaving it asks twice: what is kept already is not written again.
  const mark = [app.project.id, app.chapter, title, app.sync.version, app.shownAt].join('\n');
  if (shown?.shownAt === app.shownAt && app.keptMark === mark) return;
  keep({ project: app.project.id, chapter: app.chapter, title, version: app.sync.version, text: app.sync.text, shownAt: app.shownAt });
  app.keptMark = mark;
}

/**
 * Apply the core's editor UI state (an agent navigated, scrolled, selected, highlighted,
 * switched panels or zen mode): a new `reveal` count scrolls the editor to `scroll` (through
 * the binding), a selection that moved is selected and scrolled to. Another tab's calls
 * (`remote`) move the highlights and the selection here, not the panels, zen mode or scroll.
 */
async function applyUi(ui) {
  const previous = app.project?.ui;
  const local = !ui.remote;
  if (app.project) app.project.ui = ui;
  if (ui.active_chapter && ui.active_chapter !== app.chapter) {
    await openChapter(ui.active_chapter);
  }
  if (local) document.body.classList.toggle('zen', !!ui.zen_mode);
  if (local && previous?.panel !== ui.panel) showPanel(ui.panel);
  if (!app.view || ui.active_chapter !== app.chapter) return;
  const doc = app.view.state.doc.toString();
  const marks = (ui.highlights ?? []).filter((h) => h.chapter === app.chapter && h.end > h.start);
  $('highlights-clear').hidden = marks.length === 0;
  app.view.dispatch({
    effects: setHighlights.of(
      Decoration.set(
        marks
          .map((h) => highlightMark(h).range(charToUtf16(doc, h.start), charToUtf16(doc, h.end)))
          .sort((a, b) => a.from - b.from),
      ),
    ),
    userEvent: CORE_EVENT,
  });
  if (local && (ui.reveal ?? 0) !== (previous?.reveal ?? 0) && app.sync?.reveal(ui)) return;
  const [start, end] = ui.selection ?? [ui.cursor, ui.cursor];
  const [curStart, curEnd] = selectionChars();
  if (start === curStart && end === curEnd) return;
  app.view.dispatch({
    selection: EditorSelection.single(charToUtf16(doc, start), charToUtf16(doc, end)),
    effects: EditorView.scrollIntoView(charToUtf16(doc, start), { y: 'center' }),
    userEvent: CORE_EVENT,
  });
}

/** Zen mode on or off, as the writer asks (the core's state, so agents see it). */
async function setZen(enabled) {
  try {
    await app.client.execute('toggle_zen_mode', { enabled });
  } catch (err) {
    status(`zen mode: ${err.message}`, true);
  }
}

async function undo(origin) {
  await app.sync?.whenSynced();
  try {
    await app.client.undo(origin ? { origin } : {});
  } catch (err) {
    saveStatus(`nothing to undo (${err.message})`);
  }
}

async function redo() {
  await app.sync?.whenSynced();
  try {
    await app.client.redo();
  } catch (err) {
    saveStatus(`nothing to redo (${err.message})`);
  }
}

// ---------------------------------------------------------------- chapters

function renderChapters() {
  const list = $('chapter-list');
  const chapters = app.project?.chapters ?? [];
  list.replaceChildren(
    ...chapters.map((c, i) =>
      el(
        'li',
        { class: c.id === app.chapter ? 'active' : '', 'data-chapter': c.id },
        el('button', { type: 'button', class: 'open', title: c.title, onclick: () => openChapter(c.id) }, `${i + 1}. ${c.title}`),
        el('button', { type: 'button', class: 'small', title: 'Move up', 'aria-label': `Move ${c.title} up`, disabled: i === 0 ? '' : null, onclick: () => moveChapter(c.id, i) }, '↑'),
        el('button', { type: 'button', class: 'small', title: 'Move down', 'aria-label': `Move ${c.title} down`, disabled: i === chapters.length - 1 ? '' : null, onclick: () => moveChapter(c.id, i + 2) }, '↓'),
        el('button', { type: 'button', class: 'small', title: 'Delete', 'aria-label': `Delete ${c.title}`, disabled: chapters.length === 1 ? '' : null, onclick: () => deleteChapter(c) }, '×'),
      ),
    ),
  );
  $('project-name').textContent = app.project?.name ?? '';
}

async function refreshProject(summary) {
  app.project = summary ?? (await app.client.projects.open(app.project.id));
  renderChapters();
}

async function addChapter() {
  const added = await app.client.chapters.add({ after: app.chapter ?? undefined });
  app.project = added.project;
  await openChapter(added.id);
}

async function moveChapter(id, to) {
  app.project = (await app.client.chapters.move(id, to)).project;
  renderChapters();
}

async function deleteChapter(chapter) {
  if (!confirm(`Delete “${chapter.title}”? Its text goes with it.`)) return;
  if (chapter.id === app.chapter) await app.sync?.whenSynced();
  const result = await app.client.chapters.delete(chapter.id);
  app.project = result.project;
  if (chapter.id === app.chapter) {
    app.sync?.close();
    app.sync = null;
    await openChapter(app.project.ui.active_chapter ?? app.project.chapters[0].id);
  } else {
    renderChapters();
  }
}

async function renameChapter() {
  const title = $('chapter-title').value.trim();
  const current = app.project?.chapters.find((c) => c.id === app.chapter);
  if (!current || !title || title === current.title) {
    if (current) $('chapter-title').value = current.title;
    return;
  }
  app.project = (await app.client.chapters.rename(app.chapter, title)).project;
  renderChapters();
}

// ---------------------------------------------------------------- chat

/** A chat line, in the chat or (`into`) in a sub-agent's group. */
function chatItem(className, text, into = $('chat-log')) {
  const li = el('li', { class: className }, text);
  into.append(li);
  li.scrollIntoView({ block: 'end' });
  return li;
}

function toolCard(id, name, into = $('chat-log'), run = null) {
  const card = el(
    'li',
    { class: 'tool-card', testid: 'tool-card', 'data-call': id, 'data-run': run, 'data-status': 'proposed' },
    el('div', {}, el('span', { class: 'name' }, name), ' ', el('span', { class: 'state' }, 'proposed')),
    el('div', { class: 'summary', testid: 'tool-summary' }),
    el('div', { class: 'args' }),
  );
  into.append(card);
  card.scrollIntoView({ block: 'end' });
  return card;
}

// ---------------------------------------------------------------- agents

/** The picker's choices: presets, then the agents that talk to the writer. */
const PRESET_LABELS = { quill: 'Quill · writing assistant', dungeon_master: 'Dungeon Master', textcraft: 'TextCraft · architect, narrator, editor' };
const PRESET_HINTS = {
  quill: 'Ask the agent, e.g. replace "dark" with "lit"',
  dungeon_master: 'Play: e.g. I attack the goblin, or Hello blacksmith',
  textcraft: 'e.g. plan chapter 3 and draft it',
};
const AGENT_CHOICE_KEY = 'draftsmith.chat-agent';

/** Fill the chat's agent picker from list_agents (keeping the choice). */
async function loadAgents() {
  let listing;
  try {
    listing = await app.client.listAgents();
  } catch {
    return;
  }
  app.agents = listing;
  const select = $('chat-agent');
  let wanted = select.value;
  if (!wanted) {
    try {
      wanted = localStorage.getItem(AGENT_CHOICE_KEY) ?? '';
    } catch {
      wanted = '';
    }
  }
  const entries = new Set(listing.presets.map((p) => p.entry));
  const speakers = listing.agents.filter((a) => a.talksToWriter && !entries.has(a.name));
  const label = (name) => name.replace(/_/g, ' ');
  select.replaceChildren(
    el('optgroup', { label: 'Presets' }, ...listing.presets.map((p) => el('option', { value: `preset:${p.name}`, title: p.description }, PRESET_LABELS[p.name] ?? label(p.name)))),
    speakers.length
      ? el('optgroup', { label: 'Agents' }, ...speakers.map((a) => el('option', { value: `agent:${a.name}`, title: a.description }, a.preset ? `${label(a.name)} (${label(a.preset)})` : label(a.name))))
      : null,
  );
  select.value = [...select.options].some((o) => o.value === wanted) ? wanted : 'preset:quill';
  showAgentChoice();
}

/** Say what the picked preset or agent is, and hint at what to ask. */
function showAgentChoice() {
  const value = $('chat-agent').value || 'preset:quill';
  const [kind, name] = value.split(/:(.*)/s);
  const listing = app.agents ?? { presets: [], agents: [] };
  const preset = kind === 'preset' ? listing.presets.find((p) => p.name === name) : null;
  const agent = listing.agents.find((a) => a.name === (preset ? preset.entry : name));
  const about = $('chat-agent-about');
  about.textContent = preset && preset.agents.length > 1 ? `${preset.entry} → ${preset.agents.filter((a) => a !== preset.entry).join(', ')}` : agent?.description ?? '';
  about.title = preset?.description ?? agent?.description ?? '';
  $('chat-input').placeholder = PRESET_HINTS[preset?.name] ?? `Ask ${name.replace(/_/g, ' ')}`;
}

/** The run options of the picked preset or agent (the quill assistant needs none). */
function agentChoice() {
  const value = $('chat-agent').value || 'preset:quill';
  const [kind, name] = value.split(/:(.*)/s);
  if (kind === 'preset') return name === 'quill' ? {} : { preset: name };
  return { agent: name };
}

// A tool card shows its call in one readable line (a file's path and size, a chapter and its
// lines, a search and its scope) and keeps the arguments under "arguments", with long texts
// cut short (a write_file's content is not dumped into the chat).

const ARG_TEXT_MAX = 240;

/** An argument by its snake_case name, or its camelCase alias. */
const arg = (a, name) => a?.[name] ?? a?.[name.replace(/_([a-z])/g, (_, c) => c.toUpperCase())];

/** A text cut to `max` chars, on one line. */
const clip = (text, max = 48) => {
  const line = String(text ?? '').replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

const quoted = (text, max) => `“${clip(text, max)}”`;

/** A text's size in UTF-8, as the file will hold it: 812 B, 1.2 KB, 3.4 MB. */
function sizeText(text) {
  const bytes = new TextEncoder().encode(String(text ?? '')).length;
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** A chapter as tools name it (id, number or title), as the writer reads it. */
function chapterText(chapter) {
  if (chapter === undefined || chapter === null || chapter === '') return 'the active chapter';
  if (typeof chapter === 'number') return `Chapter ${chapter}`;
  const chapters = app.project?.chapters ?? [];
  const n = chapters.findIndex((c) => c.id === chapter || c.title === chapter);
  if (n >= 0) return `Chapter ${n + 1}`;
  if (/^\s*\d+\s*$/.test(String(chapter))) return `Chapter ${String(chapter).trim()}`;
  return `chapter ${quoted(chapter, 32)}`;
}

/** Line numbers as a range: "lines 121–240", "from line 121", "lines 1–240". */
function linesText(from, to) {
  if (from == null && to == null) return '';
  if (to == null) return `from line ${from}`;
  return `lines ${from ?? 1}–${to}`;
}

const joined = (...parts) => parts.filter(Boolean).join(', ');
const inChapter = (a) => (arg(a, 'chapter') == null ? '' : `in ${chapterText(arg(a, 'chapter'))}`);

/** One line per tool, from its arguments. Tools not listed get the generic summary. */
const TOOL_SUMMARIES = {
  read_file: (a) => arg(a, 'path'),
  write_file: (a) => `${arg(a, 'path')} (${sizeText(arg(a, 'content'))})`,
  edit_file: (a) => arg(a, 'path'),
  list_files: (a) => `${arg(a, 'directory') || 'data'}/`.replace(/\/+$/, '/'),
  search_code: (a) => `${quoted(arg(a, 'query'))} in ${arg(a, 'directory') || 'manuscripts'}/`.replace(/\/+\/$/, '/'),
  list_chapters: () => 'all chapters',
  read_chapter: (a) => joined(chapterText(arg(a, 'chapter')), linesText(arg(a, 'from_line'), arg(a, 'to_line'))),
  search_manuscript: (a) =>
    `${quoted(arg(a, 'query'))}${arg(a, 'regex') ? ' (regex)' : ''} in ${
      arg(a, 'chapter') == null ? 'all chapters' : chapterText(arg(a, 'chapter'))
    }${arg(a, 'limit') ? `, up to ${arg(a, 'limit')}` : ''}`,
  update_manuscript: (a) => joined(`${quoted(arg(a, 'search_text'), 32)} → ${quoted(arg(a, 'replacement_text'), 32)}`, inChapter(a)),
  append_to_manuscript: (a) => joined(`${quoted(arg(a, 'text'))} (${sizeText(arg(a, 'text'))})`, inChapter(a)),
  insert_text: (a) => joined(`${quoted(arg(a, 'text'), 32)} ${arg(a, 'position') ?? 'after'} ${quoted(arg(a, 'anchor_text'), 32)}`, inChapter(a)),
  delete_text: (a) => joined(quoted(arg(a, 'text')), inChapter(a)),
  jump_to_chapter: (a) => chapterText(arg(a, 'chapter')),
};

/** The generic summary: the first few plain arguments, `name: value`. */
function genericSummary(args) {
  const parts = Object.entries(args ?? {})
    .filter(([, v]) => v !== null && typeof v !== 'object')
    .slice(0, 3)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? quoted(v, 32) : v}`);
  return parts.join(', ');
}

/** Calls between agents: routing (the action dictionary), replies, assign_task. */
function agentCallSummary(name, a) {
  if (arg(a, 'response_content') != null) return quoted(arg(a, 'response_content'), 100);
  if (name === 'assign_task') return joined(`${arg(a, 'target_agent')}: ${quoted(arg(a, 'task_description'), 70)}`, arg(a, 'target_file'));
  if (/^route_/.test(name)) return `${arg(a, 'action_type') ?? 'action'}: ${quoted(arg(a, 'player_input'), 60)}${arg(a, 'target') ? ` → ${arg(a, 'target')}` : ''}`;
  return null;
}

/** A tool call's one-line summary ('' when there is nothing to say). */
function toolSummary(name, args) {
  const summarize = TOOL_SUMMARIES[name] ?? (/^(?:route_|send_response_to_|assign_task$)/.test(name) ? (a) => agentCallSummary(name, a) ?? genericSummary(a) : null);
  try {
    if (summarize) return clip(summarize(args ?? {}) ?? '', 120);
  } catch {
    // An unexpected argument shape: fall back to the generic summary.
  }
  return clip(genericSummary(args), 120);
}

/** The arguments as indented JSON, with long texts cut (their full length said). */
function argumentsText(args) {
  return JSON.stringify(
    args ?? {},
    (_, v) => (typeof v === 'string' && v.length > ARG_TEXT_MAX ? `${v.slice(0, ARG_TEXT_MAX)}… (${v.length} chars)` : v),
    2,
  );
}

/** Fill a card with a call's summary and its arguments (folded). */
function showToolArguments(node, name, args) {
  const summary = toolSummary(name, args);
  const line = node.querySelector('.summary');
  line.textContent = summary;
  line.title = summary;
  node.querySelector('.args').replaceChildren(
    el('details', {}, el('summary', {}, 'arguments'), el('pre', { testid: 'tool-arguments', style: 'white-space: pre-wrap; margin: 0' }, argumentsText(args))),
  );
}

/** The agent name of an origin (`agent:rules_lawyer` -> `rules_lawyer`). */
const agentOf = (origin) => (String(origin ?? '').startsWith('agent:') ? String(origin).slice(6) : String(origin ?? 'the agent'));

/** A sub-agent's group: its name and status, its own tool cards and text (collapsible). */
function subRunNode(e) {
  return el(
    'details',
    { class: 'sub-run', testid: 'sub-run', open: true, 'data-session': e.session, 'data-agent': e.agent, 'data-path': e.path ?? '', 'data-status': 'running' },
    el(
      'summary',
      {},
      el('span', { class: 'sub-agent', testid: 'sub-run-agent' }, e.agent),
      ' ',
      el('span', { class: 'sub-status', testid: 'sub-run-status' }, 'running'),
      ' ',
      el('span', { class: 'sub-path', testid: 'sub-run-path' }, e.path ?? ''),
    ),
    el('ol', { class: 'sub-log', testid: 'sub-run-log' }),
  );
}

/** A run's card of a call (call ids are unique within a run, not across runs). */
const cardOf = (run, id) => document.querySelector(`.tool-card[data-call="${CSS.escape(id)}"]${run ? `[data-run="${CSS.escape(run)}"]` : ''}`);

/**
 * A handler that shows one run's events in the chat (a new run's, or a resumed one's). A run
 * is a tree: a sub-agent's session shows as a group under the routing call's card, with its
 * own cards and text; sessions nest.
 */
function runView() {
  let max = app.settings?.maxSteps ?? 20;
  let steps = 0;
  const bubbles = new Map(); // log -> the text bubble being written there
  const groups = new Map(); // session -> its group node
  const byPath = new Map(); // agent path -> its group node (the newest)
  const chatLog = $('chat-log');
  const sessionNode = (session) => groups.get(session) ?? document.querySelector(`.sub-run[data-session="${CSS.escape(session)}"]`);
  /** The group of a session: shown under its routing call's card (made if missing, as after a reload). */
  const group = (e) => {
    let node = sessionNode(e.session);
    if (!node) {
      node = subRunNode(e);
      const routing = e.callId ? cardOf(e.run, e.callId) : null;
      const parent = byPath.get(String(e.path ?? '').split(' › ').slice(0, -1).join(' › '));
      (routing ?? parent?.querySelector(':scope > .sub-log') ?? chatLog).append(node);
      node.scrollIntoView({ block: 'end' });
    }
    groups.set(e.session, node);
    if (e.path) byPath.set(e.path, node);
    return node;
  };
  const logOf = (e) => (e.session ? group(e).querySelector(':scope > .sub-log') : chatLog);
  const endText = (e) => bubbles.delete(logOf(e));
  const card = (e) => cardOf(e.run, e.id) ?? toolCard(e.id, e.name, logOf(e), e.run);
  const setStatus = (e, status) => {
    const node = group(e);
    node.dataset.status = status;
    node.querySelector(':scope > summary .sub-status').textContent = status.replace(/_/g, ' ');
  };
  return (e) => {
    switch (e.type) {
      case 'run_started':
        max = e.maxSteps;
        $('step-counter').textContent = `step 0 / ${max}`;
        break;
      case 'run_resumed':
        bubbles.clear();
        steps = e.steps ?? steps;
        $('step-counter').textContent = `step ${steps} / ${max}`;
        chatItem('note', 'The agent goes on.');
        break;
      case 'session_started':
      case 'session_resumed':
        endText({});
        setStatus(e, 'running');
        break;
      case 'session_paused':
        setStatus(e, 'paused');
        break;
      case 'session_ended':
        setStatus(e, e.status);
        break;
      case 'text_delta': {
        const log = logOf(e);
        let bubble = bubbles.get(log);
        if (!bubble) {
          bubble = chatItem(e.session ? 'assistant sub' : 'assistant', '', log);
          if (e.agent) bubble.dataset.agent = e.agent;
          bubbles.set(log, bubble);
        }
        bubble.textContent += e.text;
        bubble.scrollIntoView({ block: 'end' });
        break;
      }
      case 'tool_call_proposed':
        endText(e);
        card(e);
        break;
      case 'tool_call_started': {
        const node = card(e);
        node.dataset.status = 'running';
        node.querySelector('.state').textContent = 'running';
        showToolArguments(node, e.name, e.arguments);
        break;
      }
      case 'tool_call_finished': {
        const node = card(e);
        node.dataset.status = e.status;
        node.querySelector('.state').textContent = e.status === 'pending' ? 'waiting for your approval' : e.status;
        endText(e);
        break;
      }
      case 'approval_requested':
        endText(e);
        showApprovalCard(e);
        break;
      case 'step_finished':
        endText(e);
        steps += 1;
        $('step-counter').textContent = `step ${steps} / ${max}`;
        break;
      case 'run_paused':
        bubbles.clear();
        for (const c of e.pending ?? []) showApprovalCard(c);
        chatItem('note', `Paused: the agent waits for your approval (${e.pending?.length ?? 0} ${e.pending?.length === 1 ? 'change' : 'changes'}).`);
        break;
      case 'run_failed':
        chatItem('error', `The run failed: ${e.message}`);
        break;
      case 'run_aborted':
        chatItem('note', 'Cancelled.');
        break;
      case 'run_finished':
        if (e.status !== 'finished') chatItem('note', `Stopped: ${e.status.replace('_', ' ')}.`);
        break;
    }
  };
}

function setRunning(running) {
  $('chat-send').disabled = running;
  $('chat-cancel').disabled = !running;
}

async function send(event) {
  event?.preventDefault();
  const input = $('chat-input');
  const prompt = input.value.trim();
  if (!prompt || app.run) return;
  input.value = '';
  chatItem('user', prompt);
  await app.sync?.whenSynced();
  const controller = new AbortController();
  const run = app.client.run(prompt, { ...agentChoice(), signal: controller.signal });
  app.run = { abort: () => controller.abort() };
  setRunning(true);
  $('step-counter').textContent = `step 0 / ${app.settings?.maxSteps ?? 20}`;
  const view = runView();
  try {
    for await (const e of run) view(e);
  } catch (err) {
    if (err.code === 'busy' && document.querySelector('[data-testid="approval-card"]')) {
      chatItem('error', 'The agent is waiting for your approval: approve or reject the change above first.');
    } else {
      chatItem('error', err.code === 'offline' ? err.message : `The agent could not start: ${err.message}`);
    }
  } finally {
    app.run = null;
    setRunning(false);
  }
}

// ---------------------------------------------------------------- approvals

const cardKey = (card) => `${card.run ?? '-'}:${card.callId}`;

/** Whether a run is a background job's unit (`job:<job>:<unit>`). */
const isJobRun = (run) => typeof run === 'string' && run.startsWith('job:');

/** Where a job unit's card comes from, as a line ('' for other runs). */
function jobLine(card) {
  if (!isJobRun(card.run)) return null;
  const job = jobOfRun(card.run, jobsState.jobs.keys());
  const unit = job ? unitOfRun(card.run, job) : null;
  const view = jobsState.jobs.get(job);
  const what = [view ? jobTitle(view) : '', unit && unit.includes(':') ? unitIdText(unit) : ''].filter(Boolean).join(', ');
  return el('p', { class: 'approval-job', testid: 'approval-job', 'data-job': job ?? '' }, `From a background job${what ? `: ${what}` : ''}.`);
}

/** An MCP tool's call: the arguments it would send, one line each. */
function mcpArgs(card) {
  if (card.kind !== 'mcp_server') return null;
  const entries = Object.entries(card.args ?? {});
  return el(
    'dl',
    { class: 'approval-args', testid: 'approval-args' },
    ...entries.flatMap(([key, value]) => [el('dt', {}, key), el('dd', {}, showValue(value))]),
  );
}

function approvalCardNode(card) {
  const mcp = card.kind === 'mcp_server';
  const title = mcp ? card.entityId : entityTitle(card.kind, card.entityId);
  const node = el(
    'li',
    { class: 'approval-card', testid: 'approval-card', 'data-call': card.callId, 'data-run': card.run ?? '', 'data-tool': card.tool, 'data-entity': `${card.kind}/${card.entityId}` },
    el(
      'div',
      { class: 'approval-head' },
      el('strong', {}, mcp ? 'Approve this call?' : 'Approve this change?'),
      ' ',
      el('span', { class: 'approval-agent', testid: 'approval-agent', title: card.origin }, agentOf(card.origin)),
      ' asks for ',
      el('span', { class: 'name', testid: 'approval-tool' }, card.tool),
      ' on ',
      el('span', { class: 'entity', testid: 'approval-entity' }, mcp ? `the MCP server “${title}”` : `${card.kind} “${title}”`),
    ),
    jobLine(card),
    mcpArgs(card),
    el('p', { class: 'approval-reason' }, `${card.origin}: ${card.reason ?? 'needs your approval'}`),
    el(
      'div',
      { class: 'approval-fields' },
      ...(card.fields ?? []).map((f) =>
        el(
          'div',
          { class: 'approval-field', 'data-field': f.field },
          el('div', { class: 'field-name' }, fieldLabel(card.kind, f.field)),
          el('div', { class: 'approval-current', testid: 'approval-current' }, el('span', { class: 'label' }, 'now '), originBadge(f.current_origin), ' ', el('span', { class: 'value' }, showValue(f.current))),
          el('div', { class: 'approval-proposed', testid: 'approval-proposed' }, el('span', { class: 'label' }, 'proposed '), el('span', { class: 'value' }, f.proposed === null ? '(removed)' : showValue(f.proposed))),
        ),
      ),
    ),
    ...(card.changes ?? [])
      .filter((c) => c.action === 'delete' || c.id !== card.entityId)
      .map((c) =>
        el(
          'div',
          { class: `approval-change ${c.action}`, testid: 'approval-change', 'data-action': c.action, 'data-entity': `${c.kind}/${c.id}` },
          el('strong', {}, c.action === 'delete' ? 'Deletes ' : 'Changes '),
          `${c.kind} “${c.title || c.id}”`,
          el(
            'ul',
            {},
            ...(c.fields ?? []).map((f) =>
              el('li', {}, fieldLabel(c.kind, f.field), ': ', originBadge(f.current_origin), ' ', showValue(f.current), f.proposed === null ? ' (removed)' : ` → ${showValue(f.proposed)}`),
            ),
          ),
        ),
      ),
    el(
      'div',
      { class: 'approval-buttons' },
      el('button', { type: 'button', class: 'approve', testid: 'approval-approve', onclick: () => decide(card, 'approve') }, 'Approve'),
      el('button', { type: 'button', class: 'reject', testid: 'approval-reject', onclick: () => decide(card, 'reject') }, 'Reject'),
    ),
    el('p', { class: 'approval-state', role: 'status' }),
  );
  node.dataset.key = cardKey(card);
  node.dataset.seq = String(++app.cardSeq);
  return node;
}

/** A call's cards: in the chat, and in the Jobs panel for a job unit's call. */
function cardNodes(key) {
  return [...document.querySelectorAll('[data-testid="approval-card"]')].filter((n) => n.dataset.key === key);
}

/**
 * Show a waiting call's card in the chat (once), whichever run asked: the chat's, a job
 * unit's (also under its job in the Jobs panel), or another tab's.
 */
function showApprovalCard(card) {
  if (!card?.callId || (card.state && card.state !== 'pending')) return;
  const key = cardKey(card);
  if (app.decided.has(key)) return;
  if (isJobRun(card.run)) showJobApproval(card);
  if (cardNodes(key).some((n) => n.closest('[data-testid="chat-log"]'))) return;
  const node = approvalCardNode(card);
  $('chat-log').append(node);
  node.scrollIntoView({ block: 'end' });
}

function removeApprovalCard(key) {
  if (!app.deciding.has(key)) for (const node of cardNodes(key)) node.remove();
}

/** Show the open project's waiting calls (on boot, after a reload, when another tab decides). */
async function refreshApprovals() {
  if (!app.project) return;
  const since = app.cardSeq;
  let listing;
  try {
    listing = await app.client.approvals.list();
  } catch {
    return;
  }
  if (listing.project !== app.project.id) return;
  const keys = new Set(listing.approvals.map(cardKey));
  for (const node of document.querySelectorAll('[data-testid="approval-card"]')) {
    // Cards shown after the list was asked for are newer than it.
    if (!keys.has(node.dataset.key) && Number(node.dataset.seq) <= since) removeApprovalCard(node.dataset.key);
  }
  for (const card of listing.approvals) showApprovalCard(card);
}

/**
 * The writer approves or rejects a card; a paused run resumes and shows here as usual. A job
 * unit's call resumes that unit in the background (its job shows it): the chat stays free.
 */
async function decide(card, decision) {
  const key = cardKey(card);
  const nodes = () => cardNodes(key);
  const setState = (text) => nodes().forEach((n) => (n.querySelector('.approval-state').textContent = text));
  if (app.deciding.has(key)) return;
  const inJob = isJobRun(card.run);
  if (app.run && !inJob) {
    setState('The agent is busy: wait for it to finish (or cancel it) first.');
    return;
  }
  app.deciding.add(key);
  for (const node of nodes()) {
    node.dataset.state = 'deciding';
    for (const button of node.querySelectorAll('button')) button.disabled = true;
  }
  setState(decision === 'approve' ? 'Approving…' : 'Rejecting…');
  const what = `${card.tool} on ${card.kind} “${entityTitle(card.kind, card.entityId)}”`;
  chatItem('note decision', decision === 'approve' ? `You approved ${what}.` : `You rejected ${what}; nothing changes.`);
  const runId = inJob ? null : card.run;
  const view = runView();
  const off = runId ? app.client.on('run', (e) => e.run === runId && view(e)) : null;
  if (runId) {
    app.run = { abort: () => app.client.request('abort_run', { runId }).catch(() => {}) };
    setRunning(true);
  }
  try {
    const result = await app.client.approve(card.callId, decision, { ...(card.run ? { runId: card.run } : {}), digest: card.digest });
    app.decided.add(key);
    if (inJob) chatItem('note', `${card.tool}: ${result.status}; the job goes on.`);
    else if (!runId) chatItem('note', `${card.tool}: ${result.status}`);
    else if (result.status === 'error') chatItem('error', `${card.tool} did not run: ${result.result?.data?.message ?? 'error'}`);
  } catch (err) {
    if (err.code === 'conflict') app.decided.add(key);
    chatItem('error', err.code === 'conflict' ? `That change was already decided (in another tab?): ${err.message}` : `Could not ${decision} the change: ${err.message}`);
  } finally {
    off?.();
    app.deciding.delete(key);
    if (app.decided.has(key)) removeApprovalCard(key);
    else {
      for (const node of nodes()) {
        node.dataset.state = 'pending';
        for (const button of node.querySelectorAll('button')) button.disabled = false;
      }
      setState('');
    }
    if (runId) {
      app.run = null;
      setRunning(false);
    }
    refreshApprovals();
  }
}

function cancel() {
  app.run?.abort();
}

// ---------------------------------------------------------------- history

async function renderHistory() {
  const list = await app.client.history();
  $('undo').disabled = !list.canUndo;
  $('redo').disabled = !list.canRedo;
  const item = (e, extra) =>
    el(
      'li',
      { class: [extra, e.reverted ? 'reverted' : ''].join(' ').trim(), 'data-origin': e.origin },
      el('span', { class: 'origin' }, e.origin),
      e.description,
    );
  $('history-list').replaceChildren(...list.redo.map((e) => item(e, 'redo')), ...list.entries.slice(0, 200).map((e) => item(e, '')));
}

// ---------------------------------------------------------------- memory

// A note's author as a badge: the writer's notes (and imported ones) are protected from agents.
const authorBadge = (n) => originBadge(n.author === 'user' ? 'human' : n.author);

async function renderMemory() {
  const [m, trash] = await Promise.all([app.client.memory.list(), app.client.memory.trash().catch(() => ({ notes: [] }))]);
  const section = (title, items, testid) =>
    items.length ? el('section', { testid }, el('h3', {}, title), el('ul', {}, ...items.map((t) => el('li', {}, t)))) : null;
  // The writer deletes directly (softly: the note waits in "Recently deleted" for 30 days).
  const note = (n) =>
    el(
      'span',
      { class: 'memory-note', testid: 'memory-note', 'data-id': n.id },
      authorBadge(n),
      ' ',
      n.text,
      ' ',
      el('button', { type: 'button', class: 'link', testid: 'memory-delete', title: 'Delete (can be restored for 30 days)', onclick: () => memoryAction(() => app.client.memory.delete(n.id)) }, 'Delete'),
    );
  const deleted = (n) =>
    el(
      'span',
      { class: 'memory-note deleted', testid: 'memory-deleted', 'data-id': n.id },
      n.text,
      ' ',
      el('small', {}, `deleted by ${n.deletedBy === 'user' ? 'you' : n.deletedBy}; restorable until ${new Date(n.restorableUntilMs).toLocaleDateString()}`),
      ' ',
      el('button', { type: 'button', class: 'link', testid: 'memory-restore', onclick: () => memoryAction(() => app.client.memory.restore(n.id)) }, 'Restore'),
    );
  // An empty section is null, and replaceChildren would show it as the text "null".
  const sections = [
    el('section', { testid: 'bedside-note' }, el('h3', {}, 'Bedside note'), el('p', {}, m.bedside?.text || '(empty)')),
    section('Goals', m.goals.map((g) => `${g.title ?? g.text ?? ''} — ${g.status ?? ''}`)),
    section('Watched', m.watched.map((w) => `${w.name}${w.entityType ? ` (${w.entityType})` : ''}`)),
    section('Notes', m.notes.slice(0, 100).map(note), 'memory-notes') ?? el('p', {}, 'No notes yet.'),
    section('Recently deleted', trash.notes.slice(0, 50).map(deleted), 'memory-trash'),
  ];
  $('memory-content').replaceChildren(...sections.filter(Boolean));
}

/** Delete or restore a note from the Memory view, then show the view again. */
async function memoryAction(action) {
  try {
    await action();
  } catch (err) {
    chatItem('error', `Memory: ${err.message}`);
  }
  renderMemory();
}

async function searchMemory(event) {
  event.preventDefault();
  const query = $('memory-search').value.trim();
  if (!query) return renderMemory();
  const result = await app.client.memory.search(query);
  const hits = result.status === 'success' ? result.data.hits : [];
  $('memory-content').replaceChildren(
    el('section', {}, el('h3', {}, `Results for “${query}”`), hits.length ? el('ul', {}, ...hits.map((h) => el('li', {}, `${h.preview} (${h.type})`))) : el('p', {}, 'Nothing found.')),
  );
}

// ---------------------------------------------------------------- settings

function demoUrl() {
  return new URL('/demo/v1', location.href).href;
}

function isDemo(settings) {
  return settings?.provider !== 'local' && settings?.baseUrl === demoUrl();
}

/** The in-browser model the settings offer first: the one `scripts/setup.sh model` fetches. */
const LOCAL_MODEL_DEFAULT = '/models/SmolLM2-135M-Instruct.Q4_1.gguf';

const isLocal = (settings) => settings?.provider === 'local';

/** A model file's name from its URL, for labels. */
function modelName(url) {
  try {
    return decodeURIComponent(new URL(url, location.href).pathname.split('/').pop()) || url;
  } catch {
    return url;
  }
}

function megabytes(bytes) {
  return `${(bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0)} MB`;
}

// The fields of the chosen provider: base URL and key for a server, the model file's URL,
// context size and threads for the in-browser model.
function showProviderFields() {
  const local = $('settings-provider').value === 'local';
  for (const node of document.querySelectorAll('.settings .remote-only')) node.hidden = local;
  $('settings-base-url').required = !local;
  $('settings-local').hidden = !local;
  $('settings-model-label').textContent = local ? 'Model file URL (.gguf)' : 'Model';
  $('settings-model').placeholder = local ? LOCAL_MODEL_DEFAULT : '';
  if (local && !/\.gguf(\?|#|$)/i.test($('settings-model').value.trim())) $('settings-model').value = LOCAL_MODEL_DEFAULT;
  if (!local && /\.gguf(\?|#|$)/i.test($('settings-model').value.trim())) $('settings-model').value = isLocal(app.settings) ? '' : (app.settings?.model ?? '');
  if (local) showLocalModels();
}

// The models stored in this browser, each with its size and a Delete button, and the runtime
// (multi- or single-threaded) of this tab's worker.
async function showLocalModels() {
  const list = $('local-models');
  app.client.workerStatus().then(
    ({ localModel: runtime }) => {
      $('local-runtime').textContent =
        runtime.runtime === 'multi-thread'
          ? `Runs multi-threaded (${runtime.threads} threads; this page is cross-origin isolated).`
          : `Runs on one thread${runtime.crossOriginIsolated ? '' : ' (this page is not cross-origin isolated, so it cannot use more)'}.`;
    },
    () => ($('local-runtime').textContent = ''),
  );
  try {
    const { models } = await app.client.request('local_models');
    list.replaceChildren(
      ...(models.length
        ? models.map((m) => {
            const remove = el('button', { type: 'button', testid: 'local-model-delete', title: `Delete ${m.url} from this browser`, onclick: () => deleteLocalModel(m.url) }, 'Delete');
            return el('li', { testid: 'local-model', 'data-url': m.url }, el('span', {}, `${modelName(m.url)} · ${megabytes(m.size)}${m.loaded ? ' · loaded' : ''}`), remove);
          })
        : [el('li', { class: 'hint' }, 'None yet: the model is downloaded when it is first used.')]),
    );
  } catch (err) {
    list.replaceChildren(el('li', { class: 'hint error' }, `Could not list the stored models: ${err.message}`));
  }
}

async function deleteLocalModel(url) {
  const message = $('settings-message');
  if (!window.confirm(`Delete ${modelName(url)} from this browser? It is downloaded again when next used.`)) return;
  try {
    const { deleted } = await app.client.request('delete_local_model', { url });
    message.textContent = deleted ? `Deleted ${modelName(url)}.` : `${modelName(url)} was not stored.`;
    message.classList.remove('error');
  } catch (err) {
    message.textContent = `Could not delete ${modelName(url)}: ${err.message}`;
    message.classList.add('error');
  }
  showLocalModels();
  showStorage();
}

// The `model_progress` event: downloading (a bar of bytes), loading, ready or failed.
let progressTimer = null;
function showModelProgress(e) {
  const box = $('model-progress');
  const bar = $('model-progress-bar');
  const text = $('model-progress-text');
  const name = modelName(e.url);
  clearTimeout(progressTimer);
  box.hidden = false;
  box.classList.toggle('failed', e.phase === 'failed');
  if (e.phase === 'downloading') {
    if (e.total > 0) {
      bar.max = e.total;
      bar.value = e.loaded;
      text.textContent = `Downloading ${name}: ${megabytes(e.loaded)} of ${megabytes(e.total)} (${Math.floor((e.loaded / e.total) * 100)} %)`;
    } else {
      bar.removeAttribute('value');
      text.textContent = `Downloading ${name}: ${megabytes(e.loaded)}`;
    }
  } else if (e.phase === 'loading') {
    bar.removeAttribute('value');
    text.textContent = `Loading ${name}…`;
  } else if (e.phase === 'ready') {
    bar.max = 1;
    bar.value = 1;
    text.textContent = `${name} ready`;
    progressTimer = setTimeout(() => (box.hidden = true), 4000);
    if (!$('settings-local').hidden) showLocalModels();
    showStorage();
  } else if (e.phase === 'failed') {
    bar.max = 1;
    bar.value = 0;
    text.textContent = `${name} failed: ${e.error ?? 'unknown error'}`;
  }
}

function renderSettings(s) {
  app.settings = s;
  $('settings-provider').value = s.provider ?? 'openai';
  $('settings-base-url').value = s.baseUrl ?? '';
  $('settings-model').value = s.model;
  $('settings-key').value = '';
  $('settings-key').placeholder = s.hasKey ? 'a key is set (type to replace it)' : "kept in the worker's memory";
  $('settings-remember').checked = s.rememberKey;
  $('settings-toolset').value = s.toolset;
  $('settings-max-steps').value = s.maxSteps;
  if (s.idleThinking) {
    $('settings-idle-enabled').checked = s.idleThinking.enabled;
    $('settings-idle-after').value = Math.round(s.idleThinking.afterMs / 1000);
    $('settings-idle-budget').value = s.idleThinking.maxCallsPerDay;
  }
  $('settings-bedside-plan').checked = Boolean(s.bedsidePlan);
  idleSettings(s);
  $('settings-research-proxy').value = s.researchProxy ?? '';
  $('settings-research-private').checked = Boolean(s.researchAllowPrivate);
  $('settings-context-size').value = s.contextSize ?? '';
  $('settings-threads').value = s.threads ?? '';
  showProviderFields();
  const label = $('model-label');
  label.textContent = s.configured
    ? isDemo(s)
      ? 'Demo model (offline, scripted; not an AI)'
      : isLocal(s)
        ? `${modelName(s.model)} · in the browser`
        : `${s.model} · ${s.provider}`
    : 'No model configured';
  label.classList.toggle('demo', isDemo(s));
}

async function saveSettings(event) {
  event.preventDefault();
  const message = $('settings-message');
  const patch = {
    provider: $('settings-provider').value,
    baseUrl: $('settings-base-url').value.trim(),
    model: $('settings-model').value.trim(),
    rememberKey: $('settings-remember').checked,
    toolset: $('settings-toolset').value,
    maxSteps: Number($('settings-max-steps').value),
    idleThinking: {
      enabled: $('settings-idle-enabled').checked,
      afterMs: Math.round(Number($('settings-idle-after').value) * 1000),
      maxCallsPerDay: Number($('settings-idle-budget').value),
    },
    bedsidePlan: $('settings-bedside-plan').checked,
    researchProxy: $('settings-research-proxy').value.trim(),
    researchAllowPrivate: $('settings-research-private').checked,
  };
  if (patch.provider === 'local') {
    // The model is a file's URL; no server, no key.
    delete patch.baseUrl;
    delete patch.rememberKey;
    // Empty: the defaults (2048 tokens; as many threads as the page can use, up to 8).
    const contextSize = $('settings-context-size').value.trim();
    const threads = $('settings-threads').value.trim();
    if (contextSize) patch.contextSize = Number(contextSize);
    if (threads) patch.threads = Number(threads);
  } else {
    const key = $('settings-key').value.trim();
    if (key) patch.apiKey = key;
  }
  try {
    renderSettings(await app.client.settings.set(patch));
    message.textContent = 'Saved.';
    message.classList.remove('error');
  } catch (err) {
    message.textContent = err.message;
    message.classList.add('error');
  }
}

/** The dev server's research fetch proxy (same origin as the page). */
function proxyTemplate() {
  return `${location.origin}/proxy?url={url}`;
}

async function useDemo() {
  renderSettings(await app.client.settings.set({ provider: 'openai', baseUrl: demoUrl(), model: 'demo', apiKey: null, researchProxy: proxyTemplate() }));
  $('settings-message').textContent = 'Using the offline demo model.';
}

// ---------------------------------------------------------------- tabs

function selectTab(name) {
  for (const tab of document.querySelectorAll('[data-tab]')) tab.setAttribute('aria-selected', String(tab.dataset.tab === name));
  for (const panel of document.querySelectorAll('[data-panel]')) panel.hidden = panel.dataset.panel !== name;
  if (name === 'history') renderHistory();
  if (name === 'memory') renderMemory();
  if (name === 'files') renderFiles();
  if (name === 'research') loadResearch(app.project?.id);
}

/**
 * Show a panel the core names (`switch_panel`): a side tab, or the story bible beside the
 * chapters (scrolled into view, focused and marked for a moment). `body[data-shown-panel]` says
 * which.
 */
function showPanel(name) {
  if (name === 'bible') {
    const bible = $('bible-panel');
    document.body.dataset.shownPanel = name;
    bible.scrollIntoView({ block: 'nearest' });
    bible.focus({ preventScroll: true });
    bible.classList.add('shown');
    clearTimeout(app.bibleShown);
    app.bibleShown = setTimeout(() => bible.classList.remove('shown'), 2500);
  } else if (document.querySelector(`[data-tab="${CSS.escape(name)}"]`)) {
    document.body.dataset.shownPanel = name;
    selectTab(name);
  }
}

/**
 * A project was opened here: zen mode as the core keeps it, and the panel shown (the chat, on
 * opening) told to the core, so that `switch_panel` and `toggle_zen_mode` always change what
 * the writer sees.
 */
function adoptUi() {
  document.body.classList.toggle('zen', !!app.project?.ui?.zen_mode);
  const shown = document.querySelector('[data-tab][aria-selected="true"]')?.dataset.tab ?? 'chat';
  pickTab(shown);
}

/** The writer picked a tab: the core keeps the panel shown (agents see it, `switch_panel` moves it). */
function pickTab(name) {
  selectTab(name);
  document.body.dataset.shownPanel = name;
  if (!app.project || app.project.ui?.panel === name) return;
  app.project.ui = { ...app.project.ui, panel: name };
  app.client.execute('switch_panel', { panel: name }).catch(() => {});
}

// ---------------------------------------------------------------- boot

async function openInitialProject(kept) {
  if (kept && (await openKept(kept))) return;
  const { projects, current } = await app.client.projects.list();
  const id = current ?? projects[0]?.id;
  app.project = id ? await app.client.projects.open(id) : await createDemoProject(app.client);
  const first = app.project.ui.active_chapter ?? app.project.chapters[0].id;
  await openChapter(first);
  adoptUi();
  await showProjectExtras();
  if (app.orphan) {
    const { title, ...conflict } = app.orphan;
    app.orphan = null;
    await keepConflictCopy(conflict, title);
  }
}

/**
 * Before the core is ready: open the kept chapter's project (the first request in the worker's
 * queue, so the typing sent after it finds the project open) and show the chapter, bound to the
 * core, so the writer can type at once.
 */
function showKept(kept) {
  app.opening = app.client.projects.open(kept.project);
  app.opening.catch(() => {});
  bindChapter({ id: kept.chapter, title: kept.title, version: kept.version, text: kept.text });
}

/**
 * The core is ready and the kept chapter shown: catch up on what changed since it was kept (the
 * typing meanwhile is rebased over it). Returns false when its project or chapter is gone: the
 * writer's text is then kept as a conflict copy in the project opened instead.
 */
async function openKept(kept) {
  app.project = await app.opening.catch(() => null);
  if (app.project?.chapters.some((ch) => ch.id === kept.chapter)) {
    await app.sync.resync();
    await chapterShown(kept.chapter);
    adoptUi();
    await showProjectExtras();
    return true;
  }
  const shown = app.view.state.doc.toString();
  app.sync.close();
  app.sync = null;
  app.project = null;
  if (shown !== kept.text) app.orphan = { chapter: kept.chapter, text: shown, title: kept.title };
  return false;
}

/** The open project's bible and waiting approvals. */
async function showProjectExtras() {
  analysisProject(app.project?.id ?? null);
  await loadBible(app.project?.id).catch((err) => status(`could not load the story bible: ${err.message}`, true));
  await loadJobs(app.project?.id);
  await loadSuggestions(app.project?.id);
  await loadResearch(app.project?.id);
  await loadAgents();
  await refreshApprovals();
  await syncProject(app.project?.id);
}

/**
 * Show project `id`: open it, its chapter, its panels. Asked twice at once (the core's
 * `projects_changed` and the Join form), it is shown once.
 */
async function showProject(id) {
  if (app.showing?.id === id) return app.showing.done;
  const done = (async () => {
    app.project = await app.client.projects.open(id);
    await openChapter(app.project.ui.active_chapter ?? app.project.chapters[0].id);
    adoptUi();
    await showProjectExtras();
  })();
  app.showing = { id, done };
  try {
    await done;
  } finally {
    if (app.showing?.done === done) app.showing = null;
  }
}

function wire() {
  const c = app.client;
  c.on('edit', (e) => {
    // The writer's own typing (not another tab's): the idle thinker waits for quiet.
    if (e.origin === 'user' && !e.remote) writerTyped();
    if (e.chapter === app.sync?.chapter) app.sync.remote(e);
    suggestionsEdited(e.chapter);
    const summary = app.project?.chapters.find((ch) => ch.id === e.chapter);
    if (summary) summary.version = e.version;
  });
  c.on('ui', (ui) => applyUi(ui));
  c.on('analysis', (e) => analysisEvent(e));
  c.on('progress', (e) => showProgress(e));
  c.on('saved', (e) => {
    app.unsaved = false; // a save commits everything still pending
    if (app.sync?.synced) saveStatus(`saved ${new Date(e.at).toLocaleTimeString()}`);
    showStorage();
  });
  c.on('storage_error', (e) => {
    app.unsaved = true;
    saveStatus(e.message);
  });
  c.on('history_changed', (h) => {
    $('undo').disabled = !h.canUndo;
    $('redo').disabled = !h.canRedo;
    if (!document.querySelector('[data-panel="history"]').hidden) renderHistory();
  });
  c.on('memory_changed', () => {
    if (!document.querySelector('[data-panel="memory"]').hidden) renderMemory();
  });
  c.on('chapters_changed', (project) => {
    app.project = project;
    renderChapters();
  });
  c.on('project_reloaded', async (project) => {
    app.project = project;
    renderChapters();
    await app.sync?.resync();
    await showProjectExtras();
  });
  c.on('bible_changed', (e) => {
    bibleChanged(e);
    filesChanged();
    jobsBibleChanged();
  });
  c.on('files_changed', (e) => {
    if (!e.project || e.project === app.project?.id) filesChanged(e);
  });
  c.on('approvals_changed', (e) => {
    if (e.project !== app.project?.id) return;
    if (e.requested) showApprovalCard(e.requested);
    else refreshApprovals();
  });
  c.on('approval_decided', (e) => {
    if (e.project !== app.project?.id) return;
    const key = `${e.run ?? '-'}:${e.callId}`;
    app.decided.add(key);
    for (const node of cardNodes(key)) node.remove();
  });
  // A job unit's run events reach no chat run: its approval cards are shown from here.
  c.on('run', (e) => {
    if (e.type === 'approval_requested' && isJobRun(e.run) && (!e.project || e.project === app.project?.id)) showApprovalCard({ ...e, run: e.run });
  });
  c.on('job_progress', (e) => e.project === app.project?.id && (jobProgress(e), researchJobEvent(e)));
  c.on('job_finished', (e) => e.project === app.project?.id && (jobFinished(e), researchJobEvent(e)));
  c.on('research_changed', (e) => (!e.project || e.project === app.project?.id) && researchChanged(e));
  c.on('projects_changed', async (e) => {
    // Another project was created, imported or opened through the API: show it.
    if (e.remote || !e.current || e.current === app.project?.id) return;
    await showProject(e.current);
  });
  c.on('settings_changed', (s) => renderSettings(s));
  c.on('model_progress', (e) => showModelProgress(e));
  c.on('mcp_changed', (e) => mcpChanged(e));
  c.on('agents_changed', (e) => {
    if (!e.project || e.project === app.project?.id) loadAgents();
  });
  c.on('panic', (data) => status(`core restarted after an internal error: ${data.message}`, true));
  // A worker that starts again (after a restart); the first start ends in main().
  c.on('ready', () => app.started && status('core ready'));
  c.on('core_restarted', async () => {
    loadMcp();
    await catchUp();
    status('core ready (restarted after an error; your work is kept)');
  });
  c.on('writer_changed', async (e) => {
    await catchUp();
    status(e.writer === 'this tab' ? 'this tab now saves for every tab' : 'another tab now saves for every tab');
  });
  $('conflict-show').addEventListener('click', () => showConflict());
  $('conflict-dismiss').addEventListener('click', () => ($('conflict').hidden = true));

  $('chapter-add').addEventListener('click', () => addChapter());
  $('chapter-title').addEventListener('change', () => renameChapter());
  $('chapter-title').addEventListener('keydown', (e) => e.key === 'Enter' && e.target.blur());
  $('undo').addEventListener('click', () => undo());
  $('redo').addEventListener('click', () => redo());
  $('undo-agent').addEventListener('click', () => undo('agent'));
  $('chat-form').addEventListener('submit', send);
  $('chat-input').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey) send(e);
  });
  $('chat-cancel').addEventListener('click', cancel);
  $('chat-agent').addEventListener('change', () => {
    try {
      localStorage.setItem(AGENT_CHOICE_KEY, $('chat-agent').value);
    } catch {
      // Storage may be off; the choice lasts for this page.
    }
    showAgentChoice();
  });
  $('memory-search-form').addEventListener('submit', searchMemory);
  $('settings-form').addEventListener('submit', saveSettings);
  $('settings-demo').addEventListener('click', useDemo);
  $('settings-provider').addEventListener('change', showProviderFields);
  for (const tab of document.querySelectorAll('[data-tab]')) tab.addEventListener('click', () => pickTab(tab.dataset.tab));
  $('zen-enter').addEventListener('click', () => setZen(true));
  $('highlights-clear').addEventListener('click', () => app.client.execute('clear_highlights', { chapter: app.chapter }).catch((err) => status(`could not clear the highlights: ${err.message}`, true)));
  $('zen-exit').addEventListener('click', () => setZen(false));
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && document.body.classList.contains('zen')) setZen(false);
  });
  window.addEventListener('online', showNetwork);
  // Closing the tab while storage refuses saves, or with typing not yet taken by the core,
  // would lose it: ask first.
  window.addEventListener('beforeunload', (event) => {
    if (app.unsaved || (app.sync && !app.sync.synced)) {
      event.preventDefault();
      event.returnValue = '';
    }
  });
  window.addEventListener('offline', showNetwork);
  // The open chapter is kept for the next start whenever the page may be going away.
  document.addEventListener('visibilitychange', () => document.visibilityState === 'hidden' && keepOpenChapter());
  window.addEventListener('pagehide', keepOpenChapter);
}

async function main() {
  showNetwork();
  if ('serviceWorker' in navigator) {
    // The page keeps working offline: the service worker serves it from its cache.
    navigator.serviceWorker.register(new URL('../sw.js', import.meta.url), { scope: '../' }).catch(() => {});
  }
  // The client comes at once; the core loads meanwhile, and requests wait for it in the worker.
  document.body.dataset.core = 'starting';
  app.client = Draftsmith.launch({ workerUrl: new URL('../worker.js', import.meta.url) });
  // Exposed for tests and for trying the API from the console.
  window.draftsmith = app.client;
  window.draftsmithApp = app;
  initBible(app.client);
  initFiles(app.client);
  initJobs(app.client, { cardNode: approvalCardNode, bible: bibleState });
  initSuggestions(app.client, {
    onDecided: () => {
      if (!document.querySelector('[data-panel="memory"]').hidden) renderMemory();
    },
    currentLine: (chapter, line) => {
      const doc = chapter === app.chapter ? app.view?.state.doc : null;
      return doc && line <= doc.lines ? doc.line(line).text : null;
    },
  });
  initResearch(app.client);
  initAnalysis(app.client, { chapter: () => app.chapter });
  initMcp(app.client);
  initSync(app.client, {
    project: () => app.project,
    chapter: () => app.chapter,
    view: () => app.view,
    openProject: async (id) => {
      if (id !== app.project?.id) await showProject(id);
    },
  });
  $('settings-toolset').replaceChildren(...['all', 'quick', 'voice_safe'].map((t) => el('option', { value: t }, t)));
  wire();
  // The chapter the writer had open, shown (and taking typing) before the core is ready.
  const kept = readKept();
  if (kept) showKept(kept);
  try {
    await app.client.ready;
  } catch (err) {
    document.body.dataset.core = 'failed';
    status(`core failed: ${err.message}`, true);
    return;
  }
  document.body.dataset.core = 'ready';
  const hello = await app.client.hello();
  $('version').textContent = `draftsmith ${hello.version} (${hello.profile})`;
  let settings = await app.client.settings.get();
  if (!settings.configured) {
    // `make demo` works with no key: the dev server's offline demo model.
    settings = await app.client.settings.set({ provider: 'openai', baseUrl: demoUrl(), model: 'demo', researchProxy: settings.researchProxy || proxyTemplate() });
  }
  renderSettings(settings);
  loadMcp();
  await openInitialProject(kept);
  renderHistory();
  showStorage();
  status('core ready');
  app.started = true;
}

main();

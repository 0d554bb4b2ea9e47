// The demo editor: a CodeMirror 6 editor driven by the draftsmith core in a worker, with
// chapters, a chat with the agent, the shared undo history, the agent's memory and settings.
// Bundled by esbuild into dist/app.js (scripts/build-page.sh).
import { EditorView, keymap, Decoration } from '@codemirror/view';
import { EditorState, EditorSelection, StateField, StateEffect } from '@codemirror/state';
import { defaultKeymap } from '@codemirror/commands';
import { Draftsmith } from '../draftsmith.js';
import { ChapterSync, fromCore, charToUtf16, utf16ToChar } from './sync.js';

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
const el = (tag, props = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') node.className = v;
    else if (k === 'testid') node.dataset.testid = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null) node.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
};

const DEMO_SAMPLE = [
  {
    title: 'The Stair',
    text: 'Mara climbed the stair. The lamp was dark.\n\n“Who’s there?” she called. Nobody answered.\n\nThe wind was rising, and somewhere below a door banged twice.',
  },
];

const app = {
  client: null,
  project: null,
  chapter: null, // the open chapter's id
  sync: null,
  view: null,
  run: null,
  settings: null,
  selectionTimer: null,
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

// ---------------------------------------------------------------- editor

const setHighlights = StateEffect.define();
const highlightMark = Decoration.mark({ class: 'cm-highlight' });
const highlights = StateField.define({
  create: () => Decoration.none,
  update(value, tr) {
    value = value.map(tr.changes);
    for (const effect of tr.effects) if (effect.is(setHighlights)) value = effect.value;
    return value;
  },
  provide: (field) => EditorView.decorations.from(field),
});

function editorState(text) {
  return EditorState.create({
    doc: text,
    extensions: [
      EditorView.lineWrapping,
      highlights,
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
    if (!tr.docChanged || tr.annotation(fromCore)) continue;
    let inserted = '';
    tr.changes.iterChanges((_a, _b, _c, _d, text) => (inserted += text.toString()));
    app.sync?.local(tr.changes, inserted);
    local = true;
  }
  if (local) saveStatus('saving…');
  const fromTheCore = update.transactions.some((tr) => tr.annotation(fromCore));
  if (update.selectionSet && !fromTheCore) {
    clearTimeout(app.selectionTimer);
    app.selectionTimer = setTimeout(sendSelection, 400);
  }
}

/** The editor's selection in chars. */
function selectionChars() {
  const { doc, selection } = app.view.state;
  const range = selection.main;
  return [utf16ToChar(doc, range.from), utf16ToChar(doc, range.to)];
}

/** Tell the core where the writer's selection is (the agent's rewrite_selection uses it). */
async function sendSelection() {
  if (!app.sync || !app.view) return;
  await app.sync.whenSynced();
  const [start, end] = selectionChars();
  const ui = app.project?.ui;
  if (ui && ui.active_chapter === app.chapter && ui.selection?.[0] === start && ui.selection?.[1] === end) return;
  await app.client.execute('set_selection', { chapter: app.chapter, start, end }).catch(() => {});
}

async function openChapter(id) {
  if (app.sync) {
    await app.sync.whenSynced();
    app.sync.close();
  }
  const chapter = await app.client.getChapter(id);
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
  });
  $('chapter-title').value = chapter.title;
  renderChapters();
  if (app.project?.ui?.active_chapter !== chapter.id) {
    await app.client.execute('jump_to_chapter', { chapter: chapter.id }).catch(() => {});
  }
}

/** Apply the core's editor UI state (an agent navigated, selected or highlighted). */
async function applyUi(ui) {
  const previous = app.project?.ui;
  if (app.project) app.project.ui = ui;
  if (ui.active_chapter && ui.active_chapter !== app.chapter) {
    await openChapter(ui.active_chapter);
  }
  if (!app.view || ui.active_chapter !== app.chapter) return;
  const doc = app.view.state.doc;
  const [start, end] = ui.selection ?? [ui.cursor, ui.cursor];
  const [curStart, curEnd] = selectionChars();
  const effects = [
    setHighlights.of(
      Decoration.set(
        (ui.highlights ?? [])
          .filter((h) => h.chapter === app.chapter && h.end > h.start)
          .map((h) => highlightMark.range(charToUtf16(doc, h.start), charToUtf16(doc, h.end)))
          .sort((a, b) => a.from - b.from),
      ),
    ),
  ];
  const moved = start !== curStart || end !== curEnd;
  const selection = moved ? EditorSelection.single(charToUtf16(doc, start), charToUtf16(doc, end)) : undefined;
  app.view.dispatch({
    selection,
    effects: moved ? [...effects, EditorView.scrollIntoView(charToUtf16(doc, start), { y: 'center' })] : effects,
    annotations: fromCore.of(true),
  });
  document.body.classList.toggle('zen', !!ui.zen_mode);
  if (previous?.panel !== ui.panel && ['chat', 'history', 'memory', 'settings'].includes(ui.panel)) selectTab(ui.panel);
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

function chatItem(className, text) {
  const li = el('li', { class: className }, text);
  $('chat-log').append(li);
  li.scrollIntoView({ block: 'end' });
  return li;
}

function toolCard(id, name) {
  const card = el(
    'li',
    { class: 'tool-card', testid: 'tool-card', 'data-call': id, 'data-status': 'proposed' },
    el('div', {}, el('span', { class: 'name' }, name), ' ', el('span', { class: 'state' }, 'proposed')),
    el('div', { class: 'args' }),
  );
  $('chat-log').append(card);
  card.scrollIntoView({ block: 'end' });
  return card;
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
  const settings = app.settings ?? {};
  const run = app.client.run(prompt, { signal: controller.signal });
  app.run = { controller, run };
  $('chat-send').disabled = true;
  $('chat-cancel').disabled = false;
  const cards = new Map();
  let bubble = null;
  let max = settings.maxSteps ?? 20;
  $('step-counter').textContent = `step 0 / ${max}`;
  try {
    for await (const e of run) {
      switch (e.type) {
        case 'run_started':
          max = e.maxSteps;
          $('step-counter').textContent = `step 0 / ${max}`;
          break;
        case 'text_delta':
          bubble ??= chatItem('assistant', '');
          bubble.textContent += e.text;
          bubble.scrollIntoView({ block: 'end' });
          break;
        case 'tool_call_proposed':
          bubble = null;
          cards.set(e.id, toolCard(e.id, e.name));
          break;
        case 'tool_call_started': {
          const card = cards.get(e.id) ?? toolCard(e.id, e.name);
          cards.set(e.id, card);
          card.dataset.status = 'running';
          card.querySelector('.state').textContent = 'running';
          card.querySelector('.args').textContent = JSON.stringify(e.arguments);
          break;
        }
        case 'tool_call_finished': {
          const card = cards.get(e.id) ?? toolCard(e.id, e.name);
          card.dataset.status = e.status;
          card.querySelector('.state').textContent = e.status;
          break;
        }
        case 'step_finished':
          bubble = null;
          $('step-counter').textContent = `step ${e.step} / ${max}`;
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
    }
  } catch (err) {
    chatItem('error', err.code === 'offline' ? err.message : `The agent could not start: ${err.message}`);
  } finally {
    app.run = null;
    $('chat-send').disabled = false;
    $('chat-cancel').disabled = true;
  }
}

function cancel() {
  app.run?.controller.abort();
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

async function renderMemory() {
  const m = await app.client.memory.list();
  const section = (title, items) =>
    items.length ? el('section', {}, el('h3', {}, title), el('ul', {}, ...items.map((t) => el('li', {}, t)))) : null;
  $('memory-content').replaceChildren(
    el('section', { testid: 'bedside-note' }, el('h3', {}, 'Bedside note'), el('p', {}, m.bedside?.text || '(empty)')),
    section('Goals', m.goals.map((g) => `${g.title ?? g.text ?? ''} — ${g.status ?? ''}`)),
    section('Watched', m.watched.map((w) => `${w.name}${w.kind ? ` (${w.kind})` : ''}`)),
    section('Notes', m.notes.slice(0, 100).map((n) => n.text)) ?? el('p', {}, 'No notes yet.'),
  );
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
  return settings?.baseUrl === demoUrl();
}

function renderSettings(s) {
  app.settings = s;
  $('settings-provider').value = s.provider ?? 'openai';
  $('settings-base-url').value = s.baseUrl;
  $('settings-model').value = s.model;
  $('settings-key').value = '';
  $('settings-key').placeholder = s.hasKey ? 'a key is set (type to replace it)' : "kept in the worker's memory";
  $('settings-remember').checked = s.rememberKey;
  $('settings-toolset').value = s.toolset;
  $('settings-max-steps').value = s.maxSteps;
  const label = $('model-label');
  label.textContent = s.configured ? (isDemo(s) ? 'Demo model (offline, scripted; not an AI)' : `${s.model} · ${s.provider}`) : 'No model configured';
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
  };
  const key = $('settings-key').value.trim();
  if (key) patch.apiKey = key;
  try {
    renderSettings(await app.client.settings.set(patch));
    message.textContent = 'Saved.';
    message.classList.remove('error');
  } catch (err) {
    message.textContent = err.message;
    message.classList.add('error');
  }
}

async function useDemo() {
  renderSettings(await app.client.settings.set({ provider: 'openai', baseUrl: demoUrl(), model: 'demo', apiKey: null }));
  $('settings-message').textContent = 'Using the offline demo model.';
}

// ---------------------------------------------------------------- tabs

function selectTab(name) {
  for (const tab of document.querySelectorAll('[data-tab]')) tab.setAttribute('aria-selected', String(tab.dataset.tab === name));
  for (const panel of document.querySelectorAll('[data-panel]')) panel.hidden = panel.dataset.panel !== name;
  if (name === 'history') renderHistory();
  if (name === 'memory') renderMemory();
}

// ---------------------------------------------------------------- boot

async function openInitialProject() {
  const { projects, current } = await app.client.projects.list();
  const id = current ?? projects[0]?.id;
  app.project = id ? await app.client.projects.open(id) : await app.client.projects.create('My novel', DEMO_SAMPLE);
  const first = app.project.ui.active_chapter ?? app.project.chapters[0].id;
  await openChapter(first);
}

function wire() {
  const c = app.client;
  c.on('edit', (e) => {
    if (e.chapter === app.sync?.chapter) app.sync.remote(e);
    const summary = app.project?.chapters.find((ch) => ch.id === e.chapter);
    if (summary) summary.version = e.version;
  });
  c.on('ui', (ui) => applyUi(ui));
  c.on('saved', (e) => {
    if (app.sync?.synced) saveStatus(`saved ${new Date(e.at).toLocaleTimeString()}`);
    showStorage();
  });
  c.on('storage_error', (e) => saveStatus(e.message));
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
  });
  c.on('projects_changed', async (e) => {
    // Another project was created, imported or opened through the API: show it.
    if (e.remote || !e.current || e.current === app.project?.id) return;
    app.project = await c.projects.open(e.current);
    await openChapter(app.project.ui.active_chapter ?? app.project.chapters[0].id);
  });
  c.on('settings_changed', (s) => renderSettings(s));
  c.on('panic', (data) => status(`core restarted after an internal error: ${data.message}`, true));
  c.on('ready', () => status('core ready'));

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
  $('memory-search-form').addEventListener('submit', searchMemory);
  $('settings-form').addEventListener('submit', saveSettings);
  $('settings-demo').addEventListener('click', useDemo);
  for (const tab of document.querySelectorAll('[data-tab]')) tab.addEventListener('click', () => selectTab(tab.dataset.tab));
  window.addEventListener('online', showNetwork);
  window.addEventListener('offline', showNetwork);
}

async function main() {
  showNetwork();
  if ('serviceWorker' in navigator) {
    // The page keeps working offline: the service worker serves it from its cache.
    navigator.serviceWorker.register(new URL('../sw.js', import.meta.url), { scope: '../' }).catch(() => {});
  }
  try {
    app.client = await Draftsmith.start({ workerUrl: new URL('../worker.js', import.meta.url) });
  } catch (err) {
    status(`core failed: ${err.message}`, true);
    return;
  }
  // Exposed for tests and for trying the API from the console.
  window.draftsmith = app.client;
  const hello = await app.client.hello();
  $('version').textContent = `draftsmith ${hello.version} (${hello.profile})`;
  $('settings-toolset').replaceChildren(...['all', 'quick', 'voice_safe'].map((t) => el('option', { value: t }, t)));
  wire();
  let settings = await app.client.settings.get();
  if (!settings.configured) {
    // `make demo` works with no key: the dev server's offline demo model.
    settings = await app.client.settings.set({ provider: 'openai', baseUrl: demoUrl(), model: 'demo' });
  }
  renderSettings(settings);
  await openInitialProject();
  renderHistory();
  showStorage();
  status('core ready');
  window.draftsmithApp = app;
}

main();

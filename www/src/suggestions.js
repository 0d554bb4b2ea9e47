// The Suggestions list of the memory panel: what the proactive memory proposes (the watched-
// entity monitor after an edit, with its chapter and line; the idle thinker while the writer
// rests), each with Accept (it becomes a goal or a note) and Dismiss. `suggestion` events keep
// it live. This module also tells the core when the writer has stopped typing (`writerIdle`,
// after the idle time of the `idleThinking` settings), so the idle thinker may think.
import { $, el } from './dom.js';

const state = {
  client: null,
  project: null,
  /** id -> Suggestion (pending ones) */
  pending: new Map(),
  /** The idle timer, and the settings it follows. */
  idleTimer: null,
  settings: null,
  /** Called after a suggestion was accepted (the memory view shows the new note or goal). */
  onDecided: null,
  /** The line's text as the editor has it now, if that chapter is open: (chapter, line) -> text | null. */
  currentLine: null,
};

const FINDINGS = {
  mention: 'mentioned',
  misspelling: 'misspelt?',
  contradiction: 'contradicted?',
  changed: 'changed',
  entry_changed: 'entry changed',
};

/** Where a monitor suggestion was found: "Chapter 2, line 4". */
export function placeText(s) {
  if (s.finding === 'entry_changed') return 'Story bible';
  if (!s.line) return '';
  return `Chapter ${s.chapterNumber ?? '?'}, line ${s.line}`;
}

/** Start: keep the client, follow `suggestion` events. */
export function initSuggestions(client, { onDecided, currentLine } = {}) {
  state.client = client;
  state.onDecided = onDecided ?? null;
  state.currentLine = currentLine ?? null;
  client.on('suggestion', (e) => {
    if (state.project && e.project !== state.project) return;
    if (e.suggestion.state === 'pending') state.pending.set(e.suggestion.id, e.suggestion);
    else state.pending.delete(e.suggestion.id);
    render();
  });
}

/** Show the project's pending suggestions (after opening a project or a reload). */
export async function loadSuggestions(project) {
  state.project = project ?? null;
  state.pending.clear();
  if (!project) return render();
  try {
    const { suggestions } = await state.client.suggestions.list();
    for (const s of suggestions) state.pending.set(s.id, s);
  } catch {
    // An older core without suggestions: the list stays empty.
  }
  render();
}

async function decide(id, accept) {
  try {
    if (accept) await state.client.suggestions.accept(id);
    else await state.client.suggestions.dismiss(id);
  } catch (err) {
    const node = $('suggestions-message');
    if (node) node.textContent = `Suggestion: ${err.message}`;
  }
  state.pending.delete(id);
  render();
  state.onDecided?.();
}

function item(s) {
  const place = placeText(s);
  // The line as it reads now when its chapter is open (the writer went on typing after the
  // finding), else as it was found; a changed mention shows the line as it read before, and
  // a changed story-bible entry its new values.
  const before = s.finding === 'changed' || s.finding === 'entry_changed';
  const line = (!before && s.chapter && s.line && state.currentLine?.(s.chapter, s.line)) || s.lineText;
  return el(
    'li',
    { class: `suggestion ${s.source}`, testid: 'suggestion', 'data-id': s.id, 'data-finding': s.finding ?? s.source },
    el('strong', { testid: 'suggestion-title' }, s.title),
    s.finding ? el('span', { class: 'finding' }, ` ${FINDINGS[s.finding] ?? s.finding}`) : null,
    place ? el('div', { class: 'place', testid: 'suggestion-place' }, place, line ? el('q', { testid: 'suggestion-line' }, line) : null) : null,
    s.source === 'thinker' ? el('div', { class: 'text' }, s.text) : null,
    el(
      'div',
      { class: 'actions' },
      el('button', { type: 'button', class: 'link', testid: 'suggestion-accept', title: s.kind === 'goal' ? 'Make it a goal' : 'Keep it as a note', onclick: () => decide(s.id, true) }, s.kind === 'goal' ? 'Accept as goal' : 'Accept as note'),
      ' ',
      el('button', { type: 'button', class: 'link', testid: 'suggestion-dismiss', onclick: () => decide(s.id, false) }, 'Dismiss'),
    ),
  );
}

function render() {
  const node = $('suggestions');
  if (!node) return;
  const list = [...state.pending.values()].sort((a, b) => b.updatedMs - a.updatedMs);
  node.replaceChildren(
    el('h3', {}, `Suggestions${list.length ? ` (${list.length})` : ''}`),
    list.length ? el('ul', { testid: 'suggestion-list' }, ...list.slice(0, 50).map(item)) : el('p', { class: 'empty' }, 'Nothing to suggest right now.'),
    el('p', { class: 'message', testid: 'suggestions-message', role: 'status' }),
  );
}

/** A chapter changed: show the current text of its suggestions' lines. */
export function suggestionsEdited(chapter) {
  if ([...state.pending.values()].some((s) => s.chapter === chapter)) render();
}

/** The settings the idle timer follows. */
export function idleSettings(settings) {
  state.settings = settings;
}

/** The writer typed: tell the core once they have been quiet for the idle time. */
export function writerTyped() {
  const idle = state.settings?.idleThinking;
  clearTimeout(state.idleTimer);
  if (!idle?.enabled || !state.settings?.configured || !state.client) return;
  const after = Math.max(1000, idle.afterMs ?? 60000);
  state.idleTimer = setTimeout(() => {
    state.idleTimer = null;
    state.client.writerIdle(after).catch(() => {});
  }, after);
}

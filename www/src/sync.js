// The demo's sharing: the Share dialog (the server, a token, the project's id to give a
// co-author), the Join form, the status of the link and who else is connected, each peer's
// cursor in the editor, and the link remembered per project so that a reload reconnects.
import { StateEffect } from '@codemirror/state';
import { Decoration, WidgetType } from '@codemirror/view';
import { charToUtf16 } from '../../packages/draftsmith/codemirror.js';
import { $, el } from './dom.js';
import { decorationField } from './decorations.js';

/** The development server `make sync-server` starts. */
export const DEFAULT_URL = 'ws://127.0.0.1:1234';
/** localStorage: `draftsmith.sync.<project id>` holds `{url, token, name}`. */
const LINK_KEY = 'draftsmith.sync.';
/** localStorage: the name this device goes by for co-authors. */
const NAME_KEY = 'draftsmith.sync-name';

const sync = {
  client: null,
  /** What the page shows: `{project, chapter, view, openProject(id)}`. */
  page: null,
  /** The open project's last status. */
  status: null,
};

// ---------------------------------------------------------------- remembered links

function remembered(project) {
  try {
    const link = JSON.parse(localStorage.getItem(LINK_KEY + project) ?? 'null');
    return link && typeof link.url === 'string' && typeof link.token === 'string' ? link : null;
  } catch {
    return null;
  }
}

function remember(project, link) {
  try {
    if (link) localStorage.setItem(LINK_KEY + project, JSON.stringify(link));
    else localStorage.removeItem(LINK_KEY + project);
    if (link?.name) localStorage.setItem(NAME_KEY, link.name);
  } catch {
    // Storage may be off: the link lasts for this page.
  }
}

function myName() {
  try {
    return localStorage.getItem(NAME_KEY) ?? '';
  } catch {
    return '';
  }
}

// ---------------------------------------------------------------- checking input

/** The reason `url` and `token` cannot be used, or null. */
function badInput(url, token) {
  if (!/^wss?:\/\/[^\s/]+/.test(url)) return 'The server address must start with ws:// or wss:// (for example ws://127.0.0.1:1234).';
  if (!token) return 'A token is needed: the server only lets in tokens that name the project.';
  return null;
}

// ---------------------------------------------------------------- peers' cursors

const setPeers = StateEffect.define();

/** A peer's caret, with its name. */
class PeerCaret extends WidgetType {
  constructor(name, hue) {
    super();
    this.name = name;
    this.hue = hue;
  }

  eq(other) {
    return other.name === this.name && other.hue === this.hue;
  }

  toDOM() {
    return el(
      'span',
      { class: 'cm-peer-caret', testid: 'peer-cursor', 'data-name': this.name, style: `--peer-hue: ${this.hue}`, 'aria-label': `${this.name}'s cursor` },
      el('span', { class: 'cm-peer-name' }, this.name),
    );
  }

  ignoreEvent() {
    return true;
  }
}

/** A stable colour for a client. */
const hueOf = (client) => (Number(client) * 137) % 360;

/** The editor extension showing the peers' cursors (moved along by edits between updates). */
export const peerCursors = decorationField(setPeers);

/** Put the open chapter's peers' carets in the editor. */
export function showPeerCursors() {
  const view = sync.page?.view();
  if (!view) return;
  const chapter = sync.page.chapter();
  const doc = view.state.doc.toString();
  const chars = [...doc].length;
  const peers = (sync.status?.peers ?? []).filter((p) => p.chapter === chapter && p.cursor !== undefined && p.cursor !== null);
  const carets = peers
    .map((p) => Decoration.widget({ widget: new PeerCaret(p.name, hueOf(p.client)), side: 1 }).range(charToUtf16(doc, Math.min(p.cursor, chars))))
    .sort((a, b) => a.from - b.from);
  view.dispatch({ effects: setPeers.of(Decoration.set(carets)) });
}

// ---------------------------------------------------------------- status and peers

const STATUS_TEXT = {
  disconnected: () => '',
  connecting: () => 'sync: connecting…',
  connected: (s) => (s.unsent ? `sync: connected, ${s.unsent} unsent` : 'sync: connected'),
  offline: (s) => `sync: offline, ${s.unsent} unsent${s.reason ? ` (${s.reason})` : ''}`,
  unauthorized: (s) => `sync: unauthorized${s.reason ? ` (${s.reason})` : ''}`,
};

function chapterTitle(id) {
  const chapters = sync.page.project()?.chapters ?? [];
  const i = chapters.findIndex((c) => c.id === id);
  return i < 0 ? null : chapters[i].title || `Chapter ${i + 1}`;
}

function render() {
  const s = sync.status;
  const state = s?.status ?? 'disconnected';
  const node = $('sync-status');
  node.textContent = (STATUS_TEXT[state] ?? (() => state))(s ?? {});
  node.dataset.status = state;
  node.hidden = state === 'disconnected';
  const peers = s?.peers ?? [];
  $('sync-peers').replaceChildren(
    ...peers.map((p) => {
      const where = p.chapter ? chapterTitle(p.chapter) : null;
      return el('li', { class: 'sync-peer', testid: 'sync-peer', 'data-name': p.name, style: `--peer-hue: ${hueOf(p.client)}` }, where ? `${p.name} · ${where}` : p.name);
    }),
  );
  $('sync-peers').hidden = peers.length === 0;
  $('share-stop').hidden = state === 'disconnected';
  showPeerCursors();
}

/** A `sync_status` event or answer: shown if it is the open project's. */
function took(status) {
  if (!status || status.project !== sync.page.project()?.id) return;
  sync.status = status;
  render();
}

// ---------------------------------------------------------------- Share and Join

function message(id, text, isError = false) {
  const node = $(id);
  node.textContent = text;
  node.classList.toggle('error', isError);
}

function openDialog() {
  const project = sync.page.project();
  const link = project ? remembered(project.id) : null;
  $('share-url').value = link?.url ?? sync.status?.url ?? DEFAULT_URL;
  $('share-token').value = link?.token ?? '';
  $('share-name').value = link?.name ?? myName();
  $('share-project-id').value = project?.id ?? '';
  if (!$('join-url').value) $('join-url').value = DEFAULT_URL;
  message('share-message', '');
  message('join-message', '');
  const dialog = $('share-dialog');
  if (!dialog.open) dialog.showModal();
}

async function share(event) {
  event.preventDefault();
  const project = sync.page.project();
  const url = $('share-url').value.trim();
  const token = $('share-token').value.trim();
  const name = $('share-name').value.trim();
  const bad = project ? badInput(url, token) : 'No project is open.';
  if (bad) return message('share-message', bad, true);
  message('share-message', 'Sharing…');
  try {
    const status = await sync.client.sync.connect({ url, token, name: name || undefined });
    remember(status.project, { url, token, name });
    took(status);
    message('share-message', 'Shared. Give a co-author the project id below and a token for it.');
  } catch (err) {
    message('share-message', `Could not share: ${err.message}`, true);
  }
}

async function stopSharing() {
  const project = sync.page.project();
  if (!project) return;
  try {
    took(await sync.client.sync.disconnect(project.id));
    remember(project.id, null);
    message('share-message', 'No longer shared: the project stays here as it is.');
  } catch (err) {
    message('share-message', `Could not stop sharing: ${err.message}`, true);
  }
}

async function copyId() {
  const id = $('share-project-id').value;
  try {
    await navigator.clipboard.writeText(id);
    message('share-message', 'Project id copied.');
  } catch {
    $('share-project-id').select();
    message('share-message', 'Select the id and copy it (the browser did not let the page copy).');
  }
}

async function join(event) {
  event.preventDefault();
  const url = $('join-url').value.trim();
  const token = $('join-token').value.trim();
  const project = $('join-project').value.trim();
  const name = $('share-name').value.trim() || myName();
  const bad = badInput(url, token) ?? (project ? null : "The project id is needed: ask the project's owner for it (Share shows it).");
  if (bad) return message('join-message', bad, true);
  message('join-message', 'Joining: fetching the project…');
  try {
    const status = await sync.client.sync.connect({ url, token, project, name: name || undefined });
    remember(status.project, { url, token, name });
    await sync.page.openProject(status.project);
    took(status);
    message('join-message', 'Joined.');
    $('share-dialog').close();
  } catch (err) {
    message('join-message', `Could not join: ${err.message}`, true);
  }
}

// ---------------------------------------------------------------- the page

/**
 * Wire the Share dialog and the status. `page` says what the page shows: `project()`,
 * `chapter()`, `view()`, and `openProject(id)` to show a project joined.
 */
export function initSync(client, page) {
  sync.client = client;
  sync.page = page;
  client.on('sync_status', took);
  $('share').addEventListener('click', openDialog);
  $('share-close').addEventListener('click', () => $('share-dialog').close());
  $('share-form').addEventListener('submit', share);
  $('share-stop').addEventListener('click', stopSharing);
  $('share-copy').addEventListener('click', copyId);
  $('join-form').addEventListener('submit', join);
}

/**
 * The page shows project `id` (opened, or after a reload): show its link, and connect it again
 * if it was shared from here (a shared project stays shared).
 */
export async function syncProject(id) {
  sync.status = null;
  render();
  if (!id) return;
  try {
    let status = await sync.client.sync.status(id);
    const link = remembered(id);
    if (status.status === 'disconnected' && link) {
      status = await sync.client.sync.connect({ url: link.url, token: link.token, project: id, name: link.name || undefined });
    }
    took(status);
  } catch (err) {
    $('sync-status').hidden = false;
    $('sync-status').textContent = `sync: could not reconnect (${err.message})`;
  }
}

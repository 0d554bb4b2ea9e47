// The Files view: the project seen as the agents' `data/` tree (manuscripts/, bible/, plans/,
// notes/), read with the same file tools the agents call. Plans and notes are the writer's to
// edit here: a save goes through `write_file` with origin `user`, so the file records the
// writer (`human`) as its author, and an agent's later change to it is visible as such.
// Chapters and story-bible entries are shown read-only (they have their own editors).
import { $, el } from './dom.js';

const EDITABLE = ['plans/', 'notes/'];
const MAX_ENTRIES = 400; // a listing larger than this is cut (and says so)

const state = {
  client: null,
  open: null, // {path, content, editable}
  dirty: false,
  rendering: null,
};

/** Whether the writer may edit this file here. */
export const isEditable = (path) => EDITABLE.some((p) => path.startsWith(p));

/** Wire the view's buttons; call once with the client. */
export function initFiles(client) {
  state.client = client;
  $('files-new-form').addEventListener('submit', (e) => {
    e.preventDefault();
    newFile();
  });
  $('file-save').addEventListener('click', () => saveFile());
  $('file-content').addEventListener('input', () => {
    state.dirty = true;
    $('file-save').disabled = !state.open?.editable;
  });
}

async function call(tool, args, origin) {
  const result = await state.client.execute(tool, args, origin ? { origin } : {});
  if (result.status !== 'success') {
    const message = result.data?.message ?? `${tool} failed`;
    const err = new Error(message);
    err.code = result.data?.code;
    throw err;
  }
  return result.data;
}

function message(text, isError = false) {
  const node = $('files-message');
  node.textContent = text;
  node.classList.toggle('error', isError);
}

/** The entries of a `list_files` answer, whatever their exact container name. */
function entriesOf(data) {
  const list = data?.entries ?? data?.files ?? data?.items ?? [];
  return Array.isArray(list) ? list : [];
}

const isDir = (entry) => entry.type === 'directory' || entry.type === 'dir' || entry.is_dir === true || String(entry.name).endsWith('/');
const join = (dir, name) => `${dir ? `${dir.replace(/\/$/, '')}/` : ''}${String(name).replace(/\/$/, '')}`;

/** Walk the tree breadth-first from the root, at most MAX_ENTRIES entries. */
async function walk() {
  const rows = [];
  const queue = [['', 0]];
  let cut = false;
  while (queue.length) {
    const [dir, depth] = queue.shift();
    const data = await call('list_files', { directory: dir });
    const entries = entriesOf(data).slice().sort((a, b) => String(a.name).localeCompare(String(b.name)));
    // Keep each directory's children right after it.
    const at = rows.findIndex((r) => r.path === dir) + 1;
    const children = [];
    for (const entry of entries) {
      if (rows.length + children.length >= MAX_ENTRIES) {
        cut = true;
        break;
      }
      const path = join(dir, entry.name);
      const dirEntry = isDir(entry);
      children.push({ path, name: String(entry.name).replace(/\/$/, ''), dir: dirEntry, size: entry.size, depth });
      if (dirEntry && depth < 4) queue.push([path, depth + 1]);
    }
    rows.splice(at, 0, ...children);
  }
  return { rows, cut };
}

function size(bytes) {
  if (typeof bytes !== 'number') return '';
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`;
}

/** Render the tree (and keep the open file). */
export async function renderFiles() {
  if (!state.client) return;
  // One render at a time; a render asked for meanwhile runs after it.
  if (state.rendering) {
    state.again = true;
    return state.rendering;
  }
  state.rendering = (async () => {
    try {
      const { rows, cut } = await walk();
      const items = rows.map((row) =>
        el(
          'li',
          { class: `file-row${row.dir ? ' dir' : ''}${state.open?.path === row.path ? ' open' : ''}`, style: `padding-left:${row.depth * 0.9}rem`, 'data-path': row.path },
          row.dir
            ? el('span', { class: 'file-name' }, `${row.name}/`)
            : el('button', { type: 'button', class: 'file-name link', testid: 'file-item', 'data-path': row.path, onclick: () => openFile(row.path) }, row.name),
          row.dir ? null : el('span', { class: 'file-size' }, size(row.size)),
        ),
      );
      $('files-tree').replaceChildren(...items);
      if (cut) message(`Showing the first ${MAX_ENTRIES} entries.`);
    } catch (err) {
      message(`Could not list the files: ${err.message}`, true);
    }
  })();
  try {
    await state.rendering;
  } finally {
    state.rendering = null;
  }
  if (state.again) {
    state.again = false;
    await renderFiles();
  }
}

/** Open a file in the viewer (editable for plans/ and notes/). */
export async function openFile(path) {
  if (state.dirty && state.open && state.open.path !== path && !window.confirm(`Discard your unsaved changes to ${state.open.path}?`)) return;
  try {
    const data = await call('read_file', { path });
    // The writer typed into this file while it was being read (a refresh after another
    // change, say): their text stays.
    if (state.dirty && state.open?.path === path) return;
    const content = typeof data === 'string' ? data : data.content ?? '';
    const editable = isEditable(path);
    // A refresh of the file already open (after a change event) keeps what the panel says,
    // such as the "Saved" of the save that caused it.
    const refresh = state.open?.path === path;
    state.open = { path, content, editable };
    state.dirty = false;
    $('file-view').hidden = false;
    $('file-path').textContent = path;
    $('file-origin').textContent = data.origin ? `by ${data.origin === 'human' ? 'you' : data.origin}` : '';
    const area = $('file-content');
    area.value = content;
    area.readOnly = !editable;
    $('file-save').hidden = !editable;
    $('file-save').disabled = true;
    if (!refresh) message(editable ? '' : 'Read-only here: chapters are edited in the editor, story-bible entries in the Story bible panel.');
    for (const row of document.querySelectorAll('.file-row')) row.classList.toggle('open', row.dataset.path === path);
  } catch (err) {
    message(`Could not open ${path}: ${err.message}`, true);
  }
}

async function saveFile() {
  const open = state.open;
  if (!open?.editable) return;
  const content = $('file-content').value;
  try {
    await call('write_file', { path: open.path, content }, 'user');
    open.content = content;
    state.dirty = false;
    $('file-save').disabled = true;
    message(`Saved ${open.path}.`);
    await renderFiles();
  } catch (err) {
    message(`Could not save ${open.path}: ${err.message}`, true);
  }
}

async function newFile() {
  let path = $('files-new-path').value.trim();
  if (!path) return;
  if (!isEditable(path)) path = `plans/${path}`;
  try {
    await call('write_file', { path, content: '' }, 'user');
    $('files-new-path').value = '';
    await renderFiles();
    await openFile(path);
  } catch (err) {
    message(`Could not create ${path}: ${err.message}`, true);
  }
}

/** An agent (or another tab) changed a file: refresh the tree, and the open file if it is unchanged here. */
export async function filesChanged(e) {
  if ($('files-panel')?.hidden) return;
  await renderFiles();
  if (state.open && (!e?.path || e.path === state.open.path) && !state.dirty) await openFile(state.open.path);
}

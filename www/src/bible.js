// The story-bible panel: characters, locations, glossary, scenes, QA records and the other
// kinds, each field with its origin badge (who wrote it: the writer, an agent, an import).
// The writer's edits are saved with `bible_save` and the entity's version (`baseVersion`), so
// they never overwrite a change they have not seen: a conflict is shown, the entity reloaded
// and the writer's unsaved text kept at hand. `bible_changed` events keep the panel live.
import { $, el } from './dom.js';

// Field types: text (one line), long (a textarea), list (comma-separated), int, span.
const t = (name, label, type = 'text', required = false) => ({ name, label, type, required });

/** The kinds the panel shows, with their fields (as in the core's `Kind::fields()`). */
export const KINDS = {
  character: {
    label: 'Characters',
    one: 'character',
    fields: [t('name_src', 'Name', 'text', true), t('name_tgt', 'Name (translated)'), t('aliases', 'Aliases', 'list'), t('pronouns', 'Pronouns'), t('notes', 'Notes', 'long')],
    title: (e) => e.name_src || e.id,
    sort: (e) => (e.name_src || e.id).toLowerCase(),
  },
  location: {
    label: 'Locations',
    one: 'location',
    fields: [t('name_src', 'Name', 'text', true), t('name_tgt', 'Name (translated)'), t('description', 'Description', 'long')],
    title: (e) => e.name_src || e.id,
    sort: (e) => (e.name_src || e.id).toLowerCase(),
  },
  glossary: {
    label: 'Glossary',
    one: 'glossary entry',
    fields: [t('term_src', 'Term', 'text', true), t('term_tgt', 'Translation'), t('notes', 'Notes', 'long')],
    title: (e) => e.term_src || e.id,
    sort: (e) => (e.term_src || e.id).toLowerCase(),
  },
  scene: {
    label: 'Scenes',
    one: 'scene',
    fields: [t('chapter', 'Chapter', 'text', true), t('span', 'Span (start–end, chars)', 'span'), t('summary', 'Summary', 'long'), t('tags', 'Tags', 'list'), t('primary_characters', 'Characters', 'list'), t('locations', 'Locations', 'list')],
    title: (e) => `${e.id}${e.chapter ? ` (chapter ${e.chapter})` : ''}`,
    sort: (e) => `${String(e.chapter ?? '').padStart(6, '0')}:${String(e.span?.start ?? 0).padStart(12, '0')}:${e.id}`,
  },
  qa: {
    label: 'QA records',
    one: 'QA record',
    fields: [t('check', 'Check', 'text', true), t('scene', 'Scene'), t('line', 'Line', 'int'), t('severity', 'Severity'), t('message', 'Message', 'long', true)],
    title: (e) => `${e.severity ? `${e.severity}: ` : ''}${e.check || e.id}`,
    sort: (e) => `${e.scene ?? ''}:${String(e.line ?? 0).padStart(8, '0')}:${e.id}`,
  },
  route: {
    label: 'Routes',
    one: 'route',
    fields: [t('synopsis', 'Synopsis', 'long'), t('primary_characters', 'Characters', 'list'), t('scene_ids', 'Scenes', 'list')],
    title: (e) => e.id,
    sort: (e) => e.id,
  },
  contextdoc: {
    label: 'Context documents',
    one: 'context document',
    fields: [t('title', 'Title', 'text', true), t('text', 'Text', 'long')],
    title: (e) => e.title || e.id,
    sort: (e) => (e.title || e.id).toLowerCase(),
  },
  translation: {
    label: 'Translations',
    one: 'translation',
    fields: [t('scene', 'Scene', 'text', true), t('line', 'Line', 'int'), t('source', 'Source', 'long'), t('target', 'Target', 'long')],
    title: (e) => `${e.scene ?? e.id}${e.line != null ? `:${e.line}` : ''}`,
    sort: (e) => `${e.scene ?? ''}:${String(e.line ?? 0).padStart(8, '0')}:${e.id}`,
  },
  styleguide: {
    label: 'Style guide',
    one: 'style guide',
    single: 'styleguide',
    fields: [t('markdown', 'Style guide (Markdown)', 'long')],
    title: () => 'Style guide',
    sort: (e) => e.id,
  },
  ui_settings: {
    label: 'UI settings',
    one: 'UI settings',
    fields: [t('line_length_limit', 'Line length limit', 'int'), t('lines_per_box', 'Lines per box', 'int'), t('notes', 'Notes', 'long')],
    title: (e) => e.id,
    sort: (e) => e.id,
  },
};

/** Which kinds each tab of the panel shows. */
const TABS = {
  character: ['character'],
  location: ['location'],
  glossary: ['glossary'],
  scene: ['scene'],
  qa: ['qa'],
  more: ['route', 'contextdoc', 'translation', 'styleguide', 'ui_settings'],
};

const state = {
  client: null,
  project: null,
  /** kind -> Map(id -> flat entity) */
  entities: Object.fromEntries(Object.keys(KINDS).map((k) => [k, new Map()])),
  tab: 'character',
  /** The one open form: {kind, id (null: new), base (the entity as the form opened), node, saving}. */
  form: null,
  sections: {},
};

// ---------------------------------------------------------------- values

const isEmpty = (v) => v === null || v === undefined || v === '' || (Array.isArray(v) && v.length === 0);

/** A field's value as text. */
export function showValue(value) {
  if (isEmpty(value)) return '(empty)';
  if (Array.isArray(value)) return value.join(', ');
  if (typeof value === 'object' && 'start' in value) return `${value.start}–${value.end}`;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** A field's label (its name when the kind or field is unknown). */
export function fieldLabel(kind, field) {
  return KINDS[kind]?.fields.find((f) => f.name === field)?.label ?? field;
}

/** What a badge says: `human`, `import`, or `agent:<name>` (the date goes in the tooltip). */
export function originText(origin) {
  if (!origin) return '';
  const m = /^(agent:[^:]+)(?::(.+))?$/.exec(origin);
  return m ? m[1] : origin;
}

/** An origin badge (`data-testid="origin-badge"`), or null for no origin. */
export function originBadge(origin) {
  if (!origin) return null;
  const kind = origin === 'human' ? 'human' : origin.startsWith('agent:') ? 'agent' : origin;
  const date = /^agent:[^:]+:(.+)$/.exec(origin)?.[1];
  return el(
    'span',
    { class: `origin-badge origin-${kind}`, testid: 'origin-badge', 'data-origin': origin, title: date ? `written by ${originText(origin)} on ${date}` : `written by ${origin}` },
    originText(origin),
  );
}

/** The display title of an entity (its id when unknown here). */
export function entityTitle(kind, id) {
  const entity = state.entities[kind]?.get(id);
  return entity ? KINDS[kind].title(entity) : id;
}

function toInput(spec, value) {
  if (isEmpty(value)) return '';
  if (spec.type === 'list') return value.join(', ');
  if (spec.type === 'span') return `${value.start}-${value.end}`;
  return String(value);
}

/** The value a form input stands for (null: empty), or throws a message. */
function fromInput(spec, text) {
  const raw = text.trim();
  if (spec.type === 'list') {
    const items = raw.split(',').map((s) => s.trim()).filter(Boolean);
    return items.length ? items : null;
  }
  if (raw === '') return null;
  if (spec.type === 'int') {
    if (!/^\d+$/.test(raw)) throw `${spec.label} must be a whole number`;
    return Number(raw);
  }
  if (spec.type === 'span') {
    const m = /^(\d+)\s*[-–]\s*(\d+)$/.exec(raw);
    if (!m || Number(m[1]) > Number(m[2])) throw `${spec.label} must look like 120-480`;
    return { start: Number(m[1]), end: Number(m[2]) };
  }
  // Long texts are kept as typed; one-line texts lose stray spaces at the ends.
  return spec.type === 'long' ? text : raw;
}

const same = (a, b) => JSON.stringify(isEmpty(a) ? null : a) === JSON.stringify(isEmpty(b) ? null : b);

// ---------------------------------------------------------------- rendering

function message(text, isError = false) {
  const node = $('bible-message');
  node.textContent = text;
  node.classList.toggle('error', isError);
}

function buildSections() {
  const content = $('bible-content');
  content.replaceChildren();
  for (const [kind, spec] of Object.entries(KINDS)) {
    const list = el('ul', { class: 'bible-list', testid: kind === 'qa' ? 'qa-list' : `bible-list-${kind}`, 'aria-label': spec.label });
    const newSlot = el('div', { class: 'bible-new' });
    const empty = el('p', { class: 'bible-empty' }, `No ${spec.label.toLowerCase()} yet.`);
    const add = el(
      'button',
      { type: 'button', class: 'small', testid: `bible-add-${kind}`, title: `Add a ${spec.one}`, onclick: () => openForm(kind, spec.single ?? null) },
      `+ ${spec.single ? 'Write' : 'Add'}`,
    );
    const section = el(
      'section',
      { class: 'bible-kind', 'data-kind': kind, testid: `bible-kind-${kind}` },
      el('div', { class: 'bible-kind-head' }, el('h3', {}, spec.label), add),
      newSlot,
      list,
      empty,
    );
    state.sections[kind] = { section, list, newSlot, empty, add };
    content.append(section);
  }
  selectBibleTab(state.tab);
}

/** Show one tab of the panel. */
export function selectBibleTab(tab) {
  state.tab = TABS[tab] ? tab : 'character';
  for (const button of document.querySelectorAll('[data-bible-tab]')) button.setAttribute('aria-selected', String(button.dataset.bibleTab === state.tab));
  for (const [kind, { section }] of Object.entries(state.sections)) section.hidden = !TABS[state.tab].includes(kind);
}

function itemView(kind, entity) {
  const spec = KINDS[kind];
  const title = spec.title(entity);
  const shown = spec.fields.filter((f) => !isEmpty(entity[f.name]));
  return el(
    'li',
    { class: 'bible-item', testid: 'bible-item', 'data-kind': kind, 'data-id': entity.id, 'data-version': entity.version },
    el(
      'div',
      { class: 'bible-item-head' },
      el('span', { class: 'bible-title' }, title),
      el('span', { class: 'bible-version', title: 'version' }, `v${entity.version}`),
      el('button', { type: 'button', class: 'small', testid: 'bible-edit', 'aria-label': `Edit ${title}`, onclick: () => openForm(kind, entity.id) }, 'Edit'),
      el('button', { type: 'button', class: 'small', testid: 'bible-delete', 'aria-label': `Delete ${title}`, onclick: () => remove(kind, entity.id) }, '×'),
    ),
    shown.length
      ? el(
          'dl',
          { class: 'bible-fields' },
          ...shown.map((f) =>
            el(
              'div',
              { class: 'bible-field', 'data-field': f.name },
              el('dt', {}, f.label, ' ', originBadge(entity[`${f.name}_origin`])),
              el('dd', { testid: 'bible-value' }, showValue(entity[f.name])),
            ),
          ),
        )
      : el('p', { class: 'bible-empty' }, 'No fields yet.'),
  );
}

/** Bring a list's items in line with `entries` ([key, build(previous node)]), keeping the
 * nodes that stay (so a form being typed in keeps its focus). */
function reconcile(list, entries) {
  const old = new Map([...list.children].map((n) => [n.dataset.key, n]));
  let cursor = list.firstElementChild;
  for (const [key, build] of entries) {
    const prev = old.get(key);
    old.delete(key);
    const node = build(prev);
    node.dataset.key = key;
    if (prev && node !== prev) {
      if (cursor === prev) cursor = node;
      prev.replaceWith(node);
    }
    if (node === cursor) cursor = cursor.nextElementSibling;
    else list.insertBefore(node, cursor);
  }
  for (const node of old.values()) node.remove();
}

function renderKind(kind) {
  const sections = state.sections[kind];
  if (!sections) return;
  const spec = KINDS[kind];
  const form = state.form;
  const all = [...state.entities[kind].values()];
  // An entry deleted while the writer edits it keeps its form until they close it.
  if (form && form.kind === kind && form.base && !state.entities[kind].has(form.id)) all.push(form.base);
  const entities = all.sort((a, b) => (spec.sort(a) < spec.sort(b) ? -1 : spec.sort(a) > spec.sort(b) ? 1 : 0));
  reconcile(
    sections.list,
    entities.map((entity) => [
      entity.id,
      (prev) => {
        if (form && form.kind === kind && form.id === entity.id && form.base) {
          const li = prev?.classList.contains('editing') ? prev : el('li', { class: 'bible-item editing', testid: 'bible-item', 'data-kind': kind, 'data-id': entity.id });
          if (li.firstChild !== form.node) li.replaceChildren(form.node);
          return li;
        }
        return itemView(kind, entity);
      },
    ]),
  );
  const creating = form && form.kind === kind && !form.base;
  sections.empty.hidden = entities.length > 0 || !!creating;
  if (spec.single) sections.add.hidden = state.entities[kind].has(spec.single);
}

function renderAll() {
  for (const kind of Object.keys(KINDS)) renderKind(kind);
}

// ---------------------------------------------------------------- forms

function formNode(kind, base) {
  const spec = KINDS[kind];
  const inputs = {};
  const rows = spec.fields.map((f) => {
    const props = { testid: `bible-edit-${f.name}`, name: f.name };
    const input =
      f.type === 'long'
        ? el('textarea', { ...props, rows: f.name === 'markdown' || f.name === 'text' ? 6 : 3 })
        : el('input', { ...props, type: f.type === 'int' ? 'number' : 'text', min: f.type === 'int' ? '0' : null, placeholder: f.type === 'list' ? 'comma-separated' : f.type === 'span' ? 'e.g. 120-480' : null, required: f.required });
    input.value = toInput(f, base?.[f.name]);
    inputs[f.name] = input;
    return el('label', {}, el('span', { class: 'label-text' }, f.label, ' ', originBadge(base?.[`${f.name}_origin`])), input);
  });
  const node = el(
    'form',
    { class: 'bible-form', testid: 'bible-form', 'data-kind': kind, 'data-id': base?.id ?? '' },
    el('div', { class: 'bible-form-title' }, base ? `Edit ${spec.one} “${spec.title(base)}”` : `New ${spec.one}`),
    el('div', { class: 'bible-conflict', testid: 'bible-conflict', role: 'alert', hidden: true }),
    el('p', { class: 'bible-stale', testid: 'bible-stale', role: 'status', hidden: true }),
    ...rows,
    el('p', { class: 'message error', testid: 'bible-form-error', role: 'alert' }),
    el(
      'div',
      { class: 'bible-form-buttons' },
      el('button', { type: 'submit', testid: 'bible-save' }, 'Save'),
      el('button', { type: 'button', testid: 'bible-cancel', onclick: () => closeForm() }, 'Cancel'),
    ),
  );
  node.addEventListener('submit', (event) => {
    event.preventDefault();
    save();
  });
  node.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') closeForm();
  });
  return { node, inputs };
}

/** Open the edit form of an entity (`id`), or a new one's (`id` null). */
function openForm(kind, id, { conflict } = {}) {
  if (state.form) closeForm();
  const base = id ? state.entities[kind].get(id) ?? null : null;
  if (id && !base && !KINDS[kind].single) return;
  if (TABS[state.tab].includes(kind) === false) selectBibleTab(Object.keys(TABS).find((tab) => TABS[tab].includes(kind)));
  const { node, inputs } = formNode(kind, base);
  state.form = { kind, id: base ? id : KINDS[kind].single ?? null, base, node, inputs, saving: false };
  if (base) renderKind(kind);
  else {
    state.sections[kind].newSlot.replaceChildren(node);
    renderKind(kind);
  }
  if (conflict) showConflict(conflict);
  node.scrollIntoView({ block: 'nearest' });
  node.querySelector('input, textarea')?.focus();
}

function closeForm() {
  const form = state.form;
  if (!form) return;
  state.form = null;
  if (!form.base) state.sections[form.kind].newSlot.replaceChildren();
  renderKind(form.kind);
}

/** The form's values by field; throws a message for a malformed one. */
function readForm(form) {
  const values = {};
  for (const f of KINDS[form.kind].fields) values[f.name] = fromInput(f, form.inputs[f.name].value);
  return values;
}

async function save() {
  const form = state.form;
  if (!form || form.saving) return;
  const { kind, base } = form;
  const spec = KINDS[kind];
  const error = form.node.querySelector('[data-testid="bible-form-error"]');
  error.textContent = '';
  let values;
  try {
    values = readForm(form);
  } catch (text) {
    error.textContent = String(text);
    return;
  }
  // Only what the writer changed is sent (and so marked as theirs); a new entity gets what
  // the writer filled in.
  const fields = {};
  for (const f of spec.fields) {
    if (base ? !same(values[f.name], base[f.name]) : !isEmpty(values[f.name])) fields[f.name] = values[f.name];
  }
  if (Object.keys(fields).length === 0) {
    if (base) closeForm();
    else error.textContent = 'Fill in at least one field.';
    return;
  }
  const missing = spec.fields.find((f) => f.required && isEmpty(base ? (f.name in fields ? fields[f.name] : base[f.name]) : fields[f.name]));
  if (missing) {
    error.textContent = `${missing.label} is required.`;
    return;
  }
  form.saving = true;
  form.node.querySelector('[data-testid="bible-save"]').disabled = true;
  try {
    const saved = await state.client.bible.save(kind, fields, { id: form.id ?? undefined, baseVersion: base?.version });
    state.entities[kind].set(saved.id, saved);
    if (state.form === form) closeForm();
    else renderKind(kind);
    message(`Saved ${spec.one} “${spec.title(saved)}”.`);
  } catch (err) {
    form.saving = false;
    form.node.querySelector('[data-testid="bible-save"]').disabled = false;
    if (err.code === 'conflict' && base) await conflict(form, fields, err);
    else error.textContent = err.message;
  }
}

/** The entity changed since the form opened: reload it, reopen the form on the current
 * version, and keep what the writer typed at hand. */
async function conflict(form, unsaved, err) {
  const { kind, id } = form;
  const spec = KINDS[kind];
  await reloadKind(kind);
  const fresh = state.entities[kind].get(id);
  if (!fresh) {
    closeForm();
    message(`Not saved: the ${spec.one} “${spec.title(form.base)}” was deleted meanwhile.`, true);
    return;
  }
  const changed = spec.fields.filter((f) => !same(fresh[f.name], form.base[f.name]));
  const by = [...new Set(changed.map((f) => fresh[`${f.name}_origin`]).filter(Boolean))];
  openForm(kind, id, { conflict: { unsaved, fresh, by, detail: err.message } });
}

function showConflict({ unsaved, fresh, by }) {
  const form = state.form;
  if (!form) return;
  const kind = form.kind;
  const box = form.node.querySelector('[data-testid="bible-conflict"]');
  const who = by.length ? ` by ${by.map(originText).join(', ')}` : '';
  const useMine = el(
    'button',
    {
      type: 'button',
      class: 'small',
      testid: 'bible-use-mine',
      onclick: () => {
        for (const [field, value] of Object.entries(unsaved)) {
          const spec = KINDS[kind].fields.find((f) => f.name === field);
          if (spec) form.inputs[field].value = toInput(spec, value);
        }
        box.hidden = true;
      },
    },
    'Put my text back',
  );
  box.replaceChildren(
    el('strong', {}, 'Not saved: conflict. '),
    `This ${KINDS[kind].one} changed while you were editing it (now version ${fresh.version}${who}). The form now shows the current entry; your unsaved text is below.`,
    el('ul', {}, ...Object.entries(unsaved).map(([field, value]) => el('li', {}, `${fieldLabel(kind, field)}: `, el('q', {}, showValue(value))))),
    useMine,
  );
  box.hidden = false;
}

async function remove(kind, id) {
  const entity = state.entities[kind].get(id);
  if (!entity) return;
  const spec = KINDS[kind];
  if (!confirm(`Delete the ${spec.one} “${spec.title(entity)}”?`)) return;
  try {
    await state.client.bible.delete(kind, id, { baseVersion: entity.version });
    state.entities[kind].delete(id);
    renderKind(kind);
    message(`Deleted ${spec.one} “${spec.title(entity)}”.`);
  } catch (err) {
    if (err.code === 'conflict') {
      await reloadKind(kind);
      message(`Not deleted: “${spec.title(entity)}” changed meanwhile. Look at it again first.`, true);
    } else {
      message(err.message, true);
    }
  }
}

// ---------------------------------------------------------------- loading and events

async function reloadKind(kind) {
  const listing = await state.client.bible.list(kind);
  state.entities[kind] = new Map((listing.kinds[kind] ?? []).map((e) => [e.id, e]));
  renderKind(kind);
}

/** Show the open project's bible (after opening or reloading a project). A form being
 * typed in stays open when the project is the same. */
export async function loadBible(project) {
  const listing = await state.client.bible.list();
  const next = listing.project ?? project;
  if (state.form && next !== state.project) {
    const form = state.form;
    state.form = null;
    if (!form.base) state.sections[form.kind].newSlot.replaceChildren();
  }
  state.project = next;
  for (const kind of Object.keys(KINDS)) state.entities[kind] = new Map((listing.kinds[kind] ?? []).map((e) => [e.id, e]));
  renderAll();
}

/** A `bible_changed` event: the writer's, an agent's, or an import's change. */
export function bibleChanged(e) {
  if (!state.entities[e.kind] || (state.project && e.project !== state.project)) return;
  if (e.entity) state.entities[e.kind].set(e.id, e.entity);
  else state.entities[e.kind].delete(e.id);
  const form = state.form;
  if (form && form.base && form.kind === e.kind && form.id === e.id && !form.saving) {
    const stale = form.node.querySelector('[data-testid="bible-stale"]');
    if (!e.entity) {
      stale.textContent = 'This entry was just deleted. Saving will not bring it back.';
      stale.hidden = false;
    } else if (e.entity.version !== form.base.version) {
      stale.textContent = `Changed meanwhile by ${originText(e.origin === 'user' ? 'human' : e.origin)}: saving will show you the new version first.`;
      stale.hidden = false;
    }
  }
  renderKind(e.kind);
}

/** Set up the panel. */
export function initBible(client) {
  state.client = client;
  buildSections();
  for (const button of document.querySelectorAll('[data-bible-tab]')) button.addEventListener('click', () => selectBibleTab(button.dataset.bibleTab));
}

/** For tests and the console. */
export const bibleState = state;

// The sync engine follows the core's `ui` events: a new `reveal` count (an agent scrolled,
// navigated or opened a chapter) asks the editor to show the place, in UTF-16 offsets on the
// text it shows; the same count, another chapter's state or a closed engine ask nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SyncEngine } from '../sync.js';

/** A client with the events the engine listens to; `emit(name, data)` sends one. */
function fakeClient() {
  const handlers = new Map();
  return {
    on(name, handler) {
      handlers.set(name, [...(handlers.get(name) ?? []), handler]);
      return () => handlers.set(name, (handlers.get(name) ?? []).filter((h) => h !== handler));
    },
    emit(name, data) {
      for (const h of handlers.get(name) ?? []) h(data);
    },
    applyUserChange: async () => ({}),
    getChapter: async () => ({}),
  };
}

const TEXT = '🐉 Mara climbed the stair.\nThe lamp was dark.';

function engine(options = {}) {
  const client = fakeClient();
  const shown = [];
  const editor = { text: () => TEXT, apply() {}, reveal: (place) => shown.push(place) };
  const sync = new SyncEngine({ client, chapter: 'c1', version: 0, text: TEXT, editor, ...options });
  return { client, shown, sync };
}

const ui = (reveal, fields = {}) => ({ active_chapter: 'c1', cursor: 0, selection: null, panel: 'chat', zen_mode: false, highlights: [], scroll: 0, reveal, ...fields });

test('a new reveal count scrolls the editor to the place and selects what starts there', () => {
  const { client, shown } = engine({ reveal: 3 });
  client.emit('ui', ui(3, { scroll: 10 }));
  assert.deepEqual(shown, [], 'the count it was opened with asks nothing');
  // navigate_to_text: the selection starts at the scroll position (chars; the dragon is two
  // UTF-16 units).
  const start = [...TEXT].indexOf('T');
  client.emit('ui', ui(4, { scroll: start, cursor: start, selection: [start, start + 8] }));
  assert.deepEqual(shown, [{ scroll: start + 1, selection: { from: start + 1, to: start + 9 } }]);
  // The same place again (a second request): shown again.
  client.emit('ui', ui(5, { scroll: start, cursor: start, selection: [start, start + 8] }));
  assert.equal(shown.length, 2);
  // scroll_to_position: the selection is elsewhere, so it stays.
  client.emit('ui', ui(6, { scroll: 20, cursor: 2, selection: [2, 6] }));
  assert.deepEqual(shown[2], { scroll: 21, selection: null });
  // jump_to_chapter: the caret at the top.
  client.emit('ui', ui(7, { scroll: 0, cursor: 0 }));
  assert.deepEqual(shown[3], { scroll: 0, selection: { from: 0, to: 0 } });
  // A position past the text is its end.
  client.emit('ui', ui(8, { scroll: 10_000, cursor: 3 }));
  assert.deepEqual(shown[4], { scroll: TEXT.length, selection: null });
});

test('the same count, another chapter, or a closed engine shows nothing', () => {
  const { client, shown, sync } = engine({ reveal: 1 });
  client.emit('ui', ui(1, { scroll: 5 }));
  client.emit('ui', ui(2, { scroll: 5, active_chapter: 'c2' }));
  assert.deepEqual(shown, []);
  // The count moved on while another chapter was active: only a new one shows.
  client.emit('ui', ui(2, { scroll: 5 }));
  assert.deepEqual(shown, []);
  client.emit('ui', ui(3, { scroll: 5 }));
  assert.equal(shown.length, 1);
  sync.close();
  client.emit('ui', ui(4, { scroll: 5 }));
  assert.equal(shown.length, 1);
});

test('without a starting count the first event only sets it; reveal() shows the place at once', () => {
  const { client, shown, sync } = engine();
  client.emit('ui', ui(9, { scroll: 5 }));
  assert.deepEqual(shown, []);
  client.emit('ui', ui(10, { scroll: 5 }));
  assert.equal(shown.length, 1);
  assert.equal(sync.reveal(ui(10, { scroll: 7 })), true);
  assert.deepEqual(shown[1], { scroll: 8, selection: null });
  assert.equal(sync.reveal(ui(10, { active_chapter: 'c2' })), false);
  // An editor that cannot scroll is left alone.
  const plain = new SyncEngine({ client: fakeClient(), chapter: 'c1', version: 0, text: TEXT, editor: { text: () => TEXT, apply() {} } });
  assert.equal(plain.reveal(ui(1)), false);
});

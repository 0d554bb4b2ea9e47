// The plain JavaScript worker of www/bench/keystroke.js: the least a keystroke saved from a
// worker can cost. For each request it does what the core's keystroke does in IndexedDB, with
// no work of its own: one readwrite transaction over two stores that puts a history entry and
// adds the change record (committed as soon as they are placed: the worker that holds the
// writer lock checks for no other writer), then answers with the events the core sends
// (`edit`, `history_changed`, `saved`) and the response, as one message.
const open = indexedDB.open(`bench-keys-floor-${Date.now()}-${Math.random().toString(36).slice(2)}`, 1);
open.onupgradeneeded = () => {
  for (const table of ['history', 'changes']) open.result.createObjectStore(table, { keyPath: 'id' });
};
open.onsuccess = () => {
  const db = open.result;
  self.onmessage = (event) => {
    const { id, i } = event.data;
    const changeset = [{ retain: 2500 + i }, { insert: 'x' }];
    const tx = db.transaction(['history', 'changes'], 'readwrite');
    tx.objectStore('history').put({
      id: `e${i}`,
      project: 'p',
      entry: { id: `e${i}`, seq: i, group: 'g', origin: 'user', kind: { type: 'edit' }, timestamp_ms: Date.now(), effects: [{ chapter: 'c1', change: changeset, inverse: changeset }] },
    });
    tx.objectStore('changes').add({ id: `c1/${String(i + 1).padStart(20, '0')}`, project: 'p', chapter: 'c1', version: i + 1, changeset, origin: 'user', tag: `k${i}` });
    tx.commit();
    tx.oncomplete = () => {
      const edit = { chapter: 'c1', changeset, version: i + 1, origin: 'user', tag: `k${i}` };
      self.postMessage({
        kind: 'batch',
        messages: [
          { kind: 'event', type: 'edit', data: edit },
          { kind: 'event', type: 'history_changed', data: { canUndo: true, canRedo: false, groups: 1 } },
          { kind: 'event', type: 'saved', data: { project: 'p', changed: true } },
          { kind: 'response', id, ok: true, result: { chapter: 'c1', version: i + 1, changeset, rebased: false, tag: `k${i}` } },
        ],
      });
    };
  };
  self.postMessage({ kind: 'event', type: 'ready', data: {} });
};

// Uses the CodeMirror binding and the sync engine as an embedder would; checked by
// `tsc --noEmit` with the rest (the demo's own @codemirror packages stand in for the app's).
import { EditorView, keymap } from '@codemirror/view';
import { Draftsmith } from '../../packages/draftsmith/draftsmith.js';
import { ChapterSync, isFromCore, CORE_EVENT, charToUtf16, revealIn } from '../../packages/draftsmith/codemirror.js';
import { SyncEngine, transform, apply, type SyncConflict, type Replacement, type RemoteEdit, type RevealPlace } from '../../packages/draftsmith/sync.js';

export async function bind(parent: HTMLElement): Promise<void> {
  const client = await Draftsmith.start();
  const chapter = await client.getChapter();
  const { current } = await client.projects.list();
  const project = current ? await client.projects.open(current) : null;
  let sync: ChapterSync | null = null;
  const view = new EditorView({
    doc: chapter.text,
    parent,
    extensions: [
      EditorView.updateListener.of((update) => {
        const typed: boolean = sync?.update(update) ?? false;
        if (typed && update.transactions.some(isFromCore)) console.log('both');
      }),
      keymap.of([{ key: 'Mod-z', run: () => (void sync?.undo({ origin: 'agent' }), true) }]),
    ],
  });
  sync = new ChapterSync({
    client,
    view,
    chapter: chapter.id,
    version: chapter.version,
    text: chapter.text,
    onConflict: (c: SyncConflict) => console.log(c.text, c.coreText, c.version),
    reveal: project?.ui.reveal ?? null,
  });
  await sync.whenSynced();
  // An agent's scroll or navigation: the binding follows `ui` events; or show a state at once.
  client.on('ui', (ui) => {
    const shown: boolean = sync?.reveal(ui) ?? false;
    const asked: number = ui.reveal;
    console.log(shown, asked);
  });
  revealIn(view, { scroll: 0, selection: { from: 0, to: 3 } });
  view.dispatch({ selection: { anchor: charToUtf16(chapter.text, 3) }, userEvent: CORE_EVENT });
  const synced: boolean = sync.synced;
  const version: number = sync.version;
  sync.close();
  // The engine alone, for another editor.
  let shown = chapter.text;
  const engine = new SyncEngine({
    client,
    chapter: chapter.id,
    version: chapter.version,
    text: chapter.text,
    editor: {
      reveal: (place: RevealPlace) => console.log(place.scroll, place.selection?.from),
      text: () => shown,
      apply: (changes: Replacement[]) => {
        for (const c of [...changes].reverse()) shown = shown.slice(0, c.from) + c.insert + shown.slice(c.to);
      },
    },
  });
  engine.localUtf16([{ from: 0, to: 0, insert: 'Hi ' }]);
  // An edit the app relays itself (with `listen: false`).
  client.on('edit', (event: RemoteEdit) => engine.remote(event));
  const rebased: string = apply('ab', transform([{ insert: 'x' }], [{ retain: 1 }, { insert: 'y' }]));
  void [synced, version, rebased];
}

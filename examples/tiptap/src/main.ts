// A Tiptap editor and a chat box on draftsmith, using only the installed package:
//   draftsmith             the client (it starts the worker and the wasm beside itself)
//   draftsmith/prosemirror the binding of a ProseMirror/Tiptap editor to a chapter
// The writer types in Tiptap; agents edit the same chapter from the chat; Ctrl-Z / Ctrl-Shift-Z
// (and the buttons) undo and redo in the core's one history, which holds both.
import { Editor, Extension } from '@tiptap/core';
import Document from '@tiptap/extension-document';
import Paragraph from '@tiptap/extension-paragraph';
import Text from '@tiptap/extension-text';
import HardBreak from '@tiptap/extension-hard-break';
import { Draftsmith, DraftsmithError } from 'draftsmith';
import type { ProjectSummary, RunEvent } from 'draftsmith';
import { ProseMirrorSync } from 'draftsmith/prosemirror';

declare global {
  interface Window {
    /** For the tests and the console. */
    draftsmith?: Draftsmith;
    example?: { editor: Editor; sync: ProseMirrorSync; project: ProjectSummary };
  }
}

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

function status(text: string, error = false): void {
  const node = $('status');
  node.textContent = text;
  node.style.color = error ? '#a33' : '';
}

function say(kind: 'user' | 'assistant' | 'tool' | 'note', text: string): HTMLDivElement {
  const line = document.createElement('div');
  line.className = kind;
  line.textContent = text;
  if (kind === 'tool') line.dataset.testid = 'tool-card';
  $('chat-log').append(line);
  line.scrollIntoView({ block: 'end' });
  return line;
}

/** The project to show: the current or newest one, or a new one. */
async function openProject(client: Draftsmith): Promise<ProjectSummary> {
  const { projects, current } = await client.projects.list();
  const id = current ?? projects[0]?.id;
  if (id) return client.projects.open(id);
  return client.projects.create('A story', [
    { title: 'One', text: 'Mara climbed the stair. The lamp was dark.\nShe waited for the storm.' },
  ]);
}

async function main(): Promise<void> {
  let client: Draftsmith;
  try {
    client = await Draftsmith.start();
  } catch (err) {
    status(`draftsmith failed to start: ${(err as Error).message}`, true);
    return;
  }
  window.draftsmith = client;

  // No key needed: the dev server's offline demo model (any OpenAI-compatible endpoint works).
  const settings = await client.settings.get();
  if (!settings.configured) {
    await client.settings.set({ provider: 'openai', baseUrl: new URL('/demo/v1', location.href).href, model: 'demo' });
  }

  const project = await openProject(client);
  const chapter = await client.getChapter(project.ui.active_chapter ?? project.chapters[0].id);

  let sync: ProseMirrorSync | null = null;
  // Undo and redo are the core's: one history for the writer and the agents.
  const undo = () => void sync?.undo().catch((err: DraftsmithError) => status(`nothing to undo (${err.message})`));
  const redo = () => void sync?.redo().catch((err: DraftsmithError) => status(`nothing to redo (${err.message})`));
  const SharedHistory = Extension.create({
    name: 'draftsmithHistory',
    addKeyboardShortcuts() {
      return { 'Mod-z': () => (undo(), true), 'Mod-Shift-z': () => (redo(), true), 'Mod-y': () => (redo(), true) };
    },
  });

  const editor = new Editor({
    element: $('editor'),
    extensions: [Document, Paragraph, Text, HardBreak, SharedHistory],
  });
  sync = new ProseMirrorSync({
    client,
    chapter: chapter.id,
    version: chapter.version,
    text: chapter.text,
    view: editor.view,
    // An agent's scroll_to_position or navigate_to_text after this scrolls the editor.
    reveal: project.ui.reveal,
    onError: (err) => status(`could not save a change: ${err.message}`, true),
    onConflict: (c) => say('note', `Some of your text could not be merged; your version was:\n${c.text}`),
  });
  editor.registerPlugin(sync.plugin);
  $('undo').addEventListener('click', undo);
  $('redo').addEventListener('click', redo);
  client.on('saved', () => {
    if (sync?.synced) status(`saved ${new Date().toLocaleTimeString()}`);
  });
  window.example = { editor, sync, project };

  // The chat: one agent run a message, streamed.
  $('chat-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const input = $<HTMLTextAreaElement>('chat-input');
    const send = $<HTMLButtonElement>('chat-send');
    const prompt = input.value.trim();
    if (!prompt) return;
    input.value = '';
    send.disabled = true;
    say('user', prompt);
    let answer: HTMLDivElement | null = null;
    try {
      await sync?.whenSynced();
      const run = client.run(prompt, { toolset: 'quick' });
      for await (const e of run as AsyncIterable<RunEvent>) {
        if (e.type === 'text_delta') {
          answer ??= say('assistant', '');
          answer.textContent += e.text;
        } else if (e.type === 'tool_call_finished') {
          say('tool', `${e.name}: ${e.status}`);
          answer = null;
        }
      }
      const end = await run.result;
      if (end.status !== 'finished') say('note', `The run ended: ${end.status}`);
    } catch (err) {
      say('note', `The run failed: ${(err as Error).message}`);
    } finally {
      send.disabled = false;
    }
  });

  status('core ready');
}

main();

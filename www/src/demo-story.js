// The demo project the page creates on first start: the short branching story of
// demo-story.json (three chapters, six scenes) and its story bible, saved as the writer's
// (origin `human`): the scenes (each a span of its chapter), characters, locations, a
// glossary term, two routes, a style guide and UI settings naming the target language:
// everything rentl's pipelines need, so they run offline on it with the demo model.
// tests/rentl_demo.rs builds the same project from the same file.
import story from './demo-story.json';

/** The demo story's chapters: each the text of its scenes, one paragraph a line. */
export function demoChapters() {
  return story.chapters.map((c) => ({ title: c.title, text: c.scenes.map((s) => s.lines.join('\n\n')).join('\n\n') }));
}

/**
 * Create the demo project and save its story bible. The bible is saved entity by entity; if
 * a save fails the project is still there (without the rest of its bible), and the error is
 * logged: the editor must start anyway.
 */
export async function createDemoProject(client) {
  const project = await client.projects.create(story.title, demoChapters());
  try {
    for (const [i, chapter] of story.chapters.entries()) {
      const id = project.chapters[i].id;
      let at = 0;
      for (const scene of chapter.scenes) {
        // Spans count Unicode scalar values, as the core does.
        const length = [...scene.lines.join('\n\n')].length;
        await client.bible.save('scene', { chapter: id, span: { start: at, end: at + length } }, { id: scene.id });
        at += length + 2;
      }
    }
    for (const entry of story.bible) await client.bible.save(entry.kind, entry.fields, { id: entry.id });
  } catch (err) {
    console.warn(`the demo project's story bible is incomplete: ${err.message}`);
  }
  return project;
}

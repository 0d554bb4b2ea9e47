// The open chapter as the core last acknowledged it (its project, id, title, version and
// text), kept in localStorage while the page is hidden. The next start shows it at once and
// takes the writer's typing while the core loads: the typing is sent against that version,
// and the core rebases it over anything that changed since.
const KEY = 'draftsmith.kept-chapter';
// Which project the kept chapter is of and when a page showed it, apart from the (long) text,
// so a page can tell without reading the text whether its chapter is to replace it.
const SHOWN_KEY = `${KEY}.shown`;
/** Longer chapters are not kept (localStorage holds about five million UTF-16 units an origin). */
const MAX_UNITS = 1_000_000;

/** The kept chapter, or null (none, storage off, or not of the right shape). */
export function readKept() {
  try {
    const kept = JSON.parse(localStorage.getItem(KEY) ?? 'null');
    const fits =
      kept &&
      typeof kept.project === 'string' &&
      typeof kept.chapter === 'string' &&
      Number.isInteger(kept.version) &&
      typeof kept.text === 'string' &&
      typeof (kept.title ?? '') === 'string';
    return fits ? kept : null;
  } catch {
    return null;
  }
}

/** `{project, shownAt}` of the kept chapter, or null. */
export function keptShown() {
  try {
    return JSON.parse(localStorage.getItem(SHOWN_KEY) ?? 'null');
  } catch {
    return null;
  }
}

/**
 * Keep `{project, chapter, title, version, text, shownAt}` for the next start (null forgets
 * it); `shownAt` is when the page showed that project.
 */
export function keep(state) {
  try {
    if (!state || state.text.length > MAX_UNITS) {
      localStorage.removeItem(KEY);
      localStorage.removeItem(SHOWN_KEY);
    } else {
      localStorage.setItem(KEY, JSON.stringify(state));
      localStorage.setItem(SHOWN_KEY, JSON.stringify({ project: state.project, shownAt: state.shownAt }));
    }
  } catch {
    // Storage off or full: the next start waits for the core before showing the chapter.
  }
}

// The UI tools on the demo page, each called through `execute` as an agent's call would be,
// and checked by what the writer sees: zen mode hides the panels and chrome and centres the
// editor; scroll_to_position, navigate_to_text, jump_to_scene and jump_to_chapter scroll the
// editor of a long chapter; highlights keep their style (class and colour) and note (title),
// and clear_highlights removes them; switch_panel shows each of the page's panels (its enum is
// exactly them), the Analysis panel with run_analysis results; set_selection selects. Then the
// offline demo model calls them from the chat.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openReady } from './harness.mjs';

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

const LINES = 400;
/** A long chapter: numbered paragraphs, a marked one near the end, a scene break halfway. */
const LONG = Array.from({ length: LINES }, (_, i) => {
  if (i === LINES - 20) return 'The keeper hid the brass key under the third stair.';
  if (i === LINES / 2) return '* * *';
  return `Paragraph ${i + 1}: the sea went on against the rocks below the lamp room.`;
}).join('\n');

/** A page on a fresh project whose first chapter is LONG. */
async function longProject() {
  const page = await env.newPage({ viewport: { width: 1280, height: 800 } });
  await openReady(env, page);
  await page.evaluate(async (text) => {
    await window.draftsmith.projects.create('UI tools', [
      { title: 'The Long Night', text },
      { title: 'Morning', text: 'Morning came grey over Greyhaven.' },
    ]);
  }, LONG);
  await page.reload();
  await openReady(env, page);
  await page.waitForFunction((n) => window.draftsmithApp.view?.state.doc.lines === n, LINES);
  return page;
}

/** Call a tool as an agent would (through `execute`); its result. */
const execute = (page, tool, args) => page.evaluate(([t, a]) => window.draftsmith.execute(t, a, { origin: 'agent:quill' }), [tool, args]);

const scrollTop = (page) => page.evaluate(() => document.querySelector('[data-testid="editor"] .cm-scroller').scrollTop);

/** Whether the editor shows (within its scroller's visible box) the line holding `text`. */
const inView = (page, text) =>
  page.evaluate((t) => {
    const scroller = document.querySelector('[data-testid="editor"] .cm-scroller').getBoundingClientRect();
    const line = [...document.querySelectorAll('[data-testid="editor"] .cm-line')].find((l) => l.textContent.includes(t));
    if (!line) return false;
    const box = line.getBoundingClientRect();
    return box.bottom > scroller.top && box.top < scroller.bottom;
  }, text);

/** The writer scrolls the editor back to the top. */
async function scrollHome(page) {
  await page.evaluate(() => (document.querySelector('[data-testid="editor"] .cm-scroller').scrollTop = 0));
  await page.waitForFunction(() => document.querySelector('[data-testid="editor"] .cm-scroller').scrollTop === 0);
}

const visible = (page, selector) =>
  page.evaluate((s) => {
    const node = document.querySelector(s);
    if (!node) return false;
    const style = getComputedStyle(node);
    const box = node.getBoundingClientRect();
    return style.display !== 'none' && style.visibility !== 'hidden' && box.width > 0 && box.height > 0;
  }, selector);

test('toggle_zen_mode hides the side panels and chrome and centres the editor; again restores them', async () => {
  const page = await longProject();
  const chrome = ['.topbar', '.left', '.side', '.statusbar', '.editor-head', '[data-testid="bible-panel"]', '[data-testid="chapter-list"]'];
  for (const s of chrome) assert.ok(await visible(page, s), `${s} shows before zen mode`);
  assert.equal(await visible(page, '[data-testid="zen-exit"]'), false);

  const on = await execute(page, 'toggle_zen_mode', { enabled: true });
  assert.equal(on.status, 'success');
  await page.waitForFunction(() => document.body.classList.contains('zen'));
  for (const s of chrome) assert.equal(await visible(page, s), false, `${s} is hidden in zen mode`);
  assert.ok(await visible(page, '[data-testid="editor"] .cm-content'), 'the manuscript shows');
  assert.ok(await visible(page, '[data-testid="zen-exit"]'), 'a way out shows');
  // The text column sits in the middle of the window.
  const { left, right, width } = await page.evaluate(() => {
    const box = document.querySelector('[data-testid="editor"] .cm-content').getBoundingClientRect();
    return { left: box.left, right: window.innerWidth - box.right, width: box.width };
  });
  assert.ok(width > 300, `the text column is wide enough (${width})`);
  assert.ok(Math.abs(left - right) < 24, `centred: ${left} px left, ${right} px right`);

  // Toggling again (no argument) restores everything.
  const off = await execute(page, 'toggle_zen_mode', {});
  assert.equal(off.data.zenMode, false);
  await page.waitForFunction(() => !document.body.classList.contains('zen'));
  for (const s of chrome) assert.ok(await visible(page, s), `${s} is back`);

  // The writer's own way in and out (the button, Esc) goes through the core too.
  await page.getByTestId('zen-enter').click();
  await page.waitForFunction(() => document.body.classList.contains('zen') && window.draftsmithApp.project.ui.zen_mode);
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => !document.body.classList.contains('zen') && !window.draftsmithApp.project.ui.zen_mode);
  assert.deepEqual(page.consoleLog.filter((l) => l.startsWith('pageerror')), []);
  await page.context().close();
});

test('scroll_to_position scrolls the editor there, every time it is asked', async () => {
  const page = await longProject();
  assert.equal(await scrollTop(page), 0);
  const length = [...LONG].length;
  const r = await execute(page, 'scroll_to_position', { position: length });
  assert.equal(r.status, 'success', JSON.stringify(r));
  await page.waitForFunction(() => document.querySelector('[data-testid="editor"] .cm-scroller').scrollTop > 2000);
  assert.ok(await inView(page, `Paragraph ${LINES}:`), 'the last paragraph shows');
  assert.equal(await inView(page, 'Paragraph 1:'), false, 'the first does not');

  // The writer scrolls back up; the same request scrolls down again.
  await scrollHome(page);
  await execute(page, 'scroll_to_position', { position: length });
  await page.waitForFunction(() => document.querySelector('[data-testid="editor"] .cm-scroller').scrollTop > 2000);
  assert.ok(await inView(page, `Paragraph ${LINES}:`));

  // A position in the middle shows the middle.
  const middle = LONG.indexOf('Paragraph 150:');
  await execute(page, 'scroll_to_position', { position: middle });
  await page.waitForFunction(() => {
    const line = [...document.querySelectorAll('[data-testid="editor"] .cm-line')].find((l) => l.textContent.startsWith('Paragraph 150:'));
    const box = document.querySelector('[data-testid="editor"] .cm-scroller').getBoundingClientRect();
    const at = line?.getBoundingClientRect();
    return at && at.top > box.top && at.bottom < box.bottom;
  });
  assert.equal(await inView(page, `Paragraph ${LINES}:`), false);
  await page.context().close();
});

test('navigate_to_text scrolls the editor to the passage and selects it', async () => {
  const page = await longProject();
  const before = await scrollTop(page);
  const r = await execute(page, 'navigate_to_text', { query: 'brass key under the third stair' });
  assert.equal(r.status, 'success', JSON.stringify(r));
  await page.waitForFunction((b) => document.querySelector('[data-testid="editor"] .cm-scroller').scrollTop > b + 2000, before);
  assert.ok(await inView(page, 'brass key'), 'the passage shows');
  const selected = await page.evaluate(() => {
    const { state } = window.draftsmithApp.view;
    return state.sliceDoc(state.selection.main.from, state.selection.main.to);
  });
  assert.equal(selected, 'brass key under the third stair');

  // Found again after the writer scrolled away: shown again.
  await scrollHome(page);
  await execute(page, 'navigate_to_text', { query: 'brass key under the third stair' });
  await page.waitForFunction(() => document.querySelector('[data-testid="editor"] .cm-scroller').scrollTop > 2000);
  assert.ok(await inView(page, 'brass key'));
  await page.context().close();
});

test('jump_to_scene and jump_to_chapter move the editor and scroll it', async () => {
  const page = await longProject();
  const r = await execute(page, 'jump_to_scene', { direction: 'next' });
  assert.equal(r.status, 'success', JSON.stringify(r));
  await page.waitForFunction(() => document.querySelector('[data-testid="editor"] .cm-scroller').scrollTop > 1000);
  assert.ok(await inView(page, `Paragraph ${LINES / 2 + 2}:`), 'the second scene shows');

  await execute(page, 'jump_to_chapter', { chapter: '2' });
  await page.waitForFunction(() => window.draftsmithApp.view.state.doc.toString() === 'Morning came grey over Greyhaven.');
  assert.equal(await page.getByTestId('chapter-title').inputValue(), 'Morning');
  await execute(page, 'jump_to_chapter', { chapter: 'The Long Night' });
  await page.waitForFunction((n) => window.draftsmithApp.view.state.doc.lines === n, LINES);
  assert.equal(await scrollTop(page), 0);
  assert.ok(await inView(page, 'Paragraph 1:'));
  await page.context().close();
});

test('highlight_text shows each style in its own class and colour, with its note; clear_highlights removes them', async () => {
  const page = await longProject();
  const marks = [
    ['Paragraph 1: the sea', 'warning', 'The opening repeats the next paragraph.'],
    ['Paragraph 2: the sea', 'suggestion', 'Start with the keeper instead.'],
    ['Paragraph 3: the sea', 'info', null],
  ];
  for (const [text, style, note] of marks) {
    const r = await execute(page, 'highlight_text', note ? { text, style, note } : { text, style });
    assert.equal(r.status, 'success', JSON.stringify(r));
  }
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="editor"] .cm-highlight').length === 3);
  const shown = await page.evaluate(() =>
    [...document.querySelectorAll('[data-testid="editor"] .cm-highlight')].map((m) => ({
      text: m.textContent,
      className: m.className,
      style: m.dataset.style,
      title: m.getAttribute('title'),
      note: m.dataset.note ?? null,
      background: getComputedStyle(m).backgroundColor,
    })),
  );
  for (const [i, [text, style, note]] of marks.entries()) {
    assert.equal(shown[i].text, text);
    assert.ok(shown[i].className.split(' ').includes(`cm-highlight-${style}`), shown[i].className);
    assert.equal(shown[i].style, style);
    assert.equal(shown[i].title, note);
    assert.equal(shown[i].note, note);
  }
  assert.equal(new Set(shown.map((s) => s.background)).size, 3, `three colours: ${shown.map((s) => s.background)}`);
  // The note is the tooltip the writer sees on hover.
  const warning = page.locator('[data-testid="editor"] .cm-highlight-warning');
  await warning.hover();
  assert.equal(await warning.getAttribute('title'), 'The opening repeats the next paragraph.');
  // Without a style it is info.
  await execute(page, 'highlight_text', { text: 'Paragraph 4: the sea' });
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="editor"] .cm-highlight-info').length === 2);

  // clear_highlights by style takes only the warnings; the writer's button clears the rest.
  const cleared = await execute(page, 'clear_highlights', { style: 'warning' });
  assert.deepEqual([cleared.data.removed, cleared.data.left], [1, 3]);
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="editor"] .cm-highlight').length === 3);
  assert.equal(await page.locator('[data-testid="editor"] .cm-highlight-warning').count(), 0);
  await page.getByTestId('highlights-clear').click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="editor"] .cm-highlight').length === 0);
  assert.equal(await page.getByTestId('highlights-clear').isVisible(), false, 'the button goes with the last highlight');
  assert.deepEqual(await page.evaluate(() => window.draftsmithApp.project.ui.highlights), []);
  await page.context().close();
});

test("switch_panel's panels are exactly the page's, and each is shown", async () => {
  const page = await longProject();
  const { tools } = await page.evaluate(() => window.draftsmith.tools());
  const definition = tools.find((t) => t.name === 'switch_panel');
  const enums = [];
  (function walk(v) {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      if (Array.isArray(v.enum)) enums.push(...v.enum);
      Object.values(v).forEach(walk);
    }
  })(definition);
  const tabs = await page.evaluate(() => [...document.querySelectorAll('[data-tab]')].map((t) => t.dataset.tab));
  assert.deepEqual([...enums].sort(), [...tabs, 'bible'].sort(), 'the enum is the side tabs and the story bible');

  for (const panel of tabs) {
    const r = await execute(page, 'switch_panel', { panel });
    assert.equal(r.status, 'success', JSON.stringify(r));
    await page.waitForFunction((p) => document.body.dataset.shownPanel === p, panel);
    assert.ok(await visible(page, `[data-panel="${panel}"]`), `${panel} shows`);
    assert.equal(await page.locator(`[data-tab="${panel}"]`).getAttribute('aria-selected'), 'true');
    for (const other of tabs.filter((t) => t !== panel)) assert.equal(await visible(page, `[data-panel="${other}"]`), false, `${other} is hidden`);
  }
  // The story bible, beside the chapters: scrolled into view, focused and marked.
  await page.setViewportSize({ width: 700, height: 700 }); // narrow: the bible is below the fold
  await page.waitForFunction(() => document.querySelector('[data-testid="bible-panel"]').getBoundingClientRect().top > window.innerHeight);
  await execute(page, 'switch_panel', { panel: 'bible' });
  await page.waitForFunction(() => document.body.dataset.shownPanel === 'bible');
  await page.waitForFunction(() => {
    const box = document.querySelector('[data-testid="bible-panel"]').getBoundingClientRect();
    return box.top < window.innerHeight && box.bottom > 0;
  });
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'bible-panel');
  assert.ok(await page.getByTestId('bible-panel').evaluate((n) => n.classList.contains('shown')));
  // The writer picking a tab tells the core, so a later switch_panel to it shows it again.
  await page.setViewportSize({ width: 1280, height: 800 });
  await execute(page, 'switch_panel', { panel: 'jobs' });
  await page.waitForFunction(() => document.body.dataset.shownPanel === 'jobs');
  await page.locator('[data-tab="chat"]').click();
  await page.waitForFunction(() => window.draftsmithApp.project.ui.panel === 'chat');
  assert.ok(await visible(page, '[data-panel="chat"]'), 'the picked tab shows');
  await execute(page, 'switch_panel', { panel: 'jobs' });
  await page.waitForFunction(() => !document.querySelector('[data-panel="jobs"]').hidden);
  assert.ok(await visible(page, '[data-panel="jobs"]'));
  assert.ok(await visible(page, '.layout'), 'the page itself stays shown');
  await page.context().close();
});

test('the Analysis panel shows the latest run_analysis result, an agent\u2019s or the writer\u2019s', async () => {
  const page = await longProject();
  await execute(page, 'switch_panel', { panel: 'analysis' });
  await page.waitForFunction(() => !document.querySelector('[data-panel="analysis"]').hidden);
  assert.ok(await visible(page, '[data-testid="analysis-empty"]'));
  // An agent's full analysis.
  const r = await execute(page, 'run_analysis', { interpret: false });
  assert.equal(r.status, 'success', JSON.stringify(r));
  await page.getByTestId('analysis-pacing').waitFor();
  assert.equal(await visible(page, '[data-testid="analysis-empty"]'), false);
  for (const part of ['pacing', 'characters', 'plot', 'setting']) assert.ok(await visible(page, `[data-testid="analysis-${part}"]`), part);
  assert.match(await page.getByTestId('analysis-meta').textContent(), /Full analysis of the manuscript, by agent quill/);
  assert.match(await page.getByTestId('analysis-pacing').textContent(), /Chapter 1 · The Long Night/);
  assert.match(await page.getByTestId('analysis-setting').textContent(), /Greyhaven/);
  assert.doesNotMatch(await page.getByTestId('analysis-result').textContent(), /null|undefined|\[object/);
  // The writer runs one section over the open chapter from the panel.
  await page.getByTestId('analysis-section').selectOption('plot');
  await page.getByTestId('analysis-scope').selectOption('chapter');
  await page.getByTestId('analysis-run').click();
  await page.getByTestId('analysis-meta').filter({ hasText: 'by you' }).waitFor();
  assert.match(await page.getByTestId('analysis-meta').textContent(), /plot of the chapter/);
  assert.equal(await page.getByTestId('analysis-pacing').count(), 0);
  assert.equal(await page.getByTestId('analysis-scene').count(), 2, 'the chapter\u2019s two scenes');
  // A scene's heading scrolls the editor to it.
  await page.getByTestId('analysis-scene').nth(1).click();
  await page.waitForFunction(() => document.querySelector('[data-testid="editor"] .cm-scroller').scrollTop > 1000);
  assert.ok(await inView(page, `Paragraph ${LINES / 2 + 2}:`));
  // A reload shows the latest result again.
  await page.reload();
  await openReady(env, page);
  await page.locator('[data-tab="analysis"]').click();
  await page.getByTestId('analysis-meta').filter({ hasText: 'plot of the chapter, by you' }).waitFor();
  assert.equal(await page.getByTestId('analysis-scene').count(), 2);
  await page.context().close();
});

test('set_selection selects the passage in the editor', async () => {
  const page = await longProject();
  const start = LONG.indexOf('the sea went on');
  const r = await execute(page, 'set_selection', { start, end: start + 'the sea went on'.length });
  assert.equal(r.status, 'success', JSON.stringify(r));
  await page.waitForFunction(() => {
    const { state } = window.draftsmithApp.view;
    return state.sliceDoc(state.selection.main.from, state.selection.main.to) === 'the sea went on';
  });
  await page.context().close();
});

async function ask(page, prompt) {
  await page.getByTestId('chat-input').fill(prompt);
  await page.getByTestId('chat-send').click();
  // (The run may switch the side panel away from the chat.)
  await page.waitForFunction(() => window.draftsmithApp.run === null && !document.querySelector('[data-testid="chat-send"]').disabled);
}

test('the offline demo model calls the UI tools from the chat', async () => {
  const page = await longProject();
  assert.match(await page.getByTestId('model-label').textContent(), /Demo model/);

  await ask(page, 'scroll to the end');
  await page.waitForFunction(() => document.querySelector('[data-testid="editor"] .cm-scroller').scrollTop > 2000);
  assert.ok(await inView(page, `Paragraph ${LINES}:`));
  await page.locator('.chat-log .assistant').filter({ hasText: 'Scrolled to the end of chapter 1' }).waitFor();

  await ask(page, 'highlight "brass key" as warning: Where did the key come from?');
  await page.locator('[data-testid="editor"] .cm-highlight-warning').waitFor({ state: 'attached' });
  assert.equal(await page.locator('[data-testid="editor"] .cm-highlight-warning').getAttribute('title'), 'Where did the key come from?');
  await page.locator('.chat-log .assistant').filter({ hasText: 'Highlighted "brass key" as warning' }).waitFor();
  await ask(page, 'clear the warnings');
  await page.waitForFunction(() => !document.querySelector('[data-testid="editor"] .cm-highlight-warning'));
  await page.locator('.chat-log .assistant').filter({ hasText: 'Removed 1 highlight.' }).waitFor();

  await ask(page, 'analyze the pacing');
  await page.waitForFunction(() => !document.querySelector('[data-panel="analysis"]').hidden);
  await page.getByTestId('analysis-pacing').waitFor();
  await page.locator('.chat-log .assistant').filter({ hasText: 'is in the Analysis panel' }).waitFor({ state: 'attached' });

  await page.locator('[data-tab="chat"]').click();
  await ask(page, 'show the story bible');
  await page.waitForFunction(() => document.body.dataset.shownPanel === 'bible');

  await ask(page, 'zen mode');
  await page.waitForFunction(() => document.body.classList.contains('zen'));
  assert.equal(await visible(page, '.side'), false);
  await page.getByTestId('zen-exit').click();
  await page.waitForFunction(() => !document.body.classList.contains('zen'));
  assert.deepEqual(page.consoleLog.filter((l) => l.startsWith('pageerror')), []);
  await page.context().close();
});

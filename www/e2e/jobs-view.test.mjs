// What the Jobs panel says (src/jobs-view.js, no browser): the start form's parameters, job
// titles and counts, percentages, the actions each state offers, run ids of job units, and a
// unit's transcript as entries (each tool result under its call).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  percent,
  finishedUnits,
  startParams,
  jobTitle,
  jobDetails,
  countsText,
  currentText,
  jobActions,
  jobOfRun,
  unitOfRun,
  unitIdText,
  targetText,
  transcriptEntries,
  resultText,
  scopeText,
  phaseLabel,
} from '../src/jobs-view.js';

const job = (over = {}) => ({
  id: 'j1',
  project: 'p',
  kind: 'pipeline',
  params: { kind: 'pipeline', phases: ['context', 'editing'], scope: 'all', allowOverwrite: false, concurrency: 3 },
  state: 'running',
  createdMs: 0,
  updatedMs: 0,
  progress: { done: 3, failed: 1, waiting: 2, total: 12, current: ['context:scene_tag_detailer:s2', 'context:meta_glossary_curator:project'] },
  phases: [{ name: 'context', done: 3, total: 8 }, { name: 'editing', done: 0, total: 4 }],
  ...over,
});

test('the start form: phases in pipeline order, scope, overwrite, concurrency checked', () => {
  const ok = startParams({ phases: ['editing', 'context'], scope: 'all', scenes: [], allowOverwrite: true, concurrency: '2' });
  assert.deepEqual(ok.params, { kind: 'pipeline', phases: ['context', 'editing'], scope: 'all', allowOverwrite: true, concurrency: 2 });
  assert.deepEqual(startParams({ phases: ['translation'], scope: 'route:common', concurrency: 3 }).params.scope, { route: 'common' });
  assert.deepEqual(startParams({ phases: ['context'], scope: 'scenes', scenes: ['s1', 's3'], concurrency: 1 }).params.scope, { scenes: ['s1', 's3'] });
  assert.match(startParams({ phases: [], scope: 'all', concurrency: 3 }).error, /at least one phase/);
  assert.match(startParams({ phases: ['context'], scope: 'scenes', scenes: [], concurrency: 3 }).error, /at least one scene/);
  for (const bad of ['0', '9', '2.5', '', 'x']) assert.match(startParams({ phases: ['context'], scope: 'all', concurrency: bad }).error, /1 to 8/, bad);
  assert.equal(startParams({ phases: ['context'], scope: 'all', concurrency: 3 }).params.allowOverwrite, false);
});

test('titles, details, counts and the running units read as the writer expects', () => {
  assert.equal(jobTitle(job()), 'Pipeline · Context → Editing');
  assert.equal(jobTitle({ kind: 'run', params: { kind: 'run', prompt: 'Tidy   the\nglossary', agent: 'meta_glossary_curator' } }), 'Run · meta_glossary_curator · “Tidy the glossary”');
  assert.equal(jobTitle({ kind: 'research', params: { urls: ['https://example.org/a'], concurrency: 3 } }), 'Research · https://example.org/a');
  assert.equal(jobTitle({ kind: 'research', params: { urls: ['https://a.example/', 'https://b.example/'], concurrency: 2 } }), 'Research · 2 pages');
  assert.equal(jobDetails({ kind: 'research', params: { urls: [], concurrency: 2 } }), 'web pages read into research notes · 2 at once');
  assert.equal(jobDetails(job()), 'all scenes · no overwrite · 3 at once');
  // The core's params carry no kind; a run job has one phase named `run`.
  assert.equal(jobTitle({ kind: 'pipeline', params: { phases: ['translation'], scope: { route: 'r' } }, phases: [] }), 'Pipeline · Translation');
  assert.equal(jobTitle({ kind: 'run', params: { prompt: 'Go' }, phases: [{ name: 'run', done: 0, total: 1 }] }), 'Run · “Go”');
  assert.equal(phaseLabel('run'), 'Run');
  assert.equal(phaseLabel(null), '');
  assert.equal(scopeText({ scenes: ['a', 'b'] }), '2 scenes');
  assert.equal(scopeText({ scenes: ['a'] }), 'scene a');
  assert.equal(scopeText({ route: 'common' }), 'route common');
  assert.equal(countsText(job()), '3 of 12 units done · 1 failed · 2 waiting for you');
  assert.equal(countsText(job({ progress: { done: 1, failed: 0, waiting: 0, total: 1, current: [] } })), '1 of 1 unit done');
  assert.equal(currentText(job()), 'Running: scene_tag_detailer on s2, meta_glossary_curator on the whole project');
  assert.equal(currentText(job({ progress: { ...job().progress, current: ['a:b:1', 'a:b:2', 'a:b:3', 'a:b:4', 'a:b:5', 'a:b:6'] } })), 'Running: b on 1, b on 2, b on 3, b on 4 and 2 more');
  assert.equal(targetText({ kind: 'scene', id: 'scene_1' }), 'scene_1');
  assert.equal(targetText({ kind: 'route', id: 'common' }), 'route common');
  assert.equal(targetText({ kind: 'project' }), 'the whole project');
  assert.equal(unitIdText('translation:scene_translator:s4'), 'scene_translator on s4');
});

test('percentages: whole, bounded; an empty job is complete; failed units count as finished', () => {
  assert.equal(percent(0, 12), 0);
  assert.equal(percent(11, 12), 91);
  assert.equal(percent(12, 12), 100);
  assert.equal(percent(13, 12), 100);
  assert.equal(percent(0, 0), 100);
  assert.equal(finishedUnits(job()), 4);
});

test('each state offers its actions: pause or resume, cancel; none once final', () => {
  assert.deepEqual(jobActions('running'), { pause: true, resume: false, cancel: true });
  assert.deepEqual(jobActions('waiting_approval'), { pause: true, resume: false, cancel: true });
  assert.deepEqual(jobActions('paused'), { pause: false, resume: true, cancel: true });
  // Paused by the writer while its running units finish: the core still says running.
  assert.deepEqual(jobActions('running', true), { pause: false, resume: true, cancel: true });
  assert.deepEqual(jobActions('done', true), { pause: false, resume: false, cancel: false });
  for (const s of ['done', 'failed', 'cancelled']) assert.deepEqual(jobActions(s), { pause: false, resume: false, cancel: false });
});

test('a job unit run id names its job (known ids first, even with colons) and its unit', () => {
  const run = 'job:j-7:context:scene_summary_detailer:s1';
  assert.equal(jobOfRun(run), 'j-7');
  assert.equal(jobOfRun('job:a:b:context:x:project', ['a', 'a:b']), 'a:b');
  assert.equal(jobOfRun('run-123'), null);
  assert.equal(jobOfRun(null), null);
  assert.equal(unitOfRun(run, 'j-7'), 'context:scene_summary_detailer:s1');
  assert.equal(unitOfRun(run, 'other'), null);
});

test('a transcript: the task first, each tool result under its call, errors readable, stray results kept', () => {
  const entries = transcriptEntries([
    { role: 'user', text: 'Task for scene_summary_detailer: summarize.\nScene: s1\nOverwrite allowed: no\nDone when: written.' },
    { role: 'assistant', text: 'Reading the scene.', toolCalls: [{ id: 'c1', name: 'scene_read', arguments: { scene: 's1' } }, { id: 'c2', name: 'scene_update_summary', arguments: { scene: 's1', summary: 'x' } }] },
    { role: 'tool', toolCallId: 'c1', name: 'scene_read', text: JSON.stringify({ status: 'success', data: { text: 'Mara climbed.' }, meta: {} }) },
    { role: 'tool', toolCallId: 'c2', name: 'scene_update_summary', text: JSON.stringify({ status: 'error', data: { code: 'approval_required', message: 'The writer wrote it.' }, meta: {} }) },
    { role: 'tool', toolCallId: 'zz', name: 'lost', text: 'plain text' },
    { role: 'assistant', text: 'Done.' },
  ]);
  assert.deepEqual(entries.map((e) => e.kind), ['task', 'assistant', 'call', 'call', 'result', 'assistant']);
  assert.match(entries[0].text, /^Task for scene_summary_detailer/);
  assert.deepEqual(entries[2].arguments, { scene: 's1' });
  assert.equal(entries[2].result.status, 'success');
  assert.match(entries[2].result.text, /"text": "Mara climbed\."/);
  assert.deepEqual(entries[3].result, { status: 'error', text: 'approval_required: The writer wrote it.' });
  assert.deepEqual(entries[4], { kind: 'result', name: 'lost', status: null, text: 'plain text' });
  assert.deepEqual(transcriptEntries([]), []);
  assert.deepEqual(resultText('{"a":1}'), { status: null, text: '{\n  "a": 1\n}' });
});

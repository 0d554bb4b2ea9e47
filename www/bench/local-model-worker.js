// Tokens per second of the in-browser model through the bridge (LocalModel.chat, as the core
// calls it), single-threaded and multi-threaded: each answer's last chunk carries wllama's
// `timings` (prompt_per_second, predicted_per_second).
import { LocalModel } from '../local-model.js';

// A prompt of about 100 tokens and an answer of 32, twice per configuration (the median is
// reported): about a minute in all at ~10 tokens per second. Each round's prompt starts
// differently, so that none is served from the previous one's cache.
const PROMPT =
  'You are helping a novelist. The chapter so far: Mara climbed the lighthouse stairs at dusk, counting the steps ' +
  'her father had painted white, one for each year he kept the light. At the top the lamp was cold, the logbook ' +
  'open at a page dated the night he vanished. Write the next paragraph, in the same quiet voice.';
const MAX_TOKENS = 32;
const ROUNDS = 2;

const bridge = new LocalModel();
const decoder = new TextDecoder();

async function answer(model, threads, round) {
  const body = JSON.stringify({
    model,
    load: { threads, contextSize: 1024 },
    messages: [{ role: 'user', content: `Draft ${round + 1}. ${PROMPT}` }],
    max_tokens: MAX_TOKENS,
    temperature: 0,
  });
  const response = await bridge.chat(body, new AbortController().signal);
  const text = await new Response(response.body).text();
  if (response.status !== 200) throw new Error(`the model answered ${response.status}: ${text}`);
  let timings = null;
  for (const block of text.split('\n\n')) {
    if (!block.startsWith('data: ') || block === 'data: [DONE]') continue;
    const chunk = JSON.parse(block.slice(6));
    if (chunk.error) throw new Error(chunk.error.message);
    if (chunk.timings) timings = chunk.timings;
  }
  if (!timings) throw new Error('no timings in the answer');
  return timings;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const round2 = (x) => Math.round(x * 100) / 100;

self.onmessage = async ({ data }) => {
  try {
    const cores = navigator.hardwareConcurrency || 1;
    const configs = [
      { label: 'single-thread', threads: 1 },
      { label: 'multi-thread', threads: Math.max(2, Math.min(cores, 8)) },
    ];
    const runs = [];
    for (const config of configs) {
      self.postMessage({ progress: `loading ${data.model} (${config.label}, ${config.threads} threads)…` });
      const started = performance.now();
      const info = await bridge.load({ url: data.model, threads: config.threads, contextSize: 1024 });
      const loadMs = performance.now() - started;
      const rounds = [];
      for (let i = 0; i < ROUNDS; i++) {
        self.postMessage({ progress: `${config.label}: answer ${i + 1} of ${ROUNDS}…` });
        rounds.push(await answer(data.model, config.threads, i));
      }
      runs.push({
        label: config.label,
        threads: info.threads,
        multiThread: info.multiThread,
        loadMs: Math.round(loadMs),
        promptTokens: rounds[0].prompt_n,
        generatedTokens: rounds[0].predicted_n,
        promptPerSecond: round2(median(rounds.map((t) => t.prompt_per_second))),
        generationPerSecond: round2(median(rounds.map((t) => t.predicted_per_second))),
        allPromptPerSecond: rounds.map((t) => round2(t.prompt_per_second)),
        allGenerationPerSecond: rounds.map((t) => round2(t.predicted_per_second)),
      });
    }
    await bridge.exit();
    self.postMessage({ model: data.model, crossOriginIsolated: self.crossOriginIsolated === true, cores, rounds: ROUNDS, runs });
  } catch (err) {
    self.postMessage({ error: String((err && err.message) || err) });
  }
};

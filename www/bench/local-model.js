// The in-browser model benchmark's page: runs local-model-worker.js and shows its numbers
// (window.benchResult for www/bench/run.mjs).
const worker = new Worker(new URL('./local-model-worker.js', import.meta.url), { type: 'module' });
const output = document.querySelector('[data-testid="bench-output"]');
worker.onmessage = ({ data }) => {
  if (data.progress) {
    output.textContent = data.progress;
    return;
  }
  window.benchResult = data;
  output.textContent = JSON.stringify(data, null, 2);
};
worker.onerror = (event) => {
  window.benchResult = { error: event.message || 'the benchmark worker failed' };
};
const model = new URLSearchParams(location.search).get('model') || '/models/SmolLM2-135M-Instruct.Q4_1.gguf';
worker.postMessage({ model });

import { Draftsmith } from '../draftsmith.js';
const n = Number(new URLSearchParams(location.search).get('n') ?? 20000);
const client = await Draftsmith.start({ workerUrl: new URL(`../worker.js?db=rt-${Date.now()}`, import.meta.url), persist: false });
await new Promise((r) => setTimeout(r, 1500));
const times = [];
for (let i = 0; i < n; i++) { const a = performance.now(); await client.hello(); times.push(performance.now() - a); }
times.sort((a, b) => a - b);
window.benchResult = { p50: times[n >> 1] };

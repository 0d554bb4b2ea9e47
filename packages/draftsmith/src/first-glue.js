// The core's glue for the worker's first start, imported as soon as the worker runs: it
// downloads while the rest of the worker's script runs and its database opens. In the
// `worker.js` that pages start, www/worker-bundle.mjs puts the glue itself in this module's
// place, so that nothing is left to download. Relative to `worker.js`, as worker.js is.
export const firstGlue = import(/* @vite-ignore */ new URL('./pkg/draftsmith.js', import.meta.url).href);

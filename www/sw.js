// Service worker of the demo page: keeps the page usable offline. Same-origin GETs go to the
// network first (so a rebuilt page is picked up at once) and are cached; when the network is
// gone, the cached copy is served. Model endpoints (/demo/, /mock/), the research proxy
// (/proxy) and model files (/models/: the in-browser model keeps its own copy in the
// browser's storage) are never cached. What is served from the cache keeps the page
// cross-origin isolated (COOP/COEP), as the server does, so the in-browser model still runs
// multi-threaded offline.
const CACHE = 'draftsmith-shell-v1';
const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};
const SHELL = [
  './',
  './index.html',
  './app.css',
  './dist/app.js',
  './draftsmith.js',
  './worker.js',
  './local-model.js',
  './mcp-client.js',
  './mcp/sdk.js',
  './pkg/draftsmith.js',
  './pkg/draftsmith_bg.wasm',
  // Loaded by the worker only when research first reads a page, kept for offline use.
  './pkg/draftsmith_reader.js',
  './pkg/draftsmith_reader_bg.wasm',
];

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      // One by one: a file missing skips only itself.
      .then((cache) => Promise.all(SHELL.map((url) => cache.add(url).catch(() => {}))))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(self.clients.claim());
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== self.location.origin) return;
  if (['/demo/', '/mock/', '/models/'].some((prefix) => url.pathname.startsWith(prefix)) || url.pathname === '/proxy') return;
  event.respondWith(
    (async () => {
      const cache = await caches.open(CACHE);
      try {
        const response = await fetch(request);
        if (response.ok) cache.put(request, response.clone()).catch(() => {});
        return response;
      } catch (err) {
        // The worker's `?db=` and the glues' `?instance=` (a fresh core after a panic, a
        // fresh page reader after it failed) name the same file.
        const ignoreSearch = ['worker.js', '/pkg/draftsmith.js', '/pkg/draftsmith_reader.js'].some((end) => url.pathname.endsWith(end));
        const cached = await cache.match(request, { ignoreSearch });
        if (cached) return isolated(cached);
        throw err;
      }
    })(),
  );
});

// A cached response with the isolation headers (a copy cached before the server sent them
// has none).
function isolated(response) {
  if (Object.entries(ISOLATION_HEADERS).every(([name, value]) => response.headers.get(name) === value)) return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(ISOLATION_HEADERS)) headers.set(name, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

// Service worker of the demo page: keeps the page usable offline. Same-origin GETs go to the
// network first (so a rebuilt page is picked up at once) and are cached; when the network is
// gone, the cached copy is served. Model endpoints (/demo/, /mock/) and the research proxy
// (/proxy) are never cached.
const CACHE = 'draftsmith-shell-v1';
const SHELL = [
  './',
  './index.html',
  './app.css',
  './dist/app.js',
  './draftsmith.js',
  './worker.js',
  './pkg/draftsmith.js',
  './pkg/draftsmith_bg.wasm',
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
  if (url.pathname.startsWith('/demo/') || url.pathname.startsWith('/mock/') || url.pathname === '/proxy') return;
  event.respondWith(
    (async () => {
      const cache = await caches.open(CACHE);
      try {
        const response = await fetch(request);
        if (response.ok) cache.put(request, response.clone()).catch(() => {});
        return response;
      } catch (err) {
        // The worker's `?db=` and the glue's `?instance=` (a fresh core after a panic) name
        // the same file.
        const cached = await cache.match(request, { ignoreSearch: url.pathname.endsWith('worker.js') || url.pathname.endsWith('/pkg/draftsmith.js') });
        if (cached) return cached;
        throw err;
      }
    })(),
  );
});

// paralens' service worker: serves the page cross-origin isolated (the COOP and COEP headers),
// so the browser lets it share memory between its threads (SharedArrayBuffer) on any static host,
// including those that cannot set headers (python3 -m http.server, GitHub Pages, a course page).
// It adds headers to the page's own responses and changes nothing else.
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.cache === 'only-if-cached' && request.mode !== 'same-origin') return;
  event.respondWith(fetch(request).then((response) => {
    if (response.status === 0) return response; // opaque: nothing to add
    const headers = new Headers(response.headers);
    headers.set('Cross-Origin-Embedder-Policy', 'require-corp');
    headers.set('Cross-Origin-Opener-Policy', 'same-origin');
    headers.set('Cross-Origin-Resource-Policy', 'same-origin');
    return new Response(response.body, {status: response.status, statusText: response.statusText, headers});
  }));
});

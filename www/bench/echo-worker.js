// The plain JavaScript worker of www/bench/peers.js: says it is ready, then answers every
// request with a response carrying the payload it was given first (the core's `hello`
// result), as the draftsmith worker answers `hello`.
let payload = {};
self.onmessage = (event) => {
  const message = event.data;
  if (message.type === 'payload') {
    payload = message.payload;
    return;
  }
  self.postMessage({ kind: 'response', id: message.id, ok: true, result: payload });
};
self.postMessage({ kind: 'event', type: 'ready', data: {} });

// The worker side of the crossing part of messages.js: it holds each message's JSON text as
// UTF-8 bytes, where the core's answer sits in wasm memory, and sends one to the page in the
// form asked for:
// - `text`: decoded to a string (what wasm-bindgen does with a `String` the core returns),
//   posted as a string, which the page parses (what the worker does now);
// - `bytes`: copied out as a new buffer (what a `Vec<u8>` returned to JavaScript costs) and
//   transferred, which the page decodes and parses;
// - `value`: decoded and parsed here, posted as an object (cloned field by field).
const decoder = new TextDecoder();
let held = [];

self.onmessage = ({ data }) => {
  if (data.hold) {
    const encoder = new TextEncoder();
    held = data.hold.map((text) => encoder.encode(text));
    self.postMessage({ held: held.length });
    return;
  }
  const bytes = held[data.message];
  if (data.form === 'text') {
    self.postMessage(decoder.decode(bytes));
  } else if (data.form === 'bytes') {
    const copy = bytes.slice();
    self.postMessage(copy.buffer, [copy.buffer]);
  } else {
    self.postMessage(JSON.parse(decoder.decode(bytes)));
  }
};

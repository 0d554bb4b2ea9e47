// The demo editor page. Starts the draftsmith worker and shows its state.
import { Draftsmith } from './draftsmith.js';

const status = document.querySelector('[data-testid="status"]');
const version = document.querySelector('[data-testid="version"]');
const bootMessage = document.querySelector('[data-testid="boot-message"]');

function show(text, isError = false) {
  status.textContent = text;
  status.classList.toggle('error', isError);
}

async function main() {
  try {
    const client = await Draftsmith.start({ workerUrl: new URL('./worker.js', import.meta.url) });
    const hello = await client.hello();
    show('core ready');
    version.textContent = `draftsmith ${hello.version} (${hello.profile})`;
    bootMessage.textContent = `Core loaded: ${hello.capabilities.length} request types served.`;
    client.on('panic', (data) => show(`core restarted after an internal error: ${data.message}`, true));
    client.on('ready', () => show('core ready'));
    // Exposed for tests and for trying the API from the console.
    window.draftsmith = client;
  } catch (err) {
    show(`core failed: ${err.message}`, true);
  }
}

main();

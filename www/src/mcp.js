// The MCP servers of the Settings panel: the writer adds a tool server (a name, its URL and an
// optional Authorization header) or removes one, saved as the settings' `mcpServers` (the
// whole list); each server shows its status (connecting, ready, failed with the reason) and
// its tools. `mcp_changed` keeps the list live.
import { $, el } from './dom.js';

const state = {
  client: null,
  /** The servers as last shown: [{name, url, status, error?, tools}]. */
  servers: [],
  loadSeq: 0,
};

const STATUS_TEXT = { connecting: 'connecting…', ready: 'ready', failed: 'failed' };

function message(text, error = false) {
  const node = $('mcp-message');
  node.textContent = text;
  node.classList.toggle('error', error);
}

function toolNode(tool) {
  return el(
    'li',
    { class: 'mcp-tool', 'data-tool': tool.name, title: tool.name },
    el('code', {}, tool.tool),
    tool.description ? el('span', { class: 'mcp-tool-description' }, ` ${tool.description}`) : null,
  );
}

function serverNode(server) {
  const tools = server.tools ?? [];
  const status = STATUS_TEXT[server.status] ?? server.status;
  const count = server.status === 'ready' ? ` · ${tools.length} ${tools.length === 1 ? 'tool' : 'tools'}` : '';
  return el(
    'li',
    { class: `mcp-server status-${server.status}`, 'data-name': server.name, 'data-status': server.status },
    el(
      'div',
      { class: 'mcp-head' },
      el('strong', { class: 'mcp-name' }, server.name),
      el('span', { class: `badge mcp-status ${server.status}` }, `${status}${count}`),
      el('button', { type: 'button', class: 'mcp-remove', 'aria-label': `Remove the MCP server ${server.name}`, onclick: () => remove(server.name) }, 'Remove'),
    ),
    el('div', { class: 'mcp-url' }, server.url),
    server.error ? el('p', { class: 'mcp-error error' }, server.error) : null,
    tools.length ? el('ul', { class: 'mcp-tools', 'aria-label': `Tools of ${server.name}` }, ...tools.map(toolNode)) : null,
  );
}

function show(servers) {
  state.servers = servers;
  $('mcp-servers').replaceChildren(
    ...(servers.length ? servers.map(serverNode) : [el('li', { class: 'hint mcp-empty' }, 'None: add a tool server below.')]),
  );
}

/** List the servers with their status and tools (`mcp_servers`). */
export async function loadMcp() {
  const seq = ++state.loadSeq;
  try {
    const { servers } = await state.client.request('mcp_servers');
    if (seq === state.loadSeq) show(servers);
  } catch (err) {
    if (seq === state.loadSeq) $('mcp-servers').replaceChildren(el('li', { class: 'hint error' }, `Could not list the MCP servers: ${err.message}`));
  }
}

/** The `mcp_changed` event: the servers as they are now. */
export function mcpChanged(e) {
  if (!e || !Array.isArray(e.servers)) return;
  // A list still loading is older than this one.
  state.loadSeq += 1;
  show(e.servers);
}

/** Save the whole list; resolves to whether it was saved (else the message says why). */
async function save(servers) {
  try {
    await state.client.settings.set({ mcpServers: servers });
  } catch (err) {
    message(err.message, true);
    return false;
  }
  await loadMcp();
  return true;
}

const originOf = (url) => {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
};

async function add(event) {
  event.preventDefault();
  const name = $('mcp-name').value.trim();
  const url = $('mcp-url').value.trim();
  const auth = $('mcp-auth').value.trim();
  if (!name || !url) {
    message('An MCP server needs a name and a URL.', true);
    return;
  }
  const entry = { name, url };
  const previous = state.servers.find((s) => s.name === name);
  // A server given without headers keeps its stored ones, unless it moved to another origin:
  // an Authorization header never follows the server elsewhere.
  if (auth) entry.headers = { Authorization: auth };
  else if (previous && originOf(previous.url) !== originOf(url)) entry.headers = {};
  const servers = state.servers.map((s) => (s.name === name ? entry : { name: s.name, url: s.url }));
  if (!previous) servers.push(entry);
  if (await save(servers)) {
    $('mcp-name').value = '';
    $('mcp-url').value = '';
    $('mcp-auth').value = '';
    message(previous ? `Changed ${name}.` : `Added ${name}.`);
  }
}

async function remove(name) {
  const servers = state.servers.filter((s) => s.name !== name).map((s) => ({ name: s.name, url: s.url }));
  if (await save(servers)) message(`Removed ${name}.`);
}

export function initMcp(client) {
  state.client = client;
  $('mcp-add').addEventListener('submit', add);
}

// The part of the official MCP SDK the worker uses, bundled into packages/draftsmith/mcp/sdk.js
// (www/mcp-sdk.mjs): the client and its Streamable HTTP transport.
export { Client } from '@modelcontextprotocol/sdk/client/index.js';
export { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

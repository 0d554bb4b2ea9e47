/** A remote MCP server reached over Streamable HTTP. */
export interface McpServerSpec {
  /** The server's name: its tools join the catalog as `mcp__<name>__<tool>`. */
  name: string;
  /** The server's MCP endpoint (http or https), e.g. `https://tools.example.com/mcp`. */
  url: string;
  /** Headers sent with every request to it, e.g. `{Authorization: 'Bearer …'}`. */
  headers?: { [name: string]: string };
}

/** A tool as the server lists it (`tools/list`), passed on as the SDK returns it. */
export interface McpTool {
  name: string;
  title?: string;
  description?: string;
  /** JSON Schema of the arguments (an object schema). */
  inputSchema: { type: 'object'; properties?: { [name: string]: object }; required?: string[]; [key: string]: unknown };
  /** JSON Schema of `structuredContent`, when the tool gives one. */
  outputSchema?: { type: 'object'; [key: string]: unknown };
  annotations?: {
    title?: string;
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
  [key: string]: unknown;
}

/** One item of a tool result's content. */
export type McpContent =
  | { type: 'text'; text: string; [key: string]: unknown }
  | { type: 'image' | 'audio'; data: string; mimeType: string; [key: string]: unknown }
  | { type: 'resource_link'; uri: string; name: string; [key: string]: unknown }
  | { type: 'resource'; resource: { uri: string; text?: string; blob?: string; mimeType?: string }; [key: string]: unknown };

/** A tool call's result, as the SDK returns it. An error the tool reports is a result with `isError`. */
export interface McpToolResult {
  content: McpContent[];
  isError?: boolean;
  structuredContent?: { [key: string]: unknown };
  [key: string]: unknown;
}

export interface McpServerStatus {
  url: string;
  connected: boolean;
  /** The last error the connection reported (a stream that broke off, say), if any. */
  error?: string;
}

export interface McpClientsOptions {
  /** The bundled SDK's ES module (default: `./mcp/sdk.js` beside this module). */
  sdkModule?: string;
  /** What the client tells servers it is (`initialize`'s clientInfo). */
  clientInfo?: { name: string; version: string };
}

/**
 * The MCP servers of one worker, on the official SDK's client (`@modelcontextprotocol/sdk`),
 * over Streamable HTTP. The SDK is imported on the first `connect`. Every error names the
 * server and says what failed.
 */
export class McpClients {
  constructor(options?: McpClientsOptions);
  /** What the client tells servers it is; the worker sets the core's version. */
  clientInfo: { name: string; version: string };
  /**
   * Connect (again) to the server called `spec.name`, closing a previous connection of that
   * name first, with `spec.headers` on every request. Resolves to its tools (every page of
   * `tools/list`). When the server says its tools changed, they are listed again and
   * `onTools` hears the whole new list. Rejects when the server cannot be reached, answers
   * with an HTTP error, or is not an MCP server.
   */
  connect(spec: McpServerSpec, onTools?: (tools: McpTool[]) => void): Promise<McpTool[]>;
  /**
   * Call a tool. Resolves to its result (an error the tool reports too, with `isError`).
   * Rejects when the server is not connected, when the request fails (the message names the
   * server and the cause; a server that goes down mid-call fails the call at once), or with
   * an `AbortError` when `signal` is aborted. A server that restarted and forgot the session
   * gets a new one, and the call is sent once more.
   */
  call(server: string, tool: string, args: { [key: string]: unknown }, signal?: AbortSignal): Promise<McpToolResult>;
  /** Close the server's connection (ending its session) and forget it; false if there was none. */
  close(name: string): Promise<boolean>;
  /** Close every connection. */
  closeAll(): Promise<void>;
  /** The connections by server name, for debugging. */
  status(): { [name: string]: McpServerStatus };
}

export default McpClients;

// Uses the MCP bridge (packages/draftsmith/mcp-client.js) as an embedder's own worker would;
// checked by `tsc --noEmit` with the rest. Nothing here runs.
import { McpClients, type McpTool, type McpToolResult, type McpServerStatus } from '../../packages/draftsmith/mcp-client.js';

export async function useMcp(): Promise<void> {
  const clients = new McpClients({ clientInfo: { name: 'my-editor', version: '1.0.0' } });
  clients.clientInfo = { name: 'my-editor', version: '1.0.1' };
  const tools: McpTool[] = await clients.connect({ name: 'style', url: 'https://tools.example.com/mcp', headers: { Authorization: 'Bearer token' } }, (now: McpTool[]) =>
    console.log(now.map((tool) => tool.name)),
  );
  const first = tools[0];
  const required: string[] | undefined = first?.inputSchema.required;
  const readOnly: boolean | undefined = first?.annotations?.readOnlyHint;
  const controller = new AbortController();
  const result: McpToolResult = await clients.call('style', 'check_house_style', { text: 'okay' }, controller.signal);
  for (const item of result.content) {
    if (item.type === 'text') console.log(item.text);
  }
  const failed: boolean = result.isError === true;
  const structured = result.structuredContent?.violations;
  const status: McpServerStatus | undefined = clients.status().style;
  const connected: boolean | undefined = status?.connected;
  const closed: boolean = await clients.close('style');
  await clients.closeAll();
  void [required, readOnly, failed, structured, connected, closed];
}

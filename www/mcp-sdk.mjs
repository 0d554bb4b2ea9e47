// Bundles the official MCP SDK's client and its Streamable HTTP transport
// (scripts/mcp-sdk-entry.js) into one ES module for browsers, with esbuild: the file
// packages/draftsmith/mcp-client.js imports as `./mcp/sdk.js`.
//
//   node www/mcp-sdk.mjs OUTFILE   writes the bundle and the SDK's licence (LICENSE) beside it
//                                  (scripts/package.sh)
//   bundleMcpSdk()                 resolves to the bundle's text (the dev server, www/server.mjs)
import { build } from 'esbuild';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ENTRY = fileURLToPath(new URL('../scripts/mcp-sdk-entry.js', import.meta.url));
const NODE_MODULES = fileURLToPath(new URL('./node_modules/', import.meta.url));
const SDK_LICENSE = join(NODE_MODULES, '@modelcontextprotocol', 'sdk', 'LICENSE');

const OPTIONS = {
  entryPoints: [ENTRY],
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  legalComments: 'eof',
  // The entry lives outside www/: its imports resolve from www/node_modules.
  nodePaths: [NODE_MODULES],
  logLevel: 'warning',
};

/** The bundle's text. */
export async function bundleMcpSdk() {
  const result = await build({ ...OPTIONS, write: false });
  return result.outputFiles[0].text;
}

/** Write the bundle to `outfile` and the SDK's licence beside it; resolves to the bundle's size in bytes. */
export async function writeMcpSdk(outfile) {
  const result = await build({ ...OPTIONS, write: false });
  const bytes = result.outputFiles[0].contents;
  await mkdir(dirname(outfile), { recursive: true });
  await writeFile(outfile, bytes);
  await copyFile(SDK_LICENSE, join(dirname(outfile), 'LICENSE'));
  return bytes.length;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outfile = process.argv[2];
  if (!outfile) {
    console.error('usage: node www/mcp-sdk.mjs OUTFILE');
    process.exit(2);
  }
  writeMcpSdk(resolve(outfile)).then(
    (size) => console.log(`mcp-sdk: ${outfile} (${size} bytes)`),
    (err) => {
      console.error(`mcp-sdk: could not bundle the MCP SDK: ${err.message}`);
      process.exit(1);
    },
  );
}

// Bundles the worker (packages/draftsmith/src/worker.js) with the core's wasm-bindgen glue into
// one ES module with esbuild: the `worker.js` that pages start. A worker's start then loads one
// script instead of the worker's, then the glue's. The worker's first glue comes from
// `src/first-glue.js`, which imports the glue when run unbundled (the package's node tests run
// it so, beside a fake glue); the bundle has the glue in it instead. The bridges
// (`local-model.js`, `mcp-client.js`) stay modules of their own, imported on first use, and
// the glue stays in `pkg/` too, for the fresh instance a core gets after a panic.
//
//   node www/worker-bundle.mjs OUTFILE GLUE   writes the bundle of the glue GLUE (scripts/package.sh)
//   bundleWorker(glue)                        resolves to the bundle's text (the dev server)
import { build } from 'esbuild';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The worker's source. */
export const WORKER_SOURCE = fileURLToPath(new URL('../packages/draftsmith/src/worker.js', import.meta.url));
/** The source of its first glue, replaced in the bundle. */
export const FIRST_GLUE_SOURCE = fileURLToPath(new URL('../packages/draftsmith/src/first-glue.js', import.meta.url));

/**
 * The glue at `glue` (a path) bundled in: `src/first-glue.js` becomes its static import, and
 * the glue's own URL of its wasm is made relative to the bundle.
 */
function glueBundled(glue) {
  return {
    name: 'glue',
    setup(build) {
      build.onLoad({ filter: /[\\/]first-glue\.js$/ }, (args) => {
        if (resolve(args.path) !== FIRST_GLUE_SOURCE) return undefined;
        return {
          contents: `import * as glue from ${JSON.stringify(glue)};\nexport const firstGlue = Promise.resolve(glue);\n`,
          loader: 'js',
          resolveDir: dirname(glue),
        };
      });
      // The glue's own URL of the wasm (used when it is given none, which the worker never
      // does) is relative to the glue, in `pkg/`: in the bundle, beside `pkg/`, it is made
      // relative to the bundle, so that it still names the file and bundlers that follow
      // `new URL(…, import.meta.url)` (Vite) find it.
      build.onLoad({ filter: /\.js$/ }, async (args) => {
        if (resolve(args.path) !== glue) return undefined;
        const text = await readFile(glue, 'utf8');
        const name = `${basename(glue, '.js')}_bg.wasm`;
        const own = `new URL('${name}', import.meta.url)`;
        if (text.split(own).length !== 2) throw new Error(`${glue} does not name its wasm as ${own} once`);
        return { contents: text.replace(own, `new URL('./pkg/${name}', import.meta.url)`), loader: 'js' };
      });
    },
  };
}

function options(glue) {
  return {
    entryPoints: [WORKER_SOURCE],
    // Paths in the bundle's comments are the repository's, wherever it is made from.
    absWorkingDir: fileURLToPath(new URL('..', import.meta.url)),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    // The bridges, loaded on first use, beside the bundle.
    external: ['./local-model.js', './mcp-client.js'],
    plugins: [glueBundled(resolve(glue))],
    legalComments: 'eof',
    logLevel: 'warning',
    write: false,
  };
}

/** The bundle's text, with the glue at `glue` (a path). */
export async function bundleWorker(glue) {
  const result = await build(options(glue));
  return result.outputFiles[0].text;
}

/** Write the bundle with the glue at `glue` to `outfile`; resolves to its size in bytes. */
export async function writeWorker(outfile, glue) {
  const text = await bundleWorker(glue);
  await mkdir(dirname(outfile), { recursive: true });
  await writeFile(outfile, text);
  return Buffer.byteLength(text);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [outfile, glue] = process.argv.slice(2);
  if (!outfile || !glue) {
    console.error('usage: node www/worker-bundle.mjs OUTFILE GLUE');
    process.exit(2);
  }
  writeWorker(resolve(outfile), glue).then(
    (size) => console.log(`worker-bundle: ${outfile} (${size} bytes)`),
    (err) => {
      console.error(`worker-bundle: could not bundle the worker: ${err.message}`);
      process.exit(1);
    },
  );
}

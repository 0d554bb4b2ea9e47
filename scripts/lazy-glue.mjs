// Teaches wasm-bindgen's JS glue to load the release's second module, draftsmith_lazy.wasm
// (scripts/split-wasm.mjs). The main module imports `s.l`, which its stubs call the first
// time a moved function runs: it instantiates the second module against the main one's
// exports (memory, tables, globals, functions) and sets the main module's `split_loaded`.
// `lazy_preload` loads it ahead, in the background (the worker calls it once the core is
// ready); when a moved function runs before that has finished, the stub's call fetches it
// then and there with a synchronous request and compiles it synchronously, which a worker
// (where the core runs) may do at any size. A page's main thread may do neither: there,
// `await lazy_preload()` before anything that needs the second module.
// Exported beside wasm-bindgen's own:
//   set_lazy_url(url)  where the second module is (default: draftsmith_lazy.wasm beside the glue)
//   lazy_preload()     fetch, compile and instantiate it now (a promise; never rejects)
//   lazy_loaded()      whether it is instantiated
// A failure to load it throws `draftsmith: could not load draftsmith_lazy.wasm: …` through
// the wasm call that needed it: the core instance is then unusable, and the worker starts a
// fresh one (as after a panic).
//   node scripts/lazy-glue.mjs <pkg dir>
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node scripts/lazy-glue.mjs <pkg dir>');
  process.exit(2);
}
const path = join(dir, 'draftsmith.js');
let glue = readFileSync(path, 'utf8');
const fail = (why) => {
  console.error(`lazy-glue: ${why}`);
  process.exit(1);
};

const imports = '        w: import0,\n';
if (glue.split(imports).length !== 2) fail('the glue does not name the import module "w" once (run minify-imports first)');
glue = glue.replace(imports, `${imports}        s: { l: __wbg_lazy_load },\n`);

const exports = 'export { initSync, __wbg_init as default };';
if (glue.split(exports).length !== 2) fail("the glue's last line is not wasm-bindgen's export list");
glue = glue.replace(
  exports,
  `let lazyUrl = new URL('draftsmith_lazy.wasm', import.meta.url);
let lazyInstance = null;
let lazyFetch = null;

export function set_lazy_url(url) {
    lazyUrl = url;
}

export function lazy_preload() {
    if (lazyInstance) return Promise.resolve();
    if (!lazyFetch) {
        lazyFetch = fetch(lazyUrl)
            .then((response) => {
                if (!response.ok) throw new Error(\`\${response.status} \${response.statusText}\`);
                return response.arrayBuffer();
            })
            .then((bytes) => WebAssembly.compile(bytes))
            .then((module) => lazyInstance ?? WebAssembly.instantiate(module, { p: wasm }))
            .then(lazyLoaded, () => { lazyFetch = null; });
    }
    return lazyFetch;
}

export function lazy_loaded() {
    return lazyInstance !== null;
}

function lazyLoaded(instance) {
    if (lazyInstance) return;
    lazyInstance = instance;
    wasm.split_loaded.value = 1;
}

function lazyBytes() {
    if (typeof XMLHttpRequest === 'function') {
        if (typeof document !== 'undefined') {
            throw new Error('a page cannot fetch it synchronously: await lazy_preload() before using agents, tools or providers there');
        }
        const request = new XMLHttpRequest();
        request.open('GET', String(lazyUrl), false);
        request.responseType = 'arraybuffer';
        request.send();
        if (request.status !== 200 && request.status !== 0) throw new Error(\`\${request.status} \${request.statusText}\`);
        return request.response;
    }
    return globalThis.process.getBuiltinModule('node:fs').readFileSync(new URL(lazyUrl));
}

function __wbg_lazy_load() {
    if (lazyInstance) return;
    try {
        lazyLoaded(new WebAssembly.Instance(new WebAssembly.Module(lazyBytes()), { p: wasm }));
    } catch (e) {
        throw new Error(\`draftsmith: could not load draftsmith_lazy.wasm: \${e && e.message || e}\`);
    }
}

${exports}`,
);
writeFileSync(path, glue);
const types = join(dir, 'draftsmith.d.ts');
writeFileSync(types, `${readFileSync(types, 'utf8')}
/** Where the second module is (default: draftsmith_lazy.wasm beside the glue); set it before init. */
export function set_lazy_url(url: string | URL): void;
/** Fetches, compiles and instantiates the second module now; never rejects (lazy_loaded() tells). */
export function lazy_preload(): Promise<void>;
/** Whether the second module is instantiated (an agent, a tool or a model provider has run). */
export function lazy_loaded(): boolean;
`);
console.log('lazy-glue: the glue loads draftsmith_lazy.wasm');

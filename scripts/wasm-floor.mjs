// Prints how much of the shipped wasm is the crate's own, after wasm-opt: the release
// pipeline's module with its function names kept (`wasm-opt -g`, same passes, same code bytes
// as the shipped one). Functions are split into the crate's (any function whose name names the
// crate: its own functions, its trait impls, and std's generics instantiated on its types) and
// everything else (std's own code, regex_lite, serde_json, hashbrown, wasm-bindgen, js-sys);
// each part's bodies are gzipped alone, in name order (near the shipped stem order), and so are
// the data section and the crate's part with the data. That last number is what the wasm
// would weigh if every function that is not the crate's weighed nothing: a floor that only
// smaller code of the crate's own, or fewer features, goes below. Then the crate's functions by
// module (std's generics on a type count in the type's module), each gzipped alone. "gzip -9"
// here is node's zlib at level 9, within 1 % of gzip -9's own output.
//   node scripts/wasm-floor.mjs <named-optimized.wasm> [top]
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { readModule, moduleOf } from './wasm-bytes.mjs';

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/wasm-floor.mjs <named-optimized.wasm> [top]');
  process.exit(2);
}
const { imported, names, bodies, data } = readModule(readFileSync(file));
if (!names.size) {
  console.error(`${file} has no function names: build it with wasm-opt -g`);
  process.exit(1);
}

// A name may be mangled (`10draftsmith`) or demangled: either way it holds the crate name.
const ours = (name) => /draftsmith/.test(name);
const fns = bodies
  .map((body, i) => ({ name: names.get(imported + i) ?? '', body }))
  .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
const gz = (bufs) => gzipSync(Buffer.concat(bufs), { level: 9 }).length;
const kb = (n) => `${(n / 1024).toFixed(1)} KB`.padStart(10);
const part = (label, list, gzipped = gz(list.map((f) => f.body))) => {
  const raw = list.reduce((a, f) => a + f.body.length, 0);
  console.log(`  ${label.padEnd(44)} ${String(list.length).padStart(5)} fns ${kb(raw)} ${kb(gzipped)}`);
};
const own = fns.filter((f) => ours(f.name));
const rest = fns.filter((f) => !ours(f.name));
console.log(`\nafter wasm-opt (the release passes, names kept), each part gzip -9 alone:`);
console.log(`  ${''.padEnd(44)} ${''.padStart(9)} ${'raw'.padStart(10)} ${'gzip -9'.padStart(10)}`);
part("the crate's functions (and std's on its types)", own);
part('everything else', rest);
part('all code', fns);
console.log(`  ${'data'.padEnd(44)} ${''.padStart(9)} ${kb(data.length)} ${kb(gz([data]))}`);
const floor = gz([...own.map((f) => f.body), data]);
console.log(`  ${"the crate's functions and the data".padEnd(44)} ${''.padStart(9)} ${''.padStart(10)} ${kb(floor)}`);
console.log(`  (what the wasm would weigh, gzip -9, if nothing else weighed anything)`);

// The crate's functions by module (as wasm-breakdown.mjs groups the cargo build's), each
// module's gzipped alone: which features weigh what in the shipped gzip.
const top = Number(topArg ?? 15);
const byModule = new Map();
for (const f of own) {
  const key = moduleOf(f.name) ?? '(crate root)';
  if (!byModule.has(key)) byModule.set(key, []);
  byModule.get(key).push(f);
}
const modules = [...byModule].map(([key, list]) => ({ key, list, gzipped: gz(list.map((f) => f.body)) }));
console.log(`\nthe crate's functions by module after wasm-opt, gzip -9 alone:`);
for (const { key, list, gzipped } of modules.sort((a, b) => b.gzipped - a.gzipped).slice(0, top)) {
  part(key, list, gzipped);
}

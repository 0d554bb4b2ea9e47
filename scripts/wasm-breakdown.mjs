// Prints where a wasm module's bytes go: its sections, then its code by crate and its largest
// functions, from the function names of the module's `name` section (the cargo build's wasm,
// before wasm-bindgen and wasm-opt strip the names). Sizes are of function bodies before
// wasm-opt, so they rank what to cut rather than add up to the shipped size.
//   node scripts/wasm-breakdown.mjs <file.wasm> [top]
import { readFileSync } from 'node:fs';
import { readModule, moduleOf } from './wasm-bytes.mjs';

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/wasm-breakdown.mjs <file.wasm> [top]');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const bytes = readFileSync(file);
const module = readModule(bytes);
const SECTIONS = ['custom', 'type', 'import', 'function', 'table', 'memory', 'global', 'export', 'start', 'element', 'code', 'data', 'data count'];
const sections = module.sections.map((s) => ({
  label: s.id === 0 ? `custom "${s.name}"` : SECTIONS[s.id] ?? `section ${s.id}`,
  size: s.size,
}));
const { names } = module;
const bodies = module.bodies.map((body, i) => ({ index: module.imported + i, size: body.length }));

/** A Rust symbol demangled enough to group it: legacy `_ZN...E` paths and readable names. */
function demangle(name) {
  if (name.startsWith('_ZN')) {
    const parts = [];
    let i = 3;
    while (i < name.length && name[i] !== 'E') {
      let j = i;
      while (/[0-9]/.test(name[j])) j++;
      const n = Number(name.slice(i, j));
      if (!n) break;
      parts.push(name.slice(j, j + n));
      i = j + n;
    }
    if (parts.length && /^h[0-9a-f]{16}$/.test(parts.at(-1))) parts.pop();
    return parts.join('::').replace(/\$LT\$/g, '<').replace(/\$GT\$/g, '>').replace(/\$u20\$/g, ' ')
      .replace(/\$RF\$/g, '&').replace(/\$C\$/g, ',').replace(/\.\./g, '::').replace(/\$u7b\$/g, '{').replace(/\$u7d\$/g, '}');
  }
  return name;
}

/** The crate a function belongs to: the first path segment, looking inside `<T as Trait>`. */
function crateOf(name) {
  // v0 mangling (`_R...`): the first crate root (`C`, an optional disambiguator, the name).
  const v0 = name.startsWith('_R') && name.match(/C(?:s[0-9A-Za-z_]*_)?(\d+)([A-Za-z_][A-Za-z0-9_]*)/);
  if (v0) return v0[2].slice(0, Number(v0[1]));
  let n = name.replace(/^_?<+/, '').replace(/^&(mut )?/, '').replace(/^dyn /, '');
  const m = n.match(/^([A-Za-z_][A-Za-z0-9_]*)::/);
  if (m) return m[1];
  if (/^[a-z_][a-z0-9_]*$/.test(n)) return '(exported or C)';
  return '(other)';
}

const kb = (n) => `${(n / 1024).toFixed(1)} KB`.padStart(10);
console.log(`${file}: ${kb(bytes.length)}`);
for (const s of sections) console.log(`  ${s.label.padEnd(36)} ${kb(s.size)}`);
const code = bodies.reduce((a, b) => a + b.size, 0);
const byCrate = new Map();
const fns = bodies.map((b) => {
  const name = demangle(names.get(b.index) ?? `func[${b.index}]`);
  const crate = crateOf(name);
  byCrate.set(crate, (byCrate.get(crate) ?? 0) + b.size);
  return { name, size: b.size };
});
console.log(`\ncode by crate (${bodies.length} functions, ${kb(code).trim()}):`);
for (const [crate, size] of [...byCrate].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`  ${crate.padEnd(36)} ${kb(size)} ${(100 * size / code).toFixed(1).padStart(5)} %`);
}
// The crate's own code by module (two levels: `tools::bible`, `core::jobs`), which ranks
// features rather than functions. Generic code of std instantiated on the crate's types is
// counted under alloc and core above (legacy symbol names do not name the types).
const byModule = new Map();
for (const f of fns) {
  const key = crateOf(f.name) === 'draftsmith' && moduleOf(f.name);
  if (key) byModule.set(key, (byModule.get(key) ?? 0) + f.size);
}
const own = [...byModule.values()].reduce((a, b) => a + b, 0);
console.log(`\ndraftsmith by module (${kb(own).trim()}):`);
for (const [module, size] of [...byModule].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`  ${module.padEnd(36)} ${kb(size)} ${(100 * size / own).toFixed(1).padStart(5)} %`);
}
console.log(`\nlargest functions:`);
for (const f of fns.sort((a, b) => b.size - a.size).slice(0, top)) {
  console.log(`  ${kb(f.size)}  ${f.name.slice(0, 110)}`);
}

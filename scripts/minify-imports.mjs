// Shortens the names of the wasm's imports, in the wasm and in wasm-bindgen's JS glue alike.
// wasm-bindgen names each import after the Rust function with a hash
// (`__wbg_call_a410eb4b59ed5965`) and puts them all in module "./draftsmith_bg.js"; the hashes
// are text gzip cannot shrink. Here every import becomes `a`, `b` … `ba` … in module "w".
// The glue defines each import once, as a key of the object `__wbg_get_imports` returns, and
// names the module once; both are rewritten, and the run fails if any name is not found
// exactly once, so a change in wasm-bindgen's output cannot slip through.
//   node scripts/minify-imports.mjs <dir with draftsmith_bg.wasm and draftsmith.js>
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Reader, leb128, withLength } from './wasm-bytes.mjs';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node scripts/minify-imports.mjs <pkg dir>');
  process.exit(2);
}
const wasmPath = join(dir, 'draftsmith_bg.wasm');
const gluePath = join(dir, 'draftsmith.js');
const bytes = readFileSync(wasmPath);
let glue = readFileSync(gluePath, 'utf8');
const MODULE = './draftsmith_bg.js';

const r = new Reader(bytes);
const name = (s) => withLength(Buffer.from(s, 'utf8'));
/** The n-th short name: a … z, ba … zz, baa … (no name starts with `a` after the first). */
const short = (n) => {
  let s = '';
  do {
    s = String.fromCharCode(97 + (n % 26)) + s;
    n = Math.floor(n / 26);
  } while (n);
  return s;
};
const fail = (why) => {
  console.error(`minify-imports: ${why}`);
  process.exit(1);
};

const out = [bytes.subarray(0, 8)];
const renames = [];
while (r.pos < bytes.length) {
  const start = r.pos;
  const id = bytes[r.pos++];
  const size = r.leb();
  const end = r.pos + size;
  if (id !== 2) {
    out.push(bytes.subarray(start, end));
    r.pos = end;
    continue;
  }
  const count = r.leb();
  const entries = [leb128(count)];
  for (let i = 0; i < count; i++) {
    const module = r.str();
    const field = r.str();
    const descStart = r.pos;
    r.importDesc();
    const desc = bytes.subarray(descStart, r.pos);
    if (module === MODULE) {
      const to = short(renames.length);
      renames.push([field, to]);
      entries.push(name('w'), name(to), desc);
    } else {
      entries.push(name(module), name(field), desc);
    }
  }
  if (r.pos !== end) fail('the import section did not parse to its end');
  const body = Buffer.concat(entries);
  out.push(Buffer.from([2]), leb128(body.length), body);
}
if (renames.length === 0) fail(`no imports from "${MODULE}" (already minified?)`);

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
for (const [from, to] of renames) {
  // Each import is one key of the imports object: `        name: function`.
  const key = new RegExp(`^(\\s+)${escape(from)}:`, 'gm');
  const hits = glue.match(key)?.length ?? 0;
  if (hits !== 1) fail(`import ${from} is defined ${hits} times in the glue, not once`);
  glue = glue.replace(key, `$1${to}:`);
}
const moduleKey = `"${MODULE}": import0,`;
if (glue.split(moduleKey).length !== 2) fail(`the glue does not name module "${MODULE}" once`);
glue = glue.replace(moduleKey, 'w: import0,');
writeFileSync(wasmPath, Buffer.concat(out));
writeFileSync(gluePath, glue);
console.log(`minify-imports: ${renames.length} imports renamed`);

// Splits the release wasm in two: the functions the editor needs stay in the main module, and
// the rest (agents, tools, model providers, research, jobs …: the functions whose names match
// the pattern) move to a second module that is loaded the first time one of them runs.
//
// In the main module each moved function keeps its index, type and every reference to it, but
// its body becomes a stub: if the second module is not loaded yet, call the import `s.l` (the
// loader, in the JS glue: see scripts/lazy-glue.mjs), then call the real function through the
// table `split`, with the same arguments. The second module imports the main module's memory,
// tables, globals and the functions its code calls (exported from the main module under short
// names), defines the moved functions, and fills the table `split` with them when it is
// instantiated; the loader then sets the main module's exported global `split_loaded` to 1.
//   node scripts/split-wasm.mjs <named.wasm> <main.wasm> <lazy.wasm> <pattern>
// The input must have function names (`wasm-opt -g`); the outputs have none, unless
// SPLIT_KEEP_NAMES is set (for reading a stack trace: which stub loaded the second module).
import { readFileSync, writeFileSync } from 'node:fs';
import binaryen from '../www/node_modules/binaryen/index.js';
import { readModule } from './wasm-bytes.mjs';

const [input, mainOut, lazyOut, pattern] = process.argv.slice(2);
if (!input || !mainOut || !lazyOut || !pattern) {
  console.error('usage: node scripts/split-wasm.mjs <named.wasm> <main.wasm> <lazy.wasm> <pattern>');
  process.exit(2);
}
const fail = (why) => {
  console.error(`split-wasm: ${why}`);
  process.exit(1);
};

// binaryen throws a C++ exception (a bare pointer to JS) when validation meets a dangling name.
const validates = (module) => {
  try {
    return module.validate();
  } catch (e) {
    fail(binaryen.getExceptionMessage(e).join(': '));
  }
};

binaryen.setDebugInfo(Boolean(process.env.SPLIT_KEEP_NAMES));
binaryen.setOptimizeLevel(2);
binaryen.setShrinkLevel(2);
const bytes = readFileSync(input);
const matches = new RegExp(pattern);

// The main module with the matching functions' bodies replaced by stubs (below), and then
// without whatever it no longer reaches: the functions only moved code calls move too.
const main = binaryen.readBinary(bytes);
const features = main.getFeatures();
// A module's functions (imports have a `module`), and those it defines.
const functions = (module) =>
  Array.from({ length: module.getNumFunctions() }, (_, i) => binaryen.getFunctionInfo(module.getFunctionByIndex(i)));
const defined = (module) => functions(module).filter((f) => !f.module);
const fns = defined(main);

// The main module's exports by what they export; more are added for the second module.
const exportName = new Map(); // internal name of a main module's element -> its export name
for (let i = 0; i < main.getNumExports(); i++) {
  const e = binaryen.getExportInfo(main.getExportByIndex(i));
  exportName.set(`${e.kind}:${e.value}`, e.name);
}
let exportCount = 0;
const exportOf = (kind, internal, add) => {
  const key = `${kind}:${internal}`;
  if (!exportName.has(key)) {
    const name = `$${(exportCount++).toString(36)}`;
    add(internal, name);
    exportName.set(key, name);
  }
  return exportName.get(key);
};

// Every table is exported before the main module is pruned: binaryen empties a function that a
// table holds but no call_indirect of its type in the module calls (`unreachable`), and some
// of those calls are the moved code's. An exported table's functions may be called from
// outside, so they keep their bodies (and the second module imports the tables anyway).
for (let i = 0; i < main.getNumTables(); i++) {
  const name = binaryen.getTableInfo(main.getTableByIndex(i)).name;
  exportOf(binaryen.ExternalTable, name, (internal, as) => main.addTableExport(internal, as));
}
// Names are `<rank> <original name>` (scripts/order-functions.mjs): the pattern sees the original.
const original = (name) => name.replace(/^f\d+ /, '');
// A function smaller than MIN_BODY bytes keeps its body: a stub is about 20 bytes, so moving
// it saves little, and wasm-opt has often merged it with identical code elsewhere under one
// name (a two-line helper of the agents may be the editor's too), which would make the editor
// load the second module for nothing. Smaller functions only moved code calls move anyway.
const MIN_BODY = 64;
const { imported, names, bodies } = readModule(bytes);
const bodySize = new Map(bodies.map((body, i) => [names.get(imported + i), body.length]));
const stubbed = fns.filter((f) => matches.test(original(f.name)) && (bodySize.get(f.name) ?? 0) >= MIN_BODY);
if (!stubbed.length) fail(`no function matches ${pattern}`);
const SPLIT = 'split';
main.addGlobal('split_loaded', binaryen.i32, true, main.i32.const(0));
main.addGlobalExport('split_loaded', 'split_loaded');
main.addFunctionImport('split_load', 's', 'l', binaryen.none, binaryen.none);
main.addTable(SPLIT, stubbed.length, stubbed.length);
main.addTableExport(SPLIT, 'split');
stubbed.forEach((f, slot) => {
  const params = binaryen.expandType(f.params);
  const body = main.block(null, [
    main.if(main.i32.eqz(main.global.get('split_loaded', binaryen.i32)), main.call('split_load', [], binaryen.none)),
    main.call_indirect(SPLIT, main.i32.const(slot), params.map((t, i) => main.local.get(i, t)), f.params, f.results),
  ], f.results);
  main.removeFunction(f.name);
  main.addFunction(f.name, f.params, f.results, [], body);
});
main.runPasses(['remove-unused-module-elements']);
const present = new Set(functions(main).map((f) => f.name));
const kept = new Set(defined(main).map((f) => f.name));
const stubs = new Set(stubbed.map((f) => f.name));
// The moved functions' bodies come from a second reading of the input (the main module's are gone).
const source = binaryen.readBinary(bytes);
const moved = defined(source).filter((f) => stubs.has(f.name) || !kept.has(f.name));
// No function the main module keeps may have lost its body to the pruning (see the tables above).
const trap = (f) => binaryen.getExpressionId(f.body) === binaryen.UnreachableId;
const trapsBefore = new Set(defined(source).filter(trap).map((f) => f.name));
const emptied = defined(main).filter((f) => trap(f) && !trapsBefore.has(f.name));
if (emptied.length) fail(`the pruning emptied ${emptied.length} functions, as ${emptied[0].name}`);
const movedNames = new Set(moved.map((f) => f.name));

// The second module: the main module's memory, tables and globals, imported under their own
// internal names (so copied code needs no renaming); every function of the main module that is
// not moved, imported too; those the moved code never calls are dropped below.
const lazy = new binaryen.Module();
lazy.setFeatures(features);
const memory = source.getMemoryInfo();
lazy.setMemory(memory.initial, memory.max ?? -1, null, [], memory.shared, memory.is64, '0');
lazy.addMemoryImport('0', 'p', exportOf(binaryen.ExternalMemory, '0', (i, n) => main.addMemoryExport(i, n)));
for (let i = 0; i < source.getNumTables(); i++) {
  const ref = source.getTableByIndex(i);
  const t = binaryen.getTableInfo(ref);
  lazy.addTable(t.name, t.initial, t.max ?? -1, binaryen._BinaryenTableGetType(ref));
  lazy.addTableImport(t.name, 'p', `t:${t.name}`);
}
const globals = [];
for (let i = 0; i < source.getNumGlobals(); i++) globals.push(binaryen.getGlobalInfo(source.getGlobalByIndex(i)));
for (const g of globals) lazy.addGlobalImport(g.name, 'p', `g:${g.name}`, g.type, g.mutable);
for (const f of functions(source)) {
  if (!movedNames.has(f.name)) lazy.addFunctionImport(f.name, 'p', `f:${f.name}`, f.params, f.results);
}
for (const f of moved) {
  lazy.addFunction(f.name, f.params, f.results, f.vars, lazy.copyExpression(f.body));
}

// The table the stubs call through, filled by the second module.
lazy.addTable(SPLIT, stubbed.length, stubbed.length);
lazy.addTableImport(SPLIT, 'p', 'split');
lazy.addActiveElementSegment(SPLIT, 'e', stubbed.map((f) => f.name), lazy.i32.const(0));

// Whatever the moved code does not use goes (imports included); what is left of the imports
// the main module exports.
lazy.runPasses(['remove-unused-module-elements']);
if (!validates(lazy)) fail('the second module does not validate');

// The names the second module imports by: the main module's exports, added where missing.
const imports = { f: functions(lazy).filter((f) => f.module), g: [], t: [] };
for (let i = 0; i < lazy.getNumGlobals(); i++) {
  const g = binaryen.getGlobalInfo(lazy.getGlobalByIndex(i));
  if (g.module) imports.g.push(g);
}
for (let i = 0; i < lazy.getNumTables(); i++) {
  const t = binaryen.getTableInfo(lazy.getTableByIndex(i));
  if (t.module && t.name !== SPLIT) imports.t.push(t);
}
// A JS import that only moved code calls was dropped from the main module: it comes back, for
// the second module to call through the main module's export.
const sourceImports = new Map(functions(source).filter((f) => f.module).map((f) => [f.name, f]));
for (const f of imports.f) {
  if (!present.has(f.name)) {
    const js = sourceImports.get(f.name) ?? fail(`${f.name} is neither kept nor moved`);
    main.addFunctionImport(f.name, js.module, js.base, js.params, js.results);
  }
  const name = exportOf(binaryen.ExternalFunction, f.name, (i, n) => main.addFunctionExport(i, n));
  lazy.addFunctionImport(f.name, 'p', name, f.params, f.results);
}
for (const g of imports.g) {
  const name = exportOf(binaryen.ExternalGlobal, g.name, (i, n) => main.addGlobalExport(i, n));
  lazy.addGlobalImport(g.name, 'p', name, g.type, g.mutable);
}
for (const t of imports.t) {
  lazy.addTableImport(t.name, 'p', exportOf(binaryen.ExternalTable, t.name, (i, n) => main.addTableExport(i, n)));
}

if (!validates(main)) fail('the main module does not validate');
writeFileSync(mainOut, main.emitBinary());
writeFileSync(lazyOut, lazy.emitBinary());
console.log(`split-wasm: ${moved.length} of ${fns.length} functions moved (${stubbed.length} with a stub); the second module imports ${imports.f.length} functions, ${imports.g.length} globals, ${imports.t.length} tables`);

// The pieces of the wasm binary format that the size scripts read and write
// (scripts/wasm-breakdown.mjs, wasm-floor.mjs, order-functions.mjs, minify-imports.mjs).

/** A reader over a module's bytes, starting just after the 8-byte header. */
export class Reader {
  constructor(bytes) {
    this.bytes = bytes;
    this.pos = 8;
  }

  /** An unsigned LEB128 number. */
  leb() {
    let result = 0, shift = 0, b;
    do {
      b = this.bytes[this.pos++];
      result += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80);
    return result;
  }

  /** A name: its length, then its UTF-8 bytes. */
  str() {
    const n = this.leb();
    const s = this.bytes.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }

  /** Skip an import's descriptor (after its module and field names); returns its kind
   * (0 function, 1 table, 2 memory, 3 global, 4 tag). */
  importDesc() {
    const kind = this.bytes[this.pos++];
    if (kind === 0) this.leb();
    else if (kind === 1) { this.pos++; const flags = this.leb(); this.leb(); if (flags & 1) this.leb(); }
    else if (kind === 2) { const flags = this.leb(); this.leb(); if (flags & 1) this.leb(); }
    else if (kind === 3) this.pos += 2;
    else if (kind === 4) { this.pos++; this.leb(); }
    else throw new Error(`import kind ${kind} is not known`);
    return kind;
  }

  /** The rest of an import section (from its count): how many functions it imports. */
  functionImports() {
    let functions = 0;
    const count = this.leb();
    for (let i = 0; i < count; i++) {
      this.str();
      this.str();
      if (this.importDesc() === 0) functions++;
    }
    return functions;
  }

  /** The rest of a code section (from its count): each body's size by function index, the
   * first body being function `first` (the number of imported functions). */
  bodySizes(first) {
    const sizes = new Map();
    const count = this.leb();
    for (let i = 0; i < count; i++) {
      const n = this.leb();
      sizes.set(first + i, n);
      this.pos += n;
    }
    return sizes;
  }

  /** The rest of a code section (from its count): each function's body, in order. */
  bodies() {
    const bodies = [];
    const count = this.leb();
    for (let i = 0; i < count; i++) {
      const n = this.leb();
      bodies.push(this.bytes.subarray(this.pos, this.pos + n));
      this.pos += n;
    }
    return bodies;
  }

  /** The rest of a `name` section (after its title), up to `end`: the function names by
   * index. */
  functionNames(end) {
    const names = new Map();
    while (this.pos < end) {
      const sub = this.bytes[this.pos++];
      const subEnd = this.leb() + this.pos;
      if (sub === 1) {
        const count = this.leb();
        for (let i = 0; i < count; i++) names.set(this.leb(), this.str());
      }
      this.pos = subEnd;
    }
    return names;
  }
}

/** `n` as unsigned LEB128. */
export function leb128(n) {
  const out = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return Buffer.from(out);
}

/** `buf` after its length, as the format writes names and sections. */
export function withLength(buf) {
  return Buffer.concat([leb128(buf.length), buf]);
}

/** A `name` section (with its section id and length) naming functions: `names` is a list of
 * [function index, name] pairs in index order. */
export function nameSection(names) {
  const entries = names.map(([index, name]) => Buffer.concat([leb128(index), withLength(Buffer.from(name, 'utf8'))]));
  const functionNames = Buffer.concat([leb128(names.length), ...entries]);
  const payload = Buffer.concat([withLength(Buffer.from('name', 'utf8')), Buffer.from([1]), withLength(functionNames)]);
  return Buffer.concat([Buffer.from([0]), withLength(payload)]);
}

/** What the size reports read of a module: its sections in order (`{id, size}`, and `name`
 * for a custom one), how many functions it imports, the function names by index (from a
 * `name` section), each function body in order (body `i` is function `imported + i`), and the
 * data section's bytes. */
export function readModule(bytes) {
  const r = new Reader(bytes);
  const module = { sections: [], imported: 0, names: new Map(), bodies: [], data: Buffer.alloc(0) };
  while (r.pos < bytes.length) {
    const id = bytes[r.pos++];
    const size = r.leb();
    const end = r.pos + size;
    const section = { id, size };
    if (id === 0) {
      section.name = r.str();
      if (section.name === 'name') module.names = r.functionNames(end);
    } else if (id === 2) module.imported = r.functionImports();
    else if (id === 10) module.bodies = r.bodies();
    else if (id === 11) module.data = bytes.subarray(r.pos, end);
    module.sections.push(section);
    r.pos = end;
  }
  return module;
}

/** The crate's module a readable function name names, two levels deep (`tools::bible`,
 * `core::jobs`; `(crate root)` for the crate's top level), or null when it names none. */
export function moduleOf(name) {
  const m = name.match(/draftsmith::((?:[a-z_][a-z0-9_]*::)*)/);
  if (!m) return null;
  return m[1].split('::').filter(Boolean).slice(0, 2).join('::') || '(crate root)';
}

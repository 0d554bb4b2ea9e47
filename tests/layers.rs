//! The crate's layers point down, checked over its sources.
//!
//! Every file under `src/` is parsed with `syn` (test-only code, `#[cfg(test)]`, is skipped) and
//! every reference to another module of the crate is collected: `use` trees (including
//! `pub use` re-exports), inline `crate::`, `super::` and `self::` paths, paths through a
//! declared child module, and such paths inside macro invocations. `super::` and `self::` are
//! resolved to the module they name; a name the crate root re-exports (`crate::Error`) is
//! resolved to the module it comes from.
//!
//! The check fails when
//! - a top-level module names a module in a higher layer of [`LAYERS`], or top-level modules
//!   of one layer name each other in a cycle (any other cycle takes an upward reference);
//! - inside one top-level module, file modules name each other in a cycle. A module and its own
//!   parent or children are one unit here (a parent declares and re-exports its children, which
//!   use the parent's shared types), so only references between modules where neither contains
//!   the other form edges.
//!
//! Each failure names the file, the line and both modules.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::visit::{self, Visit};

/// The layers, from the bottom. A module may name modules of its own layer and of the layers
/// below; naming a module of a higher layer fails the check. Every top-level module of the
/// crate is in exactly one layer. `docs/architecture.md` shows the same list.
const LAYERS: &[&[&str]] = &[
    // 1. Foundations: errors, names, the injected environment, the manuscript, the store,
    //    the MCP servers' seam.
    &[
        "error", "names", "env", "provider", "project", "store", "mcp",
    ],
    // 2. What a project holds.
    &[
        "commands",
        "bible",
        "memory",
        "files",
        "research",
        "editor_context",
    ],
    // 3. Approvals.
    &["policy"],
    // 4. The one edit path, and sessions to and from records.
    &["session", "persist", "replica"],
    // 5. The tools agents call.
    &["tools"],
    // 6. Model calls.
    &["llm"],
    // 7. Agents and the model settings.
    &["agent", "settings"],
    // 8. The core and its message protocol.
    &["core", "protocol"],
    // 9. Entry points: the worker (wasm32) and the native JSON-lines core.
    &["web", "headless"],
];

#[test]
fn layers_point_down_and_files_form_no_cycles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    collect_files(&root, &root, &mut files);
    let sources: Vec<(String, String)> = files
        .into_iter()
        .map(|rel| {
            let text = std::fs::read_to_string(root.join(&rel)).unwrap();
            (rel, text)
        })
        .collect();
    let borrowed: Vec<(&str, &str)> = sources
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let problems = check(&borrowed, LAYERS);
    assert!(
        problems.is_empty(),
        "layer check: {} problem(s)\n{}",
        problems.len(),
        problems.join("\n")
    );
}

fn collect_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_files(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).unwrap();
            let rel: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push(rel.join("/"));
        }
    }
}

/// One reference from a file to a path of the crate, resolved to absolute segments.
struct Reference {
    file: String,
    line: usize,
    from: Vec<String>,
    target: Vec<String>,
}

/// Checks `files` (paths relative to `src/`, and their text) against `layers`; returns one
/// line per problem, empty when the layers point down and nothing forms a cycle.
fn check(files: &[(&str, &str)], layers: &[&[&str]]) -> Vec<String> {
    let mut problems = Vec::new();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|(p, _)| module_of(p)).collect();
    let mut reexports: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut references = Vec::new();
    for (path, text) in files {
        let module = module_of(path);
        let file = match syn::parse_file(text) {
            Ok(f) => f,
            Err(e) => {
                problems.push(format!("src/{path}: does not parse: {e}"));
                continue;
            }
        };
        if module.is_empty() {
            for item in &file.items {
                if let syn::Item::Use(u) = item {
                    if matches!(u.vis, syn::Visibility::Public(_)) {
                        let mut paths = Vec::new();
                        use_paths(&u.tree, &mut Vec::new(), &mut paths);
                        for (segments, _) in paths {
                            if segments.first().is_some_and(|s| s == "crate") {
                                if let Some(name) = segments.last() {
                                    reexports.insert(name.clone(), segments[1..].to_vec());
                                }
                            }
                        }
                    }
                }
            }
            // The crate root declares and re-exports every module; it is above the layers.
            continue;
        }
        let mut collector = Collector {
            modules: &modules,
            base: module.clone(),
            found: Vec::new(),
        };
        collector.visit_file(&file);
        for (line, target) in collector.found {
            references.push(Reference {
                file: format!("src/{path}"),
                line,
                from: module.clone(),
                target,
            });
        }
    }

    let layer_of: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(i, names)| names.iter().map(move |n| (*n, i + 1)))
        .collect();
    let tops: BTreeSet<&str> = modules
        .iter()
        .filter_map(|m| m.first().map(String::as_str))
        .collect();
    for top in &tops {
        if !layer_of.contains_key(top) {
            problems.push(format!("module `{top}` is in no layer: add it to LAYERS"));
        }
    }
    for name in layer_of.keys() {
        if !tops.contains(name) {
            problems.push(format!(
                "LAYERS names `{name}`, which is not a module of src/"
            ));
        }
    }

    // Edges between file modules, each with its first reference.
    let mut edges: BTreeMap<(String, String), (String, usize, String)> = BTreeMap::new();
    for r in &references {
        let target = match file_module(&modules, &r.target) {
            Some(t) if !t.is_empty() => Some(t),
            // A name the crate root re-exports: the module it comes from.
            _ => r
                .target
                .first()
                .and_then(|name| reexports.get(name))
                .and_then(|path| file_module(&modules, path)),
        };
        let Some(target) = target else { continue };
        if target.is_empty() || target == r.from {
            continue;
        }
        edges
            .entry((r.from.join("::"), target.join("::")))
            .or_insert((r.file.clone(), r.line, shown(&r.target)));
    }

    // (a) Top-level modules: nothing points up. A cycle between them takes an upward edge
    // (reported here) or edges within one layer only (checked next).
    let mut same_layer: BTreeMap<(String, String), (String, usize, String)> = BTreeMap::new();
    for ((from, to), at) in &edges {
        let (ft, tt) = (top_of(from), top_of(to));
        if ft == tt {
            continue;
        }
        if let (Some(lf), Some(lt)) = (layer_of.get(ft.as_str()), layer_of.get(tt.as_str())) {
            if lt > lf {
                problems.push(format!(
                    "{}:{}: `{from}` (layer {lf}, {ft}) names `{to}` (layer {lt}, {tt}), \
                     a higher layer: {}",
                    at.0, at.1, at.2
                ));
            } else if lt == lf {
                same_layer.entry((ft, tt)).or_insert_with(|| at.clone());
            }
        }
    }
    report_cycles(&same_layer, "top-level modules of one layer", &mut problems);

    // (b) File modules inside one top-level module: no cycles.
    let mut inner: BTreeMap<(String, String), (String, usize, String)> = BTreeMap::new();
    for ((from, to), at) in &edges {
        if top_of(from) != top_of(to) || contains(from, to) || contains(to, from) {
            continue;
        }
        inner.insert((from.clone(), to.clone()), at.clone());
    }
    report_cycles(&inner, "file modules", &mut problems);
    problems
}

/// `true` when module `outer` contains module `inner` (or is it).
fn contains(outer: &str, inner: &str) -> bool {
    inner == outer || inner.starts_with(&format!("{outer}::"))
}

fn top_of(module: &str) -> String {
    module.split("::").next().unwrap_or_default().to_string()
}

fn shown(path: &[String]) -> String {
    format!("crate::{}", path.join("::"))
}

/// The module a file under `src/` defines: `llm/openai.rs` is `llm::openai`, `llm/mod.rs` is
/// `llm`, `lib.rs` is the crate root (no segments).
fn module_of(path: &str) -> Vec<String> {
    let mut parts: Vec<String> = path.split('/').map(str::to_string).collect();
    if let Some(last) = parts.last_mut() {
        *last = last.trim_end_matches(".rs").to_string();
    }
    if parts.last().is_some_and(|l| l == "mod") || parts == ["lib"] {
        parts.pop();
    }
    parts
}

/// The longest file module that is a prefix of `path` (the module a path names an item of).
fn file_module(modules: &BTreeSet<Vec<String>>, path: &[String]) -> Option<Vec<String>> {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|prefix| modules.contains(prefix))
}

/// Finds the cycles (strongly connected components of two or more nodes) of `edges` and
/// reports every edge inside each, with where it is made.
fn report_cycles(
    edges: &BTreeMap<(String, String), (String, usize, String)>,
    what: &str,
    problems: &mut Vec<String>,
) {
    let nodes: BTreeSet<&String> = edges.keys().flat_map(|(a, b)| [a, b]).collect();
    let reaches = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(n) = stack.pop() {
            for (a, b) in edges.keys() {
                if *a == n && seen.insert(b.clone()) {
                    stack.push(b.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&String, BTreeSet<String>> =
        nodes.iter().map(|n| (*n, reaches(n))).collect();
    let mut done = BTreeSet::new();
    for n in &nodes {
        if done.contains(*n) || !reach[n].contains(*n) {
            continue;
        }
        let component: BTreeSet<&String> = nodes
            .iter()
            .copied()
            .filter(|m| reach[n].contains(*m) && reach[m].contains(*n))
            .collect();
        let names: Vec<&str> = component.iter().map(|s| s.as_str()).collect();
        problems.push(format!("cycle between {what}: {}", names.join(", ")));
        for ((a, b), at) in edges {
            if component.contains(a) && component.contains(b) {
                problems.push(format!("  {}:{}: `{a}` names `{b}`: {}", at.0, at.1, at.2));
            }
        }
        done.extend(component.into_iter().cloned());
    }
}

/// Collects the crate paths one file names, outside test-only code.
struct Collector<'a> {
    modules: &'a BTreeSet<Vec<String>>,
    /// The module being visited: the file's module plus any inline modules around the visit.
    base: Vec<String>,
    found: Vec<(usize, Vec<String>)>,
}

impl Collector<'_> {
    /// Resolves a path written in the current module to absolute segments, or `None` when it
    /// names nothing of the crate's modules (a local item, a type parameter, another crate).
    fn resolve(&self, segments: &[String]) -> Option<Vec<String>> {
        let first = segments.first()?;
        match first.as_str() {
            "crate" => Some(segments[1..].to_vec()),
            "super" | "self" => {
                let mut base = self.base.clone();
                let mut rest = segments;
                while let Some(s) = rest.first() {
                    match s.as_str() {
                        "super" => {
                            base.pop()?;
                        }
                        "self" => {}
                        _ => break,
                    }
                    rest = &rest[1..];
                }
                base.extend(rest.iter().cloned());
                Some(base)
            }
            _ => {
                let mut child = self.base.clone();
                child.push(first.clone());
                self.modules.contains(&child).then(|| {
                    child.extend(segments[1..].iter().cloned());
                    child
                })
            }
        }
    }

    fn record(&mut self, span: Span, segments: &[String]) {
        if let Some(target) = self.resolve(segments) {
            self.found.push((span.start().line, target));
        }
    }
}

/// The paths a `use` tree brings in, each with the span of its first segment.
fn use_paths(
    tree: &syn::UseTree,
    prefix: &mut Vec<(String, Span)>,
    out: &mut Vec<(Vec<String>, Span)>,
) {
    let finish = |prefix: &[(String, Span)], last: Option<(String, Span)>, out: &mut Vec<_>| {
        let mut all: Vec<(String, Span)> = prefix.to_vec();
        all.extend(last);
        if let Some((_, span)) = all.first() {
            let span = *span;
            out.push((all.into_iter().map(|(s, _)| s).collect(), span));
        }
    };
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push((p.ident.to_string(), p.ident.span()));
            use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) if n.ident == "self" => finish(prefix, None, out),
        syn::UseTree::Name(n) => finish(prefix, Some((n.ident.to_string(), n.ident.span())), out),
        syn::UseTree::Rename(r) => finish(prefix, Some((r.ident.to_string(), r.ident.span())), out),
        syn::UseTree::Glob(_) => finish(prefix, None, out),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_paths(t, prefix, out);
            }
        }
    }
}

/// `true` for attributes that make an item test-only: `#[cfg(test)]`, `#[cfg(all(test, ..))]`.
fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta.require_list().is_ok_and(|l| {
                let t: String = l.tokens.to_string().split_whitespace().collect();
                t == "test" || t.starts_with("all(test,")
            })
    })
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item::*;
    match item {
        Const(i) => &i.attrs,
        Enum(i) => &i.attrs,
        ExternCrate(i) => &i.attrs,
        Fn(i) => &i.attrs,
        ForeignMod(i) => &i.attrs,
        Impl(i) => &i.attrs,
        Macro(i) => &i.attrs,
        Mod(i) => &i.attrs,
        Static(i) => &i.attrs,
        Struct(i) => &i.attrs,
        Trait(i) => &i.attrs,
        TraitAlias(i) => &i.attrs,
        Type(i) => &i.attrs,
        Union(i) => &i.attrs,
        Use(i) => &i.attrs,
        _ => &[],
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !test_only(item_attrs(item)) {
            visit::visit_item(self, item);
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        if let syn::ImplItem::Fn(f) = item {
            if test_only(&f.attrs) {
                return;
            }
        }
        visit::visit_impl_item(self, item);
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if item.content.is_some() {
            self.base.push(item.ident.to_string());
            visit::visit_item_mod(self, item);
            self.base.pop();
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let mut paths = Vec::new();
        use_paths(&item.tree, &mut Vec::new(), &mut paths);
        for (segments, span) in paths {
            self.record(span, &segments);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() {
            let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
            if let Some(first) = path.segments.first() {
                self.record(first.ident.span(), &segments);
            }
        }
        visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        let mut paths = Vec::new();
        macro_paths(mac.tokens.clone(), &mut paths);
        for (segments, span) in paths {
            self.record(span, &segments);
        }
    }
}

/// Paths that start with `crate`, `super` or `self` inside a macro's tokens (which `syn` does
/// not parse as Rust).
fn macro_paths(tokens: TokenStream, out: &mut Vec<(Vec<String>, Span)>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Group(g) => macro_paths(g.stream(), out),
            TokenTree::Ident(id) if id == "crate" || id == "super" || id == "self" => {
                let preceded_by_colons =
                    i >= 1 && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == ':');
                let mut segments = vec![id.to_string()];
                let mut j = i + 1;
                while j + 2 < tokens.len() {
                    let colons = matches!(&tokens[j], TokenTree::Punct(p) if p.as_char() == ':')
                        && matches!(&tokens[j + 1], TokenTree::Punct(p) if p.as_char() == ':');
                    match (colons, tokens.get(j + 2)) {
                        (true, Some(TokenTree::Ident(next))) => {
                            segments.push(next.to_string());
                            j += 3;
                        }
                        _ => break,
                    }
                }
                if !preceded_by_colons && segments.len() > 1 {
                    out.push((segments, id.span()));
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
}

#[cfg(test)]
mod parser {
    use super::check;

    const LAYERS: &[&[&str]] = &[&["low"], &["high"]];

    fn problems(files: &[(&str, &str)]) -> Vec<String> {
        check(files, LAYERS)
    }

    #[test]
    fn an_upward_import_is_reported_with_file_line_and_both_modules() {
        let p = problems(&[
            ("lib.rs", "pub mod low; pub mod high;"),
            ("low/mod.rs", "//! Low.\n\nuse crate::high::Thing;\n"),
            ("high.rs", "pub struct Thing;"),
        ]);
        assert!(
            p.iter()
                .any(|l| l.starts_with("src/low/mod.rs:3: `low` (layer 1, low) names `high`")),
            "{p:?}"
        );
    }

    #[test]
    fn downward_imports_pass() {
        let p = problems(&[
            ("lib.rs", ""),
            ("low.rs", "pub struct Thing;"),
            (
                "high.rs",
                "use crate::low::Thing;\nfn f() { crate::low::Thing; }",
            ),
        ]);
        assert!(p.is_empty(), "{p:?}");
    }

    #[test]
    fn inline_paths_grouped_uses_renames_and_macros_are_seen() {
        for body in [
            "fn f() { let _ = crate::high::Thing; }",
            "use crate::{x, high::{Thing as T}};",
            "fn f() -> String { format!(\"{}\", crate::high::NAME) }",
            "pub use crate::high::*;",
        ] {
            let p = problems(&[("lib.rs", ""), ("low.rs", body), ("high.rs", "")]);
            assert_eq!(p.len(), 1, "{body}: {p:?}");
        }
    }

    #[test]
    fn test_only_code_is_skipped() {
        let p = problems(&[
            ("lib.rs", ""),
            (
                "low.rs",
                "#[cfg(test)]\nmod tests { use crate::high::Thing; }\n\
                 #[cfg(all(test, not(target_arch = \"wasm32\")))]\nfn t() { crate::high::f(); }",
            ),
            ("high.rs", ""),
        ]);
        assert!(p.is_empty(), "{p:?}");
    }

    #[test]
    fn super_and_root_reexports_resolve_to_the_module_they_name() {
        let p = problems(&[
            ("lib.rs", "pub use crate::high::Thing;"),
            ("low/mod.rs", ""),
            ("low/a.rs", "use super::super::high::X;"),
            ("low/b.rs", "fn f() { let _ = crate::Thing; }"),
            ("high.rs", ""),
        ]);
        assert!(p.iter().any(|l| l.starts_with("src/low/a.rs:1:")), "{p:?}");
        assert!(p.iter().any(|l| l.starts_with("src/low/b.rs:1:")), "{p:?}");
    }

    #[test]
    fn a_cycle_between_sibling_files_is_reported_and_a_parent_is_not_one() {
        let files = [
            ("lib.rs", ""),
            ("low/mod.rs", "pub use self::a::A; pub struct Shared;"),
            (
                "low/a.rs",
                "use super::Shared; use super::b::B; pub struct A;",
            ),
            ("low/b.rs", "use super::a::A; pub struct B;"),
            ("high.rs", ""),
        ];
        let p = problems(&files);
        assert_eq!(p[0], "cycle between file modules: low::a, low::b", "{p:?}");
        assert!(p
            .iter()
            .any(|l| l.contains("src/low/a.rs:1: `low::a` names `low::b`")));
        assert!(p
            .iter()
            .any(|l| l.contains("src/low/b.rs:1: `low::b` names `low::a`")));
        assert_eq!(p.len(), 3, "{p:?}");
    }

    #[test]
    fn a_cycle_within_one_layer_is_reported() {
        let files = [
            ("lib.rs", ""),
            ("a.rs", "use crate::b::B; pub struct A;"),
            ("b.rs", "fn f() { let _ = crate::a::A; }"),
        ];
        let p = check(&files, &[&["a", "b"]]);
        assert_eq!(
            p,
            [
                "cycle between top-level modules of one layer: a, b",
                "  src/a.rs:1: `a` names `b`: crate::b::B",
                "  src/b.rs:1: `b` names `a`: crate::a::A",
            ]
        );
    }

    #[test]
    fn a_module_outside_the_layers_is_reported() {
        let p = problems(&[
            ("lib.rs", ""),
            ("low.rs", ""),
            ("high.rs", ""),
            ("other.rs", ""),
        ]);
        assert_eq!(p, ["module `other` is in no layer: add it to LAYERS"]);
    }
}

//! nodelay-core reads bottom-up: its modules depend one way, with no cycle,
//! re-exports included, in the layer order of DESIGN.md ("Layering inside a
//! crate"). This test computes the module graph from the sources and fails,
//! printing the cycle or the upward edge, on any breach.
//!
//! The graph: one node per module (a file, or an inline `mod` with a body);
//! an edge from a module to each module whose item it names, through `use`
//! declarations (`pub use` re-exports included), `crate::` / `super::` /
//! `self::` paths in code, and paths through a module name it imported or
//! declared. An edge goes to the module the path names: naming an item
//! through a re-export (`crate::Error`, `crate::h2::H2Request`) depends on the
//! re-exporting module, which depends on the defining one by its `pub use`,
//! so a re-export that closes a loop is a cycle. Code under `#[cfg(test)]`
//! is left out: a unit test may drive its module from above.
//!
//! Dependency-free on purpose: a Rust lexer that drops comments, strings and
//! attributes is all the parsing this needs (paths, `use` trees, `mod`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers of nodelay-core, bottom first. A module may use modules of its
/// own layer or of a layer below, never above. Each entry is a module path
/// (`crate` for the root) or a prefix ending in `::*`; every module must be
/// in exactly one layer, so a new module takes a place in the order.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "foundation",
        &[
            "limits",
            "error",
            "fork",
            "interrupt",
            "timing",
            "runtime",
            "target",
            "executor",
            "deadline",
        ],
    ),
    (
        "net",
        &[
            "resolve",
            "dial",
            "connect",
            "tls",
            "transport",
            "aconnect",
            "no_proxy",
            "proxy",
            "socks",
            "tunnel",
            "aio::watched",
        ],
    ),
    ("conn", &["conn", "aio::conn"]),
    ("pool", &["pool", "pool::*", "aio::pool", "reaper"]),
    (
        "h1/h2",
        &[
            "exchange",
            "upload",
            "aio::exchange",
            "aio::upload",
            "h2",
            "h2::*",
            "aio::h2",
            "sequence",
        ],
    ),
    ("body", &["body", "body::*"]),
    (
        "client",
        &[
            "any_exchange",
            "aio::any_exchange",
            "stream",
            "aio::body",
            "request",
            "client",
            "aio::client",
            "aio",
            "batch",
            "cookies",
            "cookies::*",
            "form",
            "crate",
        ],
    ),
];

/// Edges the layer order alone would allow but DESIGN.md forbids: the body
/// pipeline takes bytes through a trait and knows no exchange type.
const FORBIDDEN: &[(&str, &str)] = &[
    ("body::*", "exchange"),
    ("body::*", "aio::exchange"),
    ("body::*", "h2::exchange"),
    ("body::*", "any_exchange"),
    ("body::*", "aio::any_exchange"),
];

#[test]
fn modules_have_no_cycle() {
    let graph = Graph::load();
    let mut report = String::new();
    for component in &graph.cycles() {
        report.push_str(&format!(
            "cycle of {} modules: {}\n  e.g. {}\n",
            component.len(),
            component.join(", "),
            graph.shortest_cycle(component).join(" -> ")
        ));
    }
    assert!(
        report.is_empty(),
        "module cycles in nodelay-core:\n{report}"
    );
}

#[test]
fn modules_follow_the_layer_order() {
    let graph = Graph::load();
    let mut report = String::new();
    for module in graph.modules.keys() {
        if let Err(problem) = layer_of(module) {
            report.push_str(&problem);
            report.push('\n');
        }
    }
    for (from, tos) in &graph.edges {
        for (to, via) in tos {
            let (Ok(from_layer), Ok(to_layer)) = (layer_of(from), layer_of(to)) else {
                continue;
            };
            let forbidden = FORBIDDEN
                .iter()
                .any(|(a, b)| matches(a, from) && matches(b, to));
            let why = if forbidden {
                "forbidden edge".to_string()
            } else if to_layer > from_layer {
                format!(
                    "layer {} uses layer {} above it",
                    LAYERS[from_layer].0, LAYERS[to_layer].0
                )
            } else {
                continue;
            };
            report.push_str(&format!("{from} -> {to} ({why}) via `{via}`\n"));
        }
    }
    assert!(
        report.is_empty(),
        "layer order of nodelay-core breached:\n{report}"
    );
}

/// The analyzer must see what it claims to: a cycle closed by a re-export,
/// a test module left out.
#[test]
fn analyzer_finds_a_cycle_through_a_reexport() {
    let sources = [
        ("crate", "mod a; mod b; mod c; pub use c::Thing as Alias;"),
        ("a", "use crate::Alias; pub struct A;"),
        ("b", "pub fn f() -> crate::a::A { crate::a::A }"),
        (
            "c",
            "pub struct Thing; fn g() { let _q = '\\''; let _ = super::b::f(); }\n#[cfg(test)] mod tests { use crate::a::A; }",
        ),
    ];
    let graph = Graph::from_sources(sources.iter().map(|(m, s)| (m.to_string(), s.to_string())));
    assert_eq!(graph.cycles(), vec![vec!["a", "b", "c", "crate"]]);
    assert!(!graph.edges["c"].contains_key("a"), "test code counted");
}

fn matches(pattern: &str, module: &str) -> bool {
    match pattern.strip_suffix("::*") {
        Some(prefix) => module.starts_with(&format!("{prefix}::")),
        None => pattern == module,
    }
}

fn layer_of(module: &str) -> Result<usize, String> {
    let hits: Vec<usize> = LAYERS
        .iter()
        .enumerate()
        .filter(|(_, (_, members))| members.iter().any(|p| matches(p, module)))
        .map(|(i, _)| i)
        .collect();
    match hits.as_slice() {
        [one] => Ok(*one),
        [] => Err(format!("module {module} is in no layer of LAYERS")),
        _ => Err(format!("module {module} is in several layers of LAYERS")),
    }
}

/// A module's path as a list of names; the root is the empty list.
type ModPath = Vec<String>;

fn display(path: &[String]) -> String {
    if path.is_empty() {
        "crate".to_string()
    } else {
        path.join("::")
    }
}

#[derive(Default)]
struct Module {
    /// Child modules declared here (`mod x;` or `mod x { ... }`).
    children: BTreeSet<String>,
    /// Names bound by `use` here, to the full path each names (a path in
    /// this module's code that starts with one is read through it).
    imports: BTreeMap<String, ModPath>,
    /// Every path this module names, from the crate root.
    references: Vec<ModPath>,
}

struct Graph {
    modules: BTreeMap<String, Module>,
    /// from -> (to -> one path that makes the edge)
    edges: BTreeMap<String, BTreeMap<String, String>>,
}

impl Graph {
    fn load() -> Graph {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut sources = Vec::new();
        load_file(&root, &root.join("lib.rs"), Vec::new(), &mut sources);
        Graph::from_sources(sources.into_iter().map(|(p, s)| (display(&p), s)))
    }

    /// Builds the graph from (module path, source) pairs; a module's child
    /// with a body (`mod x { ... }`) becomes a module of its own.
    fn from_sources(sources: impl Iterator<Item = (String, String)>) -> Graph {
        let mut modules = BTreeMap::new();
        for (name, source) in sources {
            let path: ModPath = if name == "crate" {
                Vec::new()
            } else {
                name.split("::").map(str::to_string).collect()
            };
            let tokens = lex(&source);
            parse_module(&path, &tokens, &mut modules);
        }
        let mut edges: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (name, module) in &modules {
            let entry = edges.entry(name.clone()).or_default();
            for reference in &module.references {
                let target = display(&resolve(&modules, reference));
                if &target != name {
                    entry
                        .entry(target)
                        .or_insert_with(|| format!("crate::{}", reference.join("::")));
                }
            }
        }
        Graph { modules, edges }
    }

    /// Strongly connected components with more than one module, each sorted,
    /// found by Tarjan's algorithm.
    fn cycles(&self) -> Vec<Vec<String>> {
        struct State<'a> {
            graph: &'a Graph,
            index: BTreeMap<&'a str, usize>,
            low: BTreeMap<&'a str, usize>,
            stack: Vec<&'a str>,
            on_stack: BTreeSet<&'a str>,
            out: Vec<Vec<String>>,
        }
        fn visit<'a>(s: &mut State<'a>, v: &'a str) {
            let i = s.index.len();
            s.index.insert(v, i);
            s.low.insert(v, i);
            s.stack.push(v);
            s.on_stack.insert(v);
            let graph = s.graph;
            for w in graph.edges.get(v).into_iter().flat_map(|e| e.keys()) {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let low = s.low[v].min(s.low[w]);
                    s.low.insert(v, low);
                } else if s.on_stack.contains(w) {
                    let low = s.low[v].min(s.index[w]);
                    s.low.insert(v, low);
                }
            }
            if s.low[v] == s.index[v] {
                let mut component = Vec::new();
                loop {
                    let w = s.stack.pop().expect("tarjan stack");
                    s.on_stack.remove(w);
                    component.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    s.out.push(component);
                }
            }
        }
        let mut state = State {
            graph: self,
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            stack: Vec::new(),
            on_stack: BTreeSet::new(),
            out: Vec::new(),
        };
        for v in self.edges.keys() {
            if !state.index.contains_key(v.as_str()) {
                visit(&mut state, v);
            }
        }
        state.out.sort();
        state.out
    }

    /// The shortest cycle through the component's first module, with the
    /// path that makes each edge, to print.
    fn shortest_cycle(&self, component: &[String]) -> Vec<String> {
        let members: BTreeSet<&str> = component.iter().map(String::as_str).collect();
        let start = component[0].as_str();
        let mut previous: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        while let Some(v) = queue.pop_front() {
            for w in self.edges[v].keys() {
                let w = w.as_str();
                if !members.contains(w) || previous.contains_key(w) {
                    continue;
                }
                previous.insert(w, v);
                if w == start {
                    queue.clear();
                    break;
                }
                queue.push_back(w);
            }
        }
        let mut path = vec![start];
        let mut at = previous[start];
        while at != start {
            path.push(at);
            at = previous[at];
        }
        path.push(start);
        path.reverse();
        path.windows(2)
            .map(|pair| format!("{} (`{}`)", pair[0], self.edges[pair[0]][pair[1]]))
            .chain(std::iter::once(start.to_string()))
            .collect()
    }
}

fn load_file(root: &Path, file: &Path, path: ModPath, out: &mut Vec<(ModPath, String)>) {
    let source =
        std::fs::read_to_string(file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
    let tokens = lex(&source);
    let dir: PathBuf = if path.is_empty() {
        root.to_path_buf()
    } else {
        root.join(path.join("/"))
    };
    for child in declared_file_modules(&tokens) {
        let flat = dir.join(format!("{child}.rs"));
        let nested = dir.join(&child).join("mod.rs");
        let child_file = if flat.exists() { flat } else { nested };
        let mut child_path = path.clone();
        child_path.push(child);
        load_file(root, &child_file, child_path, out);
    }
    out.push((path, source));
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Punct(char),
    /// `::`
    PathSep,
}

/// Tokens of Rust source without comments, literals, lifetimes and
/// attributes; an item under `#[cfg(test)]` is dropped whole.
fn lex(source: &str) -> Vec<Tok> {
    let chars: Vec<char> = source.chars().collect();
    let mut raw = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || (next == Some('#') && raw_string_at(&chars, i + 1)))
        {
            // Raw string r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars[j] == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            loop {
                if chars[j] == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#')) {
                    i = j + 1 + hashes;
                    break;
                }
                j += 1;
            }
        } else if c == '"' {
            i += 1;
            while chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if next == Some('\\') {
                // Past the backslash and the escaped character, which may
                // itself be a quote ('\'').
                i += 3;
                while chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            // b"..." and br"...": the literal follows.
            if (word == "b" || word == "br") && matches!(chars.get(i), Some('"') | Some('\'')) {
                continue;
            }
            raw.push(Tok::Ident(word));
        } else if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
        } else if c == ':' && next == Some(':') {
            raw.push(Tok::PathSep);
            i += 2;
        } else if c.is_whitespace() {
            i += 1;
        } else {
            raw.push(Tok::Punct(c));
            i += 1;
        }
    }
    strip_attributes(raw)
}

fn raw_string_at(chars: &[char], mut i: usize) -> bool {
    while chars.get(i) == Some(&'#') {
        i += 1;
    }
    chars.get(i) == Some(&'"')
}

/// Drops `#[...]` / `#![...]`, and the item after `#[cfg(test)]`.
fn strip_attributes(raw: Vec<Tok>) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == Tok::Punct('#') {
            let mut j = i + 1;
            if raw.get(j) == Some(&Tok::Punct('!')) {
                j += 1;
            }
            if raw.get(j) == Some(&Tok::Punct('[')) {
                let end = matching(&raw, j, '[', ']');
                let is_test = raw[j + 1..end]
                    == [
                        Tok::Ident("cfg".into()),
                        Tok::Punct('('),
                        Tok::Ident("test".into()),
                        Tok::Punct(')'),
                    ];
                i = end + 1;
                if is_test {
                    i = skip_item(&raw, i);
                }
                continue;
            }
        }
        out.push(raw[i].clone());
        i += 1;
    }
    out
}

/// The index just past the item starting at `i`: up to its `;` or its body.
fn skip_item(tokens: &[Tok], mut i: usize) -> usize {
    // Further attributes of the same item.
    while tokens.get(i) == Some(&Tok::Punct('#')) {
        i = matching(tokens, i + 1, '[', ']') + 1;
    }
    while i < tokens.len() {
        match tokens[i] {
            Tok::Punct(';') => return i + 1,
            Tok::Punct('{') => return matching(tokens, i, '{', '}') + 1,
            Tok::Punct('(') => i = matching(tokens, i, '(', ')') + 1,
            _ => i += 1,
        }
    }
    i
}

/// The index of the bracket closing the one at `open`.
fn matching(tokens: &[Tok], open: usize, left: char, right: char) -> usize {
    let mut depth = 0;
    for (k, t) in tokens.iter().enumerate().skip(open) {
        if *t == Tok::Punct(left) {
            depth += 1;
        } else if *t == Tok::Punct(right) {
            depth -= 1;
            if depth == 0 {
                return k;
            }
        }
    }
    panic!("unbalanced {left}{right}");
}

fn ident(t: Option<&Tok>) -> Option<&str> {
    match t {
        Some(Tok::Ident(s)) => Some(s),
        _ => None,
    }
}

/// `mod x;` declarations at the top level of a file (their source is a file).
fn declared_file_modules(tokens: &[Tok]) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    for k in 0..tokens.len() {
        match &tokens[k] {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => depth -= 1,
            Tok::Ident(m) if m == "mod" && depth == 0 => {
                if let (Some(name), Some(Tok::Punct(';'))) =
                    (ident(tokens.get(k + 1)), tokens.get(k + 2))
                {
                    out.push(name.to_string());
                }
            }
            _ => {}
        }
    }
    out
}

/// Reads one module's tokens: its children, imports and named paths. An
/// inline `mod x { ... }` is read as the module `path::x`.
fn parse_module(path: &ModPath, tokens: &[Tok], modules: &mut BTreeMap<String, Module>) {
    let mut module = Module::default();
    let mut code_paths = Vec::new();
    let mut k = 0;
    while k < tokens.len() {
        match &tokens[k] {
            Tok::Ident(word) if word == "mod" => {
                if let Some(name) = ident(tokens.get(k + 1)) {
                    module.children.insert(name.to_string());
                    if tokens.get(k + 2) == Some(&Tok::Punct('{')) {
                        let end = matching(tokens, k + 2, '{', '}');
                        let mut child = path.clone();
                        child.push(name.to_string());
                        parse_module(&child, &tokens[k + 3..end], modules);
                        k = end + 1;
                        continue;
                    }
                }
                k += 1;
            }
            Tok::Ident(word) if word == "use" => {
                let end = (k..tokens.len())
                    .find(|&e| tokens[e] == Tok::Punct(';'))
                    .expect("use without ;");
                let mut trees = Vec::new();
                use_tree(&tokens[k + 1..end], Vec::new(), &mut trees);
                for (full, bound) in trees {
                    let Some(absolute) = absolute(path, &module.children, &full) else {
                        continue;
                    };
                    match bound {
                        Binding::Name(name) => {
                            module.imports.insert(name, absolute.clone());
                        }
                        Binding::None => {}
                    }
                    module.references.push(absolute);
                }
                k = end + 1;
            }
            Tok::Ident(_) if k == 0 || tokens[k - 1] != Tok::PathSep => {
                // A path in code: a run of `ident ::` segments.
                let mut segments = Vec::new();
                let mut e = k;
                while let (Some(name), Some(Tok::PathSep)) =
                    (ident(tokens.get(e)), tokens.get(e + 1))
                {
                    segments.push(name.to_string());
                    e += 2;
                }
                if let Some(name) = ident(tokens.get(e)) {
                    if !segments.is_empty() {
                        segments.push(name.to_string());
                    }
                }
                if segments.len() > 1 {
                    code_paths.push(segments);
                }
                k = e.max(k + 1);
            }
            _ => k += 1,
        }
    }
    // Paths in code start at crate/super/self, an imported name or a child.
    for reference in code_paths {
        let first = reference[0].as_str();
        let resolved = if let Some(target) = module.imports.get(first) {
            let mut full = target.clone();
            full.extend(reference[1..].iter().cloned());
            Some(full)
        } else {
            absolute(path, &module.children, &reference)
        };
        if let Some(full) = resolved {
            module.references.push(full);
        }
    }
    modules.insert(display(path), module);
}

enum Binding {
    Name(String),
    /// A glob or `as _`: no name to follow.
    None,
}

/// Flattens a `use` tree into (full path, the name it binds).
fn use_tree(tokens: &[Tok], prefix: Vec<String>, out: &mut Vec<(Vec<String>, Binding)>) {
    let mut path = prefix;
    let mut k = 0;
    if tokens.first() == Some(&Tok::PathSep) {
        k += 1;
    }
    // Leading visibility was consumed by the caller's position after `use`.
    while k < tokens.len() {
        match &tokens[k] {
            Tok::Ident(name) => {
                if name == "as" {
                    let alias = ident(tokens.get(k + 1)).unwrap_or("_").to_string();
                    let binding = if alias == "_" {
                        Binding::None
                    } else {
                        Binding::Name(alias)
                    };
                    out.push((path, binding));
                    return;
                }
                if name == "self" && !path.is_empty() {
                    // `use a::b::{self}` binds `b`.
                } else {
                    path.push(name.clone());
                }
                k += 1;
            }
            Tok::PathSep => k += 1,
            Tok::Punct('*') => {
                out.push((path, Binding::None));
                return;
            }
            Tok::Punct('{') => {
                let end = matching(tokens, k, '{', '}');
                let mut start = k + 1;
                let mut depth = 0;
                for e in k + 1..=end {
                    match tokens[e] {
                        Tok::Punct('{') => depth += 1,
                        Tok::Punct('}') if depth > 0 => depth -= 1,
                        Tok::Punct(',') | Tok::Punct('}') if depth == 0 => {
                            if start < e {
                                use_tree(&tokens[start..e], path.clone(), out);
                            }
                            start = e + 1;
                        }
                        _ => {}
                    }
                }
                return;
            }
            _ => k += 1,
        }
    }
    if let Some(last) = path.last().cloned() {
        out.push((path, Binding::Name(last)));
    }
}

/// The path from the crate root, for a path starting at `crate`, `super`,
/// `self` or a child module; `None` for another crate's path.
fn absolute(here: &ModPath, children: &BTreeSet<String>, path: &[String]) -> Option<ModPath> {
    let mut out = here.clone();
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => {
            out.clear();
            rest = &path[1..];
        }
        Some("self") => rest = &path[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                out.pop();
                rest = &rest[1..];
            }
        }
        Some(first) if children.contains(first) => {}
        _ => return None,
    }
    out.extend(rest.iter().cloned());
    Some(out)
}

/// The module a path names: the deepest module its leading segments reach.
/// A name a module re-exports is that module's: naming `crate::Error`
/// depends on the crate root, which depends on `error` by its `pub use`.
fn resolve(modules: &BTreeMap<String, Module>, path: &[String]) -> ModPath {
    let mut at: ModPath = Vec::new();
    for segment in path {
        match modules.get(&display(&at)) {
            Some(module) if module.children.contains(segment) => at.push(segment.clone()),
            _ => break,
        }
    }
    at
}

//! The house rules of the workspace's source tree, checked on every test run:
//!
//! * no source file holds more than [`MAX_LINES`] lines before its `#[cfg(test)]` tests;
//! * no import cycles between files: within each crate, the graph whose edges are the `use`
//!   declarations of one file naming an item of another (`crate::`, `super::` and `self::`
//!   paths, resolved to the file of the deepest module they name), and the `crate::` and
//!   `super::` paths its code names in place (`crate::validate::model(file)`), has no cycle. A module's
//!   `use` of its own submodules (its re-exports) is not an edge: a parent owns its children,
//!   and a child may use its parent;
//! * names are read in one layer (`docs/architecture.md`): no `fn parse_bytes` outside
//!   `memhc-select`; no package but the facade and `memhc-select` depends on the GPU backend
//!   crates `memhc-cuda` and `memhc-hip`; only the crates above `memhc-select` depend on it;
//!   and the `memhc` command (`memhc-cli`) does not depend on `memhc-synth`.
//!
//! Only the standard library is used, so this runs wherever the workspace builds.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: unwrap what must succeed

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The most lines a source file may hold before its tests.
const MAX_LINES: usize = 600;

/// One source file of a crate: its path and its module path inside the crate.
struct SourceFile {
    path: PathBuf,
    module: Vec<String>,
    text: String,
}

/// The library source roots of the workspace (each a `src` directory with a `lib.rs`).
fn crate_roots() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots = vec![root.join("src"), root.join("synth/src")];
    for entry in fs::read_dir(root.join("crates")).unwrap() {
        let src = entry.unwrap().path().join("src");
        if src.join("lib.rs").is_file() {
            roots.push(src);
        }
    }
    roots.sort();
    roots
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The files of the library rooted at `src` (binaries' `main.rs` are roots of another crate
/// and are left out), with their module paths.
fn sources(src: &Path) -> Vec<SourceFile> {
    let mut paths = Vec::new();
    rust_files(src, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n != "main.rs"))
        .map(|path| {
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut module: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|l| l == "lib" || l == "mod") {
                module.pop();
            }
            let text = fs::read_to_string(&path).unwrap();
            SourceFile { path, module, text }
        })
        .collect()
}

/// The text of a file before its first `#[cfg(test)]` line.
fn before_tests(text: &str) -> &str {
    text.find("\n#[cfg(test)]").map_or(text, |i| &text[..i])
}

/// The paths a `use` tree names, with braces expanded: `a::{b, c::{d, e}}` gives `a::b`,
/// `a::c::d` and `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let (Some(open), Some(close)) = (tree.find('{'), tree.rfind('}')) else {
        return vec![tree.to_owned()];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..close];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(|p| expand(p).into_iter().map(|s| format!("{prefix}{s}")))
        .collect()
}

/// `text` with whitespace collapsed, and none around `::`, braces and commas.
fn normalise(text: &str) -> String {
    let mut s = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for p in ["::", "{", "}", ","] {
        s = s.replace(&format!(" {p}"), p).replace(&format!("{p} "), p);
    }
    s
}

/// The `use` declarations of `text` (before its tests), as expanded paths.
fn use_paths(text: &str) -> Vec<String> {
    let text = before_tests(text);
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("use ") {
        let at_line_start = rest[..i]
            .rsplit('\n')
            .next()
            .is_some_and(|l| l.trim().is_empty() || l.trim_start().starts_with("pub"));
        let decl = &rest[i + 4..];
        let end = decl.find(';').unwrap_or(decl.len());
        if at_line_start {
            out.extend(expand(&normalise(&decl[..end])));
        }
        rest = &decl[end..];
    }
    out
}

/// The module path a `use` path names, resolved from the module `from`, if it is a path into
/// the same crate (`crate::`, `self::`, `super::`).
/// The `crate::` and `super::` paths a file names in its code outside `use` declarations
/// (`crate::validate::model(file)`, `super::x::Y::new()`), comments and doc comments left out:
/// a call through a full path imports as surely as a `use` does.
fn inline_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in before_tests(text).lines() {
        let code = line.trim_start();
        if code.starts_with("//") || code.starts_with("use ") || code.starts_with("pub use ") {
            continue;
        }
        let code = code.split(" //").next().unwrap_or(code);
        for root in ["crate::", "super::"] {
            let mut rest = code;
            while let Some(i) = rest.find(root) {
                let starts_path = rest[..i]
                    .chars()
                    .next_back()
                    .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'));
                let path: String = rest[i..]
                    .chars()
                    .take_while(|&c| c.is_alphanumeric() || c == '_' || c == ':')
                    .collect();
                if starts_path {
                    out.push(path.trim_end_matches(':').to_owned());
                }
                rest = &rest[i + root.len()..];
            }
        }
    }
    out
}

fn target(path: &str, from: &[String]) -> Option<Vec<String>> {
    let mut segs = path.split("::").map(str::to_owned);
    let mut base: Vec<String> = match segs.next()?.as_str() {
        "crate" => Vec::new(),
        "self" => from.to_vec(),
        "super" => from[..from.len().checked_sub(1)?].to_vec(),
        _ => return None,
    };
    for s in segs {
        match s.as_str() {
            "super" => {
                base.pop();
            }
            _ => base.push(s.split(" as ").next().unwrap_or(&s).to_owned()),
        }
    }
    Some(base)
}

#[test]
fn no_source_file_is_longer_than_the_limit_before_its_tests() {
    let mut long = Vec::new();
    for src in crate_roots() {
        for f in sources(&src) {
            let lines = before_tests(&f.text).lines().count();
            if lines > MAX_LINES {
                long.push(format!("{} ({lines} lines)", f.path.display()));
            }
        }
    }
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:#?}");
}

#[test]
fn no_import_cycles_between_files() {
    let mut cycles = Vec::new();
    for src in crate_roots() {
        let files = sources(&src);
        let by_module: BTreeMap<&[String], usize> = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.module.as_slice(), i))
            .collect();
        let mut edges: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); files.len()];
        for (i, f) in files.iter().enumerate() {
            for path in use_paths(&f.text).into_iter().chain(inline_paths(&f.text)) {
                let Some(mut module) = target(&path, &f.module) else {
                    continue;
                };
                // The deepest module of the path that is a file of this crate.
                let j = loop {
                    if let Some(&j) = by_module.get(module.as_slice()) {
                        break j;
                    }
                    if module.pop().is_none() {
                        unreachable!("the crate root is always a file");
                    }
                };
                let descendant = files[j].module.starts_with(&f.module);
                if j != i && !descendant {
                    edges[i].insert(j);
                }
            }
        }
        // A cycle exists iff a depth-first search meets a file still on its stack.
        let mut state = vec![0u8; files.len()]; // 0 new, 1 on the stack, 2 done
        fn visit(
            i: usize,
            edges: &[BTreeSet<usize>],
            state: &mut [u8],
            stack: &mut Vec<usize>,
            found: &mut Vec<Vec<usize>>,
        ) {
            state[i] = 1;
            stack.push(i);
            for &j in &edges[i] {
                match state[j] {
                    0 => visit(j, edges, state, stack, found),
                    1 => {
                        let at = stack.iter().position(|&k| k == j).unwrap_or(0);
                        found.push(stack[at..].to_vec());
                    }
                    _ => {}
                }
            }
            stack.pop();
            state[i] = 2;
        }
        let mut found = Vec::new();
        for i in 0..files.len() {
            if state[i] == 0 {
                visit(i, &edges, &mut state, &mut Vec::new(), &mut found);
            }
        }
        for cycle in found {
            let names: Vec<String> = cycle
                .iter()
                .map(|&k| {
                    files[k]
                        .path
                        .strip_prefix(&src)
                        .unwrap()
                        .display()
                        .to_string()
                })
                .collect();
            cycles.push(format!("{}: {}", src.display(), names.join(" -> ")));
        }
    }
    assert!(cycles.is_empty(), "import cycles: {cycles:#?}");
}

/// Every package's manifest in the workspace: the root's, `synth/`, `cli/`, `crates/*`.
fn manifests() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = vec![
        root.join("Cargo.toml"),
        root.join("synth/Cargo.toml"),
        root.join("cli/Cargo.toml"),
    ];
    for entry in fs::read_dir(root.join("crates")).unwrap() {
        let manifest = entry.unwrap().path().join("Cargo.toml");
        if manifest.is_file() {
            out.push(manifest);
        }
    }
    out.sort();
    out
}

/// A package's name and the names in its `[dependencies]` table (not dev or build
/// dependencies), from the text of its `Cargo.toml`: `name = ...`, `name.workspace = true`.
fn package_and_dependencies(text: &str) -> (String, BTreeSet<String>) {
    let mut package = String::new();
    let mut deps = BTreeSet::new();
    let mut section = "";
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
            continue;
        }
        let key = line
            .split(['=', '.'])
            .next()
            .unwrap_or("")
            .trim()
            .to_owned();
        if key.is_empty() || key.starts_with('#') {
            continue;
        }
        match section {
            "[package]" if key == "name" => {
                package = line
                    .split('=')
                    .nth(1)
                    .unwrap_or("")
                    .trim()
                    .trim_matches('"')
                    .to_owned();
            }
            "[dependencies]" => {
                deps.insert(key);
            }
            _ => {}
        }
    }
    (package, deps)
}

#[test]
fn names_are_read_in_one_layer() {
    let graph: BTreeMap<String, BTreeSet<String>> = manifests()
        .iter()
        .map(|m| package_and_dependencies(&fs::read_to_string(m).unwrap()))
        .collect();
    assert!(graph.contains_key("memhc-select"), "{:?}", graph.keys());
    let mut broken = Vec::new();
    // The GPU backend crates are opened by memhc-select alone (and re-exported by the facade).
    for (package, deps) in &graph {
        for gpu in ["memhc-cuda", "memhc-hip"] {
            if deps.contains(gpu) && !["memhc", "memhc-select"].contains(&package.as_str()) {
                broken.push(format!(
                    "{package} depends on {gpu}: open backends through memhc-select"
                ));
            }
        }
    }
    // Only the crates above memhc-select read names through it.
    let above = [
        "memhc-synth",
        "memhc-cli",
        "memhc-embed",
        "memhc-capi",
        "memhc-py",
        "memhc-campaign",
    ];
    for (package, deps) in &graph {
        if deps.contains("memhc-select") && !above.contains(&package.as_str()) {
            broken.push(format!("{package} is below memhc-select and depends on it"));
        }
    }
    if graph
        .get("memhc-cli")
        .is_some_and(|d| d.contains("memhc-synth"))
    {
        broken.push("memhc-cli depends on memhc-synth".to_owned());
    }
    // One grammar of byte counts.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "synth", "cli", "crates"] {
        rust_files(&root.join(dir), &mut files);
    }
    for f in files {
        let text = fs::read_to_string(&f).unwrap();
        let outside = !f.starts_with(root.join("crates/memhc-select"));
        if outside && text.contains("fn parse_bytes") {
            broken.push(format!(
                "{}: a parse_bytes outside memhc-select",
                f.display()
            ));
        }
    }
    assert!(broken.is_empty(), "{broken:#?}");
}

#[test]
fn manifests_are_read_for_names_and_dependencies() {
    let text = "[package]\nname = \"a-b\"\n\n[dependencies]\nx.workspace = true\n# y = 1\nz = { path = \"z\" }\n\n[dev-dependencies]\nw = \"1\"\n";
    let (name, deps) = package_and_dependencies(text);
    assert_eq!(name, "a-b");
    assert_eq!(deps, BTreeSet::from(["x".to_owned(), "z".to_owned()]));
}

#[test]
fn the_use_parser_expands_nested_braces_and_resolves_relative_paths() {
    let paths = use_paths("use crate::a::{b, c::{d, e as f}};\npub use super::g;\nlet use_x = 1;");
    assert_eq!(
        paths,
        [
            "crate::a::b",
            "crate::a::c::d",
            "crate::a::c::e as f",
            "super::g"
        ]
    );
    let here = vec!["x".to_owned(), "y".to_owned()];
    assert_eq!(
        target("super::g", &here),
        Some(vec!["x".to_owned(), "g".to_owned()])
    );
    assert_eq!(
        target("crate::a::b", &here),
        Some(vec!["a".to_owned(), "b".to_owned()])
    );
    assert_eq!(target("std::fmt", &here), None);
}

#[test]
fn inline_paths_are_imports_too() {
    let text = "//! See [`crate::doc_only`].\nuse crate::a::B;\nfn f() {\n    \
                crate::validate::model(x); // crate::in_comment\n    let y = super::sibling::Y::new();\n    \
                my_crate::not_ours();\n}\n";
    assert_eq!(
        inline_paths(text),
        ["crate::validate::model", "super::sibling::Y::new"]
    );
}

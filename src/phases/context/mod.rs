//! Phase 2, context gather (DESIGN.md §4): what the project is and where
//! its tests are, deterministically and without an agent. The output is a
//! [`ContextPackage`] whose lists are sorted, so two runs over the same
//! tree write the same bytes.
//!
//! Effects (listing, bounded reads) happen in [`gather`]; the decisions are
//! pure functions in the submodules and in [`select_targets`].

pub mod files;
pub mod focus;
pub mod mapping;
pub mod project;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read;
use std::path::Path;

use files::{FileClass, Kind};

use crate::project::{Lang, PathRole};
use mapping::{Facts, TestLink};

use crate::artifacts::context::{
    Asset, Assets, ContextMetadata, ContextPackage, CoverageStats, ExistingTest, FileLineCoverage,
    ImplementationSummary, LanguageCount, LineCoverage, MissingTest, ProjectInfo, SourceContext,
    TestCoverage, TestFrameworkInfo,
};
use crate::error::Result;
use crate::testing::coverage;

/// The test framework as the runner detected it (DESIGN.md §6.1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrameworkFacts {
    pub framework: String,
    pub command: String,
    pub signals: Vec<String>,
    pub test_pattern: String,
    pub test_directory: String,
}

/// A finished implementation session, as read in session mode.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceSession {
    pub id: String,
    pub description: String,
    /// (task id, files the task says it modified), completed tasks only.
    pub completed_tasks: Vec<(String, Vec<String>)>,
    /// (task id, summary path relative to the project root, summary text).
    pub summaries: Vec<(String, String, String)>,
}

/// What phase 2 needs to know.
pub struct GatherInput<'a> {
    pub root: &'a Path,
    pub session_id: &'a str,
    pub description: &'a str,
    pub framework: Option<FrameworkFacts>,
    pub source: Option<&'a SourceSession>,
}

/// The package plus what people should hear about (unreadable coverage
/// reports and the like).
pub struct Gathered {
    pub package: ContextPackage,
    pub warnings: Vec<String>,
}

/// Bytes read from a file to find inline Rust tests (whole files, bounded).
const READ_FULL: u64 = 4 * 1024 * 1024;
/// Bytes read from a test file to find its imports.
const READ_IMPORTS: u64 = 256 * 1024;
/// Bytes read from a manifest.
const READ_MANIFEST: u64 = 256 * 1024;
/// Bytes read from a source file to list its symbols.
const READ_SYMBOLS: u64 = 64 * 1024;
/// Source files read for symbol matching when paths alone match too little.
const SYMBOL_SCAN_LIMIT: usize = 2000;
/// Files the plan targets at most (IMPL-001).
pub const MAX_TARGETS: usize = 20;
/// Focus areas (directories) listed at most.
const MAX_AREAS: usize = 20;
/// Focus paths kept at most.
const MAX_FOCUS: usize = 50;

fn read_bytes(path: &Path, max: u64) -> Option<Vec<u8>> {
    let f = std::fs::File::open(path).ok()?;
    let mut buf = Vec::new();
    f.take(max).read_to_end(&mut buf).ok()?;
    Some(buf)
}

/// At most `max` bytes of a file as text (invalid UTF-8 replaced).
fn read_bounded(path: &Path, max: u64) -> Option<String> {
    let buf = read_bytes(path, max)?;
    Some(match String::from_utf8(buf) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// Map `f` over `items` on all cores, keeping order.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    if items.len() < 64 || workers == 1 {
        return items.iter().map(&f).collect();
    }
    let chunk = items.len().div_ceil(workers);
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| {
                let f = &f;
                s.spawn(move || part.iter().map(f).collect::<Vec<R>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("worker does not panic"))
            .collect()
    })
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn prio_rank(p: &str) -> u8 {
    match p {
        "high" => 0,
        "medium" => 1,
        _ => 2,
    }
}

/// Gather the context of the project at `input.root`.
pub fn gather(input: &GatherInput) -> Result<Gathered> {
    let root = input.root;
    let (files, listing) = files::list_files(root)?;
    let classes: Vec<FileClass> = files.iter().map(|f| files::file_class(f)).collect();
    let file_set: BTreeSet<&str> = files.iter().map(String::as_str).collect();
    let manifests = read_manifests(root, &files, &classes);
    let detection = project::detect(&files, &classes, &manifests.near_root);
    let facts = read_facts(root, &files, &classes, &manifests.crates);
    let python_roots: Vec<String> = manifests.python_roots.iter().cloned().collect();
    let links = mapping::link_tests(&mapping::Project {
        files: &files,
        classes: &classes,
        facts: &facts,
        crates: &manifests.crates,
        go_modules: &manifests.go_modules,
        python_roots: &python_roots,
    });
    let conventions = mapping::learn_conventions(&links);
    let code = Code::new(&files, &classes, &links);
    let mut warnings = Vec::new();
    let (line_cov, cov_by_file) = read_line_coverage(root, &file_set, &mut warnings);
    let missing = missing_tests(&code, &conventions, &manifests.crates, &cov_by_file);
    let keywords = focus::keywords(input.description);
    let source_context = input.source.map(|src| source_context(src, &file_set));
    let focus = find_focus(&FocusInput {
        root,
        keywords: &keywords,
        files: &files,
        classes: &classes,
        code: &code,
        near_root: &manifests.near_root,
        source_context: source_context.as_ref(),
    });
    let languages = languages(&classes);
    let framework = input.framework.clone().unwrap_or_default();
    let conv_lines = convention_lines(&conventions, &code, &links, &framework);
    let stats = coverage_stats(&classes, &code, &links);
    let assets = assets(&files, &classes, &code, &links, &focus.paths);

    let complexity = match code.sources.len() {
        0..=20 => "low",
        21..=200 => "medium",
        _ => "high",
    };
    let mut tech_stack: Vec<String> = languages.iter().map(|l| l.language.clone()).collect();
    tech_stack.extend(detection.frameworks.iter().cloned());
    if !framework.framework.is_empty() && !tech_stack.contains(&framework.framework) {
        tech_stack.push(framework.framework.clone());
    }

    let mut package = ContextPackage {
        metadata: ContextMetadata {
            session_id: input.session_id.to_string(),
            task_description: input.description.to_string(),
            keywords,
            complexity: complexity.into(),
            tech_stack,
            extra: Default::default(),
        },
        project: ProjectInfo {
            languages,
            project_type: detection.project_type,
            frameworks: detection.frameworks,
            files_scanned: files.len() as u32,
            file_listing: Some(listing.as_str().to_string()),
            extra: Default::default(),
        },
        test_framework: TestFrameworkInfo {
            framework: framework.framework,
            command: framework.command,
            test_pattern: framework.test_pattern,
            test_directory: framework.test_directory,
            conventions: conv_lines,
            signals: framework.signals,
            extra: Default::default(),
        },
        assets,
        test_coverage: TestCoverage {
            existing_tests: links.iter().map(existing_test).collect(),
            missing_tests: missing,
            coverage_stats: stats,
            line_coverage: line_cov,
            extra: Default::default(),
        },
        focus_paths: focus.paths,
        focus_areas: focus.areas,
        source_context,
        extra: Default::default(),
    };
    add_target_symbols(root, &mut package, &code.family_of);
    Ok(Gathered { package, warnings })
}

/// The manifests wfx reads and what they say about import resolution.
struct Manifests {
    /// Near the root (at most two directories deep): project detection
    /// and package names.
    near_root: Vec<project::Manifest>,
    /// Crate directory → crate name, from every Cargo.toml.
    crates: BTreeMap<String, String>,
    /// Module directory → module path, from every go.mod.
    go_modules: BTreeMap<String, String>,
    /// Where Python packages are imported from.
    python_roots: BTreeSet<String>,
}

/// Manifests: every Cargo.toml and go.mod (crate names and module paths
/// for import resolution); the rest only near the root.
fn read_manifests(root: &Path, files: &[String], classes: &[FileClass]) -> Manifests {
    let manifest_idx: Vec<usize> = files
        .iter()
        .enumerate()
        .filter(|(i, f)| {
            project::is_manifest(f)
                && classes[*i].kind == Kind::Config
                && (f.matches('/').count() <= 2
                    || f.ends_with("Cargo.toml")
                    || f.ends_with("go.mod"))
        })
        .map(|(i, _)| i)
        .collect();
    let manifests: Vec<project::Manifest> = par_map(&manifest_idx, |&i| project::Manifest {
        path: files[i].clone(),
        text: read_bounded(&root.join(&files[i]), READ_MANIFEST).unwrap_or_default(),
    });
    let mut crates = BTreeMap::new();
    let mut go_modules = BTreeMap::new();
    let mut python_roots: BTreeSet<String> = BTreeSet::from(["src".to_string()]);
    for m in &manifests {
        let dir = files::parent_dir(&m.path).to_string();
        match files::file_name(&m.path) {
            "Cargo.toml" => {
                if let Some(name) = mapping::rust_crate_name(&m.text) {
                    crates.insert(dir, name);
                }
            }
            "go.mod" => {
                if let Some(module) = mapping::go_module_path(&m.text) {
                    go_modules.insert(dir, module);
                }
            }
            "pyproject.toml" | "setup.py" | "setup.cfg" if !dir.is_empty() => {
                python_roots.insert(format!("{dir}/src"));
                python_roots.insert(dir);
            }
            _ => {}
        }
    }
    let near_root = manifests
        .into_iter()
        .filter(|m| m.path.matches('/').count() <= 2)
        .collect();
    Manifests {
        near_root,
        crates,
        go_modules,
        python_roots,
    }
}

/// Read what the paths cannot tell: Rust sources (inline tests) and test
/// files (imports), by index into `files`.
fn read_facts(
    root: &Path,
    files: &[String],
    classes: &[FileClass],
    crates: &BTreeMap<String, String>,
) -> HashMap<usize, Facts> {
    let to_read: Vec<usize> = (0..files.len())
        .filter(|&i| {
            let c = &classes[i];
            match (c.kind, c.family) {
                (Kind::Source, Some(Lang::Rust)) => true,
                (Kind::Test, Some(_)) => c.role != PathRole::TestSupport,
                _ => false,
            }
        })
        .collect();
    let facts_vec: Vec<Facts> = par_map(&to_read, |&i| {
        let c = &classes[i];
        let family = c.family.expect("filtered on family");
        if c.kind == Kind::Source {
            return Facts {
                inline_tests: read_bytes(&root.join(&files[i]), READ_FULL)
                    .is_some_and(|b| mapping::has_inline_rust_tests(&b)),
                imports: Vec::new(),
            };
        }
        let Some(text) = read_bounded(&root.join(&files[i]), READ_IMPORTS) else {
            return Facts::default();
        };
        let ident = mapping::nearest_root(crates, &files[i]).map(|(_, c)| c.as_str());
        Facts {
            inline_tests: false,
            imports: mapping::extract(family, &text, ident),
        }
    });
    to_read.into_iter().zip(facts_vec).collect()
}

/// Source files wfx maps tests for, and which of them have tests.
struct Code<'a> {
    sources: Vec<&'a str>,
    source_set: std::collections::HashSet<&'a str>,
    tested: BTreeSet<&'a str>,
    family_of: HashMap<&'a str, Lang>,
}

impl<'a> Code<'a> {
    fn new(files: &'a [String], classes: &[FileClass], links: &'a [TestLink]) -> Self {
        let sources: Vec<&str> = files
            .iter()
            .zip(classes)
            .filter(|(_, c)| c.kind == Kind::Source && c.family.is_some())
            .map(|(f, _)| f.as_str())
            .collect();
        Code {
            source_set: sources.iter().copied().collect(),
            sources,
            tested: links
                .iter()
                .flat_map(|l| l.implementation_files.iter().map(String::as_str))
                .collect(),
            family_of: files
                .iter()
                .zip(classes)
                .filter_map(|(f, c)| c.family.map(|fam| (f.as_str(), fam)))
                .collect(),
        }
    }

    fn tested_count(&self) -> usize {
        self.sources
            .iter()
            .filter(|s| self.tested.contains(*s))
            .count()
    }
}

/// Real line coverage, when a report exists, and each file's percentage.
fn read_line_coverage(
    root: &Path,
    file_set: &BTreeSet<&str>,
    warnings: &mut Vec<String>,
) -> (Option<LineCoverage>, HashMap<String, f64>) {
    let mut cov_by_file: HashMap<String, f64> = HashMap::new();
    let Some((path, format)) = coverage::find_report(root, None) else {
        return (None, cov_by_file);
    };
    let rel = crate::session::Workspace::new(root).rel(&path);
    let report = std::fs::read_to_string(&path)
        .map_err(|e| e.to_string())
        .and_then(|text| {
            let exists = |p: &str| file_set.contains(p);
            let resolver = coverage::project_resolver(root, &exists);
            coverage::parse(format, &text, &resolver)
        });
    let report = match report {
        Ok(report) => report,
        Err(e) => {
            warnings.push(format!("coverage report {rel} was not read: {e}"));
            return (None, cov_by_file);
        }
    };
    let files_cov: Vec<FileLineCoverage> = report
        .files
        .iter()
        .filter(|f| f.counts.lines_total > 0)
        .map(|f| FileLineCoverage {
            path: f.path.clone(),
            lines_total: f.counts.lines_total,
            lines_covered: f.counts.lines_covered,
            percent: f.counts.line_percent().unwrap_or(0.0),
        })
        .collect();
    for f in &files_cov {
        cov_by_file.insert(f.path.clone(), f.percent);
    }
    let line_cov = LineCoverage {
        report: rel,
        format: format.as_str().to_string(),
        percent: report.totals.line_percent().unwrap_or(0.0),
        branch_percent: report.totals.branch_percent(),
        function_percent: report.totals.function_percent(),
        files: files_cov,
    };
    (Some(line_cov), cov_by_file)
}

/// The sources no test covers, with where a new test goes (per family)
/// and why it matters; most important first.
fn missing_tests(
    code: &Code,
    conventions: &BTreeMap<Lang, mapping::Convention>,
    crates: &BTreeMap<String, String>,
    cov_by_file: &HashMap<String, f64>,
) -> Vec<MissingTest> {
    let pkg_dir = |path: &str, family: Lang| -> String {
        match family {
            Lang::Rust => mapping::nearest_root(crates, path)
                .map(|(d, _)| d.to_string())
                .unwrap_or_default(),
            _ => String::new(),
        }
    };
    let mut missing: Vec<MissingTest> = code
        .sources
        .iter()
        .filter(|s| !code.tested.contains(*s))
        .map(|s| {
            let fam = code.family_of[s];
            let (priority, word) = files::path_priority(s);
            let conv = &conventions[&fam];
            let mut reason = "no test file is named after it or imports it".to_string();
            if fam == Lang::Rust {
                reason = "no inline #[cfg(test)] module and no integration test imports it".into();
            }
            match (priority, word) {
                ("high", Some(w)) => {
                    reason.push_str(&format!("; path names '{w}' (security, auth or core code)"))
                }
                ("medium", Some(w)) => {
                    reason.push_str(&format!("; path names '{w}' (shared utility code)"))
                }
                _ => {}
            }
            if let Some(p) = cov_by_file.get(*s) {
                reason.push_str(&format!("; line coverage {p:.1}%"));
            }
            MissingTest {
                implementation_file: s.to_string(),
                suggested_test_file: conv.suggest(s, &pkg_dir(s, fam)),
                priority: priority.to_string(),
                reason,
            }
        })
        .collect();
    missing.sort_by(|a, b| {
        prio_rank(&a.priority)
            .cmp(&prio_rank(&b.priority))
            .then_with(|| a.implementation_file.cmp(&b.implementation_file))
    });
    missing
}

/// What the focus is found from.
struct FocusInput<'a> {
    root: &'a Path,
    keywords: &'a [String],
    files: &'a [String],
    classes: &'a [FileClass],
    code: &'a Code<'a>,
    near_root: &'a [project::Manifest],
    source_context: Option<&'a SourceContext>,
}

/// `focus_paths` and `focus_areas` of the package.
struct Focus {
    paths: Vec<String>,
    areas: Vec<String>,
}

/// Focus: the source session's changed files, then keyword matches on
/// paths, package names and (if that finds little) symbols.
fn find_focus(input: &FocusInput) -> Focus {
    let hits = focus_hits(input);
    let sources = &input.code.sources;
    // Directory → (reason → files). Empty key: the "nothing matched" line.
    let mut areas: BTreeMap<String, BTreeMap<String, u32>> = BTreeMap::new();
    let paths: Vec<String>;
    if hits.is_empty() {
        // Nothing matched: the whole source tree is in scope, by its roots.
        let roots: BTreeSet<String> = sources
            .iter()
            .map(|s| {
                s.split_once('/')
                    .map_or((*s).to_string(), |(d, _)| d.to_string())
            })
            .collect();
        paths = roots.into_iter().take(MAX_FOCUS).collect();
        let msg = if input.keywords.is_empty() {
            "the description names no file, module or symbol; every source root is in scope"
                .to_string()
        } else {
            format!(
                "no path, package or symbol matches {}; every source root is in scope",
                input
                    .keywords
                    .iter()
                    .map(|k| format!("'{k}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        areas.insert(String::new(), BTreeMap::from([(msg, 0)]));
    } else {
        let mut sorted: Vec<(&String, &String)> = hits.iter().collect();
        // Sources before tests, then by path.
        sorted.sort_by_key(|(f, _)| (!input.code.source_set.contains(f.as_str()), f.as_str()));
        paths = sorted
            .iter()
            .take(MAX_FOCUS)
            .map(|(f, _)| (*f).clone())
            .collect();
        for (f, why) in &hits {
            let dir = files::parent_dir(f);
            let key = if dir.is_empty() {
                ".".to_string()
            } else {
                dir.to_string()
            };
            *areas
                .entry(key)
                .or_default()
                .entry(why.clone())
                .or_insert(0) += 1;
        }
    }
    let area_count = areas.len();
    let mut area_lines: Vec<String> = areas
        .into_iter()
        .map(|(dir, reasons)| area_line(&dir, reasons))
        .collect();
    if area_count > MAX_AREAS {
        area_lines.truncate(MAX_AREAS);
        area_lines.push(format!("… and {} more directories", area_count - MAX_AREAS));
    }
    Focus {
        paths,
        areas: area_lines,
    }
}

/// Each file in focus and why.
fn focus_hits(input: &FocusInput) -> BTreeMap<String, String> {
    let (keywords, code) = (input.keywords, input.code);
    let mut hits: BTreeMap<String, String> = BTreeMap::new();
    if let Some(sc) = input.source_context {
        for f in &sc.changed_files {
            let c = files::file_class(f);
            if matches!(c.kind, Kind::Source | Kind::Test) {
                hits.insert(f.clone(), SOURCE_CHANGED.into());
            }
        }
    }
    for (f, c) in input.files.iter().zip(input.classes) {
        if !matches!(c.kind, Kind::Source | Kind::Test) || c.family.is_none() {
            continue;
        }
        let without_ext = f.rsplit_once('.').map_or(f.as_str(), |(a, _)| a);
        if let Some(k) = focus::first_match(keywords, without_ext) {
            hits.entry(f.clone())
                .or_insert_with(|| format!("path matches '{k}'"));
        }
    }
    for m in input.near_root {
        if let Some(name) = project::package_name(m)
            && let Some(k) = focus::first_match(keywords, &name)
        {
            let dir = files::parent_dir(&m.path);
            for s in &code.sources {
                if dir.is_empty() || s.starts_with(&format!("{dir}/")) {
                    hits.entry(s.to_string())
                        .or_insert_with(|| format!("package '{name}' matches '{k}'"));
                }
            }
        }
    }
    let path_matched_sources = hits
        .keys()
        .filter(|f| code.source_set.contains(f.as_str()))
        .count();
    if !keywords.is_empty() && path_matched_sources < 3 {
        let cands: Vec<&str> = code
            .sources
            .iter()
            .copied()
            .filter(|s| !hits.contains_key(*s))
            .take(SYMBOL_SCAN_LIMIT)
            .collect();
        let found: Vec<Option<String>> = par_map(&cands, |s| {
            let text = read_bounded(&input.root.join(s), READ_SYMBOLS)?;
            let syms = focus::public_symbols(code.family_of[s], &text, 200);
            syms.iter().find_map(|sym| {
                focus::first_match(keywords, sym)
                    .map(|k| format!("defines '{sym}' (matches '{k}')"))
            })
        });
        for (s, hit) in cands.iter().zip(found) {
            if let Some(why) = hit {
                hits.insert(s.to_string(), why);
            }
        }
    }
    hits
}

/// Languages of all code files, most files first.
fn languages(classes: &[FileClass]) -> Vec<LanguageCount> {
    let mut langs: BTreeMap<&str, u32> = BTreeMap::new();
    for c in classes {
        if let (Some(l), Kind::Source | Kind::Test | Kind::AuxCode) = (c.language(), c.kind) {
            *langs.entry(l).or_default() += 1;
        }
    }
    let mut languages: Vec<LanguageCount> = langs
        .into_iter()
        .map(|(l, n)| LanguageCount {
            language: l.to_string(),
            files: n,
        })
        .collect();
    languages.sort_by(|a, b| {
        b.files
            .cmp(&a.files)
            .then_with(|| a.language.cmp(&b.language))
    });
    languages
}

fn coverage_stats(classes: &[FileClass], code: &Code, links: &[TestLink]) -> CoverageStats {
    let sources = code.sources.len();
    CoverageStats {
        source_files: sources as u32,
        source_files_with_tests: code.tested_count() as u32,
        test_files: links.iter().filter(|l| !l.inline).count() as u32,
        file_coverage_percent: if sources == 0 {
            0.0
        } else {
            round1(code.tested_count() as f64 * 100.0 / sources as f64)
        },
        inline_test_modules: links.iter().filter(|l| l.inline).count() as u32,
        unmapped_code_files: classes
            .iter()
            .filter(|c| c.kind == Kind::Source && c.family.is_none())
            .count() as u32,
    }
}

/// The test conventions, for people.
fn convention_lines(
    conventions: &BTreeMap<Lang, mapping::Convention>,
    code: &Code,
    links: &[TestLink],
    framework: &FrameworkFacts,
) -> Vec<String> {
    let mut lines = Vec::new();
    for (fam, conv) in conventions {
        let has_sources = code.sources.iter().any(|s| code.family_of[s] == *fam);
        if conv.evidence == 0 && !has_sources {
            continue;
        }
        let inline = links
            .iter()
            .filter(|l| l.family == *fam && l.inline)
            .count() as u32;
        let dedicated = links
            .iter()
            .filter(|l| l.family == *fam && !l.inline)
            .count() as u32;
        lines.push(conv.describe(inline, dedicated));
    }
    if !framework.test_pattern.is_empty() {
        lines.push(format!(
            "{} finds tests matching `{}`",
            framework.framework, framework.test_pattern
        ));
    }
    lines
}

fn asset(path: &str, relevance: f64, priority: &str) -> Asset {
    Asset {
        path: path.to_string(),
        relevance,
        priority: priority.to_string(),
        symbols: Vec::new(),
    }
}

/// The files a person or an agent should read, most relevant first.
fn assets(
    files: &[String],
    classes: &[FileClass],
    code: &Code,
    links: &[TestLink],
    focus_paths: &[String],
) -> Assets {
    let focus_set: BTreeSet<&str> = focus_paths.iter().map(String::as_str).collect();
    let of_kind = |kind: Kind| {
        files
            .iter()
            .zip(classes)
            .filter(move |(_, c)| c.kind == kind)
    };
    let mut source_code: Vec<Asset> = code
        .sources
        .iter()
        .map(|s| {
            let (p, _) = files::path_priority(s);
            let base = match p {
                "high" => 0.7,
                "medium" => 0.5,
                _ => 0.3,
            };
            let mut r: f64 = base;
            if focus_set.contains(s) {
                r += 0.3;
            }
            if !code.tested.contains(s) {
                r += 0.1;
            }
            asset(s, round2(r.min(1.0)), p)
        })
        .collect();
    let mut tests: Vec<Asset> = links
        .iter()
        .filter(|l| !l.inline)
        .map(|l| {
            let focus_hit = focus_set.contains(l.test_file.as_str())
                || l.implementation_files
                    .iter()
                    .any(|f| focus_set.contains(f.as_str()));
            let prio = l
                .implementation_files
                .iter()
                .map(|f| files::path_priority(f).0)
                .chain(std::iter::once(files::path_priority(&l.test_file).0))
                .min_by_key(|p| prio_rank(p))
                .unwrap_or("low");
            let r = if focus_hit {
                0.9
            } else if l.implementation_files.is_empty() {
                0.4
            } else {
                0.6
            };
            asset(&l.test_file, r, prio)
        })
        .collect();
    tests.extend(
        of_kind(Kind::Test)
            .filter(|(_, c)| c.role == PathRole::TestSupport)
            .map(|(f, _)| asset(f, 0.5, "medium")),
    );
    let mut config: Vec<Asset> = of_kind(Kind::Config)
        .map(|(f, _)| {
            let (r, p) = if files::file_class(f).role == PathRole::TestConfig {
                (0.8, "high")
            } else if project::is_manifest(f) {
                (0.7, "medium")
            } else {
                (0.4, "low")
            };
            asset(f, r, p)
        })
        .collect();
    let mut documentation: Vec<Asset> = of_kind(Kind::Documentation)
        .map(|(f, _)| {
            let root_readme = !f.contains('/') && f.to_ascii_uppercase().starts_with("README");
            let (r, p) = if root_readme {
                (0.6, "medium")
            } else {
                (0.3, "low")
            };
            asset(f, r, p)
        })
        .collect();
    for (list, cap) in [
        (&mut source_code, 100),
        (&mut tests, 100),
        (&mut config, 50),
        (&mut documentation, 50),
    ] {
        list.sort_by(|a, b| {
            b.relevance
                .total_cmp(&a.relevance)
                .then_with(|| a.path.cmp(&b.path))
        });
        list.truncate(cap);
    }
    Assets {
        source_code,
        tests,
        config,
        documentation,
    }
}

/// Symbols of the files the plan will target, so task requirements can
/// name what to call.
fn add_target_symbols(root: &Path, package: &mut ContextPackage, family_of: &HashMap<&str, Lang>) {
    let targets: Vec<String> = select_targets(package)
        .into_iter()
        .map(|t| t.file)
        .collect();
    let symbols: Vec<Vec<String>> = par_map(&targets, |t| {
        let Some(fam) = family_of.get(t.as_str()) else {
            return Vec::new();
        };
        read_bounded(&root.join(t), READ_SYMBOLS)
            .map(|text| focus::public_symbols(*fam, &text, 12))
            .unwrap_or_default()
    });
    for (t, syms) in targets.iter().zip(symbols) {
        if syms.is_empty() {
            continue;
        }
        match package.assets.source_code.iter_mut().find(|a| &a.path == t) {
            Some(a) => a.symbols = syms,
            None => {
                let (p, _) = files::path_priority(t);
                let mut a = asset(t, 0.5, p);
                a.symbols = syms;
                package.assets.source_code.push(a);
            }
        }
    }
}

/// One `focus_areas` line: a directory, how many of its files are in
/// focus, and why — each reason with its own count when they differ, so a
/// keyword match is never labelled "changed by the source session".
fn area_line(dir: &str, reasons: BTreeMap<String, u32>) -> String {
    let n: u32 = reasons.values().sum();
    if n == 0 {
        return reasons.into_keys().next().unwrap_or_default();
    }
    let mut list: Vec<(String, u32)> = reasons.into_iter().collect();
    list.sort_by_key(|(why, count)| {
        (
            why != SOURCE_CHANGED,
            std::cmp::Reverse(*count),
            why.clone(),
        )
    });
    let why = match list.as_slice() {
        [(why, _)] => why.clone(),
        _ => list
            .iter()
            .map(|(why, count)| format!("{why}: {count}"))
            .collect::<Vec<_>>()
            .join("; "),
    };
    format!("{dir}/ — {n} file{} ({why})", if n == 1 { "" } else { "s" })
}

/// The focus reason of a file the source session changed.
const SOURCE_CHANGED: &str = "changed by the source session";

fn existing_test(l: &TestLink) -> ExistingTest {
    ExistingTest {
        test_file: l.test_file.clone(),
        implementation_files: l.implementation_files.iter().cloned().collect(),
        layer: Some(l.layer.to_string()),
        inline: l.inline,
        matched_by: l.matched_by.iter().map(|s| s.to_string()).collect(),
    }
}

/// A path as another tool's summary or task writes it, as a project file:
/// `calc\\stats.py` (Windows separators), `./calc/stats.py`,
/// `calc/stats.py:42` (a line), or an absolute path (`D:\\work\\proj\\calc\\stats.py`,
/// `/home/u/proj/calc/stats.py`), which maps to its longest trailing part
/// that is a project file (the checkout may live anywhere). `None` when no
/// project file matches.
pub fn project_path(raw: &str, files: &BTreeSet<&str>) -> Option<String> {
    let mut p = raw.trim().replace('\\', "/");
    // `file:42` and `file:42:7` → `file` (a drive letter's `D:` is followed
    // by `/`, never by digits alone).
    while let Some((head, tail)) = p.rsplit_once(':') {
        if tail.is_empty() || !tail.bytes().all(|b| b.is_ascii_digit()) {
            break;
        }
        p = head.to_string();
    }
    let mut p = p.as_str();
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    if files.contains(p) {
        return Some(p.to_string());
    }
    let bytes = p.as_bytes();
    let absolute = p.starts_with('/')
        || p.starts_with("~/")
        || (bytes.len() > 2
            && bytes[0].is_ascii_alphabetic()
            && bytes[1] == b':'
            && bytes[2] == b'/');
    if !absolute {
        return None;
    }
    let parts: Vec<&str> = p
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    (1..parts.len())
        .map(|i| parts[i..].join("/"))
        .find(|cand| files.contains(cand.as_str()))
}

/// Paths a summary mentions that are project files.
fn mentioned_files(text: &str, files: &BTreeSet<&str>) -> Vec<String> {
    let mut out = BTreeSet::new();
    for token in text.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '`' | '(' | ')' | '[' | ']' | ',' | ';' | '"' | '\'' | '<' | '>' | '|' | '*'
            )
    }) {
        let t = token.trim_end_matches([':', '.']);
        if t.contains('.')
            && let Some(p) = project_path(t, files)
        {
            out.insert(p);
        }
    }
    out.into_iter().collect()
}

fn source_context(src: &SourceSession, files: &BTreeSet<&str>) -> SourceContext {
    let modified: BTreeMap<&str, &Vec<String>> = src
        .completed_tasks
        .iter()
        .map(|(id, f)| (id.as_str(), f))
        .collect();
    let mut all = BTreeSet::new();
    let mut summaries = Vec::new();
    for (task_id, path, text) in &src.summaries {
        let mut changed: BTreeSet<String> = mentioned_files(text, files).into_iter().collect();
        if let Some(m) = modified.get(task_id.as_str()) {
            changed.extend(m.iter().filter_map(|f| project_path(f, files)));
        }
        all.extend(changed.iter().cloned());
        summaries.push(ImplementationSummary {
            task_id: task_id.clone(),
            summary_path: path.clone(),
            changed_files: changed.into_iter().collect(),
        });
    }
    for (_, m) in &src.completed_tasks {
        all.extend(m.iter().filter_map(|f| project_path(f, files)));
    }
    SourceContext {
        source_session_id: src.id.clone(),
        description: src.description.clone(),
        completed_tasks: src
            .completed_tasks
            .iter()
            .map(|(id, _)| id.clone())
            .collect(),
        changed_files: all.into_iter().collect(),
        implementation_summaries: summaries,
        extra: Default::default(),
    }
}

/// A file the test plan targets.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub file: String,
    pub priority: String,
    /// Named by the description or changed by the source session.
    pub focus: bool,
    /// Existing test files that cover it (empty: a coverage gap).
    pub tests: Vec<String>,
    /// Where a new test goes, for gaps.
    pub suggested_test_file: Option<String>,
    pub symbols: Vec<String>,
    /// Line coverage from a report, when one exists.
    pub line_coverage: Option<f64>,
}

/// The source files the plan targets, at most [`MAX_TARGETS`]: focus
/// files and coverage gaps, focus first, then by priority, gaps before
/// tested files, then path. With no focus file and no gap, the tested
/// source files (their tests get extended).
pub fn select_targets(pkg: &ContextPackage) -> Vec<Target> {
    let gaps: BTreeMap<&str, &MissingTest> = pkg
        .test_coverage
        .missing_tests
        .iter()
        .map(|m| (m.implementation_file.as_str(), m))
        .collect();
    let mut tests_of: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for t in &pkg.test_coverage.existing_tests {
        for f in &t.implementation_files {
            tests_of
                .entry(f.as_str())
                .or_default()
                .push(t.test_file.clone());
        }
    }
    let focus: BTreeSet<&str> = pkg.focus_paths.iter().map(String::as_str).collect();
    let is_source = |f: &str| {
        let c = files::file_class(f);
        c.kind == Kind::Source && c.family.is_some()
    };
    // Package entry files that re-export (`__init__.py`, `index.js`) run
    // whenever their package is imported: tested ones are not targets.
    let reexport =
        |f: &str| matches!(files::stem(f), "__init__" | "index") && tests_of.contains_key(f);
    let mut cands: BTreeSet<&str> = gaps.keys().copied().collect();
    cands.extend(
        focus
            .iter()
            .copied()
            .filter(|f| is_source(f) && !reexport(f)),
    );
    if cands.is_empty() {
        cands.extend(tests_of.keys().copied().filter(|f| is_source(f)));
    }
    let prio = |f: &str| {
        gaps.get(f).map_or_else(
            || files::path_priority(f).0.to_string(),
            |m| m.priority.clone(),
        )
    };
    let mut list: Vec<&str> = cands.into_iter().collect();
    list.sort_by_cached_key(|f| {
        (
            !focus.contains(f),
            prio_rank(&prio(f)),
            !gaps.contains_key(f),
            f.to_string(),
        )
    });
    list.truncate(MAX_TARGETS);
    let symbols: BTreeMap<&str, &Vec<String>> = pkg
        .assets
        .source_code
        .iter()
        .map(|a| (a.path.as_str(), &a.symbols))
        .collect();
    let coverage: BTreeMap<&str, f64> = pkg
        .test_coverage
        .line_coverage
        .iter()
        .flat_map(|l| l.files.iter().map(|f| (f.path.as_str(), f.percent)))
        .collect();
    list.into_iter()
        .map(|f| Target {
            file: f.to_string(),
            priority: prio(f),
            focus: focus.contains(f),
            tests: {
                let mut t = tests_of.get(f).cloned().unwrap_or_default();
                t.sort();
                t.dedup();
                t
            },
            suggested_test_file: gaps.get(f).map(|m| m.suggested_test_file.clone()),
            symbols: symbols.get(f).map(|s| (*s).clone()).unwrap_or_default(),
            line_coverage: coverage.get(f).copied(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentioned_files_are_project_files_only() {
        let files: BTreeSet<&str> = ["src/lib.rs", "src/auth.rs", "README.md"]
            .into_iter()
            .collect();
        let text = "Changed `src/auth.rs` and src/lib.rs:42, see ./README.md. Not src/none.rs.";
        assert_eq!(
            mentioned_files(text, &files),
            ["README.md", "src/auth.rs", "src/lib.rs"]
        );
    }

    #[test]
    fn focus_areas_keep_each_reason_apart() {
        let one = BTreeMap::from([("path matches 'stats'".to_string(), 2)]);
        assert_eq!(
            area_line("calc", one),
            "calc/ — 2 files (path matches 'stats')"
        );
        let mixed = BTreeMap::from([
            ("path matches 'stats'".to_string(), 2),
            (SOURCE_CHANGED.to_string(), 1),
        ]);
        assert_eq!(
            area_line("calc", mixed),
            "calc/ — 3 files (changed by the source session: 1; path matches 'stats': 2)"
        );
        let none = BTreeMap::from([("every source root is in scope".to_string(), 0)]);
        assert_eq!(area_line("", none), "every source root is in scope");
    }

    #[test]
    fn windows_and_absolute_paths_map_to_project_files() {
        let files: BTreeSet<&str> = ["calc/stats.py", "stats.py", "calc/__init__.py"]
            .into_iter()
            .collect();
        for (raw, want) in [
            ("calc\\stats.py", Some("calc/stats.py")),
            ("D:\\work\\proj\\calc\\stats.py", Some("calc/stats.py")),
            ("d:/work/proj/calc/stats.py:42", Some("calc/stats.py")),
            ("/home/u/proj/calc/stats.py", Some("calc/stats.py")),
            ("~/proj/calc/stats.py", Some("calc/stats.py")),
            ("C:\\elsewhere\\stats.py", Some("stats.py")),
            (".\\calc\\stats.py:10:2", Some("calc/stats.py")),
            ("other/stats.py", None),
            ("D:\\work\\none.py", None),
            ("calc/stats.py", Some("calc/stats.py")),
        ] {
            assert_eq!(project_path(raw, &files).as_deref(), want, "{raw}");
        }
        let summary = "### Files Modified\n- `D:\\work\\proj\\calc\\stats.py`: mean()\n- `calc\\__init__.py`: export\n";
        assert_eq!(
            mentioned_files(summary, &files),
            ["calc/__init__.py", "calc/stats.py"]
        );
    }
}

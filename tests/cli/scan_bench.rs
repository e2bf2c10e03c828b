//! Timing of the scans on a generated project of 1,000 files (no timed
//! assertions; run with `cargo nextest run --test cli -E
//! 'test(/^scan_bench::/)' --run-ignored only --no-capture` and read the
//! printed medians). The files are copies
//! of this repository's own sources and fixtures (Rust, Python, JS/TS, Go),
//! cycled until there are 1,000, so sizes and shapes are real code.

use std::path::Path;
use std::time::{Duration, Instant};

use wfx::project::is_test_path;
use wfx::scan::ai_issues::scan_files;
use wfx::scan::antipatterns::scan_test_files;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[test]
#[ignore = "benchmark: prints timings, run explicitly"]
fn scan_1000_files() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources: Vec<std::path::PathBuf> = walkdir::WalkDir::new(repo.join("src"))
        .into_iter()
        .chain(walkdir::WalkDir::new(repo.join("fixtures")))
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("rs" | "py" | "js" | "ts" | "go")
            )
        })
        .collect();
    sources.sort();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    for f in ["package.json", "Cargo.toml", "pyproject.toml", "go.mod"] {
        let from = repo.join("fixtures/scan").join(match f {
            "package.json" => "node",
            "Cargo.toml" => "rust",
            "pyproject.toml" => "py",
            _ => "go",
        });
        std::fs::copy(from.join(f), root.join(f)).unwrap();
    }
    let mut rels = Vec::new();
    let mut lines = 0usize;
    let mut bytes = 0usize;
    for i in 0..1000 {
        let src = &sources[i % sources.len()];
        let name = src.file_name().unwrap().to_string_lossy().into_owned();
        let rel = if is_test_path(&name) || src.to_string_lossy().contains("/tests/") {
            format!("tests/d{:02}/{i:04}_{name}", i % 40)
        } else {
            format!("src/d{:02}/{i:04}_{name}", i % 40)
        };
        let text = std::fs::read_to_string(src).unwrap();
        lines += text.lines().count();
        bytes += text.len();
        let dest = root.join(&rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::write(dest, text).unwrap();
        rels.push(rel);
    }
    let tests: Vec<String> = rels.iter().filter(|r| is_test_path(r)).cloned().collect();
    let mut ai = Vec::new();
    let mut ap = Vec::new();
    let (mut n_ai, mut n_ap) = (0, 0);
    for _ in 0..5 {
        let t = Instant::now();
        n_ai = scan_files(root, &rels).len();
        ai.push(t.elapsed());
        let t = Instant::now();
        n_ap = scan_test_files(root, &tests).len();
        ap.push(t.elapsed());
    }
    println!(
        "{} files, {lines} lines, {} KiB ({} test files); debug={}",
        rels.len(),
        bytes / 1024,
        tests.len(),
        cfg!(debug_assertions)
    );
    println!(
        "ai_issues::scan_files       median {:?} over 5 runs ({n_ai} findings)",
        median(ai)
    );
    println!(
        "antipatterns::scan_test_files median {:?} over 5 runs ({n_ap} findings)",
        median(ap)
    );
}

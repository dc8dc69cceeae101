//! The bad-scenario corpus: every `tests/bad_scenarios/NN-name.toml` must be refused with exit
//! code 2, without a panic, with every line of `NN-name.expected` on stderr (file:line:column,
//! the key, and what would be valid), and without touching the output folder.
use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .expect("out dir")
        .map(|e| {
            let p = e.expect("entry").path();
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            (name, std::fs::read(&p).expect("read"))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn corpus_has_at_least_30_cases_each_with_expectations() {
    let files = corpus();
    assert!(files.len() >= 30, "only {} bad scenarios", files.len());
    for f in &files {
        let exp = f.with_extension("expected");
        let text =
            std::fs::read_to_string(&exp).unwrap_or_else(|_| panic!("{} missing", exp.display()));
        let stem = f.file_name().expect("name").to_string_lossy().into_owned();
        let first = text.lines().next().unwrap_or_default();
        assert!(
            first.starts_with(&stem) && first.matches(':').count() == 3,
            "{}: the first line must be `{stem}:LINE:COLUMN:`",
            exp.display()
        );
        assert!(
            text.lines().count() >= 3,
            "{}: need location, key and message",
            exp.display()
        );
    }
}

#[test]
fn every_bad_scenario_is_refused_with_its_message() {
    let mut failures = Vec::new();
    for file in corpus() {
        let expected = std::fs::read_to_string(file.with_extension("expected")).unwrap_or_default();
        let tmp = tempfile::tempdir().expect("tempdir");
        let out = tmp.path().join("out");
        std::fs::create_dir(&out).expect("out");
        std::fs::write(out.join("mine.txt"), "user data").expect("user file");
        let before = listing(&out);
        // Run from the corpus folder with a relative path so messages name `NN-name.toml`.
        let output = Command::cargo_bin("evalsim")
            .expect("binary")
            .current_dir(file.parent().expect("parent"))
            .arg("run")
            .arg(file.file_name().expect("name"))
            .arg("--out")
            .arg(&out)
            .arg("--quiet")
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let name = file.display();
        if output.status.code() != Some(2) {
            failures.push(format!(
                "{name}: exit {:?}, want 2\n{stderr}",
                output.status.code()
            ));
        }
        if stderr.contains("panicked") || stderr.contains("RUST_BACKTRACE") {
            failures.push(format!("{name}: panicked\n{stderr}"));
        }
        for needle in expected.lines().filter(|l| !l.trim().is_empty()) {
            if !stderr.contains(needle) {
                failures.push(format!("{name}: stderr lacks {needle:?}\n{stderr}"));
            }
        }
        if !output.stdout.is_empty() {
            failures.push(format!("{name}: wrote to stdout"));
        }
        if listing(&out) != before {
            failures.push(format!("{name}: the output folder changed"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

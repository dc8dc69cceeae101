//! Determinism: the same scenario and seed give byte-identical CSV and JSON for 1, 2 and 4
//! threads, and across two runs with the same thread count.
use std::path::Path;

use assert_cmd::Command;

fn tables(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "csv" || x == "json"))
        .map(|p| {
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            (name, std::fs::read(&p).expect("read"))
        })
        .collect();
    v.sort();
    v
}

fn run(scenario: &str, threads: &str, out: &Path) {
    Command::cargo_bin("evalsim")
        .expect("binary")
        .args([
            "run",
            scenario,
            "--no-figures",
            "--quiet",
            "--seed",
            "11",
            "--threads",
            threads,
            "--out",
        ])
        .arg(out)
        .assert()
        .success();
}

#[test]
fn csv_and_json_are_identical_for_1_2_4_threads_and_across_runs() {
    for scenario in ["note", "concentrated", "verifier", "submissions"] {
        let dir = tempfile::tempdir().expect("tempdir");
        // One repeated run (of the cheapest scenario) checks across runs; each scenario runs
        // on 1, 2 and 4 threads.
        let runs: &[(&str, &str)] = if scenario == "note" {
            &[("1", "t1"), ("2", "t2"), ("4", "t4"), ("4", "t4-again")]
        } else {
            &[("1", "t1"), ("2", "t2"), ("4", "t4")]
        };
        for &(threads, name) in runs {
            run(scenario, threads, &dir.path().join(name));
        }
        let reference = tables(&dir.path().join("t1"));
        // `verifier` has one experiment: its table, checks, results and summary.
        let least = if matches!(scenario, "verifier" | "submissions") {
            4
        } else {
            5
        };
        assert!(
            reference.len() >= least,
            "{scenario}: {} tables",
            reference.len()
        );
        for (_, name) in &runs[1..] {
            let other = tables(&dir.path().join(name));
            assert_eq!(reference.len(), other.len(), "{scenario} {name}");
            for ((fa, a), (fb, b)) in reference.iter().zip(&other) {
                assert_eq!(fa, fb);
                assert!(a == b, "{scenario}: {fa} differs between t1 and {name}");
            }
        }
    }
}

/// Per-problem disagreement (`shift_sd`): the fixed deviations and every simulated number are
/// the same for 1, 2 and 4 threads.
#[test]
fn shift_sd_tables_are_identical_for_1_2_4_threads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let note =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/note.toml"))
            .expect("note");
    // Every model of the note gets its own deviation SD.
    let src = note
        .replace("shift = 0.0\n", "shift = 0.0\nshift_sd = 0.7\n")
        .replace("shift = -0.6\n", "shift = -0.6\nshift_sd = 1.1\n")
        .replace("shift = 0.21\n", "shift = 0.21\nshift_sd = 0.4\n");
    assert_eq!(src.matches("shift_sd").count(), 3);
    let file = dir.path().join("note-shift.toml");
    std::fs::write(&file, src).expect("write");
    let scenario = file.to_str().expect("utf-8 path");
    let names = ["t1", "t2", "t4"];
    for (threads, name) in ["1", "2", "4"].iter().zip(names) {
        run(scenario, threads, &dir.path().join(name));
    }
    let reference = tables(&dir.path().join("t1"));
    assert!(reference.len() >= 5);
    let h2h = reference
        .iter()
        .find(|(f, _)| f == "head-to-head.csv")
        .expect("head-to-head table");
    assert!(String::from_utf8_lossy(&h2h.1).contains("logit_corr_population"));
    for name in &names[1..] {
        assert!(
            reference == tables(&dir.path().join(name)),
            "shift_sd tables differ between t1 and {name}"
        );
    }
}

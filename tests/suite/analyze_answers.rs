//! `analyze` reports the unparsed share (samples with no extractable answer) and how many answers
//! its normaliser merged into an answer written differently: in the terminal summary, summary.json
//! and the per-model CSV. Counts are checked against the fixtures read by eye.
use std::path::Path;

use assert_cmd::Command;

const ANALYZE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/analyze/");

/// Runs `analyze` on `input` with `extra` arguments; returns (stdout, summary.json, model CSV).
fn run(input: &str, extra: &[&str]) -> (String, serde_json::Value, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let assert = Command::cargo_bin("evalsim")
        .expect("binary built")
        .arg("analyze")
        .arg(Path::new(ANALYZE).join(input))
        .args(["--threads", "1", "--bootstrap", "0", "--no-figures"])
        .args(extra)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).expect("summary.json"))
            .expect("valid json");
    let csv = std::fs::read_dir(&out)
        .expect("out dir")
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().starts_with("model-"))
        .map(|e| std::fs::read_to_string(e.path()).expect("model csv"))
        .expect("a model CSV");
    (stdout, json, csv)
}

fn answers(json: &serde_json::Value) -> &serde_json::Value {
    &json["models"][0]["summary"]["answers"]
}

/// canonical.jsonl and canonical.csv hold the same 6 samples: p1's third answer is null (JSONL)
/// or empty (CSV), the one unparsed sample. In the JSONL problem 2's " 999 " is the normalised
/// "999" written differently, the one merge ("1/2" is graded against "0.5" but written once, so
/// not merged); the CSV reader trims its fields, so there " 999 " arrives as "999": no merge.
#[test]
fn canonical_inputs_have_one_unparsed_answer_of_six_and_the_jsonl_one_merge() {
    for (input, merged) in [("canonical.jsonl", 1usize), ("canonical.csv", 0)] {
        let (stdout, json, csv) = run(input, &[]);
        let a = answers(&json);
        assert_eq!(a["unparsed"], 1, "{input}: {a}");
        assert_eq!(a["merged"], merged, "{input}: {a}");
        let share = merged as f64 / 6.0;
        assert!((a["unparsed_share"].as_f64().unwrap() - 1.0 / 6.0).abs() < 1e-15);
        assert!((a["merged_share"].as_f64().unwrap() - share).abs() < 1e-15);
        let line = format!(
            "answers: 16.7% unparsed (1 of 6 samples had no extractable answer); the normaliser merged {merged} samples ({:.1}%)",
            100.0 * share
        );
        assert!(stdout.contains(&line), "{input}:\n{stdout}");
        let rows: Vec<(String, f64)> = csv
            .lines()
            .filter(|l| l.contains(",unparsed_share,") || l.contains(",merged_share,"))
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                (f[3].to_string(), f[6].parse().expect("estimate"))
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                ("unparsed_share".to_string(), 1.0 / 6.0),
                ("merged_share".to_string(), share)
            ],
            "{input}:\n{csv}"
        );
    }
}

/// With `--no-normalize` answers are compared as written: nothing is merged, and the empty
/// answer is still unparsed.
#[test]
fn no_normalize_merges_nothing() {
    let (_, json, _) = run("canonical.jsonl", &["--no-normalize"]);
    let a = answers(&json);
    assert_eq!(a["unparsed"], 1, "{a}");
    assert_eq!(a["merged"], 0, "{a}");
}

/// An inspect_ai log written by inspect_ai: the third epoch of sample 1 answered "18.0" after
/// "18", which the normaliser merges (both graded by the harness, which said C for both); no
/// answer is missing.
#[test]
fn inspect_log_merges_18_0_into_18() {
    let (stdout, json, _) = run("inspect_log_gsm8k.json", &[]);
    let a = answers(&json);
    assert_eq!(a["unparsed"], 0, "{a}");
    assert_eq!(a["merged"], 1, "{a}");
    assert!(
        stdout.contains("the normaliser merged 1 samples"),
        "{stdout}"
    );
}

/// Pass/fail-only inputs (human-eval results carry no answers) report no answer counts.
#[test]
fn pass_fail_only_input_reports_no_answer_counts() {
    let (stdout, json, csv) = run("humaneval_samples.jsonl_results.jsonl", &[]);
    assert!(answers(&json).is_null(), "{json}");
    assert!(!stdout.contains("unparsed"), "{stdout}");
    assert!(!csv.contains("unparsed_share"), "{csv}");
}

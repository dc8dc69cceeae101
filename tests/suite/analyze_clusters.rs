//! `evalsim analyze` on clustered data, answer groups and interval labels, from outside: the
//! headline interval from the clustered SE, the labels that say what each interval uses, one
//! problem, the vote by written answer, the first-k vote and the bound on `--bootstrap`.
use std::path::Path;

use crate::common::{evalsim, refused_saying, write_file};

/// Runs `analyze` on `input` with `extra`; returns (stdout, stderr, summary.json).
fn run(input: &Path, extra: &[&str]) -> (String, String, serde_json::Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let assert = evalsim()
        .arg("analyze")
        .arg(input)
        .args(["--threads", "1", "--bootstrap", "0", "--no-figures"])
        .args(extra)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let o = assert.get_output();
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).expect("summary.json"))
            .expect("valid json");
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        json,
    )
}

/// 40 problems of 4 samples in `clusters` tasks of like problems (a problem's count of right
/// answers is its task's index mod 5), the task in a `task` column.
fn clustered_rows(clusters: usize) -> String {
    let mut t = String::new();
    for i in 0..40 {
        let task = i % clusters;
        let right = task % 5;
        for s in 0..4 {
            t += &format!(
                "{{\"problem_id\": \"p{i}\", \"task\": \"t{task}\", \"correct\": {}, \"answer\": \"{}\"}}\n",
                s < right,
                if s < right { "yes" } else { "no" }
            );
        }
    }
    t
}

/// The headline 95% interval ignored the clusters: with a `task` column it rests on the
/// clustered variance (CR2, Bell-McCaffrey t) and says so; the interval from the question SE stays in
/// summary.json, and few clusters are warned about once on stderr.
#[test]
fn headline_interval_used_the_question_se_beside_a_clustered_se_three_times_larger() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write_file(dir.path(), "tasks.jsonl", &clustered_rows(8));
    let (stdout, stderr, json) = run(&f, &[]);
    let p1 = &json["models"][0]["summary"]["pass_at_k"][0];
    assert_eq!(p1["ci_clusters"], 8, "{p1}");
    let ci = p1["ci95"].as_array().expect("ci95");
    let plain = p1["unclustered_ci95"].as_array().expect("unclustered");
    let width = |v: &Vec<serde_json::Value>| v[1].as_f64().unwrap() - v[0].as_f64().unwrap();
    assert!(width(ci) > 2.0 * width(plain), "{ci:?} vs {plain:?}");
    assert!(
        stdout.contains("from the bias-reduced clustered SE over 8 clusters (CR2, Bell-McCaffrey t)")
            && stdout.contains(
                "clustered variance (CR2, 8 clusters), t quantile with Bell-McCaffrey degrees of freedom (at most 7)"
            ),
        "{stdout}"
    );
    assert_eq!(
        stderr.matches("only 8 clusters").count(),
        1,
        "one few-cluster warning: {stderr}"
    );
    // 20 tasks: no warning.
    let f = write_file(dir.path(), "many.jsonl", &clustered_rows(20));
    let (_, stderr, _) = run(&f, &[]);
    assert!(!stderr.contains("clusters"), "{stderr}");
}

/// `--compare` on clustered data uses the clustered paired SE for its interval.
#[test]
fn paired_comparison_of_clustered_data_used_the_unclustered_paired_se() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = write_file(dir.path(), "a.jsonl", &clustered_rows(12));
    let b_rows = clustered_rows(12).replacen("\"correct\": false", "\"correct\": true", 30);
    let b = write_file(dir.path(), "b.jsonl", &b_rows);
    let out = dir.path().join("out");
    evalsim()
        .arg("analyze")
        .args([&a, &b])
        .args([
            "--compare",
            "--bootstrap",
            "0",
            "--no-figures",
            "--reruns",
            "0",
        ])
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "clustered paired variance (CR2, 12 clusters), t quantile with Bell-McCaffrey degrees of freedom (at most 11)",
        ));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).expect("json"))
            .expect("valid");
    let d = &json["comparison"]["pass_at_1"];
    assert_eq!(d["ci_clusters"], 12, "{d}");
    assert!(d["clustered_se"].is_number() && d["unclustered_ci95"].is_array());
    let csv = std::fs::read_to_string(out.join("comparison.csv")).expect("csv");
    assert!(csv.contains(",wilson-clustered,12,"), "{csv}");
}

/// The interval label said "t(N-1) quantile" while the numbers use adaptive degrees of
/// freedom; every label now says what its numbers use.
#[test]
fn interval_label_said_t_n_minus_1_while_the_numbers_use_adaptive_df() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/analyze/canonical.jsonl");
    let (stdout, _, _) = run(&f, &[]);
    assert!(!stdout.contains("t(N-1) quantile"), "{stdout}");
    assert!(
        stdout.contains("t quantile with adaptive degrees of freedom"),
        "{stdout}"
    );
}

/// One problem got no interval: it gets the bound after one problem, with a note saying why.
#[test]
fn one_problem_got_no_interval_and_no_reason() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write_file(
        dir.path(),
        "one.jsonl",
        "{\"problem_id\": \"p\", \"correct\": 1}\n{\"problem_id\": \"p\", \"correct\": 0}\n",
    );
    let (stdout, _, json) = run(&f, &[]);
    let p1 = &json["models"][0]["summary"]["pass_at_k"][0];
    let ci: Vec<f64> = p1["ci95"]
        .as_array()
        .expect("an interval")
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(
        (ci[0] - 0.025).abs() < 1e-12 && (ci[1] - 0.975).abs() < 1e-12,
        "{ci:?}"
    );
    assert!(
        stdout.contains("with one problem this holds the mean of any population of scores with probability 95% (Markov's inequality)"),
        "{stdout}"
    );
}

/// Two written answers graded right vote apart (the split effect), and one answer graded both
/// right and wrong is named in a warning with its count.
#[test]
fn an_answer_graded_both_ways_is_counted_and_warned_about() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rows = [
        ("No.", true),
        ("No", true),
        ("Yes", false),
        ("No", false),
        ("Yes", false),
    ];
    let text: String = rows
        .iter()
        .map(|(a, c)| format!("{{\"problem_id\": \"q\", \"correct\": {c}, \"answer\": \"{a}\"}}\n"))
        .collect();
    let f = write_file(dir.path(), "split.jsonl", &text);
    let (_, stderr, json) = run(&f, &["--rule", "strict"]);
    let s = &json["models"][0]["summary"];
    assert_eq!(s["answers"]["ambiguous"], 1, "{s}");
    assert!(
        stderr.contains("1 answer(s) in 1 problem(s) were graded right in some samples and wrong"),
        "{stderr}"
    );
    // At k = 5 "Yes" (2) ties "No" (2): strict gives 0; merged into one right group it was 1.
    assert_eq!(s["maj_at_k"][4]["estimate"], 0.0, "{s}");
}

/// `--bootstrap 1000000000` panicked (capacity overflow) or aborted; it is refused naming the
/// flag and the valid range.
#[test]
fn bootstrap_without_upper_bound_panicked_with_capacity_overflow() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/analyze/canonical.jsonl");
    refused_saying(
        evalsim()
            .arg("analyze")
            .arg(&f)
            .args(["--bootstrap", "1000000000", "--no-figures"]),
        &["--bootstrap", "0..=100000"],
    );
}

/// `--cluster` names an inspect_ai metadata key; on a canonical file it is refused, saying what
/// clusters canonical files.
#[test]
fn cluster_key_on_a_canonical_file_is_refused() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/analyze/canonical.jsonl");
    refused_saying(
        evalsim()
            .arg("analyze")
            .arg(&f)
            .args(["--cluster", "subject", "--no-figures"]),
        &["--cluster subject", "`cluster` (or `task`) column"],
    );
}

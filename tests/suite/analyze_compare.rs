//! `evalsim analyze --compare` read from outside: what it says when reruns cannot be simulated,
//! the p-values in every output, each comparison row's own test, the comparison figure and the
//! note under a table whose intervals rest on the exact bound.
use std::path::Path;

use crate::common::{evalsim, write_file};

/// `problems` problems of `n` samples for one model: problem i has `right(i)` right answers
/// (answer "yes") and the rest wrong (answer "no").
fn rows(model: &str, problems: usize, n: usize, right: impl Fn(usize) -> usize) -> String {
    let mut t = String::from("problem_id,model,sample,correct,answer\n");
    for i in 0..problems {
        for s in 0..n {
            let ok = s < right(i);
            t += &format!(
                "p{i},{model},{s},{},{}\n",
                u8::from(ok),
                if ok { "yes" } else { "no" }
            );
        }
    }
    t
}

/// Runs `analyze --compare` on two files; returns (stdout, output folder).
fn compare(dir: &Path, a: &str, b: &str, extra: &[&str]) -> (String, std::path::PathBuf) {
    let fa = write_file(dir, "a.csv", a);
    let fb = write_file(dir, "b.csv", b);
    let out = dir.join("out");
    let assert = evalsim()
        .arg("analyze")
        .args([&fa, &fb])
        .args(["--compare", "--bootstrap", "0", "--threads", "1"])
        .args(extra)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    (
        String::from_utf8_lossy(&assert.get_output().stdout).into_owned(),
        out,
    )
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// With one sample per problem the reruns repeat the data: the output said "reverses the order
/// with probability 0"; it now says the probability cannot be estimated, on the terminal and
/// in report.md, and leaves the CSV cell empty.
#[test]
fn one_sample_per_problem_printed_a_rerun_reversal_probability_of_0() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = rows("a", 12, 1, |i| usize::from(i % 4 == 0));
    let b = rows("b", 12, 1, |i| usize::from(i % 4 == 0 || i == 1));
    let (stdout, out) = compare(dir.path(), &a, &b, &["--no-figures"]);
    let md = read(&out.join("report.md"));
    for text in [&stdout, &md] {
        assert!(
            text.contains("cannot be estimated from these data"),
            "{text}"
        );
        assert!(!text.contains("probability 0"), "{text}");
    }
    let csv = read(&out.join("comparison.csv"));
    let row = csv.lines().nth(1).expect("pass@1 row");
    assert!(row.contains(",1,0,1,,spread,"), "{row}");
}

/// report.md printed "p = 0.00" where the terminal printed 0.003: both now print the same two
/// significant digits, and the CSV keeps full precision.
#[test]
fn report_md_printed_p_as_0_00_where_the_terminal_said_0_003() {
    let dir = tempfile::tempdir().expect("tempdir");
    // B one answer better on 11 of 12 problems, A on none: p = 2 / 2^11 = 0.0009765625.
    let a = rows("a", 12, 4, |i| i % 3);
    let b = rows("b", 12, 4, |i| if i == 0 { 0 } else { i % 3 + 1 });
    let (stdout, out) = compare(dir.path(), &a, &b, &["--no-figures", "--reruns", "200"]);
    let md = read(&out.join("report.md"));
    for text in [&stdout, &md] {
        assert!(text.contains("two-sided p = 0.00098"), "{text}");
        assert!(
            !text.contains("p = 0.00 ") && !text.contains("p = 0.00."),
            "{text}"
        );
    }
    let csv = read(&out.join("comparison.csv"));
    assert!(csv.contains(",0.000976562"), "{csv}");
}

/// The maj@k row of comparison.csv repeated the pass@1 sign test; each row has its own.
#[test]
fn comparison_csv_repeated_the_pass_at_1_sign_test_on_the_maj_at_k_row() {
    let dir = tempfile::tempdir().expect("tempdir");
    // B one answer better everywhere; maj@4 moves only where A has 1 or 2 of 4 right.
    let a = rows("a", 12, 4, |i| [3, 2, 1, 0][i % 4]);
    let b = rows("b", 12, 4, |i| [4, 3, 2, 1][i % 4]);
    let (_, out) = compare(dir.path(), &a, &b, &["--no-figures", "--reruns", "0"]);
    let csv = read(&out.join("comparison.csv"));
    let header: Vec<&str> = csv.lines().next().expect("header").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let cells: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    // pass@1, pass@k at k = 2, 3, 4, maj@k at k = 1 to 4.
    assert_eq!(cells.len(), 8, "{csv}");
    let at = |metric: &str, k: &str| {
        cells
            .iter()
            .find(|r| r[col("metric")] == metric && r[col("k")] == k)
            .unwrap_or_else(|| panic!("{metric} at k = {k}: {csv}"))
    };
    let test = |r: &Vec<&str>| {
        [
            r[col("sign_test_b_better")],
            r[col("sign_test_a_better")],
            r[col("sign_test_p")],
        ]
        .map(str::to_string)
    };
    assert_eq!(test(at("pass@1", "1"))[..2], ["12", "0"], "{csv}");
    assert_eq!(test(at("maj@k", "4"))[..2], ["6", "0"], "{csv}");
    assert_eq!(at("maj@k", "4")[col("reversal_probability")], "", "{csv}");
}

/// `--compare` drew no figure of the comparison: it now writes comparison.png and .svg, the
/// paired differences with their intervals and a zero line, titled with the models and files.
#[test]
fn compare_drew_no_comparison_figure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = rows("model-a", 12, 4, |i| [3, 2, 1, 0][i % 4]);
    let b = rows("model-b", 12, 4, |i| [4, 3, 2, 1][i % 4]);
    let (_, out) = compare(dir.path(), &a, &b, &["--reruns", "0"]);
    assert!(out.join("comparison.png").is_file());
    let svg = read(&out.join("comparison.svg"));
    for text in [
        "model-b − model-a",
        "a.csv",
        "b.csv",
        "0: no difference",
        "maj@k (random ties); at k = 4",
        "pass@k (unbiased); at k = 4",
    ] {
        assert!(svg.contains(text), "{text}");
    }
    assert!(read(&out.join("report.md")).contains("![comparison.png](comparison.png)"));
}

/// For a 2-problem file the note called 7.5-85.1 "the exact bound 1 - 0.05^(1/N)" (which is
/// 77.6% there) once per metric and basis, for columns the terminal does not show; it now
/// names the interval it prints, [s - u s, s + u (1 - s)] with u = 77.6%, once per table.
#[test]
fn dagger_note_named_a_bound_the_table_did_not_print() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write_file(dir.path(), "two.csv", &rows("a", 2, 3, |_| 1));
    let out = dir.path().join("out");
    let assert = evalsim()
        .args(["analyze", "--bootstrap", "0", "--no-figures"])
        .arg(&f)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let md = read(&out.join("report.md"));
    for text in [&stdout, &md] {
        assert_eq!(text.matches("† pass@k at k = 3: every problem scores 1; pass@k at k = 1, 2: every problem has the same score").count(), 1, "{text}");
        assert_eq!(
            text.matches("u = 1 - 0.05^(1/N) = 77.6%").count(),
            1,
            "{text}"
        );
        assert!(text.contains("[s - u s, s + u (1 - s)]"), "{text}");
        assert!(text.contains("7.5–85.1†"), "{text}");
    }
    // The terminal shows no maj@k interval, so its note does not mention maj@k; report.md does.
    assert!(!stdout.contains("maj@k at k ="), "{stdout}");
    assert!(md.contains("; maj@k at k = 1"), "{md}");
    // The printed interval is the one the note names: s = 1/3, u = 1 - 0.05^(1/2).
    let u = 1.0 - 0.05f64.sqrt();
    let (s, lo, hi) = (1.0 / 3.0, 0.075, 0.851);
    assert!(((s - u * s) - lo).abs() < 5e-4 && ((s + u * (1.0 - s)) - hi).abs() < 5e-4);
}

/// The paired differences per k on a harness fixture (inspect logs of 3 and 2 epochs, 2 common
/// problems with 2 samples each): pass@k and maj@k at every k both models have, the same rows in
/// comparison.csv, summary.json, report.md and the figure, the terminal short (pass@1, pass@k and
/// maj@k at the largest k, and a pointer to the CSV).
#[test]
fn compare_reports_paired_differences_at_every_k_on_a_harness_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/harness/inspect");
    let out = dir.path().join("out");
    let assert = evalsim()
        .args(["analyze", "--compare", "--bootstrap", "0", "--reruns", "0"])
        .arg(fixtures.join("epochs-eval.eval"))
        .arg(fixtures.join("errored.eval"))
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let json: serde_json::Value =
        serde_json::from_str(&read(&out.join("summary.json"))).expect("json");
    let cmp = &json["comparison"];
    let ks = |key: &str| -> Vec<u64> {
        cmp[key]
            .as_array()
            .unwrap_or_else(|| panic!("{key}: {cmp}"))
            .iter()
            .map(|d| d["k"].as_u64().expect("k"))
            .collect()
    };
    assert_eq!((ks("pass_by_k"), ks("maj_by_k")), (vec![1, 2], vec![1, 2]));
    assert_eq!(cmp["pass_by_k"][0], cmp["pass_at_1"]);
    assert_eq!(cmp["maj_by_k"][1], cmp["maj_at_k"]);
    // maj@1 is pass@1: the same number and interval.
    for key in ["difference", "ci95", "ci_method"] {
        assert_eq!(cmp["maj_by_k"][0][key], cmp["pass_at_1"][key], "{key}");
    }
    assert_eq!(cmp["pass_by_k"][1]["ci_method"], "paired-score", "{cmp}");
    for key in ["difference", "ci95", "ci_method", "sign_test"] {
        assert_eq!(cmp["maj_by_k"][1][key], cmp["pass_at_1"][key], "{key}");
    }
    // comparison.csv: one row per metric and k, with the numbers of summary.json.
    let csv = read(&out.join("comparison.csv"));
    let header: Vec<&str> = csv.lines().next().expect("header").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let keys: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r[col("metric")], r[col("k")]))
        .collect();
    assert_eq!(
        keys,
        [
            ("pass@1", "1"),
            ("pass@k", "2"),
            ("maj@k", "1"),
            ("maj@k", "2")
        ]
    );
    for (row, d) in rows.iter().zip([
        &cmp["pass_by_k"][0],
        &cmp["pass_by_k"][1],
        &cmp["maj_by_k"][0],
        &cmp["maj_by_k"][1],
    ]) {
        let cell = |name: &str| row[col(name)].parse::<f64>().expect(name);
        assert_eq!(
            cell("difference"),
            d["difference"].as_f64().expect("difference")
        );
        assert_eq!(cell("ci_low"), d["ci95"][0].as_f64().expect("low"));
        assert_eq!(cell("ci_high"), d["ci95"][1].as_f64().expect("high"));
        assert_eq!(
            cell("sign_test_p"),
            d["sign_test"]["p_value"].as_f64().expect("p")
        );
    }
    // The terminal: pass@1, pass@2 and maj@2, and where every k is.
    for text in [
        "  pass@1: ",
        "  pass@2: ",
        "  maj@2 (random): ",
        "every k (4 rows",
    ] {
        assert!(stdout.contains(text), "{text}: {stdout}");
    }
    assert!(!stdout.contains("maj@1 (random):"), "{stdout}");
    let md = read(&out.join("report.md"));
    // maj@1, and maj@2 with random ties, are pass@1: one interval (Wilson) for the three.
    for text in [
        "| pass@2 |",
        "| maj@1 (random) |",
        "| maj@2 (random) |",
        "95% CI of the pass@1, maj@1 (random), maj@2 (random) differences: Wilson",
        "95% CI of the pass@2 difference: Tango-type",
    ] {
        assert!(md.contains(text), "{text}: {md}");
    }
    // The figure: both series against k on a log2 axis.
    let svg = read(&out.join("comparison.svg"));
    for text in [
        "k (samples per problem, log2 scale)",
        "pass@k (unbiased); at k = 2",
        "maj@k (random ties); at k = 2",
    ] {
        assert!(svg.contains(text), "{text}");
    }
}

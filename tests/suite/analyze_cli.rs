//! `evalsim analyze` and `evalsim fit` from outside: formats, comparison, errors, files, round trip.
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use evalsim::sim::synth::SynthSpec;
use predicates::prelude::*;

use crate::synth::write_jsonl;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/analyze/");

fn evalsim() -> Command {
    Command::cargo_bin("evalsim").expect("binary built")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(FIXTURES).join(name)
}

/// Writes synthetic canonical JSONL drawn from the workbench's model.
fn synth(dir: &Path, file: &str, model: &str, problems: usize, samples: usize, mu: f64) -> PathBuf {
    let spec = SynthSpec {
        model: model.to_string(),
        problems,
        samples,
        mu,
        sigma: 1.5,
        attractor: 0.4,
        tokens: true,
        seed: 11,
    };
    let mut bytes = Vec::new();
    write_jsonl(&spec, &mut bytes).expect("in memory");
    let path = dir.join(file);
    std::fs::write(&path, bytes).expect("write");
    path
}

fn png_size(path: &Path) -> (u32, u32) {
    let img = image::open(path).unwrap_or_else(|e| panic!("{} decodes: {e}", path.display()));
    (img.width(), img.height())
}

#[test]
fn every_fixture_format_is_detected_and_analysed() {
    let cases: [(&str, &[&str], &str); 5] = [
        ("canonical.jsonl", &[], "model `a`"),
        ("canonical.csv", &[], "model `a`"),
        (
            "humaneval_samples.jsonl_results.jsonl",
            &[],
            "model `humaneval_samples.jsonl_results`",
        ),
        (
            "lm_eval_samples_gsm8k.jsonl",
            &["--filter", "maj@4"],
            "model `lm_eval_samples_gsm8k`",
        ),
        ("inspect_log_gsm8k.json", &[], "model `openai/gpt-4o-mini`"),
    ];
    for (file, extra, model) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("out");
        evalsim()
            .arg("analyze")
            .arg(fixture(file))
            .args(extra)
            .arg("--out")
            .arg(&out)
            .assert()
            .success()
            .stdout(predicate::str::contains(model))
            .stdout(predicate::str::contains("pass@1 (avg@n)"));
        for f in ["summary.json", "report.md", "curves.png", "solve-rates.svg"] {
            assert!(out.join(f).is_file(), "{file}: {f} missing");
        }
    }
    // An explicit format overrides detection.
    evalsim()
        .args([
            "analyze",
            "--format",
            "jsonl",
            "--quiet",
            "--no-figures",
            "--out",
        ])
        .arg(tempfile::tempdir().expect("tempdir").path().join("o"))
        .arg(fixture("canonical.jsonl"))
        .assert()
        .success()
        .stdout(predicate::str::is_empty());
}

#[test]
fn outputs_exist_decode_and_hold_the_documented_columns() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = synth(dir.path(), "res.jsonl", "m", 40, 8, 0.2);
    let out = dir.path().join("out");
    evalsim()
        .arg("analyze")
        .arg(&input)
        .args(["--k", "1,2,4,8", "--cap", "5000", "--seed", "5", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("seed 5"));
    let csv = std::fs::read_to_string(out.join("model-m.csv")).expect("model csv");
    assert!(csv.starts_with(
        "source,model,seed,metric,vote_rule,k,estimate,question_se,sampling_se,clustered_se,ci_low,ci_high,plug_in,ci_basis,bootstrap_low,bootstrap_high,ci_method,ci_clusters,unclustered_ci_low,unclustered_ci_high\n"
    ));
    for metric in [
        ",pass@k,",
        ",pass^k,",
        ",maj@k,random,",
        ",maj@k-first,first,",
    ] {
        assert_eq!(csv.matches(metric).count(), 4, "{metric} rows in\n{csv}");
    }
    for png in ["curves.png", "solve-rates.png"] {
        let (w, h) = png_size(&out.join(png));
        assert!(w >= 800 && h >= 500, "{png}: {w}x{h}");
    }
    let svg = std::fs::read_to_string(out.join("curves.svg")).expect("svg");
    assert!(svg.contains("res.jsonl") && svg.contains("seed 5"));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).expect("json"))
            .expect("valid json");
    assert_eq!(json["seed"], 5);
    assert_eq!(json["models"][0]["summary"]["n_min"], 8);
    let md = std::fs::read_to_string(out.join("report.md")).expect("md");
    assert!(md.contains("![curves.png](curves.png)"));
}

#[test]
fn same_output_for_any_thread_count() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = synth(dir.path(), "res.jsonl", "m", 60, 16, 0.0);
    let mut outputs = Vec::new();
    for threads in ["1", "2"] {
        let out = dir.path().join(format!("out{threads}"));
        evalsim()
            .arg("analyze")
            .arg(&input)
            .args(["--quiet", "--no-figures", "--threads", threads, "--out"])
            .arg(&out)
            .assert()
            .success();
        outputs.push(std::fs::read(out.join("summary.json")).expect("json"));
    }
    assert_eq!(outputs[0], outputs[1]);
}

#[test]
fn compare_two_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = synth(dir.path(), "a.jsonl", "base", 80, 8, 0.0);
    let b = synth(dir.path(), "b.jsonl", "tuned", 80, 8, 0.6);
    let out = dir.path().join("out");
    evalsim()
        .arg("analyze")
        .arg(&a)
        .arg(&b)
        .args(["--compare", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("comparison `tuned` - `base`"))
        .stdout(predicate::str::contains("sign test"));
    let csv = std::fs::read_to_string(out.join("comparison.csv")).expect("comparison csv");
    assert!(csv.starts_with("source_a,model_a,source_b,model_b,seed,metric,"));
    assert!(csv.contains(",pass@1,") && csv.contains(",maj@k,random,8,"));
    // One file holding both models compares too; three models cannot.
    let both = dir.path().join("both.jsonl");
    let text = std::fs::read_to_string(&a).expect("a") + &std::fs::read_to_string(&b).expect("b");
    std::fs::write(&both, text).expect("write");
    evalsim()
        .arg("analyze")
        .arg(&both)
        .args(["--compare", "--quiet", "--no-figures", "--out"])
        .arg(dir.path().join("out2"))
        .assert()
        .success();
    evalsim()
        .arg("analyze")
        .arg(&both)
        .arg(&a)
        .args(["--compare", "--out"])
        .arg(dir.path().join("out3"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("exactly two models"));
    assert!(!dir.path().join("out3").exists());
}

#[test]
fn reruns_flag_sets_the_simulated_reruns() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = synth(dir.path(), "a.jsonl", "base", 40, 8, 0.0);
    let b = synth(dir.path(), "b.jsonl", "tuned", 40, 8, 0.6);
    // (flag value, reruns reported in summary.json, text of the report)
    let cases: [(Option<&str>, u64, &str); 3] = [
        (None, 20_000, "(20000 simulated reruns, seed 1)"),
        (Some("300"), 300, "(300 simulated reruns, seed 1)"),
        (Some("0"), 0, "- (not simulated: --reruns 0)"),
    ];
    for (flag, reruns, text) in cases {
        let out = dir.path().join(format!("out-{reruns}"));
        let mut cmd = evalsim();
        cmd.arg("analyze")
            .arg(&a)
            .arg(&b)
            .args(["--compare", "--no-figures", "--out"])
            .arg(&out);
        if let Some(n) = flag {
            cmd.args(["--reruns", n]);
        }
        cmd.assert()
            .success()
            .stdout(predicate::str::contains(text));
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("summary.json")).expect("json"))
                .expect("valid json");
        assert_eq!(json["comparison"]["reruns"], reruns, "{flag:?}");
        assert_eq!(json["options"]["reruns"], reruns, "{flag:?}");
        assert_eq!(
            json["comparison"]["reversal_probability"].is_null(),
            reruns == 0,
            "{flag:?}"
        );
        let report = std::fs::read_to_string(out.join("report.md")).expect("report");
        assert!(report.contains(text), "{flag:?}: {report}");
    }
    rejects(
        &a,
        &["--compare", "--reruns", "100000001"],
        &["--reruns", "0..=100000000"],
    );
    rejects(
        &a,
        &["--compare", "--reruns=-1"],
        &["invalid value", "--reruns"],
    );
    rejects(&a, &["--reruns", "10"], &["--compare"]);
}

/// Runs `analyze` on `file` and expects exit code 2, every needle on stderr and nothing written.
fn rejects(file: &Path, extra: &[&str], needles: &[&str]) {
    let out = file.with_extension("out");
    let mut assert = evalsim()
        .arg("analyze")
        .arg(file)
        .args(extra)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2);
    for n in needles {
        assert = assert.stderr(predicate::str::contains(*n));
    }
    assert!(!out.exists(), "nothing may be written for bad input");
}

#[test]
fn k_above_the_smallest_n_is_an_error_naming_it() {
    rejects(
        &fixture("canonical.jsonl"),
        &["--k", "1,5"],
        &["k = 5 exceeds the smallest n = 3", "choose k <= 3"],
    );
}

#[test]
fn bad_inputs_name_file_line_and_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"problem_id\": \"a\", \"correct\": true}\n{\"problem_id\": \"a\", \"correct\": false}\n{\"problem_id\": \"b\", \"correct\": tru}\n",
    )
    .expect("write");
    rejects(&bad, &[], &["bad.jsonl:3: malformed JSON"]);

    let csv = dir.path().join("missing.csv");
    std::fs::write(&csv, "problem_id,answer\np1,3\n").expect("write");
    rejects(
        &csv,
        &[],
        &["missing.csv:1: missing field `correct`", "reference"],
    );

    let field = dir.path().join("field.jsonl");
    std::fs::write(&field, "{\"problem_id\": \"a\", \"correct\": \"yes\"}\n").expect("write");
    rejects(
        &field,
        &[],
        &["field.jsonl:1: field `correct`", "true/false or 0/1"],
    );

    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").expect("write");
    rejects(&empty, &[], &["empty.jsonl: no samples found"]);

    rejects(
        &fixture("lm_eval_samples_gsm8k.jsonl"),
        &[],
        &["lm_eval_samples_gsm8k.jsonl:1", "one 0/1 per generation"],
    );
    rejects(
        &dir.path().join("absent.jsonl"),
        &[],
        &["cannot read", "absent.jsonl"],
    );
}

#[test]
fn fit_round_trip_loads_and_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = synth(dir.path(), "sim.jsonl", "m", 300, 16, 0.3);
    let out = dir.path().join("fit");
    let assert = evalsim()
        .arg("fit")
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let toml = String::from_utf8(assert.get_output().stdout.clone()).expect("utf-8");
    let scenario = evalsim::scenario::Scenario::from_toml(&toml, "mine", "mine.toml")
        .unwrap_or_else(|e| panic!("the fitted scenario loads: {e}\n{toml}"));
    assert_eq!(scenario.benchmark.problems, 300);
    assert_eq!(scenario.models.len(), 1);
    let a = scenario.models[0].attractor;
    assert!((a - 0.4).abs() < 0.1, "attractor share {a}");
    for f in ["scenario.toml", "fit.csv", "fit-counts.csv", "fit.json"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let (w, h) = png_size(&out.join("fit-counts.png"));
    assert_eq!((w, h), (1000, 640));

    let file = dir.path().join("mine.toml");
    std::fs::write(&file, &toml).expect("write");
    let run_out = dir.path().join("run");
    evalsim()
        .arg("run")
        .arg(&file)
        .args(["--quiet", "--no-figures", "--out"])
        .arg(&run_out)
        .assert()
        .success();
    assert!(run_out.join("curves.csv").is_file());
}

#[test]
fn fit_with_several_models_fits_them_jointly_and_model_restricts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = synth(dir.path(), "a.jsonl", "base", 20, 4, 0.0);
    let b = synth(dir.path(), "b.jsonl", "tuned", 20, 4, 0.5);
    // two files, combined by model name
    let assert = evalsim()
        .arg("fit")
        .arg(&a)
        .arg(&b)
        .args(["--no-figures", "--out"])
        .arg(dir.path().join("o"))
        .assert()
        .success()
        .stderr(predicate::str::contains("shift of `tuned`"));
    let toml = String::from_utf8(assert.get_output().stdout.clone()).expect("utf-8");
    let raw: toml::Value = toml::from_str(&toml).expect("the scenario parses");
    let names: Vec<&str> = raw["model"]
        .as_array()
        .expect("models")
        .iter()
        .map(|m| m["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["base", "tuned"]);
    assert!(toml.contains("kind = \"head-to-head\"") && toml.contains("kind = \"plan\""));
    assert!(toml.contains("# shift of `tuned`: "), "{toml}");
    // --model restricts to one: today's one-model fit, which loads and runs
    let assert = evalsim()
        .arg("fit")
        .arg(&a)
        .arg(&b)
        .args(["--model", "tuned", "--quiet", "--no-figures", "--out"])
        .arg(dir.path().join("o"))
        .assert()
        .success();
    let toml = String::from_utf8(assert.get_output().stdout.clone()).expect("utf-8");
    let scenario = evalsim::scenario::Scenario::from_toml(&toml, "t", "t.toml")
        .unwrap_or_else(|e| panic!("loads: {e}\n{toml}"));
    assert_eq!(scenario.models.len(), 1);
    assert_eq!(scenario.models[0].name, "tuned");
    evalsim()
        .arg("fit")
        .arg(&a)
        .args(["--model", "nope", "--out"])
        .arg(dir.path().join("o"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nope"))
        .stderr(predicate::str::contains("`base`"));
}

#[test]
fn fit_of_all_or_none_human_eval_refuses_sigma() {
    let dir = tempfile::tempdir().expect("tempdir");
    let assert = evalsim()
        .arg("fit")
        .arg(fixture("../fit/humaneval_164.jsonl"))
        .args(["--quiet", "--out"])
        .arg(dir.path().join("he"))
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "only 4 of 164 problems have some but not all samples right",
        ))
        .stderr(predicate::str::contains("REFUSED: sigma is not estimated"));
    let toml = String::from_utf8(assert.get_output().stdout.clone()).expect("utf-8");
    assert!(
        toml.contains("# sigma: NOT ESTIMATED (fallback 2)"),
        "{toml}"
    );
    let scenario = evalsim::scenario::Scenario::from_toml(&toml, "he", "he.toml")
        .unwrap_or_else(|e| panic!("loads: {e}\n{toml}"));
    assert_eq!(scenario.benchmark.problems, 164);
    for f in ["fit-counts.png", "fit-curves.png", "fit.csv"] {
        assert!(dir.path().join("he").join(f).is_file(), "{f}");
    }
}

#[test]
fn analyze_all_solved_prints_the_exact_bound_not_a_point() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("all.jsonl");
    let rows: String = (0..10)
        .flat_map(|i| {
            (0..4).map(move |_| {
                format!("{{\"problem_id\": \"q{i}\", \"model\": \"m\", \"correct\": true, \"answer\": \"1\"}}\n")
            })
        })
        .collect();
    std::fs::write(&input, rows).expect("write");
    let out = dir.path().join("out");
    evalsim()
        .arg("analyze")
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        // 0.05^(1/10) = 0.7411: the lower end after 10 of 10 solved; † marks the exact bound.
        .stdout(predicate::str::contains("100.0 [74.1–100.0†]"))
        .stdout(predicate::str::contains("rule of three"));
    let csv = std::fs::read_to_string(out.join("model-m.csv")).expect("model csv");
    assert!(csv.contains(",0.7411344491069478,1,1,all-max,"), "{csv}");
}

/// Issue 19: none solved gives the rule-of-three upper bound (not [0, 0]), and two models with
/// the same outcome on every problem give a paired interval [-u, u] (not a point), each with a
/// note in the text report and its basis in the CSV.
#[test]
fn analyze_none_solved_and_equal_differences_print_the_exact_bound() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("none.jsonl");
    let rows: String = ["a", "b"]
        .iter()
        .flat_map(|m| {
            (0..10).flat_map(move |i| {
                (0..4).map(move |_| {
                    format!("{{\"problem_id\": \"q{i}\", \"model\": \"{m}\", \"correct\": false, \"answer\": \"7\"}}\n")
                })
            })
        })
        .collect();
    std::fs::write(&input, rows).expect("write");
    let out = dir.path().join("out");
    evalsim()
        .arg("analyze")
        .arg(&input)
        .args(["--compare", "--no-figures", "--out"])
        .arg(&out)
        .assert()
        .success()
        // 1 - 0.05^(1/10) = 0.2589: the upper end after 10 of 10 unsolved.
        .stdout(predicate::str::contains("0.0 [0.0–25.9†]"))
        .stdout(predicate::str::contains(
            "pass@k at k = 1, 2, 3, 4: every problem scores 0",
        ))
        .stdout(predicate::str::contains(
            "every problem has the same difference",
        ));
    let csv = std::fs::read_to_string(out.join("model-a.csv")).expect("model csv");
    assert!(csv.contains(",0,0.2588655508930522,0,all-min,"), "{csv}");
    let cmp = std::fs::read_to_string(out.join("comparison.csv")).expect("comparison csv");
    assert!(cmp.contains("all-equal"), "{cmp}");
    assert!(
        cmp.contains("-0.2588655508930522,0.2588655508930522"),
        "{cmp}"
    );
}

/// The estimate of `curve` (a summary.json curve) at k.
fn curve_at(summary: &serde_json::Value, curve: &str, k: u64) -> Option<f64> {
    summary[curve]
        .as_array()?
        .iter()
        .find(|p| p["k"] == k)
        .and_then(|p| p["estimate"].as_f64())
}

/// Reported as a bug: on canonical.jsonl (n = 3) "maj@k first" read 100.0 at k = 1 beside pass@1
/// = 33.3. It is right: both problems' *first* logged answer is correct (p1: `1/2` = `0.5`; p2:
/// `correct: 1`), while each has one correct answer in three. maj@1 first is one realisation (the
/// first sample), pass@1 = maj@1 the expectation over samples. This pins both definitions on every
/// analyze fixture and on a file built so that the two differ in a known way.
#[test]
fn analyze_maj_at_1_first_is_the_share_of_first_answers_right_not_pass_at_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    // 4 problems, 4 samples each: only q0's first answer is right, yet q1..q3 are solved 3 times
    // in 4 (their first answer wrong): maj@1 first = 1/4, pass@1 = (1/4 + 3 * 3/4) / 4 = 5/8.
    let mut rows = String::new();
    for i in 0..4 {
        let flags: [bool; 4] = if i == 0 {
            [true, false, false, false]
        } else {
            [false, true, true, true]
        };
        for (j, right) in flags.iter().enumerate() {
            let answer = if *right { "7" } else { "8" };
            rows += &format!(
                "{{\"problem_id\": \"q{i}\", \"model\": \"m\", \"sample\": {j}, \"answer\": \"{answer}\", \"reference\": \"7\"}}\n"
            );
        }
    }
    let built = dir.path().join("first.jsonl");
    std::fs::write(&built, rows).expect("write");
    // (file, extra arguments, expected (maj@1 first, pass@1) where derived by hand).
    type Case<'a> = (PathBuf, &'a [&'a str], Option<(f64, f64)>);
    let cases: [Case; 6] = [
        (fixture("canonical.jsonl"), &[], Some((1.0, 1.0 / 3.0))),
        (fixture("canonical.csv"), &[], None),
        (fixture("humaneval_samples.jsonl_results.jsonl"), &[], None),
        (
            fixture("lm_eval_samples_gsm8k.jsonl"),
            &["--filter", "maj@4"],
            None,
        ),
        (fixture("inspect_log_gsm8k.json"), &[], None),
        (built, &[], Some((0.25, 0.625))),
    ];
    for (i, (file, extra, expected)) in cases.iter().enumerate() {
        let out = dir.path().join(format!("out{i}"));
        evalsim()
            .arg("analyze")
            .arg(file)
            .args(*extra)
            .args(["--no-figures", "--bootstrap", "0", "--out"])
            .arg(&out)
            .assert()
            .success();
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("summary.json")).expect("json"))
                .expect("valid json");
        for m in json["models"].as_array().expect("models") {
            let s = &m["summary"];
            let pass1 = s["pass_at_1"].as_f64().expect("pass@1");
            let problems = s["problems"].as_f64().expect("problems");
            // pass@k at k = 1 is the same mean, summed in another order (to 1e-12 relative).
            let pass_k1 = curve_at(s, "pass_at_k", 1).expect("pass@k at k = 1");
            assert!(
                (pass_k1 - pass1).abs() <= 1e-12 * pass1.max(1e-300),
                "{file:?}"
            );
            if let Some(maj1) = curve_at(s, "maj_at_k", 1) {
                // One vote of one answer: right with probability c/n, exactly pass@1.
                assert!(
                    (maj1 - pass1).abs() <= 1e-12 * pass1.max(1e-300),
                    "{file:?}"
                );
            }
            if let Some(first) = curve_at(s, "maj_first", 1) {
                // A share of problems: a whole number of problems out of N.
                let count = first * problems;
                assert!((count - count.round()).abs() < 1e-9, "{file:?}: {first}");
                if let Some((want_first, want_pass1)) = expected {
                    assert!((first - want_first).abs() < 1e-12, "{file:?}: {first}");
                    assert!((pass1 - want_pass1).abs() < 1e-12, "{file:?}: {pass1}");
                }
            } else {
                assert!(expected.is_none(), "{file:?}: no maj@k first");
            }
        }
    }
}

//! `evalsim analyze` on files written by the harnesses themselves (tests/fixtures/harness, made by
//! make.sh there): every number agrees with the aggregate the harness wrote in the same run, and
//! what cannot be read exactly is refused with a reason. Also the stream and file-name edges of
//! issue #20 for `analyze`.
use std::io::Read;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

const HARNESS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/harness/");

fn evalsim() -> Command {
    Command::cargo_bin("evalsim").expect("binary built")
}

fn harness(rel: &str) -> PathBuf {
    Path::new(HARNESS).join(rel)
}

/// The one file under `dir` whose name starts with `prefix`.
fn one(dir: &Path, prefix: &str) -> PathBuf {
    let mut found = Vec::new();
    for d in std::fs::read_dir(dir).expect("dir") {
        let p = d.expect("entry").path();
        if p.is_dir() {
            found.push(one(&p, prefix));
        } else if p
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
        {
            found.push(p);
        }
    }
    assert_eq!(found.len(), 1, "{prefix} in {}", dir.display());
    found.remove(0)
}

/// Runs `analyze` into a temporary folder; returns summary.json and stderr.
fn analyze(args: &[&std::ffi::OsStr]) -> (Value, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let output = evalsim()
        .arg("analyze")
        .args(args)
        .args(["--no-figures", "--bootstrap", "0", "--out"])
        .arg(&out)
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    let text = std::fs::read_to_string(out.join("summary.json")).expect("summary.json");
    (serde_json::from_str(&text).expect("json"), stderr)
}

fn pass1(summary: &Value, model: usize) -> f64 {
    summary["models"][model]["summary"]["pass_at_1"]
        .as_f64()
        .expect("pass@1")
}

/// The JSON entry `name` of an inspect_ai `.eval` archive, decoded independently of evalsim's
/// reader (zip entries compressed with zstd).
fn eval_entry(path: &Path, name: &str) -> Value {
    let file = std::fs::File::open(path).expect("open");
    let mut archive = zip::ZipArchive::new(file).expect("zip");
    let mut raw = Vec::new();
    let mut entry = archive.by_name_raw(name.as_bytes()).expect("entry");
    entry.read_to_end(&mut raw).expect("read");
    let mut slice: &[u8] = &raw;
    let mut out = Vec::new();
    while !slice.is_empty() {
        let mut dec = ruzstd::decoding::StreamingDecoder::new(&mut slice).expect("zstd");
        dec.read_to_end(&mut out).expect("zstd");
    }
    serde_json::from_slice(&out).expect("json")
}

fn inspect_accuracy(results: &Value, name: &str, metric: &str) -> f64 {
    results["scores"]
        .as_array()
        .expect("scores")
        .iter()
        .find(|s| s["name"] == name)
        .and_then(|s| s["metrics"][metric]["value"].as_f64())
        .expect("metric")
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12
}

#[test]
fn inspect_eval_and_json_logs_agree_with_inspects_accuracy() {
    let eval = harness("inspect/epochs-eval.eval");
    let (s, _) = analyze(&[eval.as_os_str()]);
    let header = eval_entry(&eval, "header.json");
    let accuracy = inspect_accuracy(&header["results"], "match", "accuracy");
    assert!(
        close(pass1(&s, 0), accuracy),
        "{} vs {accuracy}",
        pass1(&s, 0)
    );
    assert_eq!(s["models"][0]["summary"]["model"], "mockllm/model");
    assert_eq!(
        s["models"][0]["summary"]["samples"], 9,
        "3 problems x 3 epochs"
    );
    // The question SE is inspect's stderr over the epoch-reduced sample means.
    let stderr = inspect_accuracy(&header["results"], "match", "stderr");
    let qse = s["models"][0]["summary"]["pass_at_k"][0]["question_se"]
        .as_f64()
        .expect("se");
    assert!((qse - stderr).abs() < 1e-12, "{qse} vs {stderr}");

    let json = harness("inspect/epochs-json.json");
    let (s, _) = analyze(&[json.as_os_str()]);
    let log: Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("read")).expect("json");
    let accuracy = inspect_accuracy(&log["results"], "match", "accuracy");
    assert!(close(pass1(&s, 0), accuracy));
    let agg = &s["sources"][0]["harness"]["aggregates"][0];
    assert!(close(agg["value"].as_f64().expect("value"), accuracy));
    assert!(s["sources"][0]["mismatches"]
        .as_array()
        .expect("list")
        .is_empty());
}

#[test]
fn inspect_dict_score_needs_score_key_and_then_agrees() {
    let log = harness("inspect/dict-score.eval");
    evalsim()
        .arg("analyze")
        .arg(&log)
        .arg("--no-figures")
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("--score-key")
                .and(predicate::str::contains("`exact`, `shape`")),
        );
    let header = eval_entry(&log, "header.json");
    for key in ["exact", "shape"] {
        let (s, _) = analyze(&[log.as_os_str(), "--score-key".as_ref(), key.as_ref()]);
        let accuracy = inspect_accuracy(&header["results"], key, "accuracy");
        assert!(
            close(pass1(&s, 0), accuracy),
            "{key}: {} vs {accuracy}",
            pass1(&s, 0)
        );
    }
}

#[test]
fn inspect_partial_credit_is_read_as_the_mean_score_not_refused() {
    let log = harness("inspect/partial.eval");
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let output = evalsim()
        .arg("analyze")
        .arg(&log)
        .args(["--no-figures", "--bootstrap", "0", "--out"])
        .arg(&out)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    let s: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("summary.json")).expect("summary.json"),
    )
    .expect("json");
    // inspect's own aggregate of the same samples: `mean` of value_to_float (P = 0.5) over
    // samples reduced per problem, and its stderr (the question SE).
    let header = eval_entry(&log, "header.json");
    let mean = inspect_accuracy(&header["results"], "partial_scorer", "mean");
    let stderr_inspect = inspect_accuracy(&header["results"], "partial_scorer", "stderr");
    let summary = &s["models"][0]["summary"];
    let score = &summary["mean_score"];
    assert!(
        close(score["estimate"].as_f64().expect("mean"), mean),
        "{score}"
    );
    assert!(close(pass1(&s, 0), mean));
    assert!(close(
        score["question_se"].as_f64().expect("question SE"),
        stderr_inspect
    ));
    let ci = score["ci95"].as_array().expect("interval");
    let (low, high) = (ci[0].as_f64().expect("low"), ci[1].as_f64().expect("high"));
    assert!(
        0.0 <= low && low < mean && mean < high && high <= 1.0,
        "{ci:?}"
    );
    // Sampling SE: sqrt(sum_i s_i^2 / n_i) / N over each problem's scores as the log holds them
    // (inspect's value_to_float: a number is itself).
    let mut sum_var = 0.0;
    for id in ["q1", "q2", "q3"] {
        let x: Vec<f64> = (1..=2)
            .map(|e| {
                eval_entry(&log, &format!("samples/{id}_epoch_{e}.json"))["scores"]
                    ["partial_scorer"]["value"]
                    .as_f64()
                    .expect("a float score")
            })
            .collect();
        let m = (x[0] + x[1]) / 2.0;
        let s2 = ((x[0] - m).powi(2) + (x[1] - m).powi(2)) / 1.0;
        sum_var += s2 / 2.0;
    }
    let sampling = score["sampling_se"].as_f64().expect("sampling SE");
    assert!(close(sampling, sum_var.sqrt() / 3.0), "{score}");
    // pass@k, pass^k and maj@k need binary scores: reported as not available, not computed.
    assert_eq!(summary["pass_at_k"], serde_json::json!([]));
    assert_eq!(summary["pass_hat_k"], serde_json::json!([]));
    assert!(summary["maj_at_k"].is_null() && summary["maj_first"].is_null());
    assert!(
        stdout.contains("mean score (partial credit)")
            && stdout.contains("pass@k, pass^k and maj@k need binary scores"),
        "{stdout}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(md.contains("Not available: pass@k, pass^k and maj@k need binary scores"));
    assert!(
        stdout.contains("agree") && !stdout.contains("DIFFER"),
        "{stdout}"
    );
}

#[test]
fn inspect_errored_samples_are_skipped_and_counted() {
    let log = harness("inspect/errored.eval");
    let (s, stderr) = analyze(&[log.as_os_str()]);
    let header = eval_entry(&log, "header.json");
    let accuracy = inspect_accuracy(&header["results"], "match", "accuracy");
    assert!(close(pass1(&s, 0), accuracy));
    assert_eq!(s["sources"][0]["harness"]["skipped"], 2);
    assert!(stderr.contains("2 sample(s) skipped"), "{stderr}");
}

#[test]
fn inspect_agent_tokens_sum_every_model_call() {
    let log = harness("inspect/agent.eval");
    let (s, _) = analyze(&[log.as_os_str()]);
    // Each sample's model_usage output tokens, as inspect wrote them.
    let mut total = 0.0;
    let mut last_call = 0.0;
    for id in ["q1", "q2", "q3"] {
        let sample = eval_entry(&log, &format!("samples/{id}_epoch_1.json"));
        total += sample["model_usage"]["mockllm/model"]["output_tokens"]
            .as_f64()
            .expect("usage");
        last_call += sample["output"]["usage"]["output_tokens"]
            .as_f64()
            .expect("usage");
    }
    let mean = s["models"][0]["summary"]["tokens"]["mean_tokens_per_sample"]
        .as_f64()
        .expect("tokens");
    assert!(close(mean, total / 3.0), "{mean} vs {}", total / 3.0);
    assert!(mean > last_call / 3.0 * 2.0, "more than the last call");
    let totals = &s["sources"][0]["harness"]["tokens"][0][1];
    assert_eq!(totals["output"].as_f64(), Some(total));
    assert!(totals["reasoning"].as_f64().expect("reasoning") > 0.0);
    assert!(totals["input"].as_f64().expect("input") > 0.0);
}

/// The lm-eval aggregate `key` of `task` in the results file of `dir`.
fn lm_results(dir: &Path, task: &str, key: &str) -> f64 {
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(one(dir, "results_")).expect("results"))
            .expect("json");
    r["results"][task][key].as_f64().expect("aggregate")
}

#[test]
fn lm_eval_multiple_choice_reads_the_logged_metric_not_the_logprobs() {
    let dir = harness("lm_eval/mc");
    let samples = one(&dir, "samples_fx_mc_a");
    for metric in ["acc", "acc_norm"] {
        let (s, _) = analyze(&[samples.as_os_str(), "--metric".as_ref(), metric.as_ref()]);
        let want = lm_results(&dir, "fx_mc_a", &format!("{metric},none"));
        assert!(
            close(pass1(&s, 0), want),
            "{metric}: {} vs {want}",
            pass1(&s, 0)
        );
        // One sample per row, named after the model in results_*.json.
        assert_eq!(s["models"][0]["summary"]["samples"], 6);
        assert_eq!(s["models"][0]["summary"]["model"], "fixture-lm");
    }
}

#[test]
fn lm_eval_several_metrics_without_a_choice_lists_them() {
    evalsim()
        .arg("analyze")
        .arg(one(&harness("lm_eval/mc"), "samples_"))
        .arg("--no-figures")
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("`acc`, `acc_norm`").and(predicate::str::contains("--metric")),
        );
}

#[test]
fn lm_eval_generate_reads_exact_match() {
    let dir = harness("lm_eval/gen");
    let (s, _) = analyze(&[one(&dir, "samples_").as_os_str()]);
    let want = lm_results(&dir, "fx_gen", "exact_match,none");
    assert!(close(pass1(&s, 0), want));
    let (s, _) = analyze(&[dir.as_os_str()]);
    assert!(
        close(pass1(&s, 0), want),
        "the output folder reads the same"
    );
}

#[test]
fn lm_eval_repeats_read_per_filter_and_refused_without_per_generation_scores() {
    let dir = harness("lm_eval/repeats");
    for filter in ["take_first", "maj@4"] {
        let (s, _) = analyze(&[dir.as_os_str(), "--filter".as_ref(), filter.as_ref()]);
        let want = lm_results(&dir, "fx_repeats", &format!("exact_match,{filter}"));
        assert!(close(pass1(&s, 0), want), "{filter}");
    }
    // A filter keeping every generation with one exact_match per document: not per sample.
    evalsim()
        .arg("analyze")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/analyze/lm_eval_samples_gsm8k.jsonl"
        ))
        .args(["--filter", "extract-all", "--no-figures"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("lm_eval_samples_gsm8k.jsonl:1")
                .and(predicate::str::contains("one 0/1 per generation"))
                .and(predicate::str::contains("does not re-grade")),
        );
}

#[test]
fn lm_eval_group_folder_is_one_model_with_subtask_clusters() {
    let (a, b) = (harness("lm_eval/group-a"), harness("lm_eval/group-b"));
    let (s, stderr) = analyze(&[
        a.as_os_str(),
        b.as_os_str(),
        "--compare".as_ref(),
        "--metric".as_ref(),
        "acc".as_ref(),
        "--reruns".as_ref(),
        "100".as_ref(),
    ]);
    // Two subtasks: the intervals rest on 2 clusters, which is warned about (once per model).
    assert_eq!(stderr.matches("warning").count(), 2, "{stderr}");
    assert_eq!(stderr.matches("only 2 clusters").count(), 2, "{stderr}");
    for (i, dir) in [&a, &b].into_iter().enumerate() {
        let want = lm_results(dir, "fx_group", "acc,none");
        assert!(close(pass1(&s, i), want), "{i}: {} vs {want}", pass1(&s, i));
        assert_eq!(s["models"][i]["summary"]["problems"], 12);
        assert!(s["models"][i]["summary"]["pass_at_k"][0]["clustered_se"].is_number());
        assert_eq!(s["models"][i]["summary"]["pass_at_k"][0]["ci_clusters"], 2);
    }
    assert_eq!(s["comparison"]["pass_at_1"]["ci_clusters"], 2);
    assert_eq!(s["models"][0]["summary"]["model"], "fixture-lm");
    assert_eq!(s["models"][1]["summary"]["model"], "fixture-lm-2");
    assert_eq!(s["comparison"]["common_problems"], 12);
}

#[test]
fn lm_eval_results_json_where_samples_are_expected_is_refused() {
    evalsim()
        .arg("analyze")
        .arg(one(&harness("lm_eval/mc"), "results_"))
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("results_*.json").and(predicate::str::contains("samples_")),
        );
}

#[test]
fn truncated_eval_log_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bytes = std::fs::read(harness("inspect/epochs-eval.eval")).expect("read");
    let cut = dir.path().join("cut.eval");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).expect("write");
    let out = dir.path().join("out");
    evalsim()
        .arg("analyze")
        .arg(&cut)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cut.eval"));
    assert!(!out.exists(), "nothing written");
}

fn canonical_rows(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "{{\"problem_id\": \"p{}\", \"correct\": {}, \"answer\": \"{}\"}}\n",
                i % 97,
                i % 3 == 0,
                i % 5
            )
        })
        .collect()
}

#[test]
fn analyze_from_a_pipe_reads_every_row() {
    // Larger than the 64 KiB detection buffer, so rows past it must be replayed, not lost.
    let text = canonical_rows(4000);
    assert!(text.len() > 3 * 64 * 1024);
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    evalsim()
        .args(["analyze", "-", "--no-figures", "--bootstrap", "0", "--out"])
        .arg(&out)
        .write_stdin(text.clone())
        .assert()
        .success();
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).expect("summary"))
            .expect("json");
    assert_eq!(s["models"][0]["summary"]["samples"], 4000);
    assert_eq!(s["models"][0]["summary"]["model"], "stdin");
}

#[test]
fn analyze_refuses_a_line_longer_than_the_bound() {
    let dir = tempfile::tempdir().expect("tempdir");
    let long = dir.path().join("long.jsonl");
    let mut text = canonical_rows(2);
    text.push_str(&"x".repeat(16 * 1024 * 1024 + 10));
    std::fs::write(&long, text).expect("write");
    evalsim()
        .arg("analyze")
        .arg(&long)
        .arg("--out")
        .arg(dir.path().join("out"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "long.jsonl:3: line longer than 16777216 bytes",
        ));
}

#[test]
fn invalid_utf8_names_its_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.jsonl");
    let mut bytes = canonical_rows(2).into_bytes();
    bytes.extend_from_slice(b"{\"problem_id\": \"\xff\", \"correct\": true}\n");
    std::fs::write(&bad, bytes).expect("write");
    evalsim()
        .arg("analyze")
        .arg(&bad)
        .arg("--out")
        .arg(dir.path().join("out"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.jsonl:3: invalid UTF-8"));
}

#[test]
fn default_output_folders_never_collide_and_stay_sanitised() {
    let dir = tempfile::tempdir().expect("tempdir");
    let jsonl = dir.path().join("canonical.jsonl");
    std::fs::write(&jsonl, canonical_rows(30)).expect("write");
    let csv = dir.path().join("canonical.csv");
    let mut c = String::from("problem_id,correct\n");
    for i in 0..30 {
        c += &format!("p{},{}\n", i % 7, i % 2);
    }
    std::fs::write(&csv, c).expect("write");
    let dotted = dir.path().join("...jsonl");
    std::fs::write(&dotted, canonical_rows(30)).expect("write");
    for f in [&jsonl, &csv, &dotted] {
        evalsim()
            .current_dir(dir.path())
            .arg("analyze")
            .arg(f)
            .args(["--no-figures", "--bootstrap", "0", "-q"])
            .assert()
            .success();
    }
    for name in [
        "analyze-canonical.jsonl",
        "analyze-canonical.csv",
        "analyze-jsonl",
    ] {
        assert!(
            dir.path()
                .join("out")
                .join(name)
                .join("summary.json")
                .exists(),
            "{name}"
        );
    }
}

#[test]
fn human_eval_samples_not_yet_evaluated_ask_for_the_evaluation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("samples.jsonl");
    std::fs::write(
        &f,
        "{\"task_id\": \"HumanEval/0\", \"completion\": \"    return 1\\n\"}\n",
    )
    .expect("write");
    evalsim().arg("analyze").arg(&f).assert().code(2).stderr(
        predicate::str::contains("samples.jsonl:1")
            .and(predicate::str::contains("evaluate_functional_correctness")),
    );
}

#[test]
fn lm_eval_several_filters_without_a_choice_lists_them() {
    evalsim()
        .arg("analyze")
        .arg(harness("lm_eval/repeats"))
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("several filters present")
                .and(predicate::str::contains("`take_first`, `maj@4`")),
        );
}

#[test]
fn lm_eval_non_binary_metric_is_read_as_the_mean_score_not_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir
        .path()
        .join("samples_fx_partial_2026-12-01T00-00-00.jsonl");
    // Three documents scored 1, 0.25 and 0 by a custom metric: mean (1 + 0.25 + 0) / 3.
    let rows: String = [(0, "1.0"), (1, "0.25"), (2, "0.0")]
        .iter()
        .map(|(doc, v)| {
            format!(
                "{{\"doc_id\": {doc}, \"target\": \"4\", \"resps\": [[\"4\"]], \"filtered_resps\": [\"4\"], \"filter\": \"none\", \"metrics\": [\"f1\"], \"f1\": {v}}}\n"
            )
        })
        .collect();
    std::fs::write(&file, rows).expect("write");
    let (s, _) = analyze(&[file.as_os_str()]);
    let summary = &s["models"][0]["summary"];
    let mean = summary["mean_score"]["estimate"].as_f64().expect("mean");
    assert!(close(mean, 1.25 / 3.0), "{summary}");
    assert_eq!(summary["pass_at_k"], serde_json::json!([]));
    // A value outside [0, 1] is not a score evalsim can average with these intervals.
    std::fs::write(
        &file,
        "{\"doc_id\": 0, \"target\": \"4\", \"resps\": [[\"4\"]], \"filtered_resps\": [\"4\"], \"filter\": \"none\", \"metrics\": [\"f1\"], \"f1\": 3.5}\n",
    )
    .expect("write");
    evalsim()
        .arg("analyze")
        .arg(&file)
        .arg("--no-figures")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("f1").and(predicate::str::contains("[0, 1]")));
}

#[test]
fn partial_credit_is_refused_by_compare_and_fit_which_need_right_or_wrong() {
    let partial = harness("inspect/partial.eval");
    let binary = harness("inspect/epochs-eval.eval");
    evalsim()
        .arg("analyze")
        .arg(&partial)
        .arg(&binary)
        .args(["--compare", "--no-figures"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("--compare").and(predicate::str::contains("partial credit")),
        );
    evalsim()
        .arg("fit")
        .arg(&partial)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("partial credit"));
}

//! Inputs at the edges of what the model allows, each once a panic, an impossible number or
//! raw bytes on the terminal; each test is named after what went wrong.
use std::process::Stdio;

use crate::common::{evalsim, read, refused_saying, succeeds, write_file};

/// A grader that accepts every answer (fpr = 1) with unparsed answers, under curves at k = 1
/// and a vote-spread: the graded rate is a sum of a rate and its separately computed
/// complement, which rounds to 1 + 2^-52 for some problems.
const ALL_ACCEPTED: &str = r#"seed = 5
[benchmark]
problems = 40
mu = -18.7
sigma = 0.3
[[model]]
name = "m"
attractor = 0.3
unparsed = 0.1
[model.grader]
fpr = 1.0
[[experiment]]
kind = "curves"
k = [1, 3]
votes = 200
[[experiment]]
kind = "vote-spread"
model = "m"
k = [1, 3]
reruns = 200
"#;

#[test]
fn a_grader_with_fpr_1_panicked_with_a_rate_of_1_0000000000000002() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write_file(dir.path(), "all.toml", ALL_ACCEPTED);
    let out = dir.path().join("o");
    let text = succeeds(
        evalsim()
            .args(["run", "--no-figures", "--quiet"])
            .arg(&f)
            .arg("--out")
            .arg(&out),
    );
    assert!(!text.contains("failed"), "{text}");
    let curves = read(&out.join("curves.csv"));
    assert!(!curves.contains("1.0000000000000002"), "{curves}");
}

#[test]
fn plan_at_gap_minus_40_wrote_probabilities_above_1_and_nan_ses() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("plan");
    succeeds(
        evalsim()
            .args(["plan", "--quiet", "--gap-logits=-40", "--out"])
            .arg(&out),
    );
    for name in ["plan.csv", "plan.txt", "plan.json"] {
        let text = read(&out.join(name));
        assert!(!text.to_lowercase().contains("nan"), "{name}: {text}");
        assert!(!text.contains("1.0000000000000002"), "{name}: {text}");
    }
    // Every probability column of the plan lies in [0, 1].
    let plan = read(&out.join("plan.csv"));
    let mut lines = plan.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = header
        .iter()
        .position(|h| *h == "loss_or_tie")
        .expect("a loss_or_tie column");
    for line in lines {
        let v: f64 = line
            .split(',')
            .nth(col)
            .expect("cell")
            .parse()
            .expect("number");
        assert!((0.0..=1.0).contains(&v), "{line}");
    }
}

#[test]
fn shift_sd_minus_1_was_refused_as_an_unknown_argument() {
    let text = refused_saying(
        evalsim().args(["plan", "--shift-sd", "-1"]),
        &["--shift-sd"],
    );
    assert!(text.contains("in [0, 3]"), "{text}");
    assert!(!text.contains("unexpected argument"), "{text}");
}

#[test]
fn a_full_stdout_panicked_with_failed_printing_to_stdout() {
    let full = std::fs::File::options().write(true).open("/dev/full");
    let Ok(full) = full else {
        return; // no /dev/full on this system: nothing to test against
    };
    let bin = assert_cmd::cargo::cargo_bin("evalsim");
    let o = std::process::Command::new(bin)
        .arg("list")
        .stdout(Stdio::from(full))
        .output()
        .expect("ran");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot write to standard output"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Twelve canonical rows (4 problems x 3 samples) of one model called `name`.
fn rows_of_model(name: &str) -> String {
    (0..12)
        .map(|i| {
            let row = serde_json::json!({
                "problem_id": i % 4, "correct": i % 3 == 0, "model": name, "answer": "a"
            });
            format!("{row}\n")
        })
        .collect()
}

#[test]
fn a_model_name_with_escape_sequences_reached_the_terminal_raw() {
    // Scenario names are restricted to safe characters, but a model name read from a results
    // file is whatever the file says.
    let dir = tempfile::tempdir().expect("tempdir");
    let name = "m\u{1b}]0;owned\u{7}\u{1b}[2J";
    let rows = rows_of_model(name);
    let f = write_file(dir.path(), "esc.jsonl", &rows);
    let shown = succeeds(
        evalsim()
            .args(["analyze", "--no-figures", "--bootstrap", "0"])
            .arg(&f)
            .arg("--out")
            .arg(dir.path().join("o")),
    );
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
        "{shown:?}"
    );
    assert!(shown.contains("\\u{1b}"), "{shown}");
}

#[test]
fn cost_csv_wrote_nan_for_standard_errors_that_do_not_exist() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write_file(
        dir.path(),
        "never.toml",
        r#"seed = 5
[benchmark]
problems = 4
mu = 0.0
sigma = 1.0
[[model]]
name = "m"
attractor = 0.5
[model.grader]
fnr = 1.0
[model.tokens]
median_tokens = 2000
hard_growth = 1.0
wrong_factor = 1.5
sigma = 0.5
[[experiment]]
kind = "cost"
k = [1, 4]
votes = 100
traces = 100
"#,
    );
    let out = dir.path().join("o");
    evalsim()
        .args(["run", "--no-figures", "--quiet"])
        .arg(&f)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("ran");
    // A grader that rejects every answer: no correct answer, so tokens per correct is infinite
    // and its standard error does not exist.
    for name in ["cost.csv", "checks.csv"] {
        let text = read(&out.join(name));
        assert!(!text.contains("nan"), "{name}: {text}");
        assert!(text.contains("inf"), "{name}: {text}");
    }
}

#[test]
fn a_model_name_with_characters_xml_forbids_failed_figure_drawing_with_exit_3() {
    for name in ["m\u{1}x", "m\u{ffff}", "a<b>&\"c"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let rows = rows_of_model(name);
        let f = write_file(dir.path(), "names.jsonl", &rows);
        let out = dir.path().join("o");
        succeeds(
            evalsim()
                .args(["analyze", "--quiet", "--bootstrap", "0"])
                .arg(&f)
                .arg("--out")
                .arg(&out),
        );
        let svgs: Vec<_> = std::fs::read_dir(&out)
            .expect("out folder")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "svg"))
            .collect();
        assert!(!svgs.is_empty(), "{name:?}: no figure written");
        for svg in svgs {
            let text = read(&svg);
            assert!(
                !text.contains(['\u{1}', '\u{ffff}']),
                "{name:?}: {} holds a character XML forbids",
                svg.display()
            );
        }
    }
}

#[test]
fn a_newline_in_a_file_name_split_the_error_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, text) in [
        ("bad\nname.jsonl", "{\"problem_id\": 1}\n"),
        ("bad\nname.toml", "seed = \"x\"\n"),
    ] {
        let f = write_file(dir.path(), name, text);
        let command = if name.ends_with(".toml") {
            "check"
        } else {
            "analyze"
        };
        let err = refused_saying(evalsim().arg(command).arg(&f), &["bad\\u{a}name"]);
        let naming: Vec<&str> = err.lines().filter(|l| l.contains("name.")).collect();
        assert!(
            naming.iter().all(|l| l.contains("bad\\u{a}name")),
            "{name:?}: the file name is split across lines:\n{err}"
        );
    }
}

#[test]
fn the_lm_eval_filter_error_never_named_the_filter_flag() {
    let err = refused_saying(
        evalsim()
            .args(["analyze", "--filter", "nonexistent"])
            .arg("tests/fixtures/harness/lm_eval/gen"),
        &["no rows with filter `nonexistent`", "--filter", "`none`"],
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn token_counts_that_overflow_printed_inf_per_sample() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rows: String = (0..12)
        .map(|i| {
            format!(
                "{{\"problem_id\": {}, \"correct\": {}, \"output_tokens\": 1.7e308}}\n",
                i / 2,
                i % 3 == 0
            )
        })
        .collect();
    let f = write_file(dir.path(), "tokens.jsonl", &rows);
    for command in ["analyze", "fit"] {
        let err = refused_saying(
            evalsim()
                .arg(command)
                .arg(&f)
                .arg("--out")
                .arg(dir.path().join(command)),
            &["tokens.jsonl:1", "output_tokens", "1e15"],
        );
        assert!(!err.contains("inf"), "{command}: {err}");
        assert!(
            !dir.path().join(command).exists(),
            "{command}: left an output folder"
        );
    }
}

/// A scenario with one model whose `[[model]]` block ends in `extra`, under every experiment
/// the newer keys reach, at small sizes.
fn with_model_keys(extra: &str) -> String {
    format!(
        "seed = 3\n[benchmark]\nproblems = 12\nmu = 0.3\nsigma = 2.0\n\
         [[model]]\nname = \"m\"\nshift = 0.0\nattractor = 0.4\n{extra}\n\
         [[model]]\nname = \"b\"\nshift = 0.3\nattractor = 0.4\n\
         [[experiment]]\nkind = \"curves\"\nmodels = [\"m\"]\nk = [1, 3, 16]\nvotes = 300\n\
         [[experiment]]\nkind = \"vote-spread\"\nmodel = \"m\"\nk = [1, 5]\nreruns = 300\n\
         [[experiment]]\nkind = \"seed-variance\"\nmodel = \"m\"\nn = [1, 4]\nreruns = 300\n\
         [[experiment]]\nkind = \"head-to-head\"\na = \"m\"\nb = \"b\"\nn = [1, 4]\nreruns = 300\n"
    )
}

#[test]
fn newer_model_keys_at_the_edges_of_their_ranges_run_or_are_refused_at_their_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let edges = [
        "shift_sd = 10.0",
        "shift_sd = 10.0\nvote_rule = \"absolute\"",
        "shift_sd = 10.0\nrun_sd = 3.0",
        "unparsed = 0.999999",
        "split = 0.999999",
        "unparsed = 0.5\nsplit = 0.5",
        "run_sd = 3.0",
        "[model.verifier]\nkind = \"threshold\"\ntpr = 0.0\nfpr = 0.0\nfallback = \"abstain\"",
        "[model.verifier]\nkind = \"threshold\"\ntpr = 1.0\nfpr = 1.0",
        "[model.verifier]\nkind = \"score\"\nseparation = -10.0",
        "[model.verifier]\nkind = \"score\"\nseparation = 10.0",
        "[model.grader]\nfpr = 1.0\nfnr = 1.0",
        "[model.grader]\nfpr = 1.0",
        "unparsed = 0.99\n[model.grader]\nfpr = 1.0\nfnr = 0.0",
        "split = 0.9\n[model.verifier]\nkind = \"threshold\"\ntpr = 1.0\nfpr = 0.0\n[model.grader]\nfnr = 1.0",
    ];
    for (i, extra) in edges.iter().enumerate() {
        let text = with_model_keys(extra);
        let f = write_file(dir.path(), &format!("edge{i}.toml"), &text);
        let out = evalsim().arg("check").arg(&f).output().expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        match out.status.code() {
            Some(0) => {}
            Some(2) => assert!(
                err.contains(&format!("edge{i}.toml:")),
                "{extra}: a refusal without its location:\n{err}"
            ),
            code => panic!("{extra}: exit {code:?}\n{stdout}\n{err}"),
        }
        assert!(!err.contains("panicked"), "{extra}: {err}");
    }
}

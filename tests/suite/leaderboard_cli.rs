//! `evalsim analyze` on more than two models: the leaderboard from outside (files, headline,
//! determinism, several inputs, differing problem sets), on a real slice of eval-arena's
//! per-example HumanEval results (tests/fixtures/eval-arena/README.md says where it is from).
use std::path::{Path, PathBuf};

use crate::common::{evalsim, write_file};

fn arena() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/eval-arena/humaneval-12-models.jsonl")
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn analyze(files: &[&Path], out: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    let mut c = evalsim();
    c.arg("analyze");
    for f in files {
        c.arg(f);
    }
    c.arg("--out").arg(out).args(extra).assert()
}

#[test]
fn eval_arena_humaneval_slice_gives_a_leaderboard_of_12_models() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("he");
    let a = analyze(&[&arena()], &out, &[]).success();
    let stdout = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    assert!(stdout.contains("leaderboard of 12 models"), "{stdout}");
    assert!(stdout.contains("of 66 pairs resolved;"), "{stdout}");
    assert!(
        stdout.contains("points are not resolvable here"),
        "{stdout}"
    );
    let board = read(&out, "leaderboard.csv");
    let rows: Vec<&str> = board.lines().skip(1).collect();
    assert_eq!(rows.len(), 12);
    // claude-3-opus solved 136 of the 164 problems with its one greedy sample.
    assert!(
        rows[0].starts_with(&format!(
            "1,claude-3-opus-20240229,164,1,{},",
            136.0 / 164.0
        )),
        "{}",
        rows[0]
    );
    assert!(rows[11].starts_with("12,octocoder,"), "{}", rows[11]);
    assert_eq!(read(&out, "pairs.csv").lines().count(), 1 + 66);
    let md = read(&out, "report.md");
    assert!(
        md.contains("## Leaderboard") && md.contains("![leaderboard.png]"),
        "{md}"
    );
    for f in [
        "leaderboard.png",
        "leaderboard.svg",
        "pair-differences.png",
        "pair-differences.svg",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
}

#[test]
fn leaderboard_files_are_identical_for_1_and_2_threads() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    analyze(&[&arena()], &one, &["--threads", "1"]).success();
    analyze(&[&arena()], &two, &["--threads", "2"]).success();
    for f in [
        "leaderboard.csv",
        "pairs.csv",
        "summary.json",
        "report.md",
        "leaderboard.svg",
        "pair-differences.svg",
    ] {
        assert_eq!(read(&one, f), read(&two, f), "{f}");
    }
}

fn model_file(dir: &Path, name: &str, solved: &[bool]) -> PathBuf {
    let mut text = String::new();
    for (i, &c) in solved.iter().enumerate() {
        for _ in 0..2 {
            text += &format!("{{\"problem_id\": \"p{i}\", \"correct\": {}}}\n", c);
        }
    }
    write_file(dir, &format!("{name}.jsonl"), &text)
}

#[test]
fn three_files_of_one_model_each_make_a_leaderboard_and_differing_problem_sets_warn() {
    let dir = tempfile::tempdir().unwrap();
    let a = model_file(dir.path(), "a", &[true; 12]);
    let b = model_file(dir.path(), "b", &[[true, false]; 6].concat());
    let c = model_file(dir.path(), "c", &[false; 10]);
    let out = dir.path().join("out");
    let run = analyze(&[&a, &b, &c], &out, &["--no-figures"]).success();
    let stderr = String::from_utf8_lossy(&run.get_output().stderr).to_string();
    assert!(
        stderr.contains("problem sets differ: 12 problems in all, 10 shared by every model"),
        "{stderr}"
    );
    let board = read(&out, "leaderboard.csv");
    let models: Vec<&str> = board
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap())
        .collect();
    assert_eq!(models, ["a", "b", "c"]);
    // a - c over their 10 shared problems, 2 of a's problems left out.
    let pair = read(&out, "pairs.csv");
    assert!(
        pair.lines().any(|l| l.starts_with("1,3,a,c,10,2,1,")),
        "{pair}"
    );
}

#[test]
fn compare_with_three_models_is_refused_not_turned_into_a_leaderboard() {
    let dir = tempfile::tempdir().unwrap();
    analyze(&[&arena()], &dir.path().join("x"), &["--compare"])
        .failure()
        .stderr(predicates::str::contains("exactly two models"));
}

#[test]
fn fit_of_the_eval_arena_slice_wrote_a_scenario_its_own_loader_refused() {
    // Model names such as `gpt-3.5-turbo` went into experiment names unchanged, and a `.` is
    // not allowed in one.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fit");
    evalsim()
        .arg("fit")
        .arg(arena())
        .args(["--quiet", "--no-figures", "--out"])
        .arg(&out)
        .assert()
        .success();
    let text = read(&out, "scenario.toml");
    assert!(text.contains("gpt-3_5-turbo"), "{text}");
    evalsim::scenario::Scenario::from_toml(&text, "fitted", "scenario.toml")
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
}

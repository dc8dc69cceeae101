//! The command line from outside: status codes, stdout, stderr and files.
use std::path::Path;

use predicates::prelude::*;

use super::common::{evalsim, files_where, write_file};

const GOOD: &str = r#"title = "tiny"
seed = 3
[benchmark]
problems = 5
mu = 0.0
sigma = 1.0
[[model]]
name = "m"
shift = 0.0
attractor = 0.5
[[experiment]]
kind = "curves"
k = [1, 2, 4]
votes = 500
"#;

/// Writes `src` as a scenario, runs it, and expects exit code 2 with every `needle` on stderr
/// and no output folder.
fn rejects(src: &str, needles: &[&str]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write_file(dir.path(), "bad.toml", src);
    let out = dir.path().join("out");
    let mut cmd = evalsim();
    cmd.arg("run").arg(&file).arg("--out").arg(&out);
    let mut assert = cmd
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.toml:"));
    for n in needles {
        assert = assert.stderr(predicate::str::contains(*n));
    }
    assert!(!out.exists(), "nothing may be written for bad input");
}

/// [`rejects`] each edit of `base`: (text of `base`, its replacement, what the error must say).
fn rejects_edits(base: &str, edits: &[(&str, &str, &[&str])]) {
    for (from, to, needles) in edits {
        assert!(base.contains(from), "the case edits nothing: {from:?}");
        rejects(&base.replace(from, to), needles);
    }
}

#[test]
fn clap_definition_is_consistent() {
    use clap::CommandFactory;
    evalsim::cli::Cli::command().debug_assert();
}

#[test]
fn init_prints_a_template_that_loads_and_passes_check() {
    let out = evalsim()
        .args(["init", "my \"eval\""])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).expect("utf-8");
    let scenario = evalsim::scenario::Scenario::from_toml(&text, "template", "template.toml")
        .unwrap_or_else(|e| panic!("the template does not load: {e}\n{text}"));
    assert_eq!(scenario.title, "my \"eval\"");
    for kind in [
        "curves",
        "attractor-sweep",
        "seed-variance",
        "vote-spread",
        "head-to-head",
        "budget",
        "cost",
        "plan",
        "judge",
    ] {
        assert!(
            text.contains(&format!("kind = \"{kind}\"")),
            "no {kind} experiment"
        );
    }
    assert_eq!(scenario.experiments.len(), 9);
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write_file(dir.path(), "mine.toml", &text);
    evalsim()
        .arg("check")
        .arg(&file)
        .arg("-q")
        .assert()
        .success();
}

#[test]
fn cost_figure_honours_price_per_mtok_on_its_axis() {
    let template = String::from_utf8(
        evalsim()
            .arg("init")
            .assert()
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .expect("utf-8");
    let dir = tempfile::tempdir().expect("tempdir");
    let figure = |price: bool| -> String {
        let text = if price {
            template.replace("# price_per_mtok = 10.0", "price_per_mtok = 10.0")
        } else {
            template.clone()
        };
        let file = dir.path().join(format!("priced-{price}.toml"));
        std::fs::write(&file, text).expect("write");
        let out = dir.path().join(format!("out-{price}"));
        evalsim()
            .arg("run")
            .arg(&file)
            .args(["-q", "--out"])
            .arg(&out)
            .assert()
            .success();
        std::fs::read_to_string(out.join("cost.svg")).expect("cost.svg")
    };
    let (tokens, money) = (figure(false), figure(true));
    assert!(tokens.contains("tokens per correct answer (k"), "{tokens}");
    assert!(
        money.contains("cost per correct answer at 10 per million output tokens"),
        "{money}"
    );
    assert!(!money.contains("tokens per correct answer (k"));
    // The x ticks move from tokens to money at 10 per million tokens: 50k tokens are 0.5.
    let texts = |svg: &str| -> Vec<String> {
        svg.lines()
            .map(str::trim)
            .filter(|l| !l.contains('<'))
            .map(String::from)
            .collect()
    };
    let (t, m) = (texts(&tokens), texts(&money));
    assert!(
        t.iter().any(|l| l == "50k") && t.iter().any(|l| l == "100k"),
        "{t:?}"
    );
    assert!(
        m.iter().any(|l| l == "0.5") && m.iter().any(|l| l == "1"),
        "{m:?}"
    );
    assert!(!m.iter().any(|l| l.ends_with('k')), "{m:?}");
}

#[test]
fn each_subcommands_help_names_its_own_default_folder() {
    use clap::CommandFactory;
    let mut cli = evalsim::cli::Cli::command();
    let mut help = |name: &str| -> String {
        cli.find_subcommand_mut(name)
            .expect("subcommand")
            .render_long_help()
            .to_string()
    };
    for (command, folder) in [
        ("run", "[default: out/<scenario>/]"),
        ("check", "[default: write no file]"),
        ("sweep", "[default: out/<scenario>-sweep/]"),
        ("analyze", "[default: out/analyze-<file name>/"),
        ("fit", "[default: out/fit-<file name>/]"),
        ("plan", "[default: out/plan/]"),
        ("merge", "[default: DIR, the shards' folder]"),
    ] {
        let text = help(command);
        assert!(
            text.contains(folder),
            "{command} --help lacks {folder}:\n{text}"
        );
    }
    assert!(help("check").contains("checks.csv"));
    assert!(help("analyze").contains("Seed of the bootstrap"));
    let list = help("list");
    for flag in ["--out", "--seed", "--threads", "--dpi"] {
        assert!(!list.contains(flag), "list --help offers {flag}:\n{list}");
    }
}

#[test]
fn run_note_writes_every_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("note");
    evalsim()
        .args(["run", "note", "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::is_empty());
    for f in [
        "curves.csv",
        "curves.png",
        "curves.svg",
        "attractor-sweep.csv",
        "attractor-sweep.png",
        "budget.csv",
        "budget-crossover.csv",
        "budget.png",
        "budget.svg",
        "budget-lengths.png",
        "budget-lengths.svg",
        "cost.csv",
        "cost.png",
        "cost.svg",
        "checks.csv",
        "summary.json",
        "results.json",
        "report.md",
    ] {
        let p = out.join(f);
        assert!(p.is_file(), "{f} missing");
        assert!(
            std::fs::metadata(&p).expect("meta").len() > 100,
            "{f} is too small"
        );
    }
    // PNGs decode at their declared size; SVG text uses the CSS font list.
    let img = image::open(out.join("curves.png")).expect("curves.png decodes");
    // 1600 x 640 plus the strip under the panels that holds their outside legends.
    assert_eq!(img.width(), 1600);
    assert!((640..=800).contains(&img.height()), "{}", img.height());
    let svg = std::fs::read_to_string(out.join("curves.svg")).expect("svg");
    assert!(svg.contains("DejaVu Sans, Helvetica, Arial, sans-serif"));
    let summary = std::fs::read_to_string(out.join("summary.json")).expect("summary");
    assert!(summary.contains("\"seed\": 20240601"));
    let report = std::fs::read_to_string(out.join("report.md")).expect("report");
    assert!(report.contains("![curves](curves.png)"));
    // No temp files left behind.
    assert!(std::fs::read_dir(&out).expect("dir").all(|e| !e
        .expect("entry")
        .file_name()
        .to_string_lossy()
        .starts_with('.')));
}

#[test]
fn check_note_passes_and_reports_counts() {
    evalsim()
        .args(["check", "note"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "checks: 236 of 236 passed (|z| <= 4.5, or Bernstein's bound for counts;",
        ));
}

#[test]
fn list_names_the_shipped_scenarios() {
    evalsim()
        .arg("list")
        .assert()
        .success()
        .stdout(predicate::str::contains("note").and(predicate::str::contains("concentrated")));
}

#[test]
fn unknown_scenario_name_is_bad_input() {
    evalsim().args(["run", "nosuch"]).assert().code(2).stderr(
        predicate::str::contains("unknown scenario `nosuch`")
            .and(predicate::str::contains("note, concentrated")),
    );
}

/// `evalsim run note --no-figures --quiet FLAGS... --out OUT`, which must succeed.
fn run_note(flags: &[&str], out: &Path) {
    evalsim()
        .args(["run", "note", "--no-figures", "--quiet"])
        .args(flags)
        .arg("--out")
        .arg(out)
        .assert()
        .success();
}

fn csvs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    files_where(dir, |p| {
        p.extension().is_some_and(|x| x == "csv" || x == "json")
    })
}

#[test]
fn tables_are_identical_for_any_thread_count() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (dir.path().join("t1"), dir.path().join("t2"));
    for (out, threads) in [(&a, "1"), (&b, "2")] {
        run_note(&["--threads", threads], out);
    }
    let (ta, tb) = (csvs(&a), csvs(&b));
    assert_eq!(ta.len(), 11);
    assert_eq!(ta, tb);
}

#[test]
fn seed_flag_changes_the_simulation_and_is_recorded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("s");
    run_note(&["--seed", "99"], &out);
    let checks = std::fs::read_to_string(out.join("checks.csv")).expect("checks");
    assert!(checks.lines().nth(1).expect("row").starts_with("note,99,"));
}

#[test]
fn good_file_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write_file(dir.path(), "tiny.toml", GOOD);
    evalsim()
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(dir.path().join("o"))
        .assert()
        .success();
}

#[test]
fn bad_inputs_name_file_line_key_and_what_is_valid() {
    rejects_edits(
        GOOD,
        &[
            (
                "sigma = 1.0",
                "sigma = 1.0\nsigmaa = 2",
                &[
                    ":7:",
                    "benchmark.sigmaa",
                    "unknown key `sigmaa` in [benchmark]",
                ],
            ),
            (
                "sigma = 1.0",
                "sigma = 0.0",
                &[
                    ":6:",
                    "benchmark.sigma",
                    "must be a number of logits in (0, 40]",
                ],
            ),
            ("sigma = 1.0", "sigma = -1", &["benchmark.sigma", "(0, 40]"]),
            (
                "attractor = 0.5",
                "attractor = 1.5",
                &[":10:", "model[1].attractor", "must be a share in [0, 1]"],
            ),
            (
                "problems = 5\nmu = 0.0\nsigma = 1.0",
                "rates = [0.1, 1.2]",
                &["benchmark.rates", "1.2 is out of range", "[0, 1]"],
            ),
            (
                "problems = 5",
                "problems = 0",
                &[":4:", "benchmark.problems", "between 1 and 100000"],
            ),
            (
                "k = [1, 2, 4]",
                "k = []",
                &["experiment[1].k", "must list 1 to 256 values"],
            ),
            (
                "k = [1, 2, 4]",
                "k = [0, 2]",
                &["experiment[1].k", "0 is out of range", "between 1 and 1024"],
            ),
            (
                "k = [1, 2, 4]",
                "k = [1, 4096]",
                &[
                    "experiment[1].k",
                    "4096 is out of range",
                    "between 1 and 1024",
                ],
            ),
            (
                "votes = 500",
                "votes = 0",
                &[":14:", "experiment[1].votes", "between 1 and 100000000"],
            ),
            (
                "k = [1, 2, 4]",
                "models = [\"nobody\"]",
                &[
                    "experiment[1].models",
                    "no model named `nobody`",
                    "models: m",
                ],
            ),
            (
                "kind = \"curves\"",
                "kind = \"curvez\"",
                &["experiment[1].kind", "unknown variant `curvez`"],
            ),
            (
                "votes = 500",
                "votes = 500\nreruns = 3",
                &[
                    "experiment[1].reruns",
                    "does not apply to a `curves` experiment",
                ],
            ),
            ("seed = 3", "seed = \"x\"", &[":2:", "seed", "invalid type"]),
            ("mu = 0.0", "mu = ", &[":5:", "benchmark.mu"]),
            (
                "attractor = 0.5\n",
                "",
                &["model[1].attractor", "missing key `attractor`"],
            ),
        ],
    );
}

const BUDGET_GOOD: &str = r#"seed = 3
[benchmark]
problems = 4
mu = 0.0
sigma = 1.0
[[model]]
name = "m"
attractor = 0.5
[model.tokens]
median_tokens = 2000
hard_growth = 1.0
wrong_factor = 1.5
sigma = 0.5
[[experiment]]
kind = "budget"
budgets = [1000, 4000]
traces = 300
[[experiment]]
kind = "cost"
models = ["m"]
k = [1, 4]
votes = 300
traces = 300
"#;

#[test]
fn budget_and_cost_file_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write_file(dir.path(), "tiny.toml", BUDGET_GOOD);
    let out = dir.path().join("o");
    evalsim()
        .args(["check", "--no-figures"])
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("checks: 11 of 11"));
}

#[test]
fn bad_budget_and_cost_inputs_are_clear_errors() {
    rejects_edits(
        BUDGET_GOOD,
        &[
            ("budgets = [1000, 4000]", "budgets = [0, 4000]", &[":16:", "experiment[1].budgets", "0 is out of range", "(0, 1e150]"]),
            ("budgets = [1000, 4000]", "budgets = [-5, 4000]", &["experiment[1].budgets", "-5 is out of range"]),
            ("sigma = 0.5", "sigma = 0", &[":13:", "model[1].tokens.sigma", "must be a log-SD > 0"]),
            ("sigma = 0.5", "sigma = -0.5", &["model[1].tokens.sigma", "> 0"]),
            ("wrong_factor = 1.5", "wrong_factor = 0", &[":12:", "model[1].tokens.wrong_factor", "must be a factor > 0"]),
            ("models = [\"m\"]", "models = [\"nobody\"]", &[":20:", "experiment[2].models", "no model named `nobody`", "models: m"]),
            ("k = [1, 4]", "k = [0, 4]", &[":21:", "experiment[2].k", "0 is out of range", "between 1 and 1024"]),
            ("k = [1, 4]", "k = [1, 4]\ncap = 0", &["experiment[2].cap", "a token cap in (0, 1e150]"]),
            ("traces = 300\n[[experiment]]", "traces = 0\n[[experiment]]", &["experiment[1].traces", "between 1 and 100000000"]),
            ("[model.tokens]\nmedian_tokens = 2000\nhard_growth = 1.0\nwrong_factor = 1.5\nsigma = 0.5\n", "", &["experiment[1].models", "model `m` has no [model.tokens] block"]),
        ],
    );
}

#[test]
fn unwritable_output_folder_is_bad_input() {
    let dir = tempfile::tempdir().expect("tempdir");
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "x").expect("write");
    evalsim()
        .args(["run", "note", "--no-figures", "--out"])
        .arg(blocker.join("sub"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot write").and(predicate::str::contains("--out")));
}

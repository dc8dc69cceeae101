//! The report and the terminal (issue 15): each experiment's own figures, a summary table,
//! headline numbers on stdout, significant digits of small probabilities, no empty scenarios.
use assert_cmd::Command;
use evalsim::report::summary::{headline_value, Headline, Unit};

fn evalsim() -> Command {
    Command::cargo_bin("evalsim").expect("binary built")
}

const TWO_CURVES: &str = r#"seed = 3
[benchmark]
problems = 5
mu = 0.0
sigma = 1.0
[[model]]
name = "m"
attractor = 0.5
[[experiment]]
kind = "curves"
name = "curves"
k = [1, 2, 4]
votes = 200
[[experiment]]
kind = "curves"
name = "curves-strict"
vote_rule = "strict"
k = [1, 2, 4]
votes = 200
"#;

fn run(src: &str, extra: &[&str]) -> (tempfile::TempDir, std::process::Output) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("s.toml");
    std::fs::write(&file, src).expect("write");
    let out = evalsim()
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(dir.path().join("out"))
        .args(extra)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .expect("runs");
    (dir, out)
}

#[test]
fn report_embeds_each_experiments_own_figures_only() {
    let (dir, out) = run(TWO_CURVES, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = std::fs::read_to_string(dir.path().join("out/report.md")).expect("report");
    let section = |name: &str| {
        let start = md.find(&format!("\n## {name}\n")).expect("section");
        let rest = &md[start + 1..];
        let end = rest[3..].find("\n## ").map_or(rest.len(), |e| e + 3);
        rest[..end].to_string()
    };
    let curves = section("curves");
    assert!(curves.contains("(curves.png)"), "{curves}");
    assert!(!curves.contains("curves-strict.png"), "{curves}");
    let strict = section("curves-strict");
    assert!(strict.contains("(curves-strict.png)"), "{strict}");
    // A sentence under each figure, and the summary table at the top.
    assert!(
        curves.contains("dashed line is maj@k's large-k limit"),
        "{curves}"
    );
    let summary = md.find("## Summary").expect("summary table");
    assert!(summary < md.find("\n## curves\n").expect("curves"));
}

#[test]
fn run_prints_the_headline_numbers_as_an_aligned_table() {
    let (_dir, out) = run(TWO_CURVES, &["--no-figures"]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("pass@1") || l.contains("simulated"))
        .collect();
    assert!(lines.len() >= 3, "{stdout}");
    assert!(
        lines[0].contains("experiment") && lines[0].contains("exact"),
        "{stdout}"
    );
    // Right-aligned numbers: every row has the same width up to its last column.
    let widths: Vec<usize> = lines
        .iter()
        .filter(|l| l.trim_end().ends_with('%') || l.trim_end().ends_with("simulated"))
        .map(|l| l.trim_end().chars().count())
        .collect();
    assert!(widths.windows(2).all(|w| w[0] == w[1]), "{stdout}");
}

#[test]
fn a_scenario_with_no_experiments_is_an_error() {
    let src = "seed = 3\n[benchmark]\nproblems = 5\nmu = 0.0\nsigma = 1.0\n[[model]]\nname = \"m\"\nattractor = 0.5\n";
    let (dir, out) = run(src, &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("s.toml") && stderr.contains("no [[experiment]]"),
        "{stderr}"
    );
    assert!(!dir.path().join("out").exists());
}

#[test]
fn small_probabilities_keep_their_significant_digits() {
    let h = Headline {
        experiment: "head-to-head".into(),
        name: "P(b < a) n=64".into(),
        unit: Unit::Percent,
        exact: 0.0,
        sim: None,
    };
    assert_eq!(headline_value(&h, 2.1e-6), "0.00021%");
    assert_eq!(headline_value(&h, 0.000_2), "0.020%");
    assert_eq!(headline_value(&h, 0.529_4), "52.94%");
    assert_eq!(headline_value(&h, 0.0), "0.00%");
    let t = Headline {
        name: "long k=1 tokens per correct".into(),
        unit: Unit::Tokens,
        ..h.clone()
    };
    assert_eq!(headline_value(&t, 23_456.4), "23456");
    let sd = Headline {
        name: "m seed SD n=4".into(),
        unit: Unit::Points,
        ..t.clone()
    };
    assert_eq!(headline_value(&sd, 0.0344), "3.44 pts");
    let acc = Headline {
        name: "m accuracy at 1000 tokens".into(),
        unit: Unit::Percent,
        ..t
    };
    assert_eq!(headline_value(&acc, 0.0003), "0.030%");
}

/// `evalsim run NAME --no-figures` into a temporary folder: (folder, stdout, summary.json).
fn run_named(name: &str) -> (tempfile::TempDir, String, serde_json::Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = evalsim()
        .args(["run", name, "--no-figures", "--out"])
        .arg(dir.path().join("out"))
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .expect("runs");
    assert!(out.status.success(), "{out:?}");
    let summary = std::fs::read_to_string(dir.path().join("out/summary.json")).expect("summary");
    let json = serde_json::from_str(&summary).expect("summary.json parses");
    (dir, String::from_utf8_lossy(&out.stdout).into_owned(), json)
}

/// The stdout row whose quantity contains `what`.
fn row<'a>(stdout: &'a str, what: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.contains(what))
        .unwrap_or_else(|| panic!("no row with {what:?} in\n{stdout}"))
}

#[test]
fn run_note_prints_the_budget_crossover_it_exists_for() {
    let (_dir, stdout, json) = run_named("note");
    let crossover = row(&stdout, "crossover long vs short");
    assert!(
        crossover.contains("short leads below, long above"),
        "{crossover}"
    );
    assert!(crossover.trim_end().ends_with("17647"), "{crossover}");
    // Every experiment's answer is printed, not its first four rows.
    assert!(!stdout.contains("more in summary.json"), "{stdout}");
    row(&stdout, "P(long+0.21 < long), n=64");
    row(&stdout, "frontier 5:");
    // summary.json holds the same rows with their units.
    let rows = json["headline"].as_array().expect("headline rows");
    let printed = stdout.lines().count() - 1; // the header
    assert!(
        rows.len() <= printed,
        "{} rows, {printed} printed",
        rows.len()
    );
    let c = rows
        .iter()
        .find(|h| h["name"].as_str().unwrap().starts_with("crossover"))
        .expect("crossover row");
    assert_eq!(c["unit"], "tokens");
    assert!((c["exact"].as_f64().unwrap() - 17_647.0).abs() < 1.0, "{c}");
}

#[test]
fn pass_at_1_headline_shows_its_simulated_value() {
    let (_dir, stdout, _) = run_named("note");
    let r = row(&stdout, "long pass@1");
    let cells: Vec<&str> = r.split_whitespace().collect();
    assert!(
        cells.len() >= 2
            && cells[cells.len() - 1].ends_with('%')
            && cells[cells.len() - 2].ends_with('%'),
        "exact and simulated: {r}"
    );
}

#[test]
fn vote_spread_headline_says_how_much_noisier_maj_at_k_is_and_from_which_k() {
    let (_dir, stdout, _) = run_named("note");
    let ratio = row(&stdout, "SD / averaged SD");
    assert!(ratio.trim_end().ends_with('x'), "{ratio}");
    row(&stdout, "noisier than the average of its k samples from k");
    // k = 1 and 2 (trivially equal SDs) are not the headline.
    assert!(!stdout.contains("maj@1 seed SD"), "{stdout}");
}

#[test]
fn plan_headline_prints_a_loss_probability_in_percent_and_calls_k_k() {
    let (_dir, stdout, _) = run_named("concentrated");
    let r = row(&stdout, "cheapest with P(B <= A)");
    assert!(r.contains(", k="), "{r}");
    assert!(!r.contains("samples="), "{r}");
    assert!(r.trim_end().ends_with('%') && !r.contains(" pts"), "{r}");
}

#[test]
fn a_zero_gap_prints_without_a_minus_sign() {
    let (_dir, stdout, _) = run_named("contamination");
    assert!(!stdout.contains("-0.00"), "{stdout}");
    let r = row(&stdout, "pass@1 gap run-sd-1 - independent");
    assert!(r.trim_end().ends_with("0.00 pts"), "{r}");
    row(&stdout, "smallest fresh set reaching");
}

#[test]
fn verifier_headline_sets_best_at_k_against_maj_at_k() {
    let (_dir, stdout, _) = run_named("verifier");
    row(&stdout, "checked best@256");
    row(&stdout, "checked maj@256");
    row(&stdout, "judged pass@1 (true)");
}

#[test]
fn plan_without_reruns_says_nothing_was_simulated() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = evalsim()
        .args(["plan", "--simulate-reruns", "0", "--no-figures", "--out"])
        .arg(dir.path().join("plan"))
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .expect("runs");
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("simulated: nothing"), "{stdout}");
    assert!(!stdout.contains("counts/s"), "{stdout}");
}

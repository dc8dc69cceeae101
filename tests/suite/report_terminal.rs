//! The report and the terminal (issue 15): each experiment's own figures, a summary table,
//! headline numbers on stdout, significant digits of small probabilities, no empty scenarios.
use assert_cmd::Command;
use evalsim::report::markdown::{headline_value, Headline};

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
        exact: 0.0,
        sim: None,
    };
    assert_eq!(headline_value(&h, 2.1e-6), "0.00021%");
    assert_eq!(headline_value(&h, 0.000_2), "0.020%");
    assert_eq!(headline_value(&h, 0.529_4), "52.94%");
    assert_eq!(headline_value(&h, 0.0), "0.00%");
    let t = Headline {
        name: "long k=1 tokens per correct".into(),
        ..h.clone()
    };
    assert_eq!(headline_value(&t, 23_456.4), "23456");
    let sd = Headline {
        name: "m seed SD n=4".into(),
        ..t.clone()
    };
    assert_eq!(headline_value(&sd, 0.0344), "3.44 pts");
    let acc = Headline {
        name: "m accuracy at 1000 tokens".into(),
        ..t
    };
    assert_eq!(headline_value(&acc, 0.0003), "0.030%");
}

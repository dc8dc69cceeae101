//! Printed values never read as a bound they do not reach, and a value that was cut or rests on
//! an exact bound says so (issue 15, "a clamped value says it was clamped"): terminal tables,
//! report.md, the text of `fit`.
use std::path::Path;

use evalsim::report::summary::{headline_value, Headline, Unit};

use crate::common::{evalsim, read};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/analyze/");

#[test]
fn headline_values_near_0_and_100_percent_keep_their_digits() {
    let h = Headline {
        experiment: "curves".into(),
        name: "m a=0.5 pass@128".into(),
        unit: Unit::Percent,
        exact: 0.0,
        sim: None,
    };
    // Before: "100.00%" for a value below 1, "0.000000000000000%" for 1e-30.
    assert_eq!(headline_value(&h, 0.999_996_2), "99.99962%");
    assert_eq!(headline_value(&h, 1.0 - 1e-14), ">99.99999999%");
    assert_eq!(headline_value(&h, 1.0), "100.00%");
    assert_eq!(headline_value(&h, 3.2e-32), "3.2e-30%");
}

/// On `canonical.jsonl` (2 problems, n = 3) every problem scores the same at every k: each
/// interval is the exact bound, not a Wilson interval, and every table marks it.
#[test]
fn analyze_marks_every_interval_that_is_the_exact_bound() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let o = evalsim()
        .arg("analyze")
        .arg(Path::new(FIXTURES).join("canonical.jsonl"))
        .args(["--no-figures", "--threads", "1", "--out"])
        .arg(&out)
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    // Header and table: 7.5–85.1 is the exact bound around 1/3 (every problem scores 1/3).
    assert!(stdout.contains("95% CI 7.5–85.1† (bootstrap"), "{stdout}");
    assert!(stdout.contains("[22.4–100.0†]"), "{stdout}");
    // Every marked k is named in the table's one note, the all-equal case included.
    assert!(
        stdout.contains("note: † pass@k at k = 3: every problem scores 1; pass@k at k = 1, 2: every problem has the same score."),
        "{stdout}"
    );
    assert_eq!(stdout.matches("note: †").count(), 1, "{stdout}");
    let md = read(&out.join("report.md"));
    assert!(md.contains("| 22.4–100.0† |"), "{md}");
    assert!(
        md.contains("\n† pass@k at k = 3: every problem scores 1; pass@k at k = 1, 2: every problem has the same score; maj@k at k ="),
        "{md}"
    );
}

/// An interval with spread is not marked.
#[test]
fn analyze_leaves_wilson_intervals_unmarked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let o = evalsim()
        .arg("analyze")
        .arg(Path::new(FIXTURES).join("inspect_log_gsm8k.json"))
        .args(["--no-figures", "--threads", "1", "--out"])
        .arg(&out)
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = read(&out.join("report.md"));
    let table: Vec<&str> = md.lines().filter(|l| l.starts_with("| 1 |")).collect();
    assert!(!table.is_empty(), "{md}");
    for row in table {
        assert!(!row.contains('†'), "{row}");
    }
}

/// `fit` on `canonical.jsonl`: the attractor share 0.707 +/- 1.96 SE runs past 1; the printed
/// interval is cut at 1 and says from where (before: "0.217 to 1.000", silently).
#[test]
fn fit_says_when_the_attractor_interval_was_cut_at_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = evalsim()
        .arg("fit")
        .arg(Path::new(FIXTURES).join("canonical.jsonl"))
        .args(["--no-figures", "--quiet", "--out"])
        .arg(dir.path().join("out"))
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let toml = String::from_utf8_lossy(&o.stdout);
    let line = toml
        .lines()
        .find(|l| l.starts_with("# attractor share of `a`"))
        .unwrap_or_else(|| panic!("{toml}"));
    assert!(
        line.contains("to 1.000, upper end cut at 1 from "),
        "{line}"
    );
}

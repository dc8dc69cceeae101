//! The `confidence` experiment end to end: the shipped scenario tells its story with every
//! check passing, the simulation agrees with the exact values at other seeds, vote rules and
//! settings, outputs are identical for any thread count, and `sweep` varies the confidence keys.
use evalsim::exact::confidence::Filter;
use evalsim::experiments::confidence::ConfidenceCurves;
use evalsim::experiments::{run_all, ExperimentResult, RunOutput};
use evalsim::report::kinds;
use evalsim::scenario::Scenario;

use super::common::{evalsim, failures, on_threads, read, succeeds, sweep, write_file};

fn confidence_of(s: &Scenario) -> (RunOutput, ConfidenceCurves) {
    let out = run_all(s, &|_| {});
    let r = out
        .results
        .iter()
        .find_map(|r| match r {
            ExperimentResult::Confidence(c) => Some(c.clone()),
            _ => None,
        })
        .expect("a confidence experiment");
    (out, r)
}

/// The exact filtered maj@k minus the unfiltered one of every filter of `model`.
fn gains(r: &ConfidenceCurves, model: &str) -> Vec<(Filter, f64)> {
    let si = r
        .series
        .iter()
        .position(|s| s.model == model)
        .expect("model");
    r.points
        .iter()
        .filter(|p| p.series == si)
        .filter_map(|p| p.filter.map(|f| (f, p.gain)))
        .collect()
}

/// The story of `scenarios/confidence.toml`: the two models have the same unfiltered maj@16;
/// every top-share filter helps the calibrated model and hurts the one with a confident
/// attractor, and the harder it filters the more it hurts.
#[test]
fn shipped_confidence_scenario_passes_every_check_and_tells_its_story() {
    let s = Scenario::load("confidence").expect("built-in");
    let (out, r) = confidence_of(&s);
    let checks = out.checks();
    assert!(failures(&checks).is_empty(), "{:?}", failures(&checks));
    assert_eq!(checks.len(), 2 * (1 + 5 + 7 + 7));
    let plain: Vec<f64> = r
        .points
        .iter()
        .filter(|p| p.filter.is_none())
        .map(|p| p.estimate.exact)
        .collect();
    assert_eq!(plain.len(), 2);
    assert_eq!(plain[0].to_bits(), plain[1].to_bits());
    let calibrated = gains(&r, "calibrated");
    let confident = gains(&r, "overconfident");
    for (f, g) in &calibrated {
        if matches!(f, Filter::TopShare(_)) {
            assert!(*g > 0.05, "{f:?} gains {g}");
        }
    }
    // The confident attractor: every filter hurts, the top-share losses grow as the share shrinks.
    assert!(confident.iter().all(|(_, g)| *g < 0.0), "{confident:?}");
    let top: Vec<f64> = confident
        .iter()
        .filter(|(f, _)| matches!(f, Filter::TopShare(_)))
        .map(|x| x.1)
        .collect();
    assert!(top.windows(2).all(|w| w[0] < w[1]), "{top:?}");
}

/// Settings away from the shipped ones (strict and absolute votes, a negative separation, an
/// attractor share of 0, small k and the largest k) agree with the simulation at several seeds.
#[test]
fn confidence_checks_pass_across_seeds_rules_and_settings() {
    let base = read(std::path::Path::new("scenarios/confidence.toml"))
        .replace("votes = 2000", "votes = 1000")
        .replace("problems = 100", "problems = 40");
    let variants = [
        ("k = [16]", "k = [16]\nvote_rule = \"strict\""),
        ("k = [16]", "k = [16]\nvote_rule = \"absolute\""),
        ("separation = 1.0", "separation = -1.0"),
        ("k = [16]", "k = [1, 5]"),
        ("k = [16]", "k = [64]"),
        (
            "attractor = 0.5\n\n[model.confidence]\nseparation = 1.5",
            "attractor = 0.0\n\n[model.confidence]\nseparation = 1.5",
        ),
    ];
    for (from, to) in variants {
        assert!(base.contains(from), "{from}");
        let text = base.replacen(from, to, 1);
        for seed in [1, 2] {
            let mut s = Scenario::from_toml(&text, "confidence", "confidence.toml").expect("valid");
            s.seed = seed;
            let (out, _) = confidence_of(&s);
            let checks = out.checks();
            assert!(
                failures(&checks).is_empty(),
                "{to} seed {seed}: {:?}",
                failures(&checks)
            );
        }
    }
}

#[test]
fn confidence_table_is_identical_for_one_two_and_four_threads() {
    let text = read(std::path::Path::new("scenarios/confidence.toml"))
        .replace("votes = 2000", "votes = 300");
    let s = Scenario::from_toml(&text, "confidence", "confidence.toml").expect("valid");
    let table = |threads| {
        on_threads(threads, || {
            let out = run_all(&s, &|_| {});
            let tables = kinds::of(&out.results[0]).tables(&out);
            tables
        })
    };
    let one = table(1);
    assert_eq!(one, table(2));
    assert_eq!(one, table(4));
}

#[test]
fn run_confidence_writes_its_table_figure_and_report_section() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    succeeds(
        evalsim()
            .args(["run", "confidence", "--quiet", "--out"])
            .arg(&out),
    );
    let csv = read(&out.join("confidence.csv"));
    assert!(csv.starts_with("scenario,seed,experiment,model,k,filter,parameter,quantity,exact,"));
    // Per model: the unfiltered vote, 5 shares and 7 thresholds, and the thresholds' kept shares.
    assert_eq!(csv.lines().count(), 1 + 2 * (1 + 5 + 7 + 7));
    let img = image::open(out.join("confidence.png")).expect("decodes");
    assert!(img.width() >= 2000, "{}", img.width());
    let md = read(&out.join("report.md"));
    assert!(md.contains("## confidence") && md.contains("| top 25% |"));
}

/// `sweep` varies the attractor's confidence: at 0 the filters help the model, at 2 they hurt.
#[test]
fn sweep_varies_the_attractor_confidence() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = read(std::path::Path::new("scenarios/confidence.toml"))
        .replace("votes = 2000", "votes = 200");
    let f = write_file(dir.path(), "c.toml", &text);
    let out = dir.path().join("out");
    succeeds(&mut sweep(
        &f,
        &[
            "--set",
            "model.overconfident.confidence.attractor=0,2",
            "--quiet",
            "--no-figures",
        ],
        &out,
    ));
    let csv = read(&out.join("sweep.csv"));
    assert!(
        csv.contains("confidence.attractor"),
        "{}",
        &csv[..csv.len().min(400)]
    );
}

//! `plan --shift-sd` and `--target-power` end to end: bad values are refused naming the flag, a
//! plan with per-problem disagreement passes its simulated checks (exit 0), and the answer names
//! both error sources and the logit correlation.
use assert_cmd::Command;
use predicates::prelude::*;

fn evalsim() -> Command {
    Command::cargo_bin("evalsim").expect("binary")
}

#[test]
fn plan_shift_sd_and_target_power_flags_are_validated() {
    evalsim()
        .args(["plan", "--shift-sd", "5"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--shift-sd: must be a number of logits in [0, 3]",
        ));
    evalsim()
        .args(["plan", "--target-power", "1.5"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--target-power: must be a probability in (0.05, 1)",
        ));
}

#[test]
fn plan_with_shift_sd_passes_its_checks_and_states_both_error_sources() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("p");
    evalsim()
        .args([
            "plan",
            "--shift-sd",
            "1",
            "--problems",
            "30,100",
            "--samples",
            "1,4",
            "--simulate-reruns",
            "4000",
            "--check-population",
            "all",
            "--target-power",
            "0.9",
            "--seed",
            "3",
            "-q",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let txt = std::fs::read_to_string(out.join("plan.txt")).expect("txt");
    for want in [
        "correlate 0.910 in the population",
        "population, paired (question + sampling noise)",
        "fixed benchmark (sampling noise only)",
        "Minimum detectable gap",
        "90% power",
        "Not the uncertainty of a score",
    ] {
        assert!(txt.contains(want), "{want}: {txt}");
    }
    let csv = std::fs::read_to_string(out.join("plan.csv")).expect("csv");
    assert!(csv.lines().next().is_some_and(|h| h.contains("min_gap_80")));
    assert!(out.join("plan-detectable.png").exists());
}

#[test]
fn plan_at_30_problems_says_the_fixed_halfwidth_is_not_a_score_uncertainty() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("p");
    evalsim()
        .args([
            "plan",
            "--problems",
            "30",
            "--samples",
            "256",
            "--simulate-reruns",
            "0",
            "--no-figures",
            "-q",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let txt = std::fs::read_to_string(out.join("plan.txt")).expect("txt");
    // The population designs come first; the fixed half-width is named for what it is.
    let pop = txt.find("- population, paired").expect("population line");
    let fixed = txt.find("- fixed benchmark").expect("fixed line");
    assert!(pop < fixed, "{txt}");
    assert!(
        txt.contains("the half-width of B - A is 1.19 points, but that counts only the models' sampling noise"),
        "{txt}"
    );
    assert!(txt.contains("question-sampling SE of 6.0 points"), "{txt}");
}

/// A scenario's plan whose model A has its own `shift_sd`: every simulated check passes (the
/// simulation draws z, e_A and e_B literally, the exact values integrate B given A), and the
/// answer states the implied logit correlation sigma^2 / (sigma^2 + tau^2).
#[test]
fn plan_honours_a_models_own_shift_sd_end_to_end() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("own.toml");
    std::fs::write(
        &file,
        "seed = 5\n[benchmark]\nproblems = 30\nmu = 0.2\nsigma = 2.2\n[[model]]\nname = \"long\"\nshift = 0.0\nattractor = 0.5\nshift_sd = 1.0\n[[experiment]]\nkind = \"plan\"\ngap_points = [3.0]\nproblems = [30, 100]\nsamples = [4]\nreruns = 4000\ncheck_population = \"all\"\n",
    )
    .expect("write");
    let out = dir.path().join("out");
    evalsim()
        .args(["run", "--threads", "2", "-q", "--no-figures", "--out"])
        .arg(&out)
        .arg(&file)
        .assert()
        .success();
    let txt = std::fs::read_to_string(out.join("plan.txt")).expect("txt");
    for want in [
        "model `long` has shift_sd 1",
        "correlate 0.829 in the population",
    ] {
        assert!(txt.contains(want), "{want}: {txt}");
    }
    let csv = std::fs::read_to_string(out.join("plan.csv")).expect("csv");
    assert!(csv
        .lines()
        .next()
        .is_some_and(|h| h.ends_with(",model_shift_sd,logit_correlation")));
}

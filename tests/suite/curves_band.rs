//! The maj@k seed-SD band of the curves figure (issue 15): the band drawn is the exact spread
//! of one run's maj@k score, checked against brute-force enumeration of every sample and
//! tie-break on a tiny benchmark, and against the spread of simulated reruns within the z bound.
use evalsim::experiments::noise::vote_spread;
use evalsim::experiments::votes::{curves, Metric};
use evalsim::experiments::{run_all, ExperimentResult};
use evalsim::model::VoteRule;
use evalsim::report::kinds;
use evalsim::scenario::Scenario;

/// Mean and SD of one run's maj@k score (one vote of k samples per problem), by enumerating
/// every answer of the N x k samples (correct, the attractor, or a one-off wrong answer) and
/// averaging over the random tie-break of each vote.
fn brute_force_maj(rates: &[f64], attractor: f64, k: u32, rule: VoteRule) -> (f64, f64) {
    let (n, k) = (rates.len(), k as usize);
    let digits = n * k;
    let (mut s1, mut s2) = (0.0, 0.0);
    for outcome in 0..3u64.pow(digits as u32) {
        let (mut prob, mut code) = (1.0, outcome);
        // Given the samples, problem i is won with probability w_i (the tie-break), independently.
        let (mut sum_w, mut sum_var) = (0.0, 0.0);
        for &p in rates {
            let (mut c, mut a, mut s) = (0usize, 0usize, 0usize);
            for _ in 0..k {
                match code % 3 {
                    0 => {
                        c += 1;
                        prob *= p;
                    }
                    1 => {
                        a += 1;
                        prob *= attractor * (1.0 - p);
                    }
                    _ => {
                        s += 1;
                        prob *= (1.0 - attractor) * (1.0 - p);
                    }
                }
                code /= 3;
            }
            // Answers and their vote counts: each one-off is its own answer.
            let mut counts = vec![c, a];
            counts.extend(std::iter::repeat_n(1, s));
            let top = counts.iter().copied().max().unwrap_or(0);
            let tied = counts.iter().filter(|&&x| x == top).count();
            let w = match rule {
                _ if c == 0 || c != top => 0.0,
                VoteRule::Random => 1.0 / tied as f64,
                VoteRule::Strict => f64::from(u8::from(tied == 1)),
                VoteRule::Absolute => f64::from(u8::from(2 * c > k)),
            };
            sum_w += w;
            sum_var += w * (1.0 - w);
        }
        let nn = n as f64;
        let mean = sum_w / nn;
        s1 += prob * mean;
        s2 += prob * (mean * mean + sum_var / (nn * nn));
    }
    (s1, (s2 - s1 * s1).max(0.0).sqrt())
}

const TINY: &str = r#"seed = 5
[benchmark]
rates = [0.15, 0.5, 0.8]
[[model]]
name = "a"
attractor = 0.4
[[experiment]]
kind = "curves"
k = [1, 2, 3, 4]
votes = 50
"#;

#[test]
fn curves_maj_band_matches_brute_force_enumeration() {
    let s = Scenario::from_toml(TINY, "band", "band.toml").expect("scenario");
    let rates = [0.15, 0.5, 0.8];
    for rule in [VoteRule::Random, VoteRule::Strict, VoteRule::Absolute] {
        let r = curves(
            &s,
            "curves",
            1,
            &[0],
            &[1, 2, 3, 4],
            &[],
            50,
            Some(rule),
            &|_| {},
        );
        let mut checked = 0;
        for p in r.points.iter().filter(|p| p.metric == Metric::MajAtK) {
            let (mean, sd) = brute_force_maj(&rates, 0.4, p.k, rule);
            // The enumeration sums 3^(N k) terms: its own rounding is up to that many ulps.
            let tol = 3f64.powi(3 * p.k as i32) * f64::EPSILON;
            assert!(
                (p.estimate.exact - mean).abs() <= tol * mean,
                "{rule:?} k = {}: maj@k {} vs brute force {mean}",
                p.k,
                p.estimate.exact
            );
            assert!(
                (p.seed_sd - sd).abs() <= tol * sd,
                "{rule:?} k = {}: band half-width {} vs brute force {sd}",
                p.k,
                p.seed_sd
            );
            checked += 1;
        }
        assert_eq!(checked, 4);
    }
}

#[test]
fn curves_figure_draws_the_maj_band_at_exact_plus_minus_the_brute_force_sd() {
    let s = Scenario::from_toml(TINY, "band", "band.toml").expect("scenario");
    let run = run_all(&s, &|_| {});
    let ExperimentResult::Curves(r) = &run.results[0] else {
        panic!("a curves result");
    };
    let figures = kinds::of(&run.results[0]).figures(&run);
    let panel = &figures[0].1.panels[0];
    // The maj@k band is drawn in maj@k's colour (the palette's third).
    let maj_colour = panel
        .lines
        .iter()
        .find(|l| l.label.as_deref() == Some("maj@k"))
        .expect("a maj@k line")
        .color;
    let band = panel
        .bands
        .iter()
        .find(|b| b.color == maj_colour)
        .expect("a maj@k band");
    assert_eq!(band.points.len(), r.k.len());
    for (&(x, lo, hi), &k) in band.points.iter().zip(&r.k) {
        let (mean, sd) = brute_force_maj(&[0.15, 0.5, 0.8], 0.4, k, VoteRule::Random);
        assert_eq!(x, f64::from(k));
        let (want_lo, want_hi) = (
            (100.0 * (mean - sd)).max(0.0),
            (100.0 * (mean + sd)).min(100.0),
        );
        assert!(
            (lo - want_lo).abs() <= 1e-10 && (hi - want_hi).abs() <= 1e-10,
            "k = {k}: band [{lo}, {hi}] vs brute force [{want_lo}, {want_hi}]"
        );
    }
}

#[test]
fn curves_maj_band_matches_the_spread_of_simulated_reruns() {
    let toml = r#"seed = 9
[benchmark]
problems = 40
mu = 0.0
sigma = 1.5
[[model]]
name = "m"
attractor = 0.5
[[experiment]]
kind = "curves"
k = [1, 3, 8, 16]
votes = 50
"#;
    let s = Scenario::from_toml(toml, "spread", "spread.toml").expect("scenario");
    let ks = [1, 3, 8, 16];
    let r = curves(&s, "curves", 1, &[0], &ks, &[], 50, None, &|_| {});
    // Independent reruns: one vote of k samples per problem each, their score's sample SD.
    let spread = vote_spread(&s, "spread", 2, 0, &ks, 20_000, None, &|_| {});
    for row in &spread.rows {
        let band = r
            .points
            .iter()
            .find(|p| p.metric == Metric::MajAtK && p.k == row.k)
            .expect("a maj@k point");
        assert!(
            (band.seed_sd - row.maj_sd.exact).abs() <= 1e-12 * band.seed_sd,
            "k = {}: the band and the rerun check use the same exact SD",
            row.k
        );
        assert!(
            (band.estimate.exact - row.maj_mean.exact).abs() <= 1e-12 * band.estimate.exact,
            "k = {}: the band is centred on the exact maj@k",
            row.k
        );
        assert!(
            row.maj_sd.passed() && row.maj_mean.passed(),
            "k = {}: simulated reruns SD {} (mean {}) vs exact band half-width {} (z = {}, {})",
            row.k,
            row.maj_sd.sim,
            row.maj_mean.sim,
            band.seed_sd,
            row.maj_sd.z,
            row.maj_mean.z
        );
    }
}

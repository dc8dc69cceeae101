//! Verifiers (best-of-k) and noisy graders wired end to end: the shipped `verifier` scenario,
//! head-to-head and cost with the new keys, exact values against the library's closed forms,
//! every simulated number within the check rule, and determinism across thread counts.
use evalsim::exact::grader::Grader;
use evalsim::exact::pass::{mean, pass_at_k};
use evalsim::exact::verifier::{best_at_k_threshold, threshold_ceiling, ThresholdVerifier};
use evalsim::experiments::votes::Metric;
use evalsim::experiments::{run_all, ExperimentResult, KindResult, RunOutput};
use evalsim::model::{Fallback, Verifier};
use evalsim::scenario::Scenario;

fn run(src: &str) -> RunOutput {
    let s = Scenario::from_toml(src, "t", "t.toml").expect("valid scenario");
    run_all(&s, &|_| {})
}

fn failed(out: &RunOutput) -> Vec<String> {
    out.checks()
        .iter()
        .filter(|c| !c.passed())
        .map(|c| format!("{} {} {:?}", c.quantity, c.cell, c.estimate))
        .collect()
}

const HEAD: &str = "seed = 5\n[benchmark]\nproblems = 12\nmu = 0.0\nsigma = 1.5\n";

#[test]
fn shipped_verifier_scenario_passes_every_check_and_tells_its_story() {
    let s = Scenario::load("verifier").expect("built-in");
    let out = run_all(&s, &|_| {});
    assert!(failed(&out).is_empty(), "{:?}", failed(&out));
    let ExperimentResult::Curves(c) = &out.results[0] else {
        panic!("curves first")
    };
    let checked = &c.series[0];
    let leads = checked.best_leads.as_ref().expect("a verifier");
    // best@k leads maj@k at small k and loses it at the largest: a crossover.
    assert!(leads.contains(&2), "{leads:?}");
    assert!(!leads.contains(c.k.last().unwrap()), "{leads:?}");
    // The ceiling drawn is mean(alpha / (alpha + beta)) over the model's rates.
    let Some(Verifier::Threshold(v)) = checked.verifier else {
        panic!("threshold")
    };
    let rates = s.models[0].rates_on(&s.benchmark);
    let want = mean(
        &rates
            .iter()
            .map(|&p| threshold_ceiling(p, &v))
            .collect::<Vec<_>>(),
    );
    assert_eq!(checked.best_ceiling, Some(want));
    // The graded model: pass@k as graded sits above the true value at large k.
    let judged = c
        .series
        .iter()
        .position(|s| s.grader.is_some())
        .expect("graded");
    let kmax = *c.k.last().unwrap();
    let pt = c
        .points
        .iter()
        .find(|p| p.series == judged && p.k == kmax && p.metric == Metric::PassAtK)
        .unwrap();
    let truth = pt.truth.expect("true value beside the graded one");
    assert!(pt.estimate.exact > truth.exact + 0.01, "{pt:?}");
}

#[test]
fn threshold_best_at_k_equals_the_closed_form_mean_and_grading_maps_it() {
    let src = format!(
        "{HEAD}[[model]]\nname = \"m\"\nattractor = 0.5\n[model.verifier]\nkind = \"threshold\"\ntpr = 0.8\nfpr = 0.2\nfallback = \"abstain\"\n[model.grader]\nfpr = 0.1\nfnr = 0.05\n[[experiment]]\nkind = \"curves\"\nk = [1, 3, 9]\nvotes = 3000\n"
    );
    let s = Scenario::from_toml(&src, "t", "t.toml").unwrap();
    let out = run_all(&s, &|_| {});
    assert!(failed(&out).is_empty(), "{:?}", failed(&out));
    let ExperimentResult::Curves(c) = &out.results[0] else {
        panic!()
    };
    let rates = s.models[0].rates_on(&s.benchmark);
    let v = ThresholdVerifier {
        tpr: 0.8,
        fpr: 0.2,
        fallback: Fallback::Abstain,
    };
    let g = Grader {
        fpr: 0.1,
        fnr: 0.05,
    };
    for &k in &[1u32, 3, 9] {
        let best = c
            .points
            .iter()
            .find(|p| p.k == k && p.metric == Metric::BestAtK)
            .unwrap();
        let truth: Vec<f64> = rates
            .iter()
            .map(|&p| best_at_k_threshold(p, &v, k).0)
            .collect();
        let graded: Vec<f64> = rates
            .iter()
            .map(|&p| g.selected(best_at_k_threshold(p, &v, k)).0)
            .collect();
        assert!((best.truth.unwrap().exact - mean(&truth)).abs() < 1e-15);
        assert!((best.estimate.exact - mean(&graded)).abs() < 1e-15);
        let pass = c
            .points
            .iter()
            .find(|p| p.k == k && p.metric == Metric::PassAtK)
            .unwrap();
        let tp: Vec<f64> = rates.iter().map(|&p| pass_at_k(p, k)).collect();
        assert!((pass.truth.unwrap().exact - mean(&tp)).abs() < 1e-15);
    }
}

#[test]
fn score_verifier_and_cost_best_of_k_pass_their_checks() {
    let src = format!(
        "{HEAD}[[model]]\nname = \"m\"\nattractor = 0.6\n[model.tokens]\nmedian_tokens = 1000\nhard_growth = 1.0\nwrong_factor = 1.5\nsigma = 0.5\n[model.verifier]\nkind = \"score\"\nseparation = 1.2\n[[experiment]]\nkind = \"curves\"\nk = [1, 2, 8, 32]\nvotes = 3000\n[[experiment]]\nkind = \"cost\"\nk = [1, 4, 16]\ncap = 3000\nvotes = 3000\ntraces = 3000\n"
    );
    let out = run(&src);
    assert!(failed(&out).is_empty(), "{:?}", failed(&out));
    let ExperimentResult::Cost(c) = &out.results[1] else {
        panic!()
    };
    let best: Vec<u32> = c
        .strategies
        .iter()
        .filter(|s| s.best_of_k)
        .map(|s| s.k)
        .collect();
    assert_eq!(best.len(), 2, "best-of-k at k = 4 and 16: {best:?}");
    // k = 2 with a score verifier: p^2 + 2 p (1 - p) Phi(d / sqrt 2), problem by problem.
    let ExperimentResult::Curves(v) = &out.results[0] else {
        panic!()
    };
    let s = Scenario::from_toml(&src, "t", "t.toml").unwrap();
    let rates = s.models[0].rates_on(&s.benchmark);
    let phi = evalsim::exact::normal::cdf(1.2 / 2f64.sqrt());
    let want = mean(
        &rates
            .iter()
            .map(|&p| p * p + 2.0 * p * (1.0 - p) * phi)
            .collect::<Vec<_>>(),
    );
    let got = v
        .points
        .iter()
        .find(|p| p.k == 2 && p.metric == Metric::BestAtK)
        .unwrap();
    assert!(
        (got.estimate.exact / want - 1.0).abs() < 1e-12,
        "{got:?} {want}"
    );
}

#[test]
fn head_to_head_honours_the_grader() {
    let src = format!(
        "{HEAD}[[model]]\nname = \"a\"\nattractor = 0.5\n[model.grader]\nfpr = 0.2\n[[model]]\nname = \"b\"\nshift = 0.3\nattractor = 0.5\n[[experiment]]\nkind = \"head-to-head\"\na = \"a\"\nb = \"b\"\nn = [1, 4]\nreruns = 4000\n"
    );
    let out = run(&src);
    assert!(failed(&out).is_empty(), "{:?}", failed(&out));
    let ExperimentResult::HeadToHead(h) = &out.results[0] else {
        panic!()
    };
    let (ta, tb) = h.true_pass_at_1.expect("graded");
    // A's graded pass@1 is lifted by 0.2 (1 - p); B is graded perfectly.
    assert!((h.pass_at_1_a - (ta + 0.2 * (1.0 - ta))).abs() < 1e-12);
    assert_eq!(h.pass_at_1_b, tb);
}

#[test]
fn no_verifier_and_no_grader_leave_every_number_as_before() {
    // The same model with an empty grader table is graded perfectly: graded = true, bit for bit.
    let plain = format!(
        "{HEAD}[[model]]\nname = \"m\"\nattractor = 0.5\n[[experiment]]\nkind = \"curves\"\nk = [1, 4]\nvotes = 500\n"
    );
    let perfect = plain.replace(
        "attractor = 0.5\n",
        "attractor = 0.5\n[model.grader]\nfpr = 0.0\nfnr = 0.0\n",
    );
    let (a, b) = (run(&plain), run(&perfect));
    let (ExperimentResult::Curves(a), ExperimentResult::Curves(b)) = (&a.results[0], &b.results[0])
    else {
        panic!()
    };
    for (pa, pb) in a.points.iter().zip(&b.points) {
        assert_eq!(pa.estimate.exact, pb.estimate.exact);
        assert_eq!(pb.truth.unwrap(), pa.estimate);
        assert!(pa.truth.is_none());
    }
}

/// An `attractor-sweep` over `grader_fpr`: every series graded with its rate (the model's fnr
/// kept), exact graded pass@k equal to the grader's closed form averaged over the rates, the
/// truth the same at every rate, graded pass@k rising with the rate, and every check passing.
#[test]
fn grader_fpr_sweep_grades_each_series_with_its_rate() {
    let src = format!(
        "{HEAD}[[model]]\nname = \"m\"\nshift = -1.0\nattractor = 0.3\n[model.grader]\nfnr = 0.1\n\
         [[experiment]]\nkind = \"attractor-sweep\"\nname = \"fpr\"\nmodel = \"m\"\n\
         grader_fpr = [0.0, 0.02, 0.1]\nk = [1, 8, 64]\nvotes = 2000\n"
    );
    let s = Scenario::from_toml(&src, "t", "t.toml").expect("valid scenario");
    let out = run_all(&s, &|_| {});
    assert!(failed(&out).is_empty(), "{:?}", failed(&out));
    let ExperimentResult::AttractorSweep(r) = &out.results[0] else {
        panic!("a sweep")
    };
    let rates = s.models[0].rates_on(&s.benchmark);
    let fprs = [0.0, 0.02, 0.1];
    for k in [1u32, 8, 64] {
        let mut last = -1.0;
        let mut truth = None;
        for (si, &fpr) in fprs.iter().enumerate() {
            let g = r.series[si].grader.expect("graded");
            assert_eq!((g.fpr, g.fnr), (fpr, 0.1));
            let pt = r
                .points
                .iter()
                .find(|p| p.series == si && p.k == k && p.metric == Metric::PassAtK)
                .expect("point");
            let want = mean(
                &rates
                    .iter()
                    .map(|&p| Grader { fpr, fnr: 0.1 }.pass_at_k(p, k).0)
                    .collect::<Vec<_>>(),
            );
            assert!((pt.estimate.exact - want).abs() < 1e-14, "k={k} fpr={fpr}");
            assert!(pt.estimate.exact > last, "k={k}: not rising at fpr={fpr}");
            last = pt.estimate.exact;
            // The true value does not depend on the grader.
            let t = pt.truth.expect("true value beside the graded one").exact;
            let want_true = mean(&rates.iter().map(|&p| pass_at_k(p, k)).collect::<Vec<_>>());
            assert!((t - want_true).abs() < 1e-14);
            assert_eq!(*truth.get_or_insert(t), t);
        }
    }
    // Check cells name the swept rate, so each is distinct.
    let cells: std::collections::BTreeSet<String> = r
        .checks()
        .into_iter()
        .map(|c| format!("{} {}", c.quantity, c.cell))
        .collect();
    assert_eq!(cells.len(), r.checks().len());
}

/// A verifier on a model with several attractors, `unparsed` and `split` (refused before): in
/// `curves` best@k is the closed form of the rate (1 - u) p, problem by problem, maj@k keeps its
/// mode recurrence, a grader flips the pick's graded outcome, and `cost` (with a cap) runs its
/// best-of-k strategies on the capped shares; every simulated number within the check rule.
#[test]
fn verifier_composes_with_several_attractors_unparsed_split_and_a_grader() {
    let model = "[[model]]\nname = \"m\"\nattractor = [0.35, 0.25]\nunparsed = 0.1\nsplit = 0.3\n[model.tokens]\nmedian_tokens = 1000\nhard_growth = 1.0\nwrong_factor = 1.5\nsigma = 0.5\n[model.verifier]\nkind = \"threshold\"\ntpr = 0.85\nfpr = 0.12\n";
    let exps = "[[experiment]]\nkind = \"curves\"\nk = [1, 2, 8, 32]\nvotes = 3000\n[[experiment]]\nkind = \"cost\"\nk = [1, 4, 16]\ncap = 3000\nvotes = 3000\ntraces = 3000\n";
    let plain = format!("{HEAD}{model}{exps}");
    let graded = format!("{HEAD}{model}[model.grader]\nfpr = 0.1\nfnr = 0.05\n{exps}");
    let v = ThresholdVerifier {
        tpr: 0.85,
        fpr: 0.12,
        fallback: Fallback::Random,
    };
    let g = Grader {
        fpr: 0.1,
        fnr: 0.05,
    };
    for (src, grader) in [(&plain, None), (&graded, Some(g))] {
        let out = run(src);
        assert!(failed(&out).is_empty(), "{:?}", failed(&out));
        let s = Scenario::from_toml(src, "t", "t.toml").unwrap();
        let rates = s.models[0].rates_on(&s.benchmark);
        let ExperimentResult::Curves(c) = &out.results[0] else {
            panic!("curves first")
        };
        for pt in c.points.iter().filter(|p| p.metric == Metric::BestAtK) {
            let want = mean(
                &rates
                    .iter()
                    .map(|&p| {
                        let b = best_at_k_threshold(0.9 * p, &v, pt.k);
                        grader.map_or(b.0, |g| g.selected(b).0)
                    })
                    .collect::<Vec<_>>(),
            );
            assert!(
                (pt.estimate.exact / want - 1.0).abs() < 1e-12,
                "k={} {pt:?} {want}",
                pt.k
            );
            assert_eq!(pt.truth.is_some(), grader.is_some());
        }
        let series = &c.series[0];
        assert!(series.best_leads.is_some() && series.best_ceiling.is_some());
        let ExperimentResult::Cost(cost) = &out.results[1] else {
            panic!("cost second")
        };
        let best: Vec<u32> = cost
            .strategies
            .iter()
            .filter(|s| s.best_of_k)
            .map(|s| s.k)
            .collect();
        assert_eq!(best, [4, 16], "best-of-k strategies");
    }
}

/// The refusal it replaces, as a regression test: a verifier with a list of attractor shares
/// loads (it was refused at `attractor` with "cannot be combined with [model.verifier]").
#[test]
fn verifier_with_several_attractors_is_no_longer_refused() {
    let src = format!(
        "{HEAD}[[model]]\nname = \"m\"\nattractor = [0.3, 0.2]\n[model.verifier]\nkind = \"score\"\nseparation = 1.0\n[[experiment]]\nkind = \"curves\"\nk = [1, 4]\nvotes = 500\n"
    );
    let out = run(&src);
    assert!(failed(&out).is_empty(), "{:?}", failed(&out));
}

/// The shipped `extraction` scenario: every check passes, and the story its comment tells holds
/// in the exact values: best@k leads maj@k at k = 2 for both models; the clean model's vote
/// overtakes its verifier by k = 256; the messy model (split and unparsed answers) loses much of
/// its maj@k but little of its best@k, and its vote still trails its verifier at k = 256.
#[test]
fn shipped_extraction_scenario_passes_every_check_and_tells_its_story() {
    let s = Scenario::load("extraction").expect("built-in");
    let out = run_all(&s, &|_| {});
    assert!(failed(&out).is_empty(), "{:?}", failed(&out));
    let ExperimentResult::Curves(c) = &out.results[0] else {
        panic!("curves first")
    };
    let kmax = *c.k.last().unwrap();
    let value = |series: usize, k: u32, metric: Metric| {
        c.points
            .iter()
            .find(|p| p.series == series && p.k == k && p.metric == metric)
            .map(|p| p.estimate.exact)
            .unwrap()
    };
    let (parsed, messy) = (0, 1);
    assert_eq!(c.series[messy].split, 0.45);
    for series in [parsed, messy] {
        let leads = c.series[series].best_leads.as_ref().expect("a verifier");
        assert!(leads.contains(&2), "series {series}: {leads:?}");
    }
    let leads = c.series[parsed].best_leads.as_ref().unwrap();
    assert!(!leads.contains(&kmax), "parsed's vote overtakes: {leads:?}");
    let leads = c.series[messy].best_leads.as_ref().unwrap();
    assert!(
        leads.contains(&kmax),
        "messy's vote still trails: {leads:?}"
    );
    let maj_loss = value(parsed, kmax, Metric::MajAtK) - value(messy, kmax, Metric::MajAtK);
    let best_loss = value(parsed, kmax, Metric::BestAtK) - value(messy, kmax, Metric::BestAtK);
    assert!(
        maj_loss > 0.05 && best_loss.abs() < maj_loss / 3.0,
        "maj@k loss {maj_loss}, best@k loss {best_loss}"
    );
}

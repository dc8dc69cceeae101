//! The scenario `evalsim fit` writes: the serde types that read scenario files, filled from a
//! [`FitResult`], with the estimates' intervals, refusals and warnings as comments.
use super::{decimals4, positive, FitOptions, FitResult, Status, ATTRACTOR_SWEEP};
use crate::analyze::fit::joint::Parameter;
use crate::scenario::raw::{
    ExperimentKind, RawBenchmark, RawExperiment, RawModel, RawScenario, RawTokens,
};
use crate::scenario::MAX_PROBLEMS;
use toml::Spanned;

/// " (95% interval LO to HI)" for a share and its SE (share -/+ z(0.975) SE), each end cut to [0, 1]
/// when it falls outside, and then saying so ("0.217 to 1.000, upper end cut at 1 from 1.197").
pub(crate) fn share_interval_text(share: f64, se: f64) -> String {
    let z = crate::exact::normal::Z_95;
    let (lo, hi) = (share - z * se, share + z * se);
    let mut cuts = Vec::new();
    if lo < 0.0 {
        cuts.push(format!("lower end cut at 0 from {lo:.3}"));
    }
    if hi > 1.0 {
        cuts.push(format!("upper end cut at 1 from {hi:.3}"));
    }
    format!(
        " (95% interval {:.3} to {:.3}{})",
        lo.max(0.0),
        hi.min(1.0),
        cuts.iter().map(|c| format!(", {c}")).collect::<String>()
    )
}

/// Text safe inside a TOML comment line: control characters (newlines included) become spaces.
fn comment_safe(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// `# text` lines, each made safe.
fn comment_lines(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| format!("# {}\n", comment_safe(l)))
        .collect()
}

/// The experiments that use a model's copy without run_sd.
const TWIN_USERS: &str = "plan, budget, cost, attractor-sweep";

/// Model m's estimated run_sd as the scenario writes it (4 decimals), or `None` when the input
/// has no runs, it was refused, or it is 0 at 4 decimals.
fn run_sd_written(fit: &FitResult, m: usize) -> Option<f64> {
    let q = fit.parameter(Parameter::Omega(m))?;
    (q.status == Status::Estimated && decimals4(q.value) != 0.0).then(|| decimals4(q.value))
}

/// The name of the copy of model `name` without its run_sd, which the experiments that do not
/// model per-run noise (plan, budget, cost, attractor-sweep) use.
pub(crate) fn without_run_sd(name: &str) -> String {
    format!("{name}-without-run-sd")
}

/// Up to 8 token budgets for a `budget` experiment, spread geometrically over where the fitted
/// traces live: from the median correct trace on the easiest problem two log-SDs down
/// (L0 e^(-2 sigma_L)) to the median wrong trace on the hardest two log-SDs up
/// (L0 (1 + g) w e^(2 sigma_L)), each rounded to 2 significant digits; `None` when fewer than
/// 2 distinct budgets remain.
pub(crate) fn token_budgets(traces: &[&super::TraceFit]) -> Option<Vec<f64>> {
    let lo = traces
        .iter()
        .map(|t| t.median_tokens * (-2.0 * t.sigma).exp())
        .fold(f64::INFINITY, f64::min);
    let hi = traces
        .iter()
        .map(|t| {
            t.median_tokens
                * (1.0 + t.hard_growth.max(0.0))
                * t.wrong_factor.max(1.0)
                * (2.0 * t.sigma).exp()
        })
        .fold(0.0f64, f64::max);
    if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && hi > lo) {
        return None;
    }
    let round2 = |x: f64| {
        let e = 10f64.powf(x.log10().floor() - 1.0);
        ((x / e).round() * e).max(1.0)
    };
    let mut out: Vec<f64> = (0..8)
        .map(|i| round2(lo * (hi / lo).powf(f64::from(i) / 7.0)))
        .filter(|x| *x <= crate::scenario::MAX_TOKEN_SCALE)
        .collect();
    out.dedup();
    (out.len() >= 2).then_some(out)
}

/// Experiment names built from model names, valid for the scenario loader and distinct: each
/// character other than an ASCII letter, digit, `_` or `-` becomes `_` (`gpt-3.5-turbo` or
/// `org/model` would be refused as part of a name), the name is cut to
/// [`crate::scenario::MAX_EXPERIMENT_NAME`] characters, and a name already given gets `-2`,
/// `-3`, ... (cut to make room).
#[derive(Default)]
struct ExperimentNames {
    used: std::collections::HashSet<String>,
}

impl ExperimentNames {
    fn name(&mut self, parts: &[&str]) -> String {
        use crate::scenario::MAX_EXPERIMENT_NAME;
        let base: String = parts
            .join("-")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(MAX_EXPERIMENT_NAME)
            .collect();
        let mut name = base.clone();
        let mut i = 2;
        while self.used.contains(&name) {
            let tail = format!("-{i}");
            let keep = MAX_EXPERIMENT_NAME - tail.len();
            name = format!("{}{tail}", &base[..base.len().min(keep)]);
            i += 1;
        }
        self.used.insert(name.clone());
        name
    }
}

/// The whole ranking's chance of a reversal that the plans of a leaderboard fit aim at: each of
/// the K - 1 adjacent pairs gets 5% / (K - 1), so all orders hold together at 95% or more.
const LEADERBOARD_LOSS: f64 = 0.05;

/// The (A, B) model pairs a fitted scenario plans for: (0, 1) for two models; for more, each
/// adjacent pair in the order of the fitted shifts (`shift(m)`, ties by index), the lower as A.
fn plan_pairs(models: usize, shift: impl Fn(usize) -> f64) -> Vec<(usize, usize)> {
    match models {
        0 | 1 => Vec::new(),
        2 => vec![(0, 1)],
        _ => {
            let mut order: Vec<usize> = (0..models).collect();
            order.sort_by(|&a, &b| shift(a).total_cmp(&shift(b)).then(a.cmp(&b)));
            order.windows(2).map(|w| (w[0], w[1])).collect()
        }
    }
}

/// The fitted scenario, written with the serde types that read scenario files (so it reads
/// back as one): a title, the seed, the benchmark (mu, sigma of the reference model), one
/// `[[model]]` per model with its name, `shift`, `shift_sd`, attractor share and token block,
/// and the experiments `curves`, `head-to-head` (reference against each other model) and
/// `plan` (aimed at the observed gap of the second model). Comments are added afterwards at
/// the top and before each `[[model]]` header, after checking the serialised text has exactly
/// one such header per model; every comment line is stripped of control characters.
pub(crate) fn scenario_toml(
    fit: &FitResult,
    options: &FitOptions,
) -> std::result::Result<String, toml::ser::Error> {
    let names = Written::new(fit);
    let mut experiment = Vec::new();
    let mut experiment_names = ExperimentNames::default();
    vote_experiments(fit, options, &names, &mut experiment, &mut experiment_names);
    let sigma = SigmaWritten::of(fit);
    let plan_notes = plan_experiments(
        fit,
        &names,
        sigma.written,
        &mut experiment,
        &mut experiment_names,
    );
    token_experiments(fit, &names, &mut experiment);
    let raw = RawScenario {
        title: at(format!("fitted from {}", fit.source)),
        seed: at(options.seed),
        benchmark: at(RawBenchmark {
            problems: at(names.problems),
            mu: at(decimals4(names.value(Parameter::Mu))),
            sigma: at(sigma.written),
            placement: at(crate::model::Placement::Quantiles),
            rates: None,
            contaminated: None,
            contaminated_models: None,
        }),
        model: fitted_models(fit, &names),
        experiment,
    };
    let body = toml::to_string(&raw)?;
    let top = top_comments(fit, &sigma, plan_notes);
    let per_model = model_comments(fit, &names);
    Ok(interleave(&comment_lines(&top), &per_model, &body))
}

/// A value as a spanned TOML item without a place in a file (the scenario is written, not read).
fn at<T>(x: T) -> Option<Spanned<T>> {
    Some(Spanned::new(0..0, x))
}

/// The models' names as the written scenario gives them, and which need a copy without their
/// run_sd: per-run noise is modelled by curves, head-to-head and seed-variance only, so a model
/// with a run_sd gets a copy without it for the other experiments (said in its comment).
struct Written<'a> {
    fit: &'a FitResult,
    names: Vec<String>,
    run_sd: Vec<Option<f64>>,
    twin_used: std::cell::RefCell<Vec<bool>>,
    problems: u64,
}

impl<'a> Written<'a> {
    fn new(fit: &'a FitResult) -> Self {
        let names: Vec<String> = fit.models.iter().map(|m| m.name.clone()).collect();
        Written {
            fit,
            run_sd: (0..names.len()).map(|m| run_sd_written(fit, m)).collect(),
            twin_used: std::cell::RefCell::new(vec![false; names.len()]),
            problems: fit.problems.min(MAX_PROBLEMS as usize) as u64,
            names,
        }
    }

    fn value(&self, p: Parameter) -> f64 {
        self.fit.parameter(p).map_or(0.0, |q| q.value)
    }

    /// The name of model `m` for an experiment that takes a run's samples as independent: its
    /// copy without run_sd when it has one (then written into the scenario).
    fn pooled(&self, m: usize) -> String {
        if self.run_sd[m].is_some() {
            self.twin_used.borrow_mut()[m] = true;
            without_run_sd(&self.names[m])
        } else {
            self.names[m].clone()
        }
    }

    fn twins(&self) -> Vec<bool> {
        self.twin_used.borrow().clone()
    }
}

/// Curves of the models whose attractor share was estimated, an attractor sweep of each of the
/// others (maj@k rests on the share: without answers it is not estimated, so such a model gets
/// an attractor sweep instead of curves that would assume one), and a head-to-head of each
/// model against the first.
fn vote_experiments(
    fit: &FitResult,
    options: &FitOptions,
    w: &Written,
    experiment: &mut Vec<Spanned<RawExperiment>>,
    experiment_names: &mut ExperimentNames,
) {
    let names = &w.names;
    let k_list: Vec<u64> = options.curve_k.iter().map(|&k| k as u64).collect();
    let answered: Vec<usize> = (0..names.len())
        .filter(|&m| fit.models[m].attractor.is_some())
        .collect();
    if !answered.is_empty() {
        experiment.push(Spanned::new(
            0..0,
            RawExperiment {
                kind: at(ExperimentKind::Curves),
                models: at(answered.iter().map(|&m| names[m].clone()).collect()),
                k: at(k_list.clone()),
                votes: at(options.votes as u64),
                ..RawExperiment::default()
            },
        ));
    }
    for m in (0..names.len()).filter(|m| !answered.contains(m)) {
        experiment.push(Spanned::new(
            0..0,
            RawExperiment {
                kind: at(ExperimentKind::AttractorSweep),
                name: (names.len() > 1).then(|| {
                    Spanned::new(0..0, experiment_names.name(&["attractor-sweep", &names[m]]))
                }),
                model: at(w.pooled(m)),
                attractor: at(ATTRACTOR_SWEEP.to_vec()),
                k: at(k_list.clone()),
                votes: at(options.votes as u64),
                ..RawExperiment::default()
            },
        ));
    }
    for b in names.iter().skip(1) {
        experiment.push(Spanned::new(
            0..0,
            RawExperiment {
                kind: at(ExperimentKind::HeadToHead),
                // one name per head-to-head when there are several (a scenario refuses two of
                // one kind with the same name)
                name: (names.len() > 2).then(|| {
                    Spanned::new(0..0, experiment_names.name(&["head-to-head", &names[0], b]))
                }),
                a: at(names[0].clone()),
                b: at(b.clone()),
                ..RawExperiment::default()
            },
        ));
    }
}

/// The benchmark's sigma as fitted and as written. A scenario's benchmark needs sigma > 0: a
/// fit at the boundary (no shared problem effect, every model's spread in its own shift_sd) is
/// written as the smallest value the file's four decimals hold, and said so at the top.
struct SigmaWritten {
    fitted: f64,
    written: f64,
}

impl SigmaWritten {
    fn of(fit: &FitResult) -> Self {
        let fitted = positive(fit.parameter(Parameter::Sigma).map_or(0.0, |q| q.value));
        let written = if fitted > 0.0 { fitted } else { 1e-4 };
        SigmaWritten { fitted, written }
    }
}

/// The plan blocks; returns the notes of the pairs that get none. The plan imagines B against
/// A: with two models, model 2 against model 1; with more (a leaderboard), each adjacent pair
/// in the fitted order, the lower as A, at the loss-or-tie target 5% / (K - 1) so that all
/// K - 1 adjacent orders hold together at 95% (Bonferroni). A keeps its own shift_sd and the
/// block gives B's when it differs. A pair whose residual SD of B given A exceeds the plan's
/// quadrature, or whose shift_sd was not estimated, gets no plan block (said at the top).
fn plan_experiments(
    fit: &FitResult,
    w: &Written,
    sigma_written: f64,
    experiment: &mut Vec<Spanned<RawExperiment>>,
    experiment_names: &mut ExperimentNames,
) -> Vec<String> {
    let (names, problems) = (&w.names, w.problems);
    let pairs = plan_pairs(names.len(), |m| w.value(Parameter::Shift(m)));
    let leaderboard = names.len() > 2;
    let mut plan_notes = Vec::new();
    for &(lo, hi) in &pairs {
        let (tau_a, tau_b) = (
            decimals4(w.value(Parameter::Tau(lo))),
            decimals4(w.value(Parameter::Tau(hi))),
        );
        let residual = crate::exact::plan::conditional_b(sigma_written, tau_a, tau_b).2;
        if residual > crate::exact::plan::MAX_PLAN_SHIFT_SD {
            plan_notes.push(format!(
                "no plan block: with shift_sd {tau_a} for `{}` and {tau_b} for `{}`, B's logit given A's varies with SD {residual:.3}, beyond the plan's {} logits",
                names[lo],
                names[hi],
                crate::exact::plan::MAX_PLAN_SHIFT_SD
            ));
            continue;
        }
        if let Some(blocked) = super::checks::plan_blocker(fit, lo, hi) {
            plan_notes.push(blocked);
            continue;
        }
        let n_obs = fit.models[hi].counts.n.clamp(1, 4096) as u64;
        let mut samples = vec![1, n_obs];
        samples.dedup();
        let mut plan_problems = vec![
            problems,
            (problems * 2).min(MAX_PROBLEMS),
            (problems * 4).min(MAX_PROBLEMS),
        ];
        plan_problems.dedup();
        experiment.push(Spanned::new(
            0..0,
            RawExperiment {
                kind: at(ExperimentKind::Plan),
                name: leaderboard.then(|| {
                    Spanned::new(
                        0..0,
                        experiment_names.name(&["plan", &names[hi], &names[lo]]),
                    )
                }),
                model: at(w.pooled(lo)),
                gap_logits: at(vec![decimals4(
                    w.value(Parameter::Shift(hi)) - w.value(Parameter::Shift(lo)),
                )]),
                problems: at(plan_problems),
                samples: at(samples),
                shift_sd: (tau_b != tau_a).then(|| Spanned::new(0..0, tau_b)),
                target_loss_or_tie: leaderboard
                    .then(|| Spanned::new(0..0, LEADERBOARD_LOSS / (names.len() - 1) as f64)),
                ..RawExperiment::default()
            },
        ));
    }
    plan_notes
}

/// With token data: accuracy against a budget and the cost of each answer, from the fitted
/// lognormal trace model (votes only where the attractor share was estimated).
fn token_experiments(fit: &FitResult, w: &Written, experiment: &mut Vec<Spanned<RawExperiment>>) {
    let with_tokens: Vec<usize> = (0..w.names.len())
        .filter(|&m| fit.models[m].traces.is_some())
        .collect();
    let traces: Vec<&super::TraceFit> = with_tokens
        .iter()
        .filter_map(|&m| fit.models[m].traces.as_ref())
        .collect();
    let Some(budgets) = token_budgets(&traces) else {
        return;
    };
    let models: Vec<String> = with_tokens.iter().map(|&m| w.pooled(m)).collect();
    experiment.push(Spanned::new(
        0..0,
        RawExperiment {
            kind: at(ExperimentKind::Budget),
            models: at(models.clone()),
            budgets: at(budgets),
            ..RawExperiment::default()
        },
    ));
    let votes_ok = with_tokens
        .iter()
        .all(|&m| fit.models[m].attractor.is_some());
    experiment.push(Spanned::new(
        0..0,
        RawExperiment {
            kind: at(ExperimentKind::Cost),
            models: at(models),
            k: at(if votes_ok { vec![1, 8, 32] } else { vec![1] }),
            ..RawExperiment::default()
        },
    ));
}

/// The `[[model]]` tables: each fitted model (with its run_sd where estimated), then the
/// copies without run_sd that an experiment asked for.
fn fitted_models(fit: &FitResult, w: &Written) -> Vec<Spanned<RawModel>> {
    let twins = w.twins();
    let n = w.names.len();
    (0..n)
        .map(|m| Some((m, w.run_sd[m])))
        .chain((0..n).map(|m| twins[m].then_some((m, None))))
        .flatten()
        .map(|(m, omega)| {
            let mf = &fit.models[m];
            Spanned::new(
                0..0,
                RawModel {
                    name: at(if omega.is_none() && w.run_sd[m].is_some() {
                        without_run_sd(&mf.name)
                    } else {
                        mf.name.clone()
                    }),
                    shift: at(if m == 0 {
                        0.0
                    } else {
                        decimals4(w.value(Parameter::Shift(m)))
                    }),
                    shift_sd: at(decimals4(w.value(Parameter::Tau(m)))),
                    // only when the input named runs and omega was estimated: otherwise no
                    // key (the comment above the model says why)
                    run_sd: omega.map(|w| Spanned::new(0..0, w)),
                    rates: None,
                    attractor: at(toml::Value::Float(
                        mf.attractor.as_ref().map_or(0.0, |a| decimals4(a.share)),
                    )),
                    vote_rule: None,
                    tokens: mf.traces.as_ref().map(|t| {
                        Spanned::new(
                            0..0,
                            RawTokens {
                                median_tokens: at(positive(t.median_tokens)),
                                hard_growth: at(decimals4(t.hard_growth)),
                                wrong_factor: at(positive(t.wrong_factor)),
                                sigma: at(super::checks::token_sigma(t.sigma)),
                            },
                        )
                    }),
                    ..RawModel::default()
                },
            )
        })
        .collect()
}

/// The comment lines at the top of the file: source, the benchmark's estimates, notes on sigma
/// and the plan blocks, warnings, correlations and goodness of fit.
fn top_comments(fit: &FitResult, sigma: &SigmaWritten, plan_notes: Vec<String>) -> Vec<String> {
    let mut top = vec![format!(
        "fitted by `evalsim fit` from {} ({} problems, {} model{}); 95% intervals below",
        fit.source,
        fit.problems,
        fit.models.len(),
        if fit.models.len() == 1 { "" } else { "s" }
    )];
    if fit.problems > MAX_PROBLEMS as usize {
        top.push(format!(
            "the input has {} problems; scenarios hold at most {MAX_PROBLEMS}",
            fit.problems
        ));
    }
    for p in [Parameter::Mu, Parameter::Sigma] {
        if let Some(q) = fit.parameter(p) {
            top.push(format!("{}: {}", q.label, q.describe()));
            if let Status::Refused { diagnosis, .. } = &q.status {
                top.push(format!("  {diagnosis}"));
            }
        }
    }
    if sigma.written != sigma.fitted {
        top.push(format!(
            "sigma is fitted at {} (no spread shared by the models' problems); the benchmark below takes sigma = {}, the smallest a scenario's four decimals hold above 0",
            sigma.fitted, sigma.written
        ));
    }
    top.extend(plan_notes);
    top.extend(fit.warnings.iter().map(|w| format!("WARNING: {w}")));
    for c in &fit.correlations {
        top.push(format!(
            "correlation of `{}` and `{}` per-problem logits: {:.3}{}",
            c.a,
            c.b,
            c.value,
            c.se.map_or(" (no SE)".to_string(), |se| format!(" +/- {:.3} SE", se))
        ));
    }
    for g in &fit.goodness {
        top.push(format!(
            "goodness of fit of `{}`: {}",
            g.model,
            g.describe()
        ));
    }
    top
}

/// The comment block above each `[[model]]` table, in the order [`fitted_models`] writes them.
fn model_comments(fit: &FitResult, w: &Written) -> Vec<String> {
    let mut per_model: Vec<String> = Vec::new();
    for (m, mf) in fit.models.iter().enumerate() {
        let mut lines = Vec::new();
        for p in [Parameter::Shift(m), Parameter::Tau(m), Parameter::Omega(m)] {
            if let Some(q) = fit.parameter(p) {
                lines.push(format!("{}: {}", q.label, q.describe()));
                if let Status::Refused { diagnosis, .. } = &q.status {
                    lines.push(format!("  {diagnosis}"));
                }
            }
        }
        if fit
            .parameter(Parameter::Omega(m))
            .is_some_and(|q| q.status != Status::Estimated)
        {
            lines.push(
                "  run_sd is not written below: it was not estimated (the scenario runs without it)"
                    .to_string(),
            );
        }
        lines.extend(mf.traces.as_ref().and_then(super::checks::token_sigma_note));
        match &mf.attractor {
            Some(a) => lines.push(format!(
                "attractor share of `{}`: {:.3}{} from {} wrong answers",
                mf.name,
                a.share,
                a.se.map_or(String::new(), |se| share_interval_text(a.share, se)),
                a.wrong_answers
            )),
            None => lines.push(format!(
                "attractor = 0.0 for `{}`: no answers in the input, NOT ESTIMATED; no experiment below rests on it (maj@k is swept over attractor shares {ATTRACTOR_SWEEP:?} instead)",
                mf.name
            )),
        }
        per_model.push(comment_lines(&lines));
    }
    let twins = w.twins();
    for m in (0..w.names.len()).filter(|&m| twins[m]) {
        per_model.push(comment_lines(&[format!(
            "`{}` without its run_sd {}: for the experiments that do not model per-run noise ({}); their numbers take the samples of a run as independent",
            w.names[m],
            w.run_sd[m].unwrap_or(0.0),
            TWIN_USERS
        )]));
    }
    per_model
}

/// The top comments, then the TOML body with each model's comment block above its `[[model]]`
/// header (all blocks before the body if the headers do not match them one to one).
fn interleave(top: &str, per_model: &[String], body: &str) -> String {
    let headers = body.lines().filter(|l| *l == "[[model]]").count();
    let mut out = top.to_string();
    if headers == per_model.len() {
        let mut k = 0;
        for line in body.lines() {
            if line == "[[model]]" {
                out.push_str(&per_model[k]);
                k += 1;
            }
            out.push_str(line);
            out.push('\n');
        }
    } else {
        out.extend(per_model.iter().cloned());
        out.push_str(body);
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::analyze::data::ModelSamples;
    use crate::analyze::fit::joint::{IntervalKind, Parameter};
    use crate::analyze::fit::{fit_models, FitOptions, ParameterFit, Status};
    use crate::scenario::Scenario;

    /// The models of canonical JSONL `text`.
    fn read(text: &str) -> Vec<ModelSamples> {
        use crate::analyze::read::{read_samples, Format, ReadOptions};
        let mut reader = std::io::Cursor::new(text.as_bytes());
        read_samples(
            Format::Jsonl,
            &mut reader,
            "t.jsonl",
            &ReadOptions::default(),
        )
        .unwrap()
        .models
    }

    /// Canonical JSONL of two models on shared problems drawn by evalsim's generator, with
    /// answers and output tokens.
    fn two_models_with_tokens() -> String {
        use crate::sim::synth::{for_each_row, SynthAnswer, SynthSpec};
        let mut text = String::new();
        for (name, mu) in [("a", 0.4), ("b", -0.2)] {
            let spec = SynthSpec {
                model: name.to_string(),
                problems: 120,
                samples: 8,
                mu,
                sigma: 1.5,
                attractor: 0.4,
                tokens: true,
                seed: 5,
            };
            for_each_row(&spec, |row| {
                let answer = match row.answer {
                    SynthAnswer::Right => "r".to_string(),
                    SynthAnswer::Attractor => "x".to_string(),
                    SynthAnswer::OneOff => format!("o{}", row.sample),
                };
                text += &format!(
                    "{{\"problem_id\": \"q{}\", \"model\": \"{name}\", \"correct\": {}, \"answer\": \"{answer}\", \"output_tokens\": {}}}\n",
                    row.problem,
                    row.correct,
                    row.output_tokens.unwrap_or(1.0)
                );
                Ok::<(), ()>(())
            })
            .unwrap();
        }
        text
    }

    #[test]
    fn a_fit_named_experiments_after_models_with_dots_which_its_own_loader_refused() {
        let mut names = super::ExperimentNames::default();
        assert_eq!(
            names.name(&["attractor-sweep", "gpt-3.5-turbo"]),
            "attractor-sweep-gpt-3_5-turbo"
        );
        assert_eq!(names.name(&["plan", "org/a.b", "c d"]), "plan-org_a_b-c_d");
        assert_eq!(
            names.name(&["plan", "org_a_b", "c_d"]),
            "plan-org_a_b-c_d-2"
        );
        let long = "m".repeat(100);
        let first = names.name(&["head-to-head", &long]);
        let second = names.name(&["head-to-head", &long]);
        assert_eq!(first.len(), crate::scenario::MAX_EXPERIMENT_NAME);
        assert_eq!(second.len(), crate::scenario::MAX_EXPERIMENT_NAME);
        assert!(second.ends_with("-2") && first != second);
    }

    #[test]
    fn a_fit_of_three_models_wrote_duplicate_head_to_head_names_and_planned_only_two_of_them() {
        use crate::sim::synth::{for_each_row, SynthAnswer, SynthSpec};
        let mut text = String::new();
        for (name, mu) in [("mid", 0.2), ("top", 0.9), ("low", -0.5)] {
            let spec = SynthSpec {
                model: name.to_string(),
                problems: 150,
                samples: 8,
                mu,
                sigma: 1.5,
                attractor: 0.4,
                tokens: false,
                seed: 9,
            };
            for_each_row(&spec, |row| {
                let answer = match row.answer {
                    SynthAnswer::Right => "r".to_string(),
                    SynthAnswer::Attractor => "x".to_string(),
                    SynthAnswer::OneOff => format!("o{}", row.sample),
                };
                text += &format!(
                    "{{\"problem_id\": \"q{}\", \"model\": \"{name}\", \"correct\": {}, \"answer\": \"{answer}\"}}\n",
                    row.problem, row.correct
                );
                Ok::<(), ()>(())
            })
            .unwrap();
        }
        let models = read(&text);
        let refs: Vec<&ModelSamples> = models.iter().collect();
        let fit = fit_models(&refs, "t.jsonl", &FitOptions::default()).unwrap();
        let shift = |m: usize| fit.parameter(Parameter::Shift(m)).map_or(0.0, |q| q.value);
        assert!(
            shift(2) < 0.0 && 0.0 < shift(1),
            "fitted order low < mid < top"
        );
        let value: toml::Value = toml::from_str(&fit.scenario_toml).unwrap();
        let plans: Vec<&toml::Value> = value["experiment"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"].as_str() == Some("plan"))
            .collect();
        // Each adjacent pair in the fitted order, the lower as A, at 5% / (K - 1) each.
        assert_eq!(plans.len(), 2, "{}", fit.scenario_toml);
        for (plan, (a, name, gap)) in plans.iter().zip([
            ("low", "plan-mid-low", -shift(2)),
            ("mid", "plan-top-mid", shift(1)),
        ]) {
            assert_eq!(plan["model"].as_str(), Some(a));
            assert_eq!(plan["name"].as_str(), Some(name));
            let written = plan["gap_logits"][0].as_float().unwrap();
            assert!((written - gap).abs() <= 5e-5, "{written} against {gap}");
            assert_eq!(plan["target_loss_or_tie"].as_float(), Some(0.025));
        }
        let names: Vec<&str> = value["experiment"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"].as_str() == Some("head-to-head"))
            .filter_map(|e| e["name"].as_str())
            .collect();
        assert_eq!(names, ["head-to-head-mid-top", "head-to-head-mid-low"]);
        Scenario::from_toml(&fit.scenario_toml, "fitted", "fitted.toml").unwrap();
    }

    #[test]
    fn fitted_scenario_dropped_the_estimated_run_sd_and_had_no_budget_or_cost_experiment() {
        let models = read(&two_models_with_tokens());
        let refs: Vec<&ModelSamples> = models.iter().collect();
        let mut fit = fit_models(&refs, "t.jsonl", &FitOptions::default()).unwrap();
        // the scenario writer given run_sds estimated on top of the fitted shift_sds (a fit with
        // runs takes a minute; the writer sees only the result)
        for (m, omega) in [(0, 0.7), (1, 0.5)] {
            fit.parameters.push(ParameterFit {
                parameter: Parameter::Omega(m),
                label: format!("run_sd of `{}`", fit.models[m].name),
                value: omega,
                se: Some(0.1),
                lower: Some(omega - 0.2),
                upper: Some(omega + 0.2),
                interval: Some(IntervalKind::Wald),
                status: Status::Estimated,
            });
        }
        // and a shift_sd for `b` to combine its run_sd with
        for q in &mut fit.parameters {
            if q.parameter == Parameter::Tau(1) {
                q.value = 0.4;
            }
        }
        let text = super::scenario_toml(&fit, &FitOptions::default()).unwrap();
        let s = Scenario::from_toml(&text, "fitted", "fitted.toml")
            .unwrap_or_else(|e| panic!("the fitted scenario loads: {e}\n{text}"));
        let model = |name: &str| s.models.iter().find(|m| m.name == name).unwrap();
        assert_eq!(model("a").run_sd, 0.7, "{text}");
        assert_eq!(model("b").run_sd, 0.5, "{text}");
        assert_eq!(model("a-without-run-sd").run_sd, 0.0);
        assert_eq!(model("b").shift_sd, 0.4);
        assert_eq!(model("b-without-run-sd").shift_sd, 0.4);
        let value: toml::Value = toml::from_str(&text).unwrap();
        let kinds: Vec<&str> = value["experiment"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            ["curves", "head-to-head", "plan", "budget", "cost"],
            "{text}"
        );
        let budget = &value["experiment"][3];
        let budgets: Vec<f64> = budget["budgets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_float().unwrap())
            .collect();
        // the generator's median correct trace is 2000 (2 - p) tokens: the budgets span it
        assert!(
            budgets[0] < 2000.0 && *budgets.last().unwrap() > 6000.0,
            "{budgets:?}"
        );
        assert!(budgets.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            value["experiment"][2]["model"].as_str(),
            Some("a-without-run-sd")
        );
        assert!(text.contains("`a` without its run_sd 0.7"), "{text}");
    }

    /// 164 problems x 10 samples without answers, shaped like the human-eval fixture: 60
    /// problems never solved, 100 always, 4 in between.
    fn human_eval_shape() -> String {
        let mut text = String::new();
        for i in 0..164 {
            let c = match i {
                0..60 => 0,
                60..160 => 10,
                _ => 3 + (i - 160),
            };
            for s in 0..10 {
                text += &format!("{{\"problem_id\": \"p{i}\", \"correct\": {}}}\n", s < c);
            }
        }
        text
    }

    #[test]
    fn fit_of_human_eval_said_nothing_about_fit_quality_and_assumed_attractor_0() {
        let models = read(&human_eval_shape());
        let fit = fit_models(&[&models[0]], "he.jsonl", &FitOptions::default()).unwrap();
        let g = &fit.goodness[0];
        // sigma falls back to 2: about 7 problems expected at c = 0 against 60 observed
        assert!(g.poor(), "{g:?}");
        assert!(
            g.bins[0].observed == 60 && g.bins[0].expected < 10.0,
            "{g:?}"
        );
        assert!(
            fit.warnings
                .iter()
                .any(|w| w.contains("the fit is poor") && w.contains("sigma (fallback 2)")),
            "{:?}",
            fit.warnings
        );
        // no answers: no maj@k at an assumed attractor, an attractor sweep instead, and why
        assert!(fit.warnings.iter().any(|w| w.contains("no answers")));
        let value: toml::Value = toml::from_str(&fit.scenario_toml).unwrap();
        let experiments = value["experiment"].as_array().unwrap();
        assert!(experiments
            .iter()
            .all(|e| e["kind"].as_str() != Some("curves")));
        let sweep = experiments
            .iter()
            .find(|e| e["kind"].as_str() == Some("attractor-sweep"))
            .expect("an attractor sweep");
        assert_eq!(sweep["attractor"].as_array().unwrap().len(), 5);
        Scenario::from_toml(&fit.scenario_toml, "he", "he.toml").unwrap();
        assert!(fit.scenario_toml.contains("goodness of fit of"));
    }

    #[test]
    fn goodness_of_fit_rejects_at_its_level_on_data_drawn_from_the_model() {
        use crate::sim::synth::{for_each_row, SynthSpec};
        // 100 data sets of one model (N = 150, n = 8) drawn from the fitted family: the share
        // with p < 0.05 must be within 3 binomial SDs of 5% (at most 11 of 100)
        let mut rejected = 0;
        let sets = 100;
        for seed in 0..sets {
            let spec = SynthSpec {
                model: "m".to_string(),
                problems: 150,
                samples: 8,
                mu: 0.3,
                sigma: 1.4,
                attractor: 0.3,
                tokens: false,
                seed: 9000 + seed,
            };
            let mut text = String::new();
            for_each_row(&spec, |row| {
                text += &format!(
                    "{{\"problem_id\": \"q{}\", \"correct\": {}}}\n",
                    row.problem, row.correct
                );
                Ok::<(), ()>(())
            })
            .unwrap();
            let models = read(&text);
            let fit = fit_models(&[&models[0]], "m.jsonl", &FitOptions::default()).unwrap();
            if fit.goodness[0].p_value.is_some_and(|p| p < 0.05) {
                rejected += 1;
            }
        }
        println!("goodness of fit: {rejected} of {sets} data sets with p < 0.05");
        assert!(rejected <= 11, "{rejected} of {sets}");
    }
}

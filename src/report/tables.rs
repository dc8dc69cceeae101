//! Tidy CSV tables: one row per point, columns documented in README.md.
use crate::experiments::budget::BudgetCurves;
use crate::experiments::contamination::ContaminationResult;
use crate::experiments::cost::CostTable;
use crate::experiments::noise::{HeadToHead, SeedVariance, VoteSpread};
use crate::experiments::votes::VoteCurves;
use crate::experiments::{Estimate, ExperimentResult, RunOutput};

pub use super::csv::Csv;
pub(super) use super::csv::{estimate_fields, estimate_row, header};
pub use crate::experiments::num;

/// The CSV tables of one experiment: (file name, text).
pub fn experiment_tables(run: &RunOutput, result: &ExperimentResult) -> Vec<(String, String)> {
    match result {
        ExperimentResult::Curves(r) | ExperimentResult::AttractorSweep(r) => {
            vec![(format!("{}.csv", r.experiment), vote_csv(run, r))]
        }
        ExperimentResult::SeedVariance(r) => {
            vec![(format!("{}.csv", r.experiment), seed_csv(run, r))]
        }
        ExperimentResult::VoteSpread(r) => {
            vec![(format!("{}.csv", r.experiment), spread_csv(run, r))]
        }
        ExperimentResult::HeadToHead(r) => vec![(format!("{}.csv", r.experiment), h2h_csv(run, r))],
        ExperimentResult::Budget(r) => vec![
            (format!("{}.csv", r.experiment), budget_csv(run, r)),
            (
                format!("{}-crossover.csv", r.experiment),
                crossover_csv(run, r),
            ),
        ],
        ExperimentResult::Cost(r) => vec![(format!("{}.csv", r.experiment), cost_csv(run, r))],
        // A plan writes the files of `evalsim plan` (see `planning::render_plan`).
        ExperimentResult::Plan(_) => Vec::new(),
        ExperimentResult::Contamination(r) => vec![
            (format!("{}.csv", r.experiment), contamination_csv(run, r)),
            (
                format!("{}-plan.csv", r.experiment),
                contamination_plan_csv(run, r),
            ),
        ],
        ExperimentResult::Confidence(r) => vec![(
            format!("{}.csv", r.experiment),
            super::confidence::confidence_csv(run, r),
        )],
        ExperimentResult::Judge(r) => vec![
            (
                format!("{}.csv", r.experiment),
                super::judge::judge_csv(run, r),
            ),
            (
                format!("{}-distribution.csv", r.experiment),
                super::judge::distribution_csv(run, r),
            ),
        ],
    }
}

/// One row per (share, fresh size, quantity): the mean gap and P(flag), exact and simulated.
fn contamination_csv(run: &RunOutput, r: &ContaminationResult) -> String {
    let mut csv = header(
        &[
            "model",
            "share",
            "public_problems",
            "fresh_problems",
            "n",
            "quantity",
        ],
        &[
            "reruns",
            "gap_sd",
            "threshold_gap",
            "false_alarm",
            "normal_power",
        ],
    );
    for row in &r.rows {
        for (q, e) in [("mean_gap", &row.gap), ("p_flag", &row.power)] {
            csv.row(estimate_row(
                run,
                &r.experiment,
                [
                    r.model.clone(),
                    num(row.share),
                    r.public_problems.to_string(),
                    row.fresh.to_string(),
                    r.n.to_string(),
                    q.into(),
                ],
                e,
                [
                    r.reruns.to_string(),
                    num(row.gap_sd),
                    num(row.threshold_gap),
                    num(row.false_alarm),
                    num(row.normal_power),
                ],
            ));
        }
    }
    csv.finish()
}

/// One row per share: the smallest fresh set reaching the target power at the false-alarm rate
/// (empty when none up to max_fresh does), its threshold, and its false alarm and power, exact
/// and simulated.
fn contamination_plan_csv(run: &RunOutput, r: &ContaminationResult) -> String {
    let mut csv = Csv::new(&[
        "scenario",
        "seed",
        "experiment",
        "model",
        "share",
        "expected_gap",
        "public_problems",
        "n",
        "alpha",
        "target_power",
        "max_fresh",
        "fresh_problems",
        "threshold_gap",
        "false_alarm_exact",
        "false_alarm_sim",
        "false_alarm_z",
        "power_exact",
        "power_sim",
        "power_z",
        "reruns",
    ]);
    let e = |x: Option<Estimate>, f: fn(&Estimate) -> f64| x.map_or(String::new(), |e| num(f(&e)));
    for p in &r.plan {
        csv.row([
            run.scenario.clone(),
            run.seed.to_string(),
            r.experiment.clone(),
            r.model.clone(),
            num(p.share),
            num(p.expected_gap),
            r.public_problems.to_string(),
            r.n.to_string(),
            num(r.alpha),
            num(r.target_power),
            r.max_fresh.to_string(),
            p.fresh.map_or(String::new(), |m| m.to_string()),
            opt(p.threshold_gap),
            e(p.false_alarm, |e| e.exact),
            e(p.false_alarm, |e| e.sim),
            e(p.false_alarm, |e| e.z),
            e(p.power, |e| e.exact),
            e(p.power, |e| e.sim),
            e(p.power, |e| e.z),
            r.reruns.to_string(),
        ]);
    }
    csv.finish()
}

fn opt(x: Option<f64>) -> String {
    x.map_or(String::new(), num)
}

fn budget_csv(run: &RunOutput, r: &BudgetCurves) -> String {
    let mut csv = header(&["model", "budget_tokens", "metric"], &["traces"]);
    for p in &r.points {
        csv.row(estimate_row(
            run,
            &r.experiment,
            [
                r.models[p.model].model.clone(),
                num(p.budget_tokens),
                p.metric.as_str().to_string(),
            ],
            &p.estimate,
            [r.traces.to_string()],
        ));
    }
    csv.finish()
}

fn crossover_csv(run: &RunOutput, r: &BudgetCurves) -> String {
    let mut csv = Csv::new(&[
        "scenario",
        "seed",
        "experiment",
        "model_a",
        "model_b",
        "crossover_tokens",
        "accuracy_at_crossover",
        "leader_below",
        "leader_above",
        "min_budget_tokens",
        "max_budget_tokens",
        "gap_at_min",
        "gap_at_max",
    ]);
    for c in &r.crossovers {
        let base = |cross: Option<&crate::experiments::budget::Crossing>| {
            vec![
                run.scenario.clone(),
                run.seed.to_string(),
                r.experiment.clone(),
                c.model_a.clone(),
                c.model_b.clone(),
                opt(cross.map(|x| x.budget_tokens)),
                opt(cross.map(|x| x.accuracy)),
                cross.map_or(c.leader_at_min.clone(), |x| x.leader_below.clone()),
                cross.map_or(c.leader_at_max.clone(), |x| x.leader_above.clone()),
                num(c.min_budget_tokens),
                num(c.max_budget_tokens),
                num(c.gap_at_min),
                num(c.gap_at_max),
            ]
        };
        if c.crossings.is_empty() {
            csv.row(base(None));
        }
        for x in &c.crossings {
            csv.row(base(Some(x)));
        }
    }
    csv.finish()
}

fn cost_csv(run: &RunOutput, r: &CostTable) -> String {
    // The `selection` column (maj or best) appears only when some model has a verifier.
    let selection = r.strategies.iter().any(|s| s.best_of_k);
    let mut columns = vec![
        "scenario",
        "seed",
        "experiment",
        "model",
        "k",
        "vote_rule",
        "cap_tokens",
        "accuracy_exact",
        "accuracy_sim",
        "accuracy_se",
        "accuracy_z",
        "tokens_per_sample_exact",
        "tokens_per_sample_sim",
        "tokens_per_sample_se",
        "tokens_per_correct_exact",
        "tokens_per_correct_sim",
        "tokens_per_correct_se",
        "tokens_per_correct_z",
        "tokens_per_correct_ci_low",
        "tokens_per_correct_ci_high",
        "frontier",
        "price_per_mtok",
        "cost_per_correct_exact",
        "cost_per_correct_sim",
        "votes",
        "traces",
    ];
    if selection {
        columns.push("selection");
    }
    let mut csv = Csv::new(&columns);
    for s in &r.strategies {
        let (a, t, c) = (s.accuracy, s.tokens_per_sample, s.tokens_per_correct);
        let mut row = vec![
            run.scenario.clone(),
            run.seed.to_string(),
            r.experiment.clone(),
            s.model.clone(),
            s.k.to_string(),
            s.vote_rule.as_str().to_string(),
            r.cap_tokens.map_or("unlimited".into(), num),
            num(a.exact),
            num(a.sim),
            num(a.se),
            num(a.z),
            num(t.exact),
            num(t.sim),
            num(t.se),
            num(c.exact),
            num(c.sim),
            num(c.se),
            num(c.z),
            num(c.ci_low),
            num(c.ci_high),
            s.frontier.to_string(),
            opt(r.price_per_mtok),
            opt(s.cost_per_correct),
            opt(s.cost_per_correct_sim),
            if s.k > 1 {
                r.votes.to_string()
            } else {
                String::new()
            },
            r.traces.to_string(),
        ];
        if selection {
            row.push(if s.best_of_k { "best" } else { "maj" }.to_string());
        }
        csv.row(row);
    }
    csv.finish()
}

fn vote_csv(run: &RunOutput, r: &VoteCurves) -> String {
    // The extraction columns only when a series has them, and the true-value columns only when
    // some model is graded noisily, so canonical tables stay as they were.
    let extraction = r.series.iter().any(|s| s.unparsed != 0.0 || s.split != 0.0);
    let graded = r.points.iter().any(|p| p.truth.is_some());
    let mut tail: Vec<&str> = vec!["votes", "seed_sd"];
    if extraction {
        tail.extend(["unparsed", "split"]);
    }
    if graded {
        tail.extend(["true_exact", "true_sim", "true_z"]);
    }
    let fpr_sweep = r.axis == Some(crate::scenario::SweepAxis::GraderFpr);
    if fpr_sweep {
        tail.extend(["grader_fpr", "grader_fnr"]);
    }
    let mut csv = header(&["model", "attractor", "vote_rule", "k", "metric"], &tail);
    for p in &r.points {
        let s = &r.series[p.series];
        // Several attractor shares are written `a1;a2;...` in the one column.
        let attractor = if s.attractors.is_empty() {
            num(s.attractor)
        } else {
            let list: Vec<String> = s.attractors.iter().map(|&a| num(a)).collect();
            list.join(";")
        };
        let mut extra = vec![r.votes.to_string(), num(p.seed_sd)];
        if extraction {
            extra.extend([num(s.unparsed), num(s.split)]);
        }
        if graded {
            match p.truth {
                Some(t) => extra.extend([num(t.exact), num(t.sim), num(t.z)]),
                None => extra.extend([String::new(), String::new(), String::new()]),
            }
        }
        if fpr_sweep {
            let g = s.grader.unwrap_or_default();
            extra.extend([num(g.fpr), num(g.fnr)]);
        }
        csv.row(estimate_row(
            run,
            &r.experiment,
            [
                s.model.clone(),
                attractor,
                s.vote_rule.as_str().to_string(),
                p.k.to_string(),
                p.metric.name(),
            ],
            &p.estimate,
            extra,
        ));
    }
    csv.finish()
}

/// The columns of one check, after any leading columns of its table: the same in `checks.csv`
/// and `sweep.csv`.
pub const CHECK_COLUMNS: [&str; 9] = [
    "experiment",
    "quantity",
    "cell",
    "exact",
    "sim",
    "se",
    "z",
    "passed",
    "rule",
];

/// The fields of one check under [`CHECK_COLUMNS`]: its names, (exact, sim, se, z) as written,
/// and the verdict of the estimate's pass rule.
pub fn check_fields(names: [&str; 3], numbers: [String; 4], e: &Estimate) -> Vec<String> {
    let mut row: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    row.extend(numbers);
    row.extend([e.passed().to_string(), e.rule().to_string()]);
    row
}

/// `checks.csv`: every simulated number with its exact value, standard error and z.
pub fn checks_csv(run: &RunOutput) -> String {
    let mut header = vec!["scenario", "seed"];
    header.extend(CHECK_COLUMNS);
    let mut csv = Csv::new(&header);
    for c in run.checks() {
        let e = c.estimate;
        let mut row = vec![run.scenario.clone(), run.seed.to_string()];
        row.extend(check_fields(
            [&c.experiment, &c.quantity, &c.cell],
            [num(e.exact), num(e.sim), num(e.se), num(e.z)],
            &e,
        ));
        csv.row(row);
    }
    csv.finish()
}

fn seed_csv(run: &RunOutput, r: &SeedVariance) -> String {
    let mut csv = header(
        &["model", "placement", "n", "quantity"],
        &["reruns", "question_se"],
    );
    let placement = format!("{:?}", r.placement).to_lowercase();
    for row in &r.rows {
        let mut emit = |quantity: &str, fields: [String; 6]| {
            let mut v = vec![
                run.scenario.clone(),
                run.seed.to_string(),
                r.experiment.clone(),
                r.model.clone(),
                placement.clone(),
                row.n.to_string(),
                quantity.to_string(),
            ];
            v.extend(fields);
            v.extend([r.reruns.to_string(), num(r.question_se)]);
            csv.row(v);
        };
        emit("mean", estimate_fields(&row.mean));
        emit("sd", estimate_fields(&row.sd));
        // Exact only: seed and question sampling combined.
        emit(
            "total_se",
            [
                num(row.total_se),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ],
        );
        // Quantiles: exact (fixed placement only) and simulated; their checks are the CDF rows.
        for (label, sim, exact) in [
            ("q2.5", row.sim_interval.0, row.exact_interval.map(|i| i.0)),
            ("q97.5", row.sim_interval.1, row.exact_interval.map(|i| i.1)),
        ] {
            emit(
                label,
                [
                    exact.map(num).unwrap_or_default(),
                    num(sim),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                ],
            );
        }
        for (q, e) in &row.interval_checks {
            emit(q, estimate_fields(e));
        }
    }
    csv.finish()
}

fn spread_csv(run: &RunOutput, r: &VoteSpread) -> String {
    let mut csv = header(
        &["model", "attractor", "vote_rule", "k", "quantity"],
        &["reruns"],
    );
    for row in &r.rows {
        for (q, e) in [
            ("maj@k mean", &row.maj_mean),
            ("maj@k sd", &row.maj_sd),
            ("avg pass@1 mean", &row.avg_mean),
            ("avg pass@1 sd", &row.avg_sd),
        ] {
            csv.row(estimate_row(
                run,
                &r.experiment,
                [
                    r.model.clone(),
                    num(r.attractor),
                    r.vote_rule.as_str().into(),
                    row.k.to_string(),
                    q.into(),
                ],
                e,
                [r.reruns.to_string()],
            ));
        }
    }
    csv.finish()
}

fn h2h_csv(run: &RunOutput, r: &HeadToHead) -> String {
    // Per-problem disagreement (`shift_sd`) adds columns; without it the table is unchanged.
    let disagreement_columns = [
        "tau_a",
        "tau_b",
        "logit_corr_population",
        "logit_corr_realised",
        "diff_sd_per_problem",
        "diff_sd_per_problem_constant_shift",
    ];
    let disagreement: Vec<String> = r.disagreement.as_ref().map_or(Vec::new(), |d| {
        let opt = |x: Option<f64>| x.map_or_else(String::new, num);
        vec![
            num(d.tau_a),
            num(d.tau_b),
            opt(d.population_correlation),
            opt(d.realised_correlation),
            num(d.difference_sd),
            num(d.difference_sd_constant_shift),
        ]
    });
    let mut tail = vec!["reruns", "pass_at_1_a", "pass_at_1_b"];
    if r.disagreement.is_some() {
        tail.extend(disagreement_columns);
    }
    let mut csv = header(&["a", "b", "n", "quantity"], &tail);
    for row in &r.rows {
        for (q, e) in [
            ("loss", &row.loss),
            ("tie", &row.tie),
            ("win", &row.win),
            ("loss_or_tie", &row.loss_or_tie),
        ] {
            let mut fields = estimate_row(
                run,
                &r.experiment,
                [r.a.clone(), r.b.clone(), row.n.to_string(), q.into()],
                e,
                [r.reruns.to_string(), num(r.pass_at_1_a), num(r.pass_at_1_b)],
            );
            fields.extend(disagreement.iter().cloned());
            csv.row(fields);
        }
    }
    csv.finish()
}

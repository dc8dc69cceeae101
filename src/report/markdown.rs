//! `report.md` (every figure and table, ready to paste) and `summary.json` (headline numbers).

use crate::experiments::budget::{BudgetCurves, BudgetMetric};
use crate::experiments::cost::CostTable;
use crate::experiments::noise::{HeadToHead, SeedVariance, VoteSpread};
use crate::experiments::votes::{Metric, VoteCurves};
use crate::experiments::Estimate;
use crate::experiments::{num, ExperimentResult, RunOutput};
use crate::report::format::pct;

pub use super::summary::{
    headline_rows, headline_text, headline_value, summary, Headline, Summary, Unit,
};

fn tokens(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.0}")
    } else {
        "inf".into()
    }
}

fn budget_cell(b: &BudgetCurves, mi: usize, budget: f64, metric: BudgetMetric) -> String {
    b.point(mi, budget, metric).map_or("".into(), |p| {
        let e = p.estimate;
        match metric {
            BudgetMetric::TokensPerSample => {
                format!("{} ({} ± {:.0})", tokens(e.exact), tokens(e.sim), e.se)
            }
            _ => format!(
                "{} ({} ± {})",
                pct(e.exact, 2),
                pct(e.sim, 2),
                super::keep_digits(100.0 * e.se, 2)
            ),
        }
    })
}

fn budget_md(b: &BudgetCurves) -> String {
    let mut md = format!(
        "Accuracy of one sample under a token budget B (a trace longer than B ends with no answer), {} simulated traces per problem per model, every budget read off the same traces.\n\n",
        b.traces
    );
    for c in &b.crossovers {
        let gaps = format!(
            "The gap {} − {} is {:+.2} points at {} tokens and {:+.2} points at {} tokens.",
            c.model_a,
            c.model_b,
            100.0 * c.gap_at_min,
            c.min_budget_tokens,
            100.0 * c.gap_at_max,
            c.max_budget_tokens
        );
        if c.crossings.is_empty() {
            md += &format!(
                "`{}` and `{}` do not cross between {} and {} tokens ({} leads). {gaps}\n\n",
                c.model_a, c.model_b, c.min_budget_tokens, c.max_budget_tokens, c.leader_at_min
            );
        }
        for x in &c.crossings {
            md += &format!(
                "`{}` and `{}` cross at **{:.0} tokens** (accuracy {}): `{}` leads below, `{}` above. {gaps}\n\n",
                c.model_a, c.model_b, x.budget_tokens, pct(x.accuracy, 2), x.leader_below, x.leader_above
            );
        }
    }
    for (metric, what) in [
        (BudgetMetric::Accuracy, "Acc(B)"),
        (BudgetMetric::TruncationRate, "truncation rate"),
        (BudgetMetric::TokensPerSample, "tokens per sample"),
    ] {
        md += &format!("{what}:\n\n| budget (tokens) |");
        for m in &b.models {
            md += &format!(" {} |", m.model);
        }
        md += "\n|---:|";
        md += &"---:|".repeat(b.models.len());
        md += "\n";
        for &budget in &b.budgets {
            md += &format!("| {budget} |");
            for mi in 0..b.models.len() {
                md += &format!(" {} |", budget_cell(b, mi, budget, metric));
            }
            md += "\n";
        }
        md += "\n";
    }
    md += &format!("Crossovers: `{}-crossover.csv`. ", b.experiment);
    md
}

fn cost_md(c: &CostTable) -> String {
    let cap = c
        .cap_tokens
        .map_or("no cap".to_string(), |b| format!("a cap of {b} tokens"));
    let mut md = format!(
        "Strategies (model, k samples per problem; k > 1 is a majority vote) at {cap}, sorted by tokens per correct answer = k × tokens per sample / accuracy. Frontier: no cheaper strategy is at least as accurate. {} traces per problem for k = 1 and tokens, {} votes per problem for k > 1.\n\n",
        c.traces, c.votes
    );
    let money = c.price_per_mtok.is_some();
    md += "| model | k | accuracy | tokens per sample | tokens per correct | frontier |";
    if money {
        md += " cost per correct |";
    }
    md += "\n|---|---:|---:|---:|---:|:---:|";
    if money {
        md += "---:|";
    }
    md += "\n";
    for s in &c.strategies {
        let (a, t, r) = (s.accuracy, s.tokens_per_sample, s.tokens_per_correct);
        md += &format!(
            "| {} | {}{} | {} ({} ± {}) | {} ({} ± {:.0}) | {} ({} ± {:.0}) | {} |",
            s.model,
            s.k,
            if s.best_of_k { " (best-of-k)" } else { "" },
            pct(a.exact, 2),
            pct(a.sim, 2),
            super::keep_digits(100.0 * a.se, 2),
            tokens(t.exact),
            tokens(t.sim),
            t.se,
            tokens(r.exact),
            tokens(r.sim),
            r.se,
            if s.frontier { "yes" } else { "" }
        );
        if let (Some(e), Some(p)) = (s.cost_per_correct, c.price_per_mtok) {
            md += &format!(" {e:.4} (at {p} per million tokens) |");
        }
        md += "\n";
    }
    md + "\n"
}

/// One sentence saying what the figure `file` of experiment `r` shows.
pub fn caption(r: &ExperimentResult, file: &str) -> &'static str {
    let stem = file.trim_end_matches(".png");
    let tail = stem.strip_prefix(r.name()).unwrap_or("");
    match (r, tail) {
        (ExperimentResult::Curves(_), _) => "pass@k, maj@k and pass^k against k (lines exact, dots simulated with 95% CIs, bands ±1 seed SD of one run on this benchmark: the spread a rerun with another seed shows); the dashed line is maj@k's large-k limit (the share of problems above the winning threshold; at finite k maj@k can sit above it).",
        (ExperimentResult::AttractorSweep(v), _) if v.axis == Some(crate::scenario::SweepAxis::GraderFpr) => "graded pass@k at each k against the grader's false-positive rate (lines exact, dots simulated with 95% CIs), with each k's true pass@k dashed in the same colour: every wrong sample has a chance fpr to be graded correct, so graded pass@k tends to 1 as k grows whatever the model can do.",
        (ExperimentResult::AttractorSweep(v), _) if v.axis == Some(crate::scenario::SweepAxis::Split) => "maj@k at each k against the split share (lines exact, dots simulated with 95% CIs), with pass@1 and pass@k at the largest k (dashed), which the split does not move.",
        (ExperimentResult::AttractorSweep(v), _) if v.axis.is_some() => "maj@k against k for each setting of the model's attractor shares, with pass@k for comparison; each dashed line is that setting's large-k limit of maj@k (a problem is won in the limit iff p max(s, 1 - s) > a_j (1 - p) for every j).",
        (ExperimentResult::AttractorSweep(_), _) => "maj@k against k for each attractor share a, with pass@k for comparison; each dashed line is that share's large-k limit of maj@k.",
        (ExperimentResult::SeedVariance(_), "-histograms") => "The benchmark score across simulated reruns for each n, with the normal curve of the exact mean and SD and the central 95% interval.",
        (ExperimentResult::SeedVariance(_), _) => "The seed SD of the score falls as 1/sqrt(n), while the question-sampling SE does not: the total SE (seed and question sampling) levels off at it, however many samples per problem.",
        (ExperimentResult::VoteSpread(_), _) => "The seed SD of maj@k (one vote per problem) against pass@1 averaged over the same k samples.",
        (ExperimentResult::HeadToHead(_), _) => "How often the better model B scores below (or level with) A in one rerun, against samples per problem n.",
        (ExperimentResult::Budget(_), "-lengths") => "Trace lengths per model, correct and wrong (bars simulated, lines exact), with the budgets as dashed lines.",
        (ExperimentResult::Budget(_), _) => "Accuracy of one sample (left) and the share of traces cut off (right) against the token budget; dashed verticals mark the crossovers.",
        (ExperimentResult::Cost(_), _) => "Accuracy against tokens per correct answer for each strategy (model, k); the line is the exact Pareto frontier.",
        (ExperimentResult::Plan(_), "-detectable") => "The smallest gap a two-sided 5% test finds with 80% power, per design (population: new problems, question + sampling noise; fixed: these problems, sampling noise only), with the simulated mean of B - A there.",
        (ExperimentResult::Plan(_), "-heatmap") => "Each cell of the grid coloured by the planned quantity; outlined cells meet the target.",
        (ExperimentResult::Plan(_), _) => "How often the better model scores at or below the worse one in one rerun, against the number of problems N.",
        (ExperimentResult::Judge(_), _) => super::judge::CAPTION,
        (ExperimentResult::Confidence(_), _) => super::confidence::CAPTION,
        (ExperimentResult::Contamination(_), _) => "Power of the public-minus-fresh test (flag when the public score exceeds the fresh one by more than the threshold that keeps false alarms at alpha) against the fresh set size, for each contaminated share; vertical lines mark each share's smallest fresh set reaching the target power.",
    }
}

/// The Markdown report. `figures` lists (experiment name, PNG file) pairs: each experiment's
/// section embeds its own figures only.
pub fn report(run: &RunOutput, figures: &[(String, String)]) -> String {
    let s = summary(run);
    let mut md = format!(
        "# {}\n\nScenario `{}` from `{}`, seed {}, evalsim {}.\n\n",
        run.title, run.scenario, run.source, run.seed, run.version
    );
    md += &format!(
        "Checks: {} simulated numbers compared with their exact values; {} failed (|z| > {} and, for counts of trials, outside Bernstein's bound; largest |z| = {:.2}). See `checks.csv`.\n\n",
        s.checks, s.checks_failed, s.z_bound, s.max_abs_z
    );
    md += "Percentages are benchmark scores (mean over problems). Each cell reads `exact (simulated ± standard error)`.\n\n";
    if !s.headline.is_empty() {
        md += "## Summary\n\n| experiment | quantity | exact | simulated |\n|---|---|---:|---:|\n";
        for r in headline_rows(&s) {
            md += &format!("| {} | {} | {} | {} |\n", r[0], r[1], r[2], r[3]);
        }
        md += "\n";
    }
    for r in &run.results {
        let name = r.name();
        md += &format!("## {name}\n\n");
        for (_, f) in figures.iter().filter(|(e, _)| e == name) {
            md += &format!("![{name}]({f})\n\n{}\n\n", caption(r, f));
        }
        match r {
            ExperimentResult::Curves(v) => md += &curves_md(v),
            ExperimentResult::AttractorSweep(v) => md += &sweep_md(v),
            ExperimentResult::SeedVariance(v) => md += &seed_md(v),
            ExperimentResult::VoteSpread(v) => md += &spread_md(v),
            ExperimentResult::HeadToHead(v) => md += &h2h_md(v),
            ExperimentResult::Budget(b) => md += &budget_md(b),
            ExperimentResult::Cost(c) => md += &cost_md(c),
            ExperimentResult::Plan(p) => md += &plan_md(p),
            ExperimentResult::Contamination(c) => md += &contamination_md(c),
            ExperimentResult::Judge(j) => md += &super::judge::judge_md(j),
            ExperimentResult::Confidence(c) => md += &super::confidence::confidence_md(c),
        }
        md += &format!("Table: `{name}.csv`.\n\n");
    }
    md
}

fn cell(v: &VoteCurves, si: usize, k: u32, m: Metric) -> String {
    v.points
        .iter()
        .find(|p| p.series == si && p.k == k && p.metric == m)
        .map_or("".into(), |p| {
            let graded = format!(
                "{} ({} ± {})",
                pct(p.estimate.exact, 2),
                pct(p.estimate.sim, 2),
                super::keep_digits(100.0 * p.estimate.se, 2)
            );
            match p.truth {
                Some(t) => format!("{graded}; true {}", pct(t.exact, 2)),
                None => graded,
            }
        })
}

/// "k = 2-16, 64" from the k values where best@k leads maj@k (runs of consecutive entries of
/// the experiment's k list joined).
fn k_ranges(all: &[u32], leads: &[u32]) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    let mut prev_in = false;
    for &k in all {
        let on = leads.contains(&k);
        match (on, prev_in, runs.last_mut()) {
            (true, true, Some(last)) => last.1 = k,
            (true, _, _) => runs.push((k, k)),
            _ => {}
        }
        prev_in = on;
    }
    runs.iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn curves_md(v: &VoteCurves) -> String {
    let mut md = String::new();
    for (si, s) in v.series.iter().enumerate() {
        md += &if s.attractors.is_empty() && s.unparsed == 0.0 && s.split == 0.0 {
            format!(
                "Model `{}`: pass@1 {}, attractor share a = {}, vote rule `{}`; maj@k tends to {} (the share of problems with p > a/(1+a) = {:.3}).\n\n",
                s.model, pct(s.pass_at_1, 2), s.attractor, s.vote_rule.as_str(), pct(s.ceiling, 2), s.threshold
            )
        } else {
            format!(
                "Model `{}`: graded pass@1 {}, answers {}, vote rule `{}`; maj@k tends to {} (the share of problems with p max(s, 1 - s) > a_j (1 - p) for every attractor j, i.e. p > {:.3}).\n\n",
                s.model, pct(s.pass_at_1, 2), s.modes_label(), s.vote_rule.as_str(), pct(s.ceiling, 2), s.threshold
            )
        };
        if let Some(g) = &s.grader {
            md += &format!("Graded by a noisy grader (fpr {}, fnr {}): every cell is the graded value, what the harness prints, with the true value after it.\n\n", g.fpr, g.fnr);
        }
        let best = s.verifier.is_some();
        if let (Some(verifier), Some(c), Some(leads)) = (&s.verifier, s.best_ceiling, &s.best_leads)
        {
            let lead = if leads.is_empty() {
                "best@k is never above maj@k at these k".to_string()
            } else if leads.len() == v.k.len() {
                "best@k is above maj@k at every k listed".to_string()
            } else {
                format!(
                    "best@k is above maj@k at k = {} and at or below it elsewhere (the crossovers)",
                    k_ranges(&v.k, leads)
                )
            };
            md += &format!(
                "Verifier {}: best@k tends to {}; {lead}.\n\n",
                verifier.describe(),
                pct(c, 2)
            );
        }
        if best {
            md += "| k | pass@k | pass^k | maj@k | best@k |\n|---:|---:|---:|---:|---:|\n";
        } else {
            md += "| k | pass@k | pass^k | maj@k |\n|---:|---:|---:|---:|\n";
        }
        for &k in &v.k {
            md += &format!(
                "| {k} | {} | {} | {} |",
                cell(v, si, k, Metric::PassAtK),
                cell(v, si, k, Metric::PassHatK),
                cell(v, si, k, Metric::MajAtK)
            );
            if best {
                md += &format!(" {} |", cell(v, si, k, Metric::BestAtK));
            }
            md += "\n";
        }
        md += "\n";
    }
    md
}

fn sweep_md(v: &VoteCurves) -> String {
    if v.axis == Some(crate::scenario::SweepAxis::GraderFpr) {
        return grader_sweep_md(v);
    }
    if v.axis.is_some() {
        return sweep_axis_md(v);
    }
    let kmax = *v.k.last().unwrap_or(&1);
    let mut md = format!(
        "maj@{kmax} against the attractor share a (model `{}`; pass@{kmax} = {} for every a):\n\n",
        v.series[0].model,
        cell(v, 0, kmax, Metric::PassAtK)
    );
    md +=
        &format!("| a | threshold a/(1+a) | large-k limit | maj@{kmax} |\n|---:|---:|---:|---:|\n");
    for (si, s) in v.series.iter().enumerate() {
        md += &format!(
            "| {} | {:.3} | {} | {} |\n",
            s.attractor,
            s.threshold,
            pct(s.ceiling, 2),
            cell(v, si, kmax, Metric::MajAtK)
        );
    }
    md + "\n"
}

/// A sweep of the grader's false-positive rate: graded pass@k at the smallest and largest k, the
/// true value beside it, and graded maj@k.
fn grader_sweep_md(v: &VoteCurves) -> String {
    let (kmin, kmax) = (v.k[0], *v.k.last().unwrap_or(&1));
    let truth = |k: u32| {
        v.points
            .iter()
            .find(|p| p.series == 0 && p.k == k && p.metric == Metric::PassAtK)
            .and_then(|p| p.truth)
            .map_or("–".to_string(), |t| format!("{:.2}", 100.0 * t.exact))
    };
    let mut md = format!(
        "Graded pass@k of model `{}` against the grader's false-positive rate (fnr {}); the true pass@{kmin} is {} and the true pass@{kmax} {} points at every rate. Cells: exact (simulated ± SE), points.\n\n",
        v.series[0].model,
        v.series[0].grader.map_or(0.0, |g| g.fnr),
        truth(kmin),
        truth(kmax),
    );
    md += &format!("| grader fpr | pass@{kmin} graded | pass@{kmax} graded | maj@{kmax} graded |\n|---:|---:|---:|---:|\n");
    for (si, s) in v.series.iter().enumerate() {
        md += &format!(
            "| {} | {} | {} | {} |\n",
            s.grader.map_or(0.0, |g| g.fpr),
            cell(v, si, kmin, Metric::PassAtK),
            cell(v, si, kmax, Metric::PassAtK),
            cell(v, si, kmax, Metric::MajAtK)
        );
    }
    md + "\n"
}

/// A sweep of another axis than the one attractor share: one row per swept setting.
fn sweep_axis_md(v: &VoteCurves) -> String {
    let kmax = *v.k.last().unwrap_or(&1);
    let what = v.axis.map_or_else(|| "a".to_string(), |a| a.label());
    let mut md = format!(
        "maj@{kmax} against {what} (model `{}`), with pass@1 and pass@{kmax} beside it:\n\n",
        v.series[0].model,
    );
    md += &format!("| answers | pass@1 | pass@{kmax} | threshold | large-k limit | maj@{kmax} |\n|---|---:|---:|---:|---:|---:|\n");
    for (si, s) in v.series.iter().enumerate() {
        md += &format!(
            "| {} | {} | {} | {:.3} | {} | {} |\n",
            s.modes_label(),
            pct(s.pass_at_1, 2),
            cell(v, si, kmax, Metric::PassAtK),
            s.threshold,
            pct(s.ceiling, 2),
            cell(v, si, kmax, Metric::MajAtK)
        );
    }
    md + "\n"
}

/// `exact (sim ± se)` in points.
fn pts(e: &Estimate) -> String {
    format!(
        "{} ({} ± {})",
        super::keep_digits(100.0 * e.exact, 2),
        super::keep_digits(100.0 * e.sim, 2),
        super::keep_digits(100.0 * e.se, 2)
    )
}

fn seed_md(v: &SeedVariance) -> String {
    let mut md = format!(
        "Model `{}`, {} problems, {} reruns per n, placement `{:?}`. Scores in points; the question-sampling SE is {:.2} points: the floor that more samples per problem cannot lower.\n\n",
        v.model, v.problems, v.reruns, v.placement, 100.0 * v.question_se
    )
    .replace("`Quantiles`", "`quantiles`")
    .replace("`Random`", "`random`");
    if let Some(floor) = v.run_floor {
        md += &format!(
            "The samples of one run share a logit offset of SD {} (`run_sd`): the seed SD falls towards {:.2} points as n grows, never below; only more runs (averaged) lower it.\n\n",
            v.run_sd,
            100.0 * floor
        );
    }
    md += "| n | seed SD | mean | 2.5% (exact / sim) | 97.5% (exact / sim) |\n|---:|---:|---:|---:|---:|\n";
    for r in &v.rows {
        let q = |e: Option<f64>, s: f64| {
            format!(
                "{} / {:.2}",
                e.map_or("–".into(), |x| format!("{:.2}", 100.0 * x)),
                100.0 * s
            )
        };
        md += &format!(
            "| {} | {} | {} | {} | {} |\n",
            r.n,
            pts(&r.sd),
            pts(&r.mean),
            q(r.exact_interval.map(|i| i.0), r.sim_interval.0),
            q(r.exact_interval.map(|i| i.1), r.sim_interval.1)
        );
    }
    md + "\n"
}

fn spread_md(v: &VoteSpread) -> String {
    let mut md = format!("Model `{}` (a = {}, `{}` ties), {} reruns. Seed SD in points of maj@k (one vote per problem) against pass@1 averaged over the same k samples.\n\n", v.model, v.attractor, v.vote_rule.as_str(), v.reruns);
    md += "| k | maj@k mean | maj@k seed SD | avg pass@1 mean | avg pass@1 seed SD |\n|---:|---:|---:|---:|---:|\n";
    for r in &v.rows {
        md += &format!(
            "| {} | {} | {} | {} | {} |\n",
            r.k,
            pts(&r.maj_mean),
            pts(&r.maj_sd),
            pts(&r.avg_mean),
            pts(&r.avg_sd)
        );
    }
    md + "\n"
}

fn h2h_md(v: &HeadToHead) -> String {
    let mut md = format!(
        "`{}` (pass@1 {}) against `{}` (pass@1 {}): a true gap of {:+.2} points. Each rerun scores both models on independent seeds; {} reruns per n. Probabilities in percent.\n\n",
        v.b, pct(v.pass_at_1_b, 2), v.a, pct(v.pass_at_1_a, 2), 100.0 * (v.pass_at_1_b - v.pass_at_1_a), v.reruns
    );
    if let Some(d) = &v.disagreement {
        md += &disagreement_md(v, d);
    }
    md += "| n | P(B < A) | P(B = A) | P(B > A) | P(B <= A) |\n|---:|---:|---:|---:|---:|\n";
    for r in &v.rows {
        md += &format!(
            "| {} | {} | {} | {} | {} |\n",
            r.n,
            pts(&r.loss),
            pts(&r.tie),
            pts(&r.win),
            pts(&r.loss_or_tie)
        );
    }
    md + "\n"
}

fn contamination_md(c: &crate::experiments::contamination::ContaminationResult) -> String {
    let mut md = format!(
        "`{}` solves memorised public problems at {} and fresh ones at pass@1 {}; {} public problems, n = {}, test at {} false alarm, target power {}; {} reruns per cell. Gaps in points, probabilities in percent.\n\n",
        c.model,
        pct(c.memorized_rate, 2),
        pct(c.fresh_pass_at_1, 2),
        c.public_problems,
        c.n,
        pct(c.alpha, 2),
        pct(c.target_power, 2),
        c.reruns
    );
    md += "| share | fresh M | mean gap | gap SD | threshold | P(flag) |\n|---:|---:|---:|---:|---:|---:|\n";
    for r in &c.rows {
        md += &format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            pct(r.share, 2),
            r.fresh,
            pts(&r.gap),
            pct(r.gap_sd, 2),
            pct(r.threshold_gap, 2),
            pts(&r.power)
        );
    }
    md += "\n| share | expected gap | smallest fresh set | false alarm | power |\n|---:|---:|---:|---:|---:|\n";
    for r in &c.plan {
        let (m, fa, pw) = match (r.fresh, r.false_alarm, r.power) {
            (Some(m), Some(fa), Some(pw)) => (m.to_string(), pts(&fa), pts(&pw)),
            _ => (
                format!("none up to {}", c.max_fresh),
                String::new(),
                String::new(),
            ),
        };
        md += &format!(
            "| {} | {} | {m} | {fa} | {pw} |\n",
            pct(r.share, 2),
            pct(r.expected_gap, 2)
        );
    }
    md += &format!("\nPlan table: `{}-plan.csv`.\n\n", c.experiment);
    md
}

/// The paragraph on per-problem disagreement of a head-to-head with `shift_sd` > 0.
fn disagreement_md(v: &HeadToHead, d: &crate::experiments::noise::Disagreement) -> String {
    let corr = |x: Option<f64>| x.map_or_else(|| "undefined".to_string(), |c| format!("{c:.3}"));
    let population = match d.population_correlation {
        Some(c) => format!(
            "{c:.3} in the population of problems (sigma^2 / sqrt((sigma^2 + tau_A^2)(sigma^2 + tau_B^2)))"
        ),
        None => "not defined in the population for an explicit list of benchmark rates".into(),
    };
    format!(
        "Per-problem disagreement: `{}` has shift_sd {} and `{}` has shift_sd {} (logits). The correlation of the two models' per-problem logits is {population}, and {} on this fixed benchmark. The difference p_B - p_A varies across problems with SD {:.2} points ({:.2} points with the constant shifts alone): the paired difference is not one number.\n\n",
        v.a, num(d.tau_a), v.b, num(d.tau_b), corr(d.realised_correlation),
        100.0 * d.difference_sd, 100.0 * d.difference_sd_constant_shift
    )
}

fn plan_md(p: &crate::experiments::plan::PlanResult) -> String {
    let mut md = super::planning::paragraph(p);
    md += "\n| design | gap (logits) | target | bound | N | samples | value |\n|---|---:|---|---:|---:|---:|---:|\n";
    for a in &p.answers {
        let (n, s, v) = a.best.map_or(
            ("none".into(), String::new(), String::new()),
            |(n, s, v)| (n.to_string(), s.to_string(), format!("{v:.4}")),
        );
        md += &format!(
            "| {} | {} | {} | {} | {n} | {s} | {v} |\n",
            a.design.as_str(),
            a.gap_logits,
            a.target,
            a.bound
        );
    }
    md + "\n"
}

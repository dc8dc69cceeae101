//! Outputs of `evalsim plan`: the table, the figures and the answer paragraph (nothing computed
//! here beyond picking finished numbers).

use super::figures::percent;
use super::plot;
use super::tables::{num, Csv};
use super::{Artifact, ReportError};
use crate::experiments::plan::{Answer, Design, PlanCell, PlanMetric, PlanResult, DETECT_POWER};
mod figures;

pub use figures::{detectable_figure, gap_text, heat_figure, loss_figure};

/// `<plan>.csv`: one row per (design, gap, N, n). With a model A that has its own `shift_sd`,
/// more columns at the end: `model_shift_sd` (A's tau, and B's unless the plan gives B its
/// own), `b_shift_sd` (B's, only when the plan gives it) and `logit_correlation`
/// (population); without one the table is what it was.
pub fn plan_csv(r: &PlanResult) -> String {
    let own = r.spec.model_shift_sd.as_ref().map(|m| (m.tau, m.tau_b));
    let mut header = vec![
        "mu",
        "sigma",
        "shift_sd",
        "metric",
        "attractor",
        "vote_rule",
        "seed",
        "design",
        "problems",
        "samples",
        "gap_logits",
        "gap",
        "se",
        "halfwidth",
        "power",
        "loss",
        "tie",
        "loss_or_tie",
        "method",
        "sim_loss",
        "sim_loss_or_tie",
        "sim_se",
        "z",
        "approx_error_in_se",
        "sim_gap",
        "sim_gap_se",
        "gap_z",
        "sim_sd",
        "sim_sd_se",
        "sd_z",
        "reruns",
        "meets_loss_or_tie",
        "meets_halfwidth",
        "question_se",
        "min_gap_logits_80",
        "min_gap_80",
        "min_gap_logits_target",
        "min_gap_target",
    ];
    if let Some((_, b)) = own {
        header.push("model_shift_sd");
        if b.is_some() {
            header.push("b_shift_sd");
        }
        header.push("logit_correlation");
    }
    // Graded plans (unparsed answers, a grader, or for maj@k several attractors or split): the
    // true gap beside the graded `gap`.
    let graded = r.spec.answers.changes(r.spec.metric);
    if graded {
        header.push("true_gap");
    }
    let mut csv = Csv::new(&header);
    let s = &r.spec;
    let (attractor, rule) = match s.metric {
        PlanMetric::Pass1 => (String::new(), String::new()),
        PlanMetric::Maj { attractor, rule } => (num(attractor), rule.as_str().to_string()),
    };
    for c in &r.cells {
        let sim: [String; 12] = match c.sim {
            Some(x) => {
                // z is a check only against an exact value; against the normal approximation
                // the same number measures the approximation (information, not a check).
                let (z, approx) = if c.loss_checked() {
                    (num(x.loss_or_tie.z), String::new())
                } else {
                    (String::new(), num(x.loss_or_tie.z))
                };
                [
                    num(x.loss.sim),
                    num(x.loss_or_tie.sim),
                    num(x.loss_or_tie.se),
                    z,
                    approx,
                    num(x.gap.sim),
                    num(x.gap.se),
                    num(x.gap.z),
                    num(x.sd.sim),
                    num(x.sd.se),
                    num(x.sd.z),
                    x.reruns.to_string(),
                ]
            }
            None => Default::default(),
        };
        let mut row = vec![
            num(s.mu),
            num(s.sigma),
            num(s.shift_sd),
            s.metric.label().into(),
            attractor.clone(),
            rule.clone(),
            s.seed.to_string(),
            c.design.as_str().into(),
            c.problems.to_string(),
            c.samples.to_string(),
            num(c.gap_logits),
            num(c.gap),
            num(c.se),
            num(c.halfwidth),
            num(c.power),
            num(c.loss),
            num(c.tie),
            num(c.loss_or_tie),
            c.method.into(),
        ];
        row.extend(sim);
        row.push((c.loss_or_tie <= s.target_loss_or_tie).to_string());
        row.push((c.halfwidth <= s.target_halfwidth).to_string());
        row.push(num(c.question_se));
        for power in [Some(DETECT_POWER), s.target_power] {
            let d = power.and_then(|p| detectable(r, c.design, c.problems, c.samples, p));
            match d {
                Some(d) => {
                    row.push(num(d.gap_logits));
                    row.push(num(d.gap));
                }
                None => row.extend([String::new(), String::new()]),
            }
        }
        if let Some((tau, b)) = own {
            row.push(num(tau));
            if let Some(b) = b {
                row.push(num(b));
            }
            row.push(num(r.logit_correlation.1));
        }
        if graded {
            row.push(c.true_gap.map_or(String::new(), num));
        }
        csv.row(row);
    }
    csv.finish()
}

/// The cell at the minimum detectable gap of (design, N, n) at `power`, if it was reached.
fn detectable(
    r: &PlanResult,
    design: Design,
    big_n: usize,
    n: u32,
    power: f64,
) -> Option<&PlanCell> {
    r.detectable
        .iter()
        .find(|d| d.design == design && d.problems == big_n && d.samples == n && d.power == power)
        .and_then(|d| d.cell.as_ref())
}

/// The letter of the grid's second axis: n (pass@1) or k (maj@k).
pub(super) fn axis(r: &PlanResult) -> &'static str {
    match r.spec.metric {
        PlanMetric::Pass1 => "n",
        PlanMetric::Maj { .. } => "k",
    }
}

/// The short name of a design, saying which error sources it holds.
pub(super) fn design_short(d: Design) -> &'static str {
    match d {
        Design::Fixed => "fixed benchmark (sampling noise only)",
        Design::PopulationPaired => "population, paired (question + sampling noise)",
        Design::PopulationUnpaired => "population, unpaired (question + sampling noise)",
    }
}

/// The designs, population first: the plan's question is about the models, not one problem set.
pub(super) const ANSWER_ORDER: [Design; 3] = [
    Design::PopulationPaired,
    Design::PopulationUnpaired,
    Design::Fixed,
];

fn thousands(x: u64) -> String {
    let s = x.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn answer_text(r: &PlanResult, a: &Answer) -> String {
    match a.best {
        Some((big_n, n, v)) => {
            let what = if a.target == "loss_or_tie" {
                format!("loss-or-tie {}%", super::keep_digits(percent(v), 1))
            } else {
                format!("half-width {:.2} points", percent(v))
            };
            let each = match r.spec.metric {
                PlanMetric::Pass1 => {
                    format!("n = {n} sample{} each", if n == 1 { "" } else { "s" })
                }
                PlanMetric::Maj { .. } => format!(
                    "one vote of k = {n} sample{} each",
                    if n == 1 { "" } else { "s" }
                ),
            };
            format!(
                "N = {} problems with {each} ({} samples per model; {what})",
                thousands(big_n as u64),
                thousands(big_n as u64 * u64::from(n)),
            )
        }
        None => format!(
            "a larger grid (no cell suffices; try larger N or {})",
            axis(r)
        ),
    }
}

/// A score gap in points with its logit shift: `+3.0 points (+0.21 logits)`.
fn gap_points_text(c: &PlanCell) -> String {
    format!(
        "{:+.2} points ({} logits)",
        percent(c.gap),
        gap_text(c.gap_logits)
    )
}

/// What the harness does to the models' answers, for a graded plan: `5% of samples unparsed,
/// a grader with fpr 0.1 and fnr 0.05` (None for the canonical model).
fn harness_text(r: &PlanResult) -> Option<String> {
    let a = &r.spec.answers;
    if !a.changes(r.spec.metric) {
        return None;
    }
    let mut parts = Vec::new();
    if matches!(r.spec.metric, PlanMetric::Maj { .. }) {
        if !a.attractors.is_empty() {
            let shares: Vec<String> = a.attractors.iter().map(|x| x.to_string()).collect();
            parts.push(format!("attractor shares [{}]", shares.join(", ")));
        }
        if a.split != 0.0 {
            parts.push(format!(
                "a share {} of parsed correct answers in an alternate form (split)",
                a.split
            ));
        }
    }
    if a.unparsed != 0.0 {
        parts.push(format!(
            "a share {} of samples with no extractable answer (unparsed)",
            a.unparsed
        ));
    }
    if let Some(g) = a.grader {
        parts.push(format!(
            "a noisy grader (false-positive rate {}, false-negative rate {})",
            g.fpr, g.fnr
        ));
    }
    Some(parts.join(", "))
}

/// The graded-numbers statement of a graded plan: what the harness does, and per gap the graded
/// gap against the true one (population, and the fixed benchmark at the smallest N).
fn graded_text(r: &PlanResult) -> Option<String> {
    let harness = harness_text(r)?;
    let s = &r.spec;
    let mut out = format!(
        "Every number below is graded: it is what a harness with {harness} reports, for both models (B is a model of the same kind). The gaps, SEs, powers and losses are those of the graded scores; the true gap (every answer parsed in one form and graded perfectly) differs:\n"
    );
    for &gap in &s.gaps {
        let line: Vec<String> = [Design::PopulationPaired, Design::Fixed]
            .iter()
            .flat_map(|&d| {
                r.cells
                    .iter()
                    .filter(move |c| {
                        c.design == d
                            && c.gap_logits == gap
                            && Some(&c.problems) == s.problems.first()
                    })
                    // pass@1's gap does not depend on n: one entry per design.
                    .take(if axis(r) == "n" { 1 } else { usize::MAX })
                    .map(move |c| {
                        let at = match (d, axis(r)) {
                            (Design::Fixed, "n") => format!("fixed N = {}", c.problems),
                            (Design::Fixed, ax) => {
                                format!("fixed N = {}, {ax} = {}", c.problems, c.samples)
                            }
                            (_, "n") => "population".to_string(),
                            (_, ax) => format!("population, {ax} = {}", c.samples),
                        };
                        format!(
                            "{at}: graded {:+.2} points, true {:+.2}",
                            percent(c.gap),
                            percent(c.true_gap.unwrap_or(f64::NAN))
                        )
                    })
            })
            .collect();
        out.push_str(&format!(
            "- B = A {} logits: {}.\n",
            gap_text(gap),
            line.join("; ")
        ));
    }
    out.push('\n');
    Some(out)
}

/// The answer: one paragraph per gap, ready to paste into a plan, then the minimum detectable
/// gaps and what the fixed-benchmark numbers leave out. A graded plan opens with what the
/// harness does and the graded gap against the true one.
pub fn paragraph(r: &PlanResult) -> String {
    let s = &r.spec;
    let mut out = graded_text(r).unwrap_or_default();
    let disagreement = disagreement_text(r);
    for &gap in &s.gaps {
        let pick = |design: Design, target: &str| {
            r.answers
                .iter()
                .find(|a| a.design == design && a.gap_logits == gap && a.target == target)
        };
        let pop_gaps: Vec<(u32, f64)> = r
            .cells
            .iter()
            .filter(|c| {
                c.design == Design::PopulationPaired
                    && c.gap_logits == gap
                    && Some(&c.problems) == s.problems.first()
            })
            .map(|c| (c.samples, c.gap))
            .collect();
        let score = match s.metric {
            PlanMetric::Pass1 => format!(
                "{:+.1} points of pass@1 (averaged over n samples per problem)",
                percent(pop_gaps.first().map_or(0.0, |g| g.1))
            ),
            PlanMetric::Maj { attractor, rule } => {
                let gaps: Vec<String> = pop_gaps
                    .iter()
                    .map(|(k, g)| format!("{:+.1} at k = {k}", percent(*g)))
                    .collect();
                format!(
                    "in maj@k (one majority vote of k samples per problem; attractor share {attractor}, {} ties) the population gap is {} points",
                    rule.as_str(),
                    gaps.join(", ")
                )
            }
        };
        out.push_str(&format!(
            "Model B is {} logits better than model A on problems whose solve rates are \
             logit-normal(mu = {}, sigma = {}): {score}; {disagreement}. The question is whether \
             B is the better model, not whether it beats A on one particular problem set, so the \
             answer leads with the population designs (new problems from the same population: \
             question sampling and sampling noise); the fixed-benchmark numbers (these problems \
             only, sampling noise only) come last and are not the uncertainty of a score. \
             Searching N in {:?} and {} in {:?} for the fewest samples N x {}:\n",
            gap_text(gap),
            s.mu,
            s.sigma,
            s.problems,
            axis(r),
            s.samples,
            axis(r),
        ));
        for d in ANSWER_ORDER {
            let hw = pick(d, "halfwidth")
                .map(|a| answer_text(r, a))
                .unwrap_or_default();
            let lt = pick(d, "loss_or_tie")
                .map(|a| answer_text(r, a))
                .unwrap_or_default();
            out.push_str(&format!(
                "- {}: a 95% confidence interval on the difference no wider than +/-{} points needs {hw}; B loses or ties a rerun at most {}% of the time with {lt}.\n",
                design_short(d),
                percent(s.target_halfwidth),
                percent(s.target_loss_or_tie),
            ));
        }
        out.push('\n');
    }
    out.push_str(&detectable_text(r));
    out.trim_end().to_string() + "\n"
}

/// How B's per-problem logit relates to A's: one shift, B's own deviation, or both models'
/// deviations, with the correlation of their logits in the population and on the fixed
/// benchmarks.
fn disagreement_text(r: &PlanResult) -> String {
    let s = &r.spec;
    let fixed: Vec<String> = r
        .logit_correlation
        .0
        .iter()
        .map(|(n, c)| format!("{c:.3} at N = {}", thousands(*n as u64)))
        .collect();
    if let Some(m) = s.model_shift_sd.as_ref().filter(|m| m.tau_b.is_some()) {
        format!(
            "A and B each deviate from the problem's logit problem by problem: model `{}` has shift_sd {}, so A's logit is the problem's + {} e_A, and the plan gives B its own shift_sd {}, so B's logit is the problem's + gap + {} e_B, with e_A and e_B standard normal per problem and independent; the two models' per-problem logits correlate {:.3} in the population (on the fixed benchmarks: {})",
            m.model,
            m.tau,
            m.tau,
            m.b(),
            m.b(),
            r.logit_correlation.1,
            fixed.join(", ")
        )
    } else if let Some(m) = &s.model_shift_sd {
        format!(
            "A and B each deviate from the problem's logit problem by problem: model `{}` has shift_sd {}, so A's logit is the problem's + {} e_A and B's (a model of the same kind) the problem's + gap + {} e_B, with e_A and e_B standard normal per problem and independent, so the two models' per-problem logits correlate {:.3} in the population (on the fixed benchmarks: {})",
            m.model,
            m.tau,
            m.tau,
            m.tau,
            r.logit_correlation.1,
            fixed.join(", ")
        )
    } else if s.shift_sd == 0.0 {
        "B is A shifted by the same amount on every problem (shift_sd = 0)".to_string()
    } else {
        format!(
            "B also disagrees with A problem by problem: its logit is A's + gap + {} e with e standard normal per problem (shift_sd), so the two models' per-problem logits correlate {:.3} in the population (on the fixed benchmarks: {})",
            s.shift_sd,
            r.logit_correlation.1,
            fixed.join(", ")
        )
    }
}

/// The minimum detectable gaps at the smallest and the largest N with the largest n (at the
/// default power and at the spec's target power), then what the fixed-benchmark half-width
/// leaves out.
fn detectable_text(r: &PlanResult) -> String {
    let s = &r.spec;
    let mut out = String::new();
    // Minimum detectable gaps at the largest and the smallest N, with the largest n.
    if let (Some(&n_max), Some(&big_lo), Some(&big_hi)) =
        (s.samples.last(), s.problems.first(), s.problems.last())
    {
        let mut powers = vec![DETECT_POWER];
        powers.extend(s.target_power.filter(|&p| p != DETECT_POWER));
        for power in powers {
            let mut lines = Vec::new();
            for d in ANSWER_ORDER {
                let at: Vec<String> = [big_lo, big_hi]
                    .iter()
                    .enumerate()
                    .filter(|&(i, &big_n)| i == 0 || big_n != big_lo)
                    .map(|(_, &big_n)| match detectable(r, d, big_n, n_max, power) {
                        Some(c) => {
                            format!("{} at N = {}", gap_points_text(c), thousands(big_n as u64))
                        }
                        None => format!("none within 40 logits at N = {}", thousands(big_n as u64)),
                    })
                    .collect();
                lines.push(format!("- {}: {}.", design_short(d), at.join("; ")));
            }
            out.push_str(&format!(
                "Minimum detectable gap (the smallest B - A a two-sided 5% test finds with {:.0}% power), with {} = {n_max}:\n{}\n\n",
                percent(power),
                axis(r),
                lines.join("\n")
            ));
        }
        // What the fixed-benchmark half-width leaves out, at the smallest N.
        let fixed_cell = r
            .cells
            .iter()
            .find(|c| c.design == Design::Fixed && c.problems == big_lo && c.samples == n_max);
        if let Some(c) = fixed_cell {
            out.push_str(&format!(
                "Not the uncertainty of a score: on a fixed benchmark of N = {} problems with {} = {n_max} the half-width of B - A is {:.2} points, but that counts only the models' sampling noise on these {} problems. A single model's score at N = {} also carries a question-sampling SE of {:.1} points (new problems from the same population); the population designs above include it.\n",
                thousands(big_lo as u64),
                axis(r),
                percent(c.halfwidth),
                thousands(big_lo as u64),
                thousands(big_lo as u64),
                percent(c.question_se),
            ));
        }
    }
    out
}

/// Every output file of a plan, named after its experiment (`plan` from the command line):
/// `<plan>.csv`, `<plan>.txt` (the answer), `<plan>.json`, and the figures `<plan>-loss`,
/// `<plan>-detectable` and `<plan>-heatmap` (PNG and SVG). `scenario` names the scenario in the
/// figure titles when the plan is an experiment of one (`None` for `evalsim plan`).
///
/// # Errors
/// [`ReportError`] when a figure or JSON document cannot be produced.
pub fn render_plan(
    r: &PlanResult,
    scenario: Option<&str>,
    figures: Option<plot::Raster>,
) -> Result<Vec<Artifact>, ReportError> {
    let stem = &r.experiment;
    let mut out = vec![
        Artifact {
            file: format!("{stem}.csv"),
            bytes: plan_csv(r).into_bytes(),
        },
        Artifact {
            file: format!("{stem}.txt"),
            bytes: paragraph(r).into_bytes(),
        },
        Artifact {
            file: format!("{stem}.json"),
            bytes: super::json(&format!("{stem}.json"), r)?,
        },
    ];
    if let Some(raster) = figures {
        for figure in ["loss", "detectable"] {
            let f = if figure == "loss" {
                loss_figure(r, scenario)
            } else {
                detectable_figure(r, scenario)
            };
            let name = format!("{stem}-{figure}");
            let (png, svg) = plot::render_both(&f, raster)?;
            out.extend(Artifact::figure(&name, png, svg));
        }
        let heat = heat_figure(r, scenario);
        let (png, svg) = (
            plot::render_heat_png(&heat, raster)?,
            plot::render_heat_svg(&heat)?,
        );
        out.extend(Artifact::figure(&format!("{stem}-heatmap"), png, svg));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::figures::loss_label;
    use super::*;

    #[test]
    fn plan_gap_titles_print_three_significant_digits() {
        assert_eq!(gap_text(0.230_812_861_717_722_7), "+0.231");
        assert_eq!(gap_text(0.21), "+0.21");
        assert_eq!(gap_text(-1.5), "-1.5");
        assert_eq!(gap_text(12.345), "+12.3");
        assert_eq!(gap_text(0.000_123_456), "+0.000123");
        assert_eq!(gap_text(250.0), "+250");
    }

    #[test]
    fn plan_heatmap_loss_below_a_twentieth_of_a_point_reads_below_0_1_percent() {
        assert_eq!(loss_label(1e-6), "<0.1%");
        assert_eq!(loss_label(0.0), "0.0%");
        assert_eq!(loss_label(0.0123), "1.2%");
    }
}

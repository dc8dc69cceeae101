//! Outputs of `evalsim plan`: the table, the figures and the answer paragraph (nothing computed
//! here beyond picking finished numbers).

use super::figures::{level, pct};
use super::plot::{self, HeatFigure, HeatPanel, Markers, Panel, Points, Scale};
use super::tables::{num, Csv};
use super::{Artifact, ReportError};
use crate::experiments::plan::{
    Answer, Design, Metric, PlanCell, PlanResult, SimCheck, DETECT_POWER,
};
use crate::experiments::Estimate;

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
        Metric::Pass1 => (String::new(), String::new()),
        Metric::Maj { attractor, rule } => (num(attractor), rule.as_str().to_string()),
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
fn axis(r: &PlanResult) -> &'static str {
    match r.spec.metric {
        Metric::Pass1 => "n",
        Metric::Maj { .. } => "k",
    }
}

/// The short name of a design, saying which error sources it holds.
fn design_short(d: Design) -> &'static str {
    match d {
        Design::Fixed => "fixed benchmark (sampling noise only)",
        Design::PopulationPaired => "population, paired (question + sampling noise)",
        Design::PopulationUnpaired => "population, unpaired (question + sampling noise)",
    }
}

/// The designs, population first: the plan's question is about the models, not one problem set.
const ANSWER_ORDER: [Design; 3] = [
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
                format!("loss-or-tie {}%", super::keep_digits(pct(v), 1))
            } else {
                format!("half-width {:.2} points", pct(v))
            };
            let each = match r.spec.metric {
                Metric::Pass1 => format!("n = {n} sample{} each", if n == 1 { "" } else { "s" }),
                Metric::Maj { .. } => format!(
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
        pct(c.gap),
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
    if matches!(r.spec.metric, Metric::Maj { .. }) {
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
                            pct(c.gap),
                            pct(c.true_gap.unwrap_or(f64::NAN))
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
    let fixed: Vec<String> = r
        .logit_correlation
        .0
        .iter()
        .map(|(n, c)| format!("{c:.3} at N = {}", thousands(*n as u64)))
        .collect();
    let disagreement = if let Some(m) = s.model_shift_sd.as_ref().filter(|m| m.tau_b.is_some()) {
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
    };
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
            Metric::Pass1 => format!(
                "{:+.1} points of pass@1 (averaged over n samples per problem)",
                pct(pop_gaps.first().map_or(0.0, |g| g.1))
            ),
            Metric::Maj { attractor, rule } => {
                let gaps: Vec<String> = pop_gaps
                    .iter()
                    .map(|(k, g)| format!("{:+.1} at k = {k}", pct(*g)))
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
                pct(s.target_halfwidth),
                pct(s.target_loss_or_tie),
            ));
        }
        out.push('\n');
    }
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
                pct(power),
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
                pct(c.halfwidth),
                thousands(big_lo as u64),
                thousands(big_lo as u64),
                pct(c.question_se),
            ));
        }
    }
    out.trim_end().to_string() + "\n"
}

fn title(r: &PlanResult, scenario: Option<&str>, what: &str) -> String {
    let metric = match r.spec.metric {
        Metric::Pass1 => "pass@1".to_string(),
        Metric::Maj { attractor, rule } => format!("maj@k (a = {attractor}, {})", rule.as_str()),
    };
    let tau = if let Some(m) = &r.spec.model_shift_sd {
        match m.tau_b {
            Some(b) => format!(" · shift_sd A {} B {b}", m.tau),
            None => format!(" · A and B shift_sd {}", m.tau),
        }
    } else if r.spec.shift_sd == 0.0 {
        String::new()
    } else {
        format!(" · shift_sd {}", r.spec.shift_sd)
    };
    let scenario = scenario.map_or(String::new(), |name| format!(" · scenario {name}"));
    let graded = if r.spec.answers.changes(r.spec.metric) {
        " · graded"
    } else {
        ""
    };
    format!(
        "{what} · {metric}{graded} · logit-normal({}, {}){tau}{scenario} · seed {}",
        r.spec.mu, r.spec.sigma, r.spec.seed
    )
}

fn fixed(r: &PlanResult, gap: f64) -> impl Iterator<Item = &PlanCell> {
    r.cells
        .iter()
        .filter(move |c| c.design == Design::Fixed && c.gap_logits == gap)
}

/// A gap in logits with a sign and at most 3 significant digits (`+0.231`, `+0.21`, `-1.5`).
pub fn gap_text(gap: f64) -> String {
    if gap == 0.0 || !gap.is_finite() {
        return format!("{gap:+}");
    }
    let decimals = (2 - gap.abs().log10().floor() as i32).max(0) as usize;
    let t = format!("{gap:+.decimals$}");
    if t.contains('.') {
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        t
    }
}

/// A loss probability in percent to one decimal, with a positive value below 0.05% shown as
/// `<0.1%` rather than `0.0%`.
fn loss_label(v: f64) -> String {
    if v > 0.0 && pct(v) < 0.05 {
        "<0.1%".into()
    } else {
        format!("{:.1}%", pct(v))
    }
}

/// Loss-or-tie against N on a log axis, one series of exact points per n (fixed design), one panel
/// per gap. With a single N and several n (or k), n goes on the x axis instead (one series for the
/// one N).
pub fn loss_figure(r: &PlanResult, scenario: Option<&str>) -> plot::Figure {
    let s = &r.spec;
    let x_axis = PlanAxis::of(r);
    let by_samples = x_axis.by_samples;
    // Cells are picked by (x, series): the series value is the size not on the x axis.
    let series: Vec<f64> = if by_samples {
        s.problems.iter().map(|&n| n as f64).collect()
    } else {
        s.samples.iter().map(|&n| f64::from(n)).collect()
    };
    let series_of = |c: &PlanCell| -> f64 {
        if by_samples {
            c.problems as f64
        } else {
            f64::from(c.samples)
        }
    };
    let panels = s
        .gaps
        .iter()
        .map(|&gap| {
            // With the model's own shift_sd, B is A's shift plus the gap, each with its own
            // per-problem deviation: "B = A + gap" would say the deviations are shared.
            let relation = if r.spec.model_shift_sd.is_some() {
                "B's shift = A's"
            } else {
                "B = A"
            };
            let mut p = Panel::new(
                format!(
                    "{relation} {} logits · fixed benchmark (these problems, sampling noise only)",
                    gap_text(gap)
                ),
                x_axis.label,
                "P(B scores <= A) in one rerun, %",
            );
            x_axis.apply(&mut p);
            // The simulated intervals stay inside the frame too.
            let ymax = fixed(r, gap)
                .map(|c| {
                    c.sim
                        .map_or(c.loss_or_tie, |x| c.loss_or_tie.max(x.loss_or_tie.ci_high))
                })
                .fold(0.0, f64::max);
            p.y_range = (0.0, (pct(ymax) * 1.1).max(pct(s.target_loss_or_tie) * 1.5));
            for (i, &v) in series.iter().enumerate() {
                let cells: Vec<&PlanCell> = fixed(r, gap).filter(|&c| series_of(c) == v).collect();
                let name = if by_samples {
                    format!("N = {v}")
                } else {
                    format!("{} = {v}", axis(r))
                };
                let exact: Vec<(f64, f64)> = cells
                    .iter()
                    .map(|&c| (x_axis.x(c), pct(c.loss_or_tie)))
                    .collect();
                exact_points(&mut p, i, exact, name);
                let sims = x_axis.sim_dots(&cells, |x| x.loss_or_tie);
                if !sims.is_empty() {
                    p.markers.push(Markers {
                        label: (i == 0).then(|| "simulated (95% CI)".to_string()),
                        color: i,
                        points: sims,
                    });
                }
            }
            let target = format!("target {}%", pct(s.target_loss_or_tie));
            level(&mut p, Some(target), 6, pct(s.target_loss_or_tie));
            p
        })
        .collect::<Vec<_>>();
    let columns = plot::grid_columns(panels.len());
    let rows = panels.len().div_ceil(columns) as u32;
    plot::Figure {
        title: title(r, scenario, "How often the better model loses or ties"),
        panels,
        columns,
        size: (900.max(800 * columns as u32), 80 + 560 * rows),
    }
}

/// Heat maps over N x n: fixed-design loss-or-tie and population-paired half-width per gap, the
/// cells meeting each target outlined.
pub fn heat_figure(r: &PlanResult, scenario: Option<&str>) -> HeatFigure {
    let s = &r.spec;
    let mut panels = Vec::new();
    for &gap in &s.gaps {
        for (design, target) in [
            (Design::Fixed, "loss_or_tie"),
            (Design::PopulationPaired, "halfwidth"),
        ] {
            let value = |c: &PlanCell| {
                if target == "loss_or_tie" {
                    c.loss_or_tie
                } else {
                    c.halfwidth
                }
            };
            let bound = if target == "loss_or_tie" {
                s.target_loss_or_tie
            } else {
                s.target_halfwidth
            };
            let cell = |big_n: usize, n: u32| {
                r.cells.iter().find(|c| {
                    c.design == design
                        && c.gap_logits == gap
                        && c.problems == big_n
                        && c.samples == n
                })
            };
            let grid: Vec<Vec<f64>> = s
                .samples
                .iter()
                .map(|&n| {
                    s.problems
                        .iter()
                        .map(|&big_n| cell(big_n, n).map_or(f64::NAN, value))
                        .collect()
                })
                .collect();
            let hi = grid.iter().flatten().copied().fold(0.0, f64::max);
            let best = r
                .answers
                .iter()
                .find(|a| a.design == design && a.gap_logits == gap && a.target == target)
                .and_then(|a| a.best);
            let labels: Vec<Vec<String>> = grid
                .iter()
                .zip(&s.samples)
                .map(|(row, &n)| {
                    row.iter()
                        .zip(&s.problems)
                        .map(|(&v, &big_n)| {
                            let star = if best.is_some_and(|b| b.0 == big_n && b.1 == n) {
                                " *"
                            } else {
                                ""
                            };
                            if target == "loss_or_tie" {
                                format!("{}{star}", loss_label(v))
                            } else {
                                format!("{:.2}{star}", pct(v))
                            }
                        })
                        .collect()
                })
                .collect();
            let outlined = grid
                .iter()
                .map(|row| row.iter().map(|&v| v <= bound).collect())
                .collect();
            let (what, unit, scale_label) = if target == "loss_or_tie" {
                (
                    "P(B <= A), fixed benchmark (sampling noise only)",
                    format!("{}%", pct(bound)),
                    "P(B <= A) (%)",
                )
            } else {
                (
                    "95% CI half-width (points), population paired (question + sampling noise)",
                    format!("{} points", pct(bound)),
                    "95% CI half-width (points)",
                )
            };
            // A cell shown as <0.1% says so under the chart.
            let tiny = labels.iter().flatten().any(|l| l.starts_with('<'));
            panels.push(HeatPanel {
                title: format!("{what}, gap {} logits", gap_text(gap)),
                x_label: "problems N".into(),
                y_label: match r.spec.metric {
                    Metric::Pass1 => "samples per problem n".into(),
                    Metric::Maj { .. } => "samples per vote k".into(),
                },
                columns: s.problems.iter().map(|n| n.to_string()).collect(),
                rows: s.samples.iter().map(|n| n.to_string()).collect(),
                values: grid,
                labels,
                outlined,
                range: (0.0, hi),
                scale_label: scale_label.into(),
                scale_factor: 100.0,
                footnote: format!(
                    "outlined: meets the target (<= {unit}); * fewest samples N x {} meeting it{}",
                    axis(r),
                    if tiny {
                        "; <0.1%: above 0 but below 0.05%"
                    } else {
                        ""
                    }
                ),
            });
        }
    }
    let rows = s.gaps.len() as u32;
    HeatFigure {
        title: title(
            r,
            scenario,
            match r.spec.metric {
                Metric::Pass1 => "Plan over N x n",
                Metric::Maj { .. } => "Plan over N x k",
            },
        ),
        panels,
        columns: 2,
        size: (1600, 80 + 520 * rows),
    }
}

/// The minimum detectable gap at 80% power (points of the score) against N on a log axis, one
/// series of exact points per n, one panel per design (population first), the simulated mean of
/// B - A at that gap with its 95% interval; with a single N and several n (or k), n goes on the x
/// axis.
pub fn detectable_figure(r: &PlanResult, scenario: Option<&str>) -> plot::Figure {
    let s = &r.spec;
    let x_axis = PlanAxis::of(r);
    let by_samples = x_axis.by_samples;
    let series: Vec<(usize, u32)> = if by_samples {
        vec![(s.problems[0], 0)]
    } else {
        s.samples.iter().map(|&n| (0, n)).collect()
    };
    let score = match s.metric {
        Metric::Pass1 => "pass@1",
        Metric::Maj { .. } => "maj@k",
    };
    let cells_of = |d: Design| -> Vec<&PlanCell> {
        r.detectable
            .iter()
            .filter(|x| x.design == d && x.power == DETECT_POWER)
            .filter_map(|x| x.cell.as_ref())
            .collect()
    };
    let ymax = ANSWER_ORDER
        .iter()
        .flat_map(|&d| cells_of(d))
        .map(|c| c.sim.map_or(c.gap, |x| c.gap.max(x.gap.ci_high)))
        .fold(0.0, f64::max);
    let panels = ANSWER_ORDER
        .iter()
        .map(|&d| {
            let mut p = Panel::new(
                design_short(d).to_string(),
                x_axis.label,
                format!("smallest gap with 80% power, points of {score}"),
            );
            x_axis.apply(&mut p);
            p.y_range = (0.0, pct(ymax) * 1.08);
            let cells = cells_of(d);
            let mut sim_labelled = false;
            for (i, &(big_n, n)) in series.iter().enumerate() {
                let mine: Vec<&PlanCell> = cells
                    .iter()
                    .copied()
                    .filter(|c| {
                        if by_samples {
                            c.problems == big_n
                        } else {
                            c.samples == n
                        }
                    })
                    .collect();
                let name = if by_samples {
                    format!("N = {big_n}")
                } else {
                    format!("{} = {n}", axis(r))
                };
                let exact: Vec<(f64, f64)> =
                    mine.iter().map(|&c| (x_axis.x(c), pct(c.gap))).collect();
                exact_points(&mut p, i, exact, name);
                let sims = x_axis.sim_dots(&mine, |x| x.gap);
                if !sims.is_empty() {
                    p.markers.push(Markers {
                        label: (!sim_labelled)
                            .then(|| "simulated mean of B - A (95% CI)".to_string()),
                        color: i,
                        points: sims,
                    });
                    sim_labelled = true;
                }
            }
            p
        })
        .collect::<Vec<_>>();
    plot::Figure {
        title: title(
            r,
            scenario,
            "Minimum detectable gap (two-sided 5% test, 80% power)",
        ),
        panels,
        columns: 3,
        size: (1800, 640),
    }
}

/// A series' exact values as hollow diamonds labelled "<name> (exact)": each N (or n) is a design
/// of its own, so nothing joins them.
fn exact_points(p: &mut Panel, color: usize, exact: Vec<(f64, f64)>, name: String) {
    if !exact.is_empty() {
        p.points.push(Points {
            label: Some(format!("{name} (exact)")),
            color,
            points: exact,
        });
    }
}

/// A figure's two files, `<name>.png` and `<name>.svg`.
fn png_and_svg(name: &str, png: Vec<u8>, svg: String) -> [Artifact; 2] {
    [
        Artifact {
            file: format!("{name}.png"),
            bytes: png,
        },
        Artifact {
            file: format!("{name}.svg"),
            bytes: svg.into_bytes(),
        },
    ]
}

/// The x axis of the loss and detectable figures: problems N on a log10 axis, or, with a single
/// N and several n (or k), the samples on a log2 axis.
struct PlanAxis {
    /// Samples (n or k) on the x axis rather than problems.
    by_samples: bool,
    /// The values on the axis, in the spec's order: its ticks.
    xs: Vec<f64>,
    label: &'static str,
}

impl PlanAxis {
    fn of(r: &PlanResult) -> Self {
        let s = &r.spec;
        let by_samples = s.problems.len() == 1 && s.samples.len() > 1;
        let xs = if by_samples {
            s.samples.iter().map(|&n| f64::from(n)).collect()
        } else {
            s.problems.iter().map(|&n| n as f64).collect()
        };
        let label = if !by_samples {
            "problems N"
        } else if axis(r) == "n" {
            "samples per problem n (log2 scale)"
        } else {
            "samples per vote k (log2 scale)"
        };
        PlanAxis {
            by_samples,
            xs,
            label,
        }
    }

    /// A cell's position on the axis.
    fn x(&self, c: &PlanCell) -> f64 {
        if self.by_samples {
            f64::from(c.samples)
        } else {
            c.problems as f64
        }
    }

    /// Sets the panel's scale, its range (the values with a margin) and its ticks (the values).
    fn apply(&self, p: &mut Panel) {
        let xmin = self
            .xs
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min)
            .max(1.0);
        let xmax = self.xs.iter().copied().fold(0.0, f64::max).max(xmin);
        if self.by_samples {
            p.x_scale = Scale::Log2;
            p.x_range = (xmin / 1.25, xmax * 1.25);
        } else {
            p.x_scale = Scale::Log10;
            p.x_range = (xmin / 1.3, xmax * 1.3);
        }
        p.x_ticks = Some(self.xs.clone());
    }

    /// The simulated dots (x, estimate, 95% CI) in percent of the cells that were simulated,
    /// `get` picking the estimate.
    fn sim_dots(
        &self,
        cells: &[&PlanCell],
        get: impl Fn(&SimCheck) -> Estimate,
    ) -> Vec<(f64, f64, f64, f64)> {
        cells
            .iter()
            .filter_map(|&c| {
                c.sim.as_ref().map(|x| {
                    let e = get(x);
                    (self.x(c), pct(e.sim), pct(e.ci_low), pct(e.ci_high))
                })
            })
            .collect()
    }
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
    figures: bool,
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
    if figures {
        for figure in ["loss", "detectable"] {
            let f = if figure == "loss" {
                loss_figure(r, scenario)
            } else {
                detectable_figure(r, scenario)
            };
            let name = format!("{stem}-{figure}");
            out.extend(png_and_svg(
                &name,
                plot::render_png(&f)?,
                plot::render_svg(&f)?,
            ));
        }
        let heat = heat_figure(r, scenario);
        let (png, svg) = (plot::render_heat_png(&heat)?, plot::render_heat_svg(&heat)?);
        out.extend(png_and_svg(&format!("{stem}-heatmap"), png, svg));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
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

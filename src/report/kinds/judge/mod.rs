//! The outputs of a `judge` experiment: its CSV table, its Markdown section, its headline rows
//! and its figure (reported win rate per protocol against the true one, and where the
//! fixed-order rate comes from). Formatting only: every number is in the result.
use crate::exact::judge::Protocol;
use crate::exact::sign_test::SampleSize;
use crate::experiments::judge::JudgeResult;
use crate::experiments::{num, RunOutput};
use crate::report::csv::{estimate_row, header, Csv};
use crate::report::format::Unit;
use crate::report::format::{pct, signed_pts};
use crate::report::kinds::KindReport;
use crate::report::plot::{Band, Bars, Figure, Line, Markers, Note, Panel};
use crate::report::summary::Rows;

/// The report of a `judge` result.
pub(super) struct Report<'a>(pub(super) &'a JudgeResult);

impl KindReport for Report<'_> {
    fn tables(&self, run: &RunOutput) -> Vec<(String, String)> {
        let r = self.0;
        vec![
            (format!("{}.csv", r.experiment), judge_csv(run, r)),
            (
                format!("{}-distribution.csv", r.experiment),
                distribution_csv(run, r),
            ),
        ]
    }

    fn figures(&self, run: &RunOutput) -> Vec<(String, Figure)> {
        vec![(self.0.experiment.clone(), judge_figure(run, self.0))]
    }

    fn caption(&self, _tail: &str) -> &'static str {
        CAPTION
    }

    fn markdown(&self) -> String {
        judge_md(self.0)
    }

    fn headline(&self, rows: &mut Rows) {
        judge_headline(self.0, rows);
    }
}

use crate::report::format::pct_cell as cell;

/// A protocol as a reader says it.
fn label(p: Protocol) -> &'static str {
    match p {
        Protocol::BFirst => "B always first",
        Protocol::AFirst => "A always first",
        Protocol::BothOrders => "both orders averaged",
        Protocol::Random => "random order",
        Protocol::LengthControlled => "length-controlled",
    }
}

/// Questions as a whole number, or "never" when no sample size detects a 50% rate.
fn count(x: &SampleSize) -> String {
    match x {
        SampleSize::Questions { questions, .. } => questions.to_string(),
        SampleSize::Beyond { limit } => format!("more than {limit}"),
        SampleSize::Never => "never (reports 50%)".into(),
    }
}

/// One row per (protocol or decomposition step, quantity), with the judge's parameters and
/// every exact summary of the row beside the estimate.
fn judge_csv(run: &RunOutput, r: &JudgeResult) -> String {
    let mut csv = header(
        &["a", "b", "section", "name", "quantity"],
        &[
            "comparisons",
            "reruns",
            "true_win",
            "bias",
            "null_rate",
            "range_low",
            "range_high",
            "range_below",
            "range_above",
            "rate_sd",
            "p_lose",
            "p_split",
            "p_win",
            "comparisons_80",
            "judge_calls_80",
            "increment",
            "gap",
            "spread",
            "position_bias",
            "verbosity",
            "self_preference",
            "judge_family",
            "length_mean",
            "length_sd",
        ],
    );
    let j = &r.judge;
    let params = || {
        vec![
            num(j.gap),
            num(j.spread),
            num(j.position_bias),
            num(j.verbosity),
            num(j.self_preference),
            r.judge_family.clone().unwrap_or_default(),
            num(j.length_mean()),
            num(j.length_sd()),
        ]
    };
    let lead = |section: &str, name: &str, q: &str| {
        [
            r.a.clone(),
            r.b.clone(),
            section.to_string(),
            name.to_string(),
            q.to_string(),
        ]
    };
    let opt = |x: Option<u64>| x.map_or(String::new(), |n| n.to_string());
    for p in &r.protocols {
        let mut tail = vec![
            r.comparisons.to_string(),
            r.reruns.to_string(),
            num(r.true_win.exact),
            num(p.bias),
            num(p.null_rate),
            num(p.range.low),
            num(p.range.high),
            num(p.range.below),
            num(p.range.above),
            num(p.range.sd),
            num(p.score.lose),
            num(p.score.split),
            num(p.score.win),
            opt(p.comparisons_80.questions()),
            opt(p.judge_calls_80),
            String::new(),
        ];
        tail.extend(params());
        let name = p.protocol.as_str();
        let mut rows = vec![
            ("win_rate", p.win_rate),
            ("p_below_range", p.below),
            ("p_above_range", p.above),
        ];
        rows.extend(p.wins_both.map(|e| ("p_wins_both", e)));
        rows.extend(p.loses_both.map(|e| ("p_loses_both", e)));
        rows.extend(p.power_80.map(|e| ("power_at_comparisons_80", e)));
        for (q, e) in rows {
            csv.row(estimate_row(
                run,
                &r.experiment,
                lead("protocol", name, q),
                &e,
                tail.clone(),
            ));
        }
    }
    for c in &r.components {
        let mut tail = vec![
            r.comparisons.to_string(),
            r.reruns.to_string(),
            num(r.true_win.exact),
        ];
        tail.extend(std::iter::repeat_n(String::new(), 10));
        tail.extend([
            opt(c.comparisons_80.questions()),
            opt(c.comparisons_80.questions()),
            num(c.increment),
        ]);
        tail.extend(params());
        let mut rows = vec![("win_rate", c.rate)];
        rows.extend(c.power_80.map(|e| ("power_at_comparisons_80", e)));
        for (q, e) in rows {
            csv.row(estimate_row(
                run,
                &r.experiment,
                lead("decomposition", c.step.as_str(), q),
                &e,
                tail.clone(),
            ));
        }
    }
    csv.finish()
}

/// One row per (protocol, attainable total): the exact probability of the reported rate and
/// the share of simulated reruns that reported it.
fn distribution_csv(run: &RunOutput, r: &JudgeResult) -> String {
    let mut csv = Csv::new(&[
        "scenario",
        "seed",
        "experiment",
        "protocol",
        "total_half_points",
        "rate",
        "exact",
        "sim",
        "reruns",
    ]);
    let top = 2 * r.comparisons as usize;
    for p in &r.protocols {
        let step = if p.protocol == Protocol::BothOrders {
            1
        } else {
            2
        };
        for t in (0..=top).step_by(step) {
            csv.row([
                run.scenario.clone(),
                run.seed.to_string(),
                r.experiment.clone(),
                p.protocol.as_str().to_string(),
                t.to_string(),
                num(t as f64 / top as f64),
                num(p.distribution[t]),
                num(p.histogram[t] as f64 / r.reruns as f64),
                r.reruns.to_string(),
            ]);
        }
    }
    csv.finish()
}

/// The Markdown section: the setting, one row per protocol, the decomposition.
fn judge_md(r: &JudgeResult) -> String {
    let j = &r.judge;
    let family = r
        .judge_family
        .as_ref()
        .map_or("neither model's family".to_string(), |f| {
            format!("`{f}`'s family")
        });
    let mut md = format!(
        "B = `{}` against A = `{}` on {} questions per rerun ({} simulated reruns). Quality difference d = q_B - q_A ~ N({}, {}^2) logits; the judge (of {family}) adds {} logits for the answer shown first, {} per unit of log-length difference (B's answers are {:.2} times as long at the median: ln ratio {:.3}, log-SD of the difference {:.3}), and {} for its own family. The true win probability of B (quality only) is {}: a judge without bias would need {} questions to detect it at 80% power.\n\n",
        r.b,
        r.a,
        r.comparisons,
        r.reruns,
        num(j.gap),
        num(j.spread),
        num(j.position_bias),
        num(j.verbosity),
        j.length_mean().exp(),
        j.length_mean(),
        j.length_sd(),
        num(j.self_preference),
        cell(&r.true_win),
        r.components.first().map_or(String::new(), |c| count(&c.comparisons_80)),
    );
    md += "| protocol | reported win rate of B | minus true | at gap 0 | 95% range over N | questions for 80% power | judge calls |\n|---|---:|---:|---:|---:|---:|---:|\n";
    for p in &r.protocols {
        md += &format!(
            "| {} | {} | {} pts | {} | {} to {} | {} | {} |\n",
            label(p.protocol),
            cell(&p.win_rate),
            signed_pts(p.bias, 1),
            pct(p.null_rate, 1),
            pct(p.range.low, 1),
            pct(p.range.high, 1),
            count(&p.comparisons_80),
            p.judge_calls_80.map_or(String::new(), |c| c.to_string()),
        );
    }
    md += "\n\"at gap 0\" is what the protocol reports when B is no better than A on average (same judge, same lengths): a protocol whose value there is not 50% detects its bias, not quality. Power is that of the exact two-sided 5% sign test of a 50% win rate (split questions dropped), the smallest number of questions at which it reaches 80%.\n\n";
    md += "Where the rate of B shown first comes from (each step adds one term to the judge, B first):\n\n| step | win rate of B | change |\n|---|---:|---:|\n";
    for c in &r.components {
        md += &format!(
            "| {} | {} | {} pts |\n",
            c.step.as_str(),
            cell(&c.rate),
            signed_pts(c.increment, 1)
        );
    }
    md + "\n"
}

/// The headline rows: the fixed-order rate, the true rate, and the unbiased protocols.
fn judge_headline(r: &JudgeResult, rows: &mut Rows) {
    rows.push(
        format!("true win rate of {} over {}", r.b, r.a),
        Unit::Percent,
        r.true_win.exact,
        Some(r.true_win.sim),
    );
    for p in &r.protocols {
        rows.push(
            format!("{} win rate, {}", r.b, label(p.protocol)),
            Unit::Percent,
            p.win_rate.exact,
            Some(p.win_rate.sim),
        );
    }
}

/// The caption under the figure.
const CAPTION: &str = "Left: B's win rate as each protocol reports it (bars exact, whiskers the central 95% range of the rate over N comparisons, dots simulated with 95% CIs) against the true win probability (dashed). Middle: the rate with B always shown first built up term by term: quality, then verbosity, self-preference and position. Right: the exact distribution of each protocol's reported rate over N comparisons, against the true win probability.";

/// Two panels: the reported rate per protocol against the true one, and the decomposition of
/// the fixed-order rate.
fn judge_figure(run: &RunOutput, r: &JudgeResult) -> Figure {
    let pc = |x: f64| 100.0 * x;
    let mut left = Panel::new(
        format!(
            "B = {} against A = {}: reported win rate of B over N = {} comparisons",
            r.b, r.a, r.comparisons
        ),
        "protocol",
        "win rate of B (%)",
    );
    let n = r.protocols.len();
    left.x_range = (-0.6, n as f64 - 0.4);
    left.x_ticks = Some((0..n).map(|i| i as f64).collect());
    left.x_tick_labels = Some(
        r.protocols
            .iter()
            .map(|p| label(p.protocol).to_string())
            .collect(),
    );
    left.y_range = (0.0, 100.0);
    for (i, p) in r.protocols.iter().enumerate() {
        let x = i as f64;
        left.bars.push(Bars {
            label: (i == 0).then(|| "reported win rate (exact)".to_string()),
            color: 0,
            bars: vec![(x - 0.3, x + 0.3, pc(p.win_rate.exact))],
        });
        left.notes.push(Note {
            at: (x - 0.12, pc(p.range.high)),
            text: pct(p.win_rate.exact, 1),
        });
    }
    left.markers.push(Markers {
        label: Some(format!("95% range over N = {} comparisons", r.comparisons)),
        color: 6,
        points: r
            .protocols
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let y = pc(p.win_rate.exact);
                (i as f64 - 0.12, y, pc(p.range.low), pc(p.range.high))
            })
            .collect(),
    });
    left.markers.push(Markers {
        label: Some(format!("simulated mean, {} reruns (95% CI)", r.reruns)),
        color: 1,
        points: r
            .protocols
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let e = p.win_rate;
                (i as f64 + 0.12, pc(e.sim), pc(e.ci_low), pc(e.ci_high))
            })
            .collect(),
    });
    left.lines.push(Line {
        label: Some(format!(
            "true win probability {} (quality only)",
            pct(r.true_win.exact, 1)
        )),
        color: 2,
        dashed: true,
        points: vec![
            (left.x_range.0, pc(r.true_win.exact)),
            (left.x_range.1, pc(r.true_win.exact)),
        ],
    });
    let last = r.components.last().map_or(0.5, |c| c.rate.exact);
    let mut right = Panel::new(
        format!(
            "B always first: from 50% to {}, one term of the judge at a time (bars exact, dots simulated)",
            pct(last, 1)
        ),
        "term added to the judge (B shown first)",
        "win rate of B (%)",
    );
    let m = r.components.len();
    right.x_range = (-0.6, m as f64 - 0.4);
    right.x_ticks = Some((0..m).map(|i| i as f64).collect());
    right.x_tick_labels = Some(
        r.components
            .iter()
            .map(|c| c.step.as_str().trim_start_matches("+ ").to_string())
            .collect(),
    );
    let mut previous = 0.5;
    let (mut lo, mut hi) = (50.0f64, 50.0f64);
    for (i, c) in r.components.iter().enumerate() {
        let x = i as f64;
        let (a, b) = (pc(previous), pc(c.rate.exact));
        right.bands.push(Band {
            label: None,
            color: i + 1,
            points: vec![(x - 0.3, a.min(b), a.max(b)), (x + 0.3, a.min(b), a.max(b))],
        });
        // The new level as a solid edge, so each step reads as a bar.
        right.lines.push(Line {
            label: None,
            color: i + 1,
            dashed: false,
            points: vec![(x - 0.3, b), (x + 0.3, b)],
        });
        right.notes.push(Note {
            at: (x, b),
            text: format!("{} pts", signed_pts(c.increment, 1)),
        });
        lo = lo.min(a.min(b)).min(pc(c.rate.ci_low));
        hi = hi.max(a.max(b)).max(pc(c.rate.ci_high));
        previous = c.rate.exact;
    }
    right.markers.push(Markers {
        label: Some("simulated (95% CI)".into()),
        color: 6,
        points: r
            .components
            .iter()
            .enumerate()
            .map(|(i, c)| {
                (
                    i as f64,
                    pc(c.rate.sim),
                    pc(c.rate.ci_low),
                    pc(c.rate.ci_high),
                )
            })
            .collect(),
    });
    right.lines.push(Line {
        label: Some("50%: no preference".into()),
        color: 7,
        dashed: true,
        points: vec![(right.x_range.0, 50.0), (right.x_range.1, 50.0)],
    });
    let pad = 0.15 * (hi - lo).max(4.0);
    right.y_range = ((lo - pad).max(0.0), (hi + pad).min(100.0));
    Figure {
        title: format!(
            "{}: what a pairwise judge reports · scenario {} · seed {}",
            r.experiment, run.scenario, run.seed
        ),
        panels: vec![left, right, distribution_panel(r)],
        columns: 3,
        size: (2400, 720),
    }
}

/// Line colours of the protocols in the distribution panel: blue, vermillion, green, pink and
/// black, none two alike (the palette's orange is too near its vermillion).
const DISTRIBUTION_COLORS: [usize; 5] = [0, 1, 2, 3, 6];

/// The exact distribution of each protocol's reported rate over N comparisons, as probability
/// per percentage point (a single judgment's rate moves in steps of 1/N, both orders' in steps
/// of 1/2N), with the true win probability as a vertical line.
fn distribution_panel(r: &JudgeResult) -> Panel {
    let mut p = Panel::new(
        format!(
            "the reported rate over N = {} comparisons: its exact distribution per protocol",
            r.comparisons
        ),
        "reported win rate of B (%)",
        "probability per percentage point (%)",
    );
    let top = 2 * r.comparisons as usize;
    let (mut lo, mut hi, mut peak) = (100.0f64, 0.0f64, 0.0f64);
    for (i, row) in r.protocols.iter().enumerate() {
        let step = if row.protocol == Protocol::BothOrders {
            1
        } else {
            2
        };
        // Mass per point of rate: P(t) over the step in percent, (100 step / 2N).
        let per_point = top as f64 / (100.0 * step as f64);
        let points: Vec<(f64, f64)> = (0..=top)
            .step_by(step)
            .map(|t| {
                (
                    100.0 * t as f64 / top as f64,
                    100.0 * row.distribution[t] * per_point,
                )
            })
            .collect();
        // The axis spans where any protocol has mass above 0.1% of its peak.
        let mode = points.iter().map(|q| q.1).fold(0.0, f64::max);
        for &(x, y) in &points {
            if y > 1e-3 * mode {
                lo = lo.min(x);
                hi = hi.max(x);
            }
        }
        peak = peak.max(mode);
        p.lines.push(Line {
            label: Some(label(row.protocol).to_string()),
            color: DISTRIBUTION_COLORS[i % DISTRIBUTION_COLORS.len()],
            dashed: false,
            points,
        });
    }
    p.x_range = (lo, hi);
    p.y_range = (0.0, peak * 1.3);
    p.vlines.push((
        100.0 * r.true_win.exact,
        7,
        Some(format!("true win probability {}", pct(r.true_win.exact, 1))),
    ));
    p
}

//! The contamination experiment's figure: power of the public-minus-fresh test.

use crate::experiments::contamination::ContaminationResult;
use crate::experiments::{Estimate, RunOutput};
use crate::report::figures::{exact_and_simulated, k_axis, level, one_panel, percent};
use crate::report::plot::{Figure, Panel};

/// Power of the public-minus-fresh test against the fresh set size, one line per share (the
/// null's false-alarm rate too), dots simulated; the target power dashed, each share's
/// smallest fresh set as a vertical line.
pub(super) fn contamination_figure(run: &RunOutput, r: &ContaminationResult) -> Figure {
    let mut p = Panel::new(
        format!(
            "model {}: {} public problems, n = {}, memorised problems solved at {:.0}%, fresh pass@1 {:.1}%; test at {:.0}% false alarm",
            r.model,
            r.public_problems,
            r.n,
            percent(r.memorized_rate),
            percent(r.fresh_pass_at_1),
            percent(r.alpha)
        ),
        "fresh problems M (log2 scale)",
        "P(flag contamination) (%)",
    );
    let fresh: Vec<u32> = {
        let mut v: Vec<u32> = r.rows.iter().map(|x| x.fresh as u32).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    k_axis(&mut p, &fresh);
    let target = format!("target power {:.0}%", percent(r.target_power));
    level(&mut p, Some(target), 7, percent(r.target_power));
    let shares: Vec<f64> = std::iter::once(0.0)
        .chain(r.shares.iter().copied())
        .collect();
    for (i, &c) in shares.iter().enumerate() {
        let points: Vec<(f64, Estimate)> = r
            .rows
            .iter()
            .filter(|x| x.share == c)
            .map(|x| (x.fresh as f64, x.power))
            .collect();
        let label = if c == 0.0 {
            "no contamination (false alarm)".to_string()
        } else {
            format!("{:.0}% contaminated", percent(c))
        };
        exact_and_simulated(&mut p, Some(label), None, i, &points);
    }
    let missing: Vec<String> = r
        .plan
        .iter()
        .filter(|plan| plan.fresh.is_none())
        .map(|plan| format!("{:.0}%", percent(plan.share)))
        .collect();
    let beyond: Vec<String> = r
        .plan
        .iter()
        .filter_map(|plan| {
            let m = plan.fresh?;
            let (lo, hi) = p.x_range;
            ((m as f64) <= lo || (m as f64) >= hi)
                .then(|| format!("{:.0}%: {m}", percent(plan.share)))
        })
        .collect();
    if !beyond.is_empty() {
        p.title += &format!("; smallest fresh sets off the axis: {}", beyond.join(", "));
    }
    if !missing.is_empty() {
        p.title += &format!(
            "; {} contaminated: no fresh set up to {} reaches {:.0}% power",
            missing.join(", "),
            r.max_fresh,
            percent(r.target_power)
        );
    }
    for (i, plan) in r.plan.iter().enumerate() {
        if let Some(m) = plan.fresh {
            let (lo, hi) = p.x_range;
            if (m as f64) > lo && (m as f64) < hi {
                p.vlines.push((
                    m as f64,
                    i + 1,
                    Some(format!(
                        "{:.0}%: smallest fresh set {m}",
                        percent(plan.share)
                    )),
                ));
            }
        }
    }
    let what = format!(
        "{}: power to detect contamination against fresh set size ({} reruns; lines exact, dots simulated)",
        r.experiment, r.reruns
    );
    one_panel(run, &what, p, (1400, 640))
}

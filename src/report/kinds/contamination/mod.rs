//! The outputs of a `contamination` experiment: the public-minus-fresh gap of a contaminated
//! model and the fresh set that detects it.
mod figures;

use super::KindReport;
use crate::experiments::contamination::ContaminationResult;
use crate::experiments::{num, Estimate, RunOutput};
use crate::report::csv::{estimate_row, header, opt, Csv};
use crate::report::format::{pct, pts, Unit};
use crate::report::plot::Figure;
use crate::report::summary::{percent, Rows};

/// The report of a `contamination` result.
pub(super) struct Report<'a>(pub(super) &'a ContaminationResult);

impl KindReport for Report<'_> {
    fn tables(&self, run: &RunOutput) -> Vec<(String, String)> {
        let r = self.0;
        vec![
            (format!("{}.csv", r.experiment), contamination_csv(run, r)),
            (
                format!("{}-plan.csv", r.experiment),
                contamination_plan_csv(run, r),
            ),
        ]
    }

    fn figures(&self, run: &RunOutput) -> Vec<(String, Figure)> {
        vec![(
            self.0.experiment.clone(),
            figures::contamination_figure(run, self.0),
        )]
    }

    fn caption(&self, _tail: &str) -> &'static str {
        "Power of the public-minus-fresh test (flag when the public score exceeds the fresh one by more than the threshold that keeps false alarms at alpha) against the fresh set size, for each contaminated share; vertical lines mark each share's smallest fresh set reaching the target power."
    }

    fn markdown(&self) -> String {
        contamination_md(self.0)
    }

    fn headline(&self, rows: &mut Rows) {
        contamination(self.0, rows);
    }
}

fn contamination_md(c: &ContaminationResult) -> String {
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

/// The smallest fresh set per share and its power.
fn contamination(c: &ContaminationResult, rows: &mut Rows) {
    for p in &c.plan {
        match (p.fresh, p.power) {
            (Some(m), Some(power)) => {
                rows.push(
                    format!(
                        "{} c={}: smallest fresh set reaching {} power",
                        c.model,
                        p.share,
                        percent(c.target_power)
                    ),
                    Unit::Count,
                    m as f64,
                    None,
                );
                rows.push(
                    format!("{} c={}: power with {m} fresh problems", c.model, p.share),
                    Unit::Percent,
                    power.exact,
                    Some(power.sim),
                );
            }
            _ => rows.push(
                format!(
                    "{} c={}: fresh problems needed (none up to {} reaches {} power)",
                    c.model,
                    p.share,
                    c.max_fresh,
                    percent(c.target_power)
                ),
                Unit::Count,
                f64::INFINITY,
                None,
            ),
        }
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

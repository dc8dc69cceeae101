//! The outputs of a `vote-spread` experiment: the seed SD of maj@k against pass@1 averaged over
//! the same k samples.

use super::KindReport;
use crate::experiments::noise::VoteSpread;
use crate::experiments::{num, RunOutput};
use crate::report::csv::{estimate_row, header};
use crate::report::figures::{k_axis, one_panel, percent, row_series};
use crate::report::format::{pts, Unit};
use crate::report::plot::{Figure, Panel};
use crate::report::summary::Rows;

/// The report of a `vote-spread` result.
pub(super) struct Report<'a>(pub(super) &'a VoteSpread);

impl KindReport for Report<'_> {
    fn tables(&self, run: &RunOutput) -> Vec<(String, String)> {
        vec![(
            format!("{}.csv", self.0.experiment),
            spread_csv(run, self.0),
        )]
    }

    fn figures(&self, run: &RunOutput) -> Vec<(String, Figure)> {
        vec![(self.0.experiment.clone(), spread_figure(run, self.0))]
    }

    fn caption(&self, _tail: &str) -> &'static str {
        "The seed SD of maj@k (one vote per problem) against pass@1 averaged over the same k samples."
    }

    fn markdown(&self) -> String {
        spread_md(self.0)
    }

    fn headline(&self, rows: &mut Rows) {
        vote_spread(self.0, rows);
    }
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

fn vote_spread(v: &VoteSpread, rows: &mut Rows) {
    let Some(last) = v.rows.last() else { return };
    rows.push(
        format!("{} maj@{} seed SD", v.model, last.k),
        Unit::Points,
        last.maj_sd.exact,
        Some(last.maj_sd.sim),
    );
    rows.push(
        format!(
            "{} seed SD of pass@1 averaged over {} samples",
            v.model, last.k
        ),
        Unit::Points,
        last.avg_sd.exact,
        Some(last.avg_sd.sim),
    );
    let ratio = |maj: f64, avg: f64| if avg > 0.0 { maj / avg } else { f64::NAN };
    rows.push(
        format!("{} maj@{} SD / averaged SD", v.model, last.k),
        Unit::Ratio,
        ratio(last.maj_sd.exact, last.avg_sd.exact),
        Some(ratio(last.maj_sd.sim, last.avg_sd.sim)),
    );
    // The smallest k from which maj@k is noisier than the average of its samples at every k.
    let noisier_from = v
        .rows
        .iter()
        .rposition(|r| r.maj_sd.exact <= r.avg_sd.exact)
        .map_or(Some(0), |i| (i + 1 < v.rows.len()).then_some(i + 1))
        .map(|i| v.rows[i].k);
    match noisier_from {
        Some(k) => rows.push(
            format!(
                "{} maj@k noisier than the average of its k samples from k",
                v.model
            ),
            Unit::Count,
            k as f64,
            None,
        ),
        None => rows.push(
            format!(
                "{} maj@k is not noisier than the average of its k samples at k={}",
                v.model, last.k
            ),
            Unit::Count,
            last.k as f64,
            None,
        ),
    }
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

fn spread_figure(run: &RunOutput, r: &VoteSpread) -> Figure {
    let mut p = Panel::new(
        format!(
            "model {} (a = {}, {} ties): one vote per problem vs the mean of the same k samples",
            r.model,
            r.attractor,
            r.vote_rule.as_str()
        ),
        "k (samples per problem, log2 scale)",
        "seed SD of the score (points)",
    );
    let ks: Vec<u32> = r.rows.iter().map(|x| x.k).collect();
    k_axis(&mut p, &ks);
    let hi = r
        .rows
        .iter()
        .flat_map(|x| [x.maj_sd.ci_high, x.avg_sd.ci_high, x.maj_sd.exact])
        .fold(0.0, f64::max);
    p.y_range = (0.0, percent(hi) * 1.08);
    row_series(
        &mut p,
        &r.rows,
        |x| f64::from(x.k),
        [
            ("maj@k exact", 2, |x| x.maj_sd),
            ("pass@1 averaged over k exact", 0, |x| x.avg_sd),
        ],
    );
    if r.rows.len() == 1 {
        // A single k: draw each exact value as a short level so it stays visible.
        p.x_range = (p.x_range.0 / 2.0, p.x_range.1 * 2.0);
        for l in &mut p.lines {
            if let Some(&(x, y)) = l.points.first() {
                l.points = vec![(x / 1.3, y), (x * 1.3, y)];
            }
        }
    }
    let what = format!(
        "{}: seed SD of maj@k ({} reruns; dots simulated, 95% CI)",
        r.experiment, r.reruns
    );
    one_panel(run, &what, p, (900, 560))
}

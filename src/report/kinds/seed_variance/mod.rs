//! The outputs of a `seed-variance` experiment: the benchmark score across reruns for each n.
mod figures;

use super::KindReport;
use crate::experiments::noise::SeedVariance;
use crate::experiments::{num, RunOutput};
use crate::report::csv::{estimate_fields, header};
use crate::report::format::{pts, Unit};
use crate::report::plot::Figure;
use crate::report::summary::Rows;

/// The report of a `seed-variance` result.
pub(super) struct Report<'a>(pub(super) &'a SeedVariance);

impl KindReport for Report<'_> {
    fn tables(&self, run: &RunOutput) -> Vec<(String, String)> {
        vec![(format!("{}.csv", self.0.experiment), seed_csv(run, self.0))]
    }

    fn figures(&self, run: &RunOutput) -> Vec<(String, Figure)> {
        let r = self.0;
        vec![
            (
                format!("{}-histograms", r.experiment),
                figures::seed_histograms(run, r),
            ),
            (
                format!("{}-sd", r.experiment),
                figures::seed_sd_figure(run, r),
            ),
        ]
    }

    fn caption(&self, tail: &str) -> &'static str {
        match tail {
            "-histograms" => "The benchmark score across simulated reruns for each n, with the normal curve of the exact mean and SD and the central 95% interval.",
            _ => "The seed SD of the score falls as 1/sqrt(n), while the question-sampling SE does not: the total SE (seed and question sampling) levels off at it, however many samples per problem.",
        }
    }

    fn markdown(&self) -> String {
        seed_md(self.0)
    }

    fn headline(&self, rows: &mut Rows) {
        seed_variance(self.0, rows);
    }
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

fn seed_variance(v: &SeedVariance, rows: &mut Rows) {
    for row in &v.rows {
        rows.push(
            format!("{} seed SD of pass@1, n={}", v.model, row.n),
            Unit::Points,
            row.sd.exact,
            Some(row.sd.sim),
        );
    }
    rows.push(
        format!("{} question-sampling SE (any n)", v.model),
        Unit::Points,
        v.question_se,
        None,
    );
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

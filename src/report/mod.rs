//! Outputs: CSV, JSON, Markdown, PNG and SVG from finished results. Exporters return bytes;
//! [`write_artifacts`] is the one place that writes files, each atomically (temp file + rename).
//! Nothing here computes a statistic.
pub mod analyze;
pub mod figures;
pub mod markdown;
pub mod planning;
pub mod plot;
pub mod sweep;
pub mod tables;

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::experiments::RunOutput;

/// One output file, in memory.
#[derive(Debug, Clone)]
pub struct Artifact {
    /// File name inside the output folder.
    pub file: String,
    /// Contents.
    pub bytes: Vec<u8>,
}

/// A report that could not be produced or written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A figure failed to render.
    #[error(transparent)]
    Plot(#[from] plot::PlotError),
    /// JSON serialisation failed.
    #[error("cannot serialise {file}: {reason}")]
    Json {
        /// The file.
        file: String,
        /// Why.
        reason: String,
    },
    /// The output folder or a file in it could not be written.
    #[error("cannot write {path}: {reason} (choose another folder with --out)")]
    Write {
        /// The path.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
    /// SIGINT or SIGTERM arrived while writing: the files before this one are complete, this
    /// one and the rest were not written.
    #[error("interrupted before writing {path}: the files written before it are complete, it and the rest were not written")]
    Interrupted {
        /// The first file not written.
        path: String,
    },
}

/// What to render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Render PNG and SVG figures (and embed them in report.md).
    pub figures: bool,
}

/// Every output file of a run: per experiment a tidy CSV (and PNG + SVG figures), then
/// `checks.csv`, `results.json`, `summary.json` and `report.md`.
///
/// # Errors
/// [`ReportError`] when a figure or JSON document cannot be produced.
pub fn render(run: &RunOutput, opts: Options) -> Result<Vec<Artifact>, ReportError> {
    let mut out = Vec::new();
    let mut figure_files = Vec::new();
    // Every figure is drawn once as SVG and rasterised to PNG, in parallel across figures.
    let mut drawn = if opts.figures {
        use rayon::prelude::*;
        let figs: Vec<(String, plot::Figure)> = run
            .results
            .iter()
            .flat_map(|r| figures::experiment_figures(run, r))
            .collect();
        figs.par_iter()
            .map(|(stem, fig)| plot::render_both(fig).map(|(png, svg)| (stem.clone(), png, svg)))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
    } else {
        Vec::new().into_iter()
    };
    for result in &run.results {
        if let crate::experiments::ExperimentResult::Plan(p) = result {
            // The same files `evalsim plan` writes, named after the experiment.
            for a in planning::render_plan(p, opts.figures)? {
                if a.file.ends_with(".png") {
                    figure_files.push((p.experiment.clone(), a.file.clone()));
                }
                out.push(a);
            }
            continue;
        }
        for (file, text) in tables::experiment_tables(run, result) {
            out.push(Artifact {
                file,
                bytes: text.into_bytes(),
            });
        }
        if opts.figures {
            let count = figures::experiment_figures(run, result).len();
            for (stem, png, svg) in drawn.by_ref().take(count) {
                out.push(Artifact {
                    file: format!("{stem}.png"),
                    bytes: png,
                });
                out.push(Artifact {
                    file: format!("{stem}.svg"),
                    bytes: svg.into_bytes(),
                });
                figure_files.push((result.name().to_string(), format!("{stem}.png")));
            }
        }
    }
    out.push(Artifact {
        file: "checks.csv".into(),
        bytes: tables::checks_csv(run).into_bytes(),
    });
    out.push(Artifact {
        file: "results.json".into(),
        bytes: json("results.json", run)?,
    });
    out.push(Artifact {
        file: "summary.json".into(),
        bytes: json("summary.json", &markdown::summary(run))?,
    });
    out.push(Artifact {
        file: "report.md".into(),
        bytes: markdown::report(run, &figure_files).into_bytes(),
    });
    Ok(out)
}

fn json<T: serde::Serialize>(file: &str, value: &T) -> Result<Vec<u8>, ReportError> {
    let mut v = serde_json::to_vec_pretty(value).map_err(|e| ReportError::Json {
        file: file.into(),
        reason: e.to_string(),
    })?;
    v.push(b'\n');
    Ok(v)
}

/// Writes the artifacts into `dir` (created if missing). Each file is written to a temporary
/// name in the same folder and renamed into place, so a reader never sees a partial file.
/// Files in `dir` that evalsim did not name are left alone. Between files it checks for an
/// interruption ([`crate::interrupt::requested`]) and stops, so every file is complete or absent.
///
/// # Errors
/// [`ReportError::Write`] naming the path that failed; [`ReportError::Interrupted`] when a
/// signal arrived.
pub fn write_artifacts(dir: &Path, artifacts: &[Artifact]) -> Result<Vec<PathBuf>, ReportError> {
    let werr = |p: &Path, e: std::io::Error| ReportError::Write {
        path: p.display().to_string(),
        reason: e.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(|e| werr(dir, e))?;
    let mut written = Vec::new();
    for a in artifacts {
        let path = dir.join(&a.file);
        if crate::interrupt::requested() {
            return Err(ReportError::Interrupted {
                path: path.display().to_string(),
            });
        }
        let tmp = dir.join(format!(".{}.tmp-{}", a.file, std::process::id()));
        let result = std::fs::File::create(&tmp)
            .and_then(|mut f| {
                f.write_all(&a.bytes)?;
                f.sync_all()
            })
            .and_then(|()| std::fs::rename(&tmp, &path));
        if let Err(e) = result {
            let _ = std::fs::remove_file(&tmp);
            return Err(werr(&path, e));
        }
        written.push(path);
    }
    Ok(written)
}

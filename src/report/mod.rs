//! Outputs: CSV, JSON, Markdown, PNG and SVG from finished results. Exporters return bytes;
//! [`write_artifacts`] is the one place that writes files, each atomically (temp file + rename).
//! Nothing here computes a statistic.
pub mod analyze;
mod csv;
pub mod figures;
mod format;
pub mod kinds;
pub mod leaderboard_plot;
pub mod markdown;
pub mod planning;
pub mod plot;
mod raster;
mod raster_text;
pub mod summary;
pub mod sweep;
pub mod tables;

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::experiments::RunOutput;

/// A percentage (or percentage points) `x` to `decimals` places, keeping the digits that rounding
/// would hide, so that no printed value reads as a bound it does not reach: a nonzero value that
/// would read 0 keeps two significant digits ("0.0015", not "0.00"), a value below 100 that would
/// read 100 keeps two significant digits of its distance to 100 ("99.9962", not "100.00"). Past 8
/// decimal places the first is written in scientific notation ("3.2e-30") and the second as
/// ">99.99999999" (the sign says the value was not rounded up to 100). Formatting only.
pub fn keep_digits(x: f64, decimals: usize) -> String {
    const MAX_DECIMALS: i32 = 8;
    let t = format!("{x:.decimals$}");
    if !x.is_finite() || x == 0.0 {
        return t;
    }
    let shown: f64 = t.parse().unwrap_or(x);
    if shown == 0.0 {
        let d = 1 - x.abs().log10().floor() as i32;
        if d <= MAX_DECIMALS {
            let d = d.max(decimals as i32) as usize;
            format!("{x:.d$}")
        } else {
            format!("{x:.1e}")
        }
    } else if x < 100.0 && shown >= 100.0 {
        let d = 1 - (100.0 - x).log10().floor() as i32;
        if d <= MAX_DECIMALS {
            let d = d.max(decimals as i32) as usize;
            format!("{x:.d$}")
        } else {
            ">99.99999999".to_string()
        }
    } else {
        t
    }
}

/// One output file, in memory.
#[derive(Debug, Clone)]
pub struct Artifact {
    /// File name inside the output folder.
    pub file: String,
    /// Contents.
    pub bytes: Vec<u8>,
}

impl Artifact {
    /// A figure's two files, `STEM.png` and `STEM.svg`.
    pub fn figure(stem: &str, png: Vec<u8>, svg: String) -> [Artifact; 2] {
        [
            Artifact {
                file: format!("{stem}.png"),
                bytes: png,
            },
            Artifact {
                file: format!("{stem}.svg"),
                bytes: svg.into_bytes(),
            },
        ]
    }
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
    /// SIGINT or SIGTERM arrived while writing, before any file was replaced.
    #[error("interrupted before writing {path}: no output file was replaced (the folder holds the previous run's files, if any)")]
    Interrupted {
        /// The file that was about to be written.
        path: String,
    },
    /// Another process holds the output folder's lock.
    #[error("{path} is in use by another evalsim run (it holds the folder's lock): wait for it to finish, or choose another folder with --out")]
    Busy {
        /// The folder.
        path: String,
    },
}

/// What to render.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Render PNG and SVG figures (and embed them in report.md), PNGs at this raster; none
    /// without.
    pub figures: Option<plot::Raster>,
}

/// Every output file of a run: per experiment a tidy CSV (and PNG + SVG figures), then
/// `checks.csv`, `results.json`, `summary.json` and `report.md`.
///
/// # Errors
/// [`ReportError`] when a figure or JSON document cannot be produced.
pub fn render(run: &RunOutput, opts: Options) -> Result<Vec<Artifact>, ReportError> {
    let mut out = Vec::new();
    let mut figure_files = Vec::new();
    // Every figure is drawn once as SVG and rasterised to PNG, in parallel across figures;
    // `drawn[i]` holds the figures of `run.results[i]`.
    let mut drawn: Vec<Vec<(String, Vec<u8>, String)>> = vec![Vec::new(); run.results.len()];
    if let Some(raster) = opts.figures {
        use rayon::prelude::*;
        let figs: Vec<(usize, String, plot::Figure)> = run
            .results
            .iter()
            .enumerate()
            .flat_map(|(i, r)| {
                kinds::of(r)
                    .figures(run)
                    .into_iter()
                    .map(move |(stem, fig)| (i, stem, fig))
            })
            .collect();
        let rendered = figs
            .par_iter()
            .map(|(i, stem, fig)| {
                plot::render_both(fig, raster).map(|(png, svg)| (*i, stem.clone(), png, svg))
            })
            .collect::<Result<Vec<_>, _>>()?;
        for (i, stem, png, svg) in rendered {
            drawn[i].push((stem, png, svg));
        }
    }
    for (i, result) in run.results.iter().enumerate() {
        let kind = kinds::of(result);
        if let Some(files) = kind.own_files(run, opts.figures) {
            for a in files? {
                if a.file.ends_with(".png") {
                    figure_files.push((result.name().to_string(), a.file.clone()));
                }
                out.push(a);
            }
            continue;
        }
        for (file, text) in kind.tables(run) {
            out.push(Artifact {
                file,
                bytes: text.into_bytes(),
            });
        }
        for (stem, png, svg) in std::mem::take(&mut drawn[i]) {
            out.extend(Artifact::figure(&stem, png, svg));
            figure_files.push((result.name().to_string(), format!("{stem}.png")));
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

/// Marks evalsim's temporary files: `.<file>.tmp-evalsim-<pid>-<sequence>-<nanoseconds>`.
const TMP_MARK: &str = ".tmp-evalsim-";

/// A unique temporary name for `file`: the process id, a per-process sequence number and the
/// clock's nanoseconds, so that no other process (and no earlier run) can predict it. It is only
/// ever created with `create_new`, which never follows a link.
fn temp_name(file: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        ".{file}{TMP_MARK}{}-{}-{nanos:x}",
        std::process::id(),
        SEQUENCE.fetch_add(1, Ordering::Relaxed)
    )
}

/// Creates a new file at `path`, failing if anything (a file, or a link, even a dangling one) is
/// already there: `O_CREAT | O_EXCL` never follows a link.
fn create_exclusive(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}

/// True for a name [`temp_name`] makes (and nothing else: a user's `.x.tmp-1` is not ours).
fn is_temp_name(name: &str) -> bool {
    let Some((file, tail)) = name.strip_prefix('.').and_then(|n| n.rsplit_once(TMP_MARK)) else {
        return false;
    };
    let parts: Vec<&str> = tail.split('-').collect();
    !file.is_empty()
        && parts.len() == 3
        && parts[0].bytes().all(|b| b.is_ascii_digit())
        && parts[1].bytes().all(|b| b.is_ascii_digit())
        && parts[2].bytes().all(|b| b.is_ascii_hexdigit())
        && parts.iter().all(|p| !p.is_empty())
}

/// The operating system's reason, with what to do for the limits a user can change.
fn reason(e: &std::io::Error, bytes: usize) -> String {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::FileTooLarge => format!(
            "{e}: the file size limit (`ulimit -f`) is below its {bytes} bytes; raise the limit"
        ),
        ErrorKind::StorageFull => format!("{e}: the disk is full ({bytes} bytes to write)"),
        ErrorKind::QuotaExceeded => format!("{e}: the disk quota is exhausted"),
        _ => e.to_string(),
    }
}

/// An output folder held by this process: created if missing and locked (an advisory lock on
/// the folder itself, released when the process exits however it ends), so two runs never write
/// into one folder at once. [`OutputDir::write`] replaces a whole set of files or none. A folder
/// that [`OutputDir::lock`] created is removed again when the `OutputDir` is dropped before a
/// write succeeded (the command failed, was interrupted or panicked), with any parent folders it
/// created for it, as long as they are empty: a failed command leaves no folder it made.
#[derive(Debug)]
pub struct OutputDir {
    path: PathBuf,
    /// The open folder (Unix) or `.evalsim.lock` in it (elsewhere), holding the lock.
    handle: Option<std::fs::File>,
    /// The folders `lock` created, the output folder first and its outermost new parent last.
    created: Vec<PathBuf>,
    /// Set once a write succeeded: the folder is kept.
    written: std::sync::atomic::AtomicBool,
}

/// `dir` and those of its parents that do not exist yet, `dir` first.
fn missing_folders(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut at = Some(dir);
    while let Some(p) = at {
        if p.as_os_str().is_empty() || std::fs::symlink_metadata(p).is_ok() {
            break;
        }
        out.push(p.to_path_buf());
        at = p.parent();
    }
    out
}

/// Removes `folders` in order while they are empty (`remove_dir` removes nothing else).
fn remove_empty(folders: &[PathBuf]) {
    for dir in folders {
        if std::fs::remove_dir(dir).is_err() {
            break;
        }
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        if self.created.is_empty() || self.written.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        self.remove_stale_temps();
        drop(self.handle.take());
        #[cfg(not(unix))]
        let _ = std::fs::remove_file(self.path.join(".evalsim.lock"));
        // Only empty folders go: anything another process put there stays.
        remove_empty(&self.created);
    }
}

impl OutputDir {
    /// Creates `dir` if needed and locks it.
    ///
    /// # Errors
    /// [`ReportError::Write`] when the folder cannot be created or opened, [`ReportError::Busy`]
    /// when another process holds its lock.
    pub fn lock(dir: &Path) -> Result<OutputDir, ReportError> {
        let werr = |e: std::io::Error| ReportError::Write {
            path: crate::text::path_shown(dir),
            reason: e.to_string(),
        };
        let created = missing_folders(dir);
        let opened = std::fs::create_dir_all(dir).and_then(|()| {
            #[cfg(unix)]
            let handle = std::fs::File::open(dir);
            #[cfg(not(unix))]
            let handle = std::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(false)
                .open(dir.join(".evalsim.lock"));
            handle
        });
        let handle = opened.map_err(|e| {
            remove_empty(&created);
            werr(e)
        })?;
        match handle.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(ReportError::Busy {
                    path: crate::text::path_shown(dir),
                })
            }
            // A file system without locks (some network mounts): write unlocked.
            Err(std::fs::TryLockError::Error(_)) => {}
        }
        Ok(OutputDir {
            path: dir.to_path_buf(),
            handle: Some(handle),
            created,
            written: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Replaces the artifacts' files in the folder, all of them or none: first every file is
    /// written in full to a new temporary file (created exclusively, never through a link) and
    /// every final name is checked; only then are they renamed into place. A failure or an
    /// interruption before the renames removes the temporary files and leaves the folder as it
    /// was. Temporary files left by a killed run are removed first. Files in the folder that
    /// evalsim did not name are left alone.
    ///
    /// # Errors
    /// [`ReportError::Write`] naming the file that failed; [`ReportError::Interrupted`] when a
    /// signal arrived before the renames.
    pub fn write(&self, artifacts: &[Artifact]) -> Result<Vec<PathBuf>, ReportError> {
        self.remove_stale_temps();
        let werr = |p: &Path, reason: String| ReportError::Write {
            path: crate::text::path_shown(p),
            reason,
        };
        let mut staged: Vec<(PathBuf, PathBuf)> = Vec::with_capacity(artifacts.len());
        let cleanup = |staged: &[(PathBuf, PathBuf)]| {
            for (tmp, _) in staged {
                let _ = std::fs::remove_file(tmp);
            }
        };
        for (i, a) in artifacts.iter().enumerate() {
            let path = self.path.join(&a.file);
            if crate::interrupt::requested() {
                cleanup(&staged);
                return Err(ReportError::Interrupted {
                    path: crate::text::path_shown(&path),
                });
            }
            if artifacts[..i].iter().any(|b| b.file == a.file) {
                cleanup(&staged);
                return Err(werr(&path, "two outputs of this run have this name".into()));
            }
            if let Ok(m) = std::fs::symlink_metadata(&path) {
                if m.is_dir() {
                    cleanup(&staged);
                    return Err(werr(&path, "a folder is in the way of this file".into()));
                }
            }
            match self.stage(a) {
                Ok(tmp) => staged.push((tmp, path)),
                Err((tmp, e)) => {
                    if let Some(tmp) = tmp {
                        let _ = std::fs::remove_file(tmp);
                    }
                    cleanup(&staged);
                    return Err(werr(&path, reason(&e, a.bytes.len())));
                }
            }
        }
        let mut written = Vec::with_capacity(staged.len());
        for (j, (tmp, path)) in staged.iter().enumerate() {
            if let Err(e) = std::fs::rename(tmp, path) {
                cleanup(&staged[j..]);
                let done = if j == 0 {
                    "nothing was replaced".to_string()
                } else {
                    format!("{j} files before it were already replaced")
                };
                return Err(werr(path, format!("{e} ({done})")));
            }
            written.push(path.clone());
        }
        // Make the renames durable (a folder cannot be synced everywhere: best effort).
        #[cfg(unix)]
        if let Some(h) = &self.handle {
            let _ = h.sync_all();
        }
        self.written
            .store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(written)
    }

    /// Writes one artifact to a new temporary file in the folder and syncs it.
    fn stage(&self, a: &Artifact) -> Result<PathBuf, (Option<PathBuf>, std::io::Error)> {
        let mut attempt = 0;
        let (tmp, mut file) = loop {
            let tmp = self.path.join(temp_name(&a.file));
            match create_exclusive(&tmp) {
                Ok(f) => break (tmp, f),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 16 => {
                    attempt += 1;
                }
                Err(e) => return Err((None, e)),
            }
        };
        match file.write_all(&a.bytes).and_then(|()| file.sync_all()) {
            Ok(()) => Ok(tmp),
            Err(e) => Err((Some(tmp), e)),
        }
    }

    /// Removes temporary files of runs that were killed (SIGKILL, a second Ctrl-C, a power cut)
    /// before they could clean up. The lock guarantees no live run is writing them.
    fn remove_stale_temps(&self) {
        let Ok(entries) = std::fs::read_dir(&self.path) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            if name.to_str().is_some_and(is_temp_name)
                && e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink())
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// Writes the artifacts into `dir` (created if missing): locks it ([`OutputDir::lock`]) and
/// replaces the whole set of files or none ([`OutputDir::write`]).
///
/// # Errors
/// Those of [`OutputDir::lock`] and [`OutputDir::write`].
pub fn write_artifacts(dir: &Path, artifacts: &[Artifact]) -> Result<Vec<PathBuf>, ReportError> {
    OutputDir::lock(dir)?.write(artifacts)
}

#[cfg(test)]
mod tests {
    #[test]
    fn keep_digits_never_rounds_to_a_bound_the_value_does_not_reach() {
        use super::keep_digits;
        assert_eq!(keep_digits(52.853, 2), "52.85");
        assert_eq!(keep_digits(0.0, 2), "0.00");
        assert_eq!(keep_digits(100.0, 1), "100.0");
        assert_eq!(keep_digits(0.001455, 2), "0.0015");
        assert_eq!(keep_digits(0.04, 1), "0.040");
        assert_eq!(keep_digits(99.99956, 2), "99.99956");
        assert_eq!(keep_digits(99.96, 1), "99.960");
        assert_eq!(keep_digits(3.2e-30, 2), "3.2e-30");
        assert_eq!(keep_digits(100.0 - 1e-12, 2), ">99.99999999");
        assert_eq!(keep_digits(-0.001, 1), "-0.0010");
    }

    use super::*;

    #[cfg(unix)]
    #[test]
    fn temp_files_follow_symlinks_no_longer_creation_refuses_any_link() {
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, "precious").expect("write");
        let planted = dir.path().join(".checks.csv.tmp-1");
        std::os::unix::fs::symlink(&victim, &planted).expect("link");
        let e = create_exclusive(&planted).expect_err("through a link");
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(
            std::fs::read_to_string(&victim).expect("victim"),
            "precious"
        );
        // A dangling link: the missing target is not created either.
        let absent = dir.path().join("absent.txt");
        let dangling = dir.path().join(".report.md.tmp-1");
        std::os::unix::fs::symlink(&absent, &dangling).expect("link");
        assert!(create_exclusive(&dangling).is_err());
        assert!(!absent.exists());
    }

    #[test]
    fn a_panic_left_the_empty_output_folder_it_created() {
        let dir = tempfile::tempdir().expect("tempdir");
        let new = dir.path().join("new").join("deeper");
        let panicked = std::panic::catch_unwind(|| {
            let _out = OutputDir::lock(&new).expect("lock");
            assert!(new.is_dir());
            panic!("a bug while the folder is held");
        });
        assert!(panicked.is_err());
        assert!(!dir.path().join("new").exists(), "the created folders stay");
        // A failed write removes it too; a folder that was there before stays, and so does one
        // that a write filled.
        let out = OutputDir::lock(&new).expect("lock");
        let clash = [
            Artifact {
                file: "a.csv".into(),
                bytes: b"1".to_vec(),
            },
            Artifact {
                file: "a.csv".into(),
                bytes: b"2".to_vec(),
            },
        ];
        assert!(out.write(&clash).is_err());
        drop(out);
        assert!(!dir.path().join("new").exists());
        drop(OutputDir::lock(dir.path()).expect("lock"));
        assert!(dir.path().is_dir(), "a folder that existed was removed");
        let out = OutputDir::lock(&new).expect("lock");
        out.write(&clash[..1]).expect("write");
        drop(out);
        assert!(new.join("a.csv").is_file());
    }

    #[test]
    fn temp_names_are_unique_and_recognised() {
        let a = temp_name("checks.csv");
        let b = temp_name("checks.csv");
        assert_ne!(a, b);
        assert!(is_temp_name(&a), "{a}");
        for other in [
            ".checks.csv.tmp-1",
            "checks.csv",
            ".checks.csv.tmp-evalsim-1-2",
            ".checks.csv.tmp-evalsim-1-2-zz",
            "..tmp-evalsim-1-2-3",
        ] {
            assert!(!is_temp_name(other), "{other}");
        }
    }
}

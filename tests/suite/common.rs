//! Setup shared by the suite's command-line tests: the binary, scenario files in a temporary
//! folder, and the files a command wrote.
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use evalsim::experiments::{run_all, Check, RunOutput};
use evalsim::scenario::Scenario;

/// A small scenario (two models, one head-to-head) that runs and sweeps fast.
pub const TINY: &str = r#"seed = 11
[benchmark]
problems = 8
mu = 0.0
sigma = 1.0
[[model]]
name = "a"
shift = 0.0
attractor = 0.5
[[model]]
name = "b"
shift = 0.3
attractor = 0.5
[[experiment]]
kind = "head-to-head"
a = "a"
b = "b"
n = [1, 4]
reruns = 2000
"#;

/// The `evalsim` binary, with the batch schedulers' array variables removed so that a test
/// never picks up a shard from the machine it runs on.
pub fn evalsim() -> Command {
    let mut c = Command::cargo_bin("evalsim").expect("binary built");
    for k in [
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_COUNT",
        "SLURM_ARRAY_TASK_MIN",
        "JOB_COMPLETION_INDEX",
        "AWS_BATCH_JOB_ARRAY_INDEX",
        "AWS_BATCH_JOB_ARRAY_SIZE",
    ] {
        c.env_remove(k);
    }
    c
}

/// [`TINY`] as `dir/tiny.toml`.
pub fn tiny(dir: &Path) -> PathBuf {
    write_file(dir, "tiny.toml", TINY)
}

/// Writes `text` as `dir/name` and returns its path.
pub fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let f = dir.join(name);
    std::fs::write(&f, text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
    f
}

/// A text file, or a panic naming it.
pub fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// (name, bytes) of the files of `dir` that `keep` accepts, sorted by name.
pub fn files_where(dir: &Path, keep: impl Fn(&Path) -> bool) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| keep(p))
        .map(|p| {
            (
                p.file_name().expect("name").to_string_lossy().into_owned(),
                std::fs::read(&p).expect("read"),
            )
        })
        .collect();
    v.sort();
    v
}

/// Runs `cmd`, which must succeed, and returns its stdout.
pub fn succeeds(cmd: &mut Command) -> String {
    let out = cmd.assert().success();
    String::from_utf8_lossy(&out.get_output().stdout).into_owned()
}

/// Runs `cmd`, which must refuse its input (exit code 2), and returns its stderr.
pub fn refused(cmd: &mut Command) -> String {
    let out = cmd.assert().code(2);
    String::from_utf8_lossy(&out.get_output().stderr).into_owned()
}

/// Runs `cmd`, which must refuse its input (exit code 2) with a message that says every one of
/// `needles`; returns the message.
pub fn refused_saying(cmd: &mut Command, needles: &[&str]) -> String {
    let err = refused(cmd);
    for n in needles {
        assert!(err.contains(n), "{n:?} not said in: {err}");
    }
    err
}

/// `evalsim sweep FILE ARGS... --out OUT`.
pub fn sweep(f: &Path, args: &[&str], out: &Path) -> Command {
    let mut c = evalsim();
    c.arg("sweep").arg(f).args(args).arg("--out").arg(out);
    c
}

/// Runs every experiment of `s`, with no progress reporting.
pub fn run(s: &Scenario) -> RunOutput {
    run_all(s, &|_| {})
}

/// `f` on a pool of `threads` threads (for results that must not depend on the count).
pub fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("pool")
        .install(f)
}

/// The checks that did not pass.
pub fn failures(checks: &[Check]) -> Vec<&Check> {
    checks.iter().filter(|c| !c.passed()).collect()
}

/// The first result of one experiment kind in a run, cloned.
macro_rules! result {
    ($out:expr, $kind:ident) => {
        $out.results
            .iter()
            .find_map(|r| match r {
                evalsim::experiments::ExperimentResult::$kind(v) => Some(v.clone()),
                _ => None,
            })
            .expect(stringify!($kind))
    };
}
pub(crate) use result;

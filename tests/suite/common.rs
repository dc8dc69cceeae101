//! Setup shared by the suite's command-line tests: the binary, scenario files in a temporary
//! folder, and the files a command wrote.
use std::path::{Path, PathBuf};

use assert_cmd::Command;

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

//! `evalsim list`: the named scenarios and the files of ./scenarios, with their titles.
use std::path::PathBuf;

use clap::Args;

use super::{bad_input, Failure, EXIT_OK};
use crate::scenario::{Scenario, NAMED};

/// Flags of `evalsim list`: it runs nothing, so it takes none of the run flags.
#[derive(Debug, Args)]
pub(super) struct ListArgs {
    /// Print nothing (only check that the named scenarios load)
    #[arg(long, short)]
    pub(super) quiet: bool,
}

/// Lists the scenarios: read -> resolve (each title) -> print.
pub(super) fn list(c: &ListArgs) -> Result<u8, Failure> {
    let mut rows: Vec<(String, String, String)> = Vec::new();
    for (name, _) in NAMED {
        let s = Scenario::load(name).map_err(bad_input)?;
        let from = if PathBuf::from(format!("scenarios/{name}.toml")).is_file() {
            format!("scenarios/{name}.toml")
        } else {
            "built in".into()
        };
        rows.push((name.to_string(), s.title, from));
    }
    if let Ok(dir) = std::fs::read_dir("scenarios") {
        let mut extra: Vec<PathBuf> = dir
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        extra.sort();
        for p in extra {
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            if rows.iter().any(|r| r.0 == stem) {
                continue;
            }
            let title = Scenario::load(&p.display().to_string())
                .map_or_else(|e| format!("(invalid: {e})"), |s| s.title);
            rows.push((stem, title, crate::text::path_shown(&p)));
        }
    }
    if !c.quiet {
        let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(4);
        for (name, title, from) in rows {
            super::say(&format!("{name:<w$}  {title}  [{from}]\n"))?;
        }
    }
    Ok(EXIT_OK)
}

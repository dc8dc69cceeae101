//! `evalsim merge`: the CLI reads the shard files; `experiments::sweep::merge_shards` checks
//! and joins them; then report -> write.
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use clap::Args;

use super::sweep::finish;
use super::{
    bad_input, install_interrupt, stop_if_interrupted, write_failure, CommonArgs, Failure,
};
use crate::experiments::sweep::merge_shards;
use crate::report;

fn bad(msg: String) -> Failure {
    bad_input(anyhow!(msg))
}

/// Flags of `evalsim merge`.
#[derive(Debug, Args)]
pub(super) struct MergeArgs {
    /// Folder holding the shard-I-of-N.json files of one sweep
    pub(super) dir: PathBuf,
    /// Skip the PNG and SVG figures
    #[arg(long)]
    pub(super) no_figures: bool,
    /// Quantities drawn in the figures, comma-separated, as for `sweep --plot`
    #[arg(long, value_name = "QUANTITY,...")]
    pub(super) plot: Option<String>,
    #[command(flatten)]
    pub(super) common: CommonArgs,
}

/// Reads the `shard-*.json` files of `dir`, in name order: (path, text).
fn read_shards(dir: &Path) -> Result<Vec<(String, String)>, String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", crate::text::path_shown(dir)))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("shard-") && n.ends_with(".json"))
        })
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            std::fs::read_to_string(f)
                .map(|text| (crate::text::path_shown(f), text))
                .map_err(|e| format!("cannot read {}: {e}", crate::text::path_shown(f)))
        })
        .collect()
}

pub(super) fn merge(a: &MergeArgs) -> Result<u8, Failure> {
    install_interrupt()?;
    let shards = read_shards(&a.dir).map_err(bad)?;
    let output = merge_shards(&shards, &crate::text::path_shown(&a.dir)).map_err(bad)?;
    let out = a.common.out.clone().unwrap_or_else(|| a.dir.clone());
    for w in super::sweep::idle_field_warnings(&output, &[]) {
        super::warn(&w);
    }
    let artifacts =
        super::sweep::render(&output, a.common.figures(a.no_figures), a.plot.as_deref())?;
    stop_if_interrupted("while rendering; nothing was written")?;
    report::write_artifacts(&out, &artifacts).map_err(write_failure)?;
    finish(&output, &artifacts, &out, a.common.quiet)
}

//! inspect_ai's `.eval` log: a zip archive with `header.json` (the eval, status and results),
//! `reductions.json`, one `samples/<id>_epoch_<e>.json` per sample and `_journal/` while running.
//!
//! An archive is checked before anything in it is believed: every entry name occurs once, every
//! entry's CRC-32 matches its data, and what is inflated is bounded per entry
//! ([`MAX_ENTRY_BYTES`]) and per archive ([`MAX_INFLATED_BYTES`]), so a small entry that inflates
//! to gigabytes is refused after reading at most the bound. The archive itself is held in memory
//! while read (at most [`MAX_ARCHIVE_BYTES`]).
use std::collections::{BTreeMap, HashSet};
use std::io::Read;

use serde::Deserialize;
use serde_json::Value;

use super::{new_state, InspectEval, InspectResults, InspectSample, ScoreChoice};
use crate::analyze::data::DatasetBuilder;
use crate::analyze::{AnalyzeError, Result};

/// Largest `.eval` archive read (it is held in memory while read): 2 GiB.
pub const MAX_ARCHIVE_BYTES: u64 = 2 << 30;
/// Most bytes one entry of an `.eval` archive may inflate to: 256 MiB.
pub const MAX_ENTRY_BYTES: u64 = 256 << 20;
/// Most bytes the entries of one `.eval` archive may inflate to together: 4 GiB.
pub const MAX_INFLATED_BYTES: u64 = 4 << 30;

/// The bounds on inflation (the constants above; tests use small ones).
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// Per entry.
    pub entry: u64,
    /// Per archive.
    pub total: u64,
}

/// The bounds `analyze` uses.
pub(super) const LIMITS: Limits = Limits {
    entry: MAX_ENTRY_BYTES,
    total: MAX_INFLATED_BYTES,
};

/// `n` bytes in MiB or GiB, for messages.
fn size(n: u64) -> String {
    if n >= 1 << 30 && n.is_multiple_of(1 << 30) {
        format!("{} GiB", n >> 30)
    } else if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

fn zip_error(source: &str, entry: &str, message: &str) -> AnalyzeError {
    AnalyzeError::Archive {
        source_name: source.to_string(),
        entry: entry.to_string(),
        message: format!(
            "{message}; expected an inspect_ai `.eval` archive (a truncated or damaged file must be \
             written again)"
        ),
    }
}

/// The first entry name that occurs twice in the central directory of `bytes` (a zip archive
/// starting at `offset`), when it can be read; `None` for a ZIP64 directory.
fn duplicate_name(bytes: &[u8], offset: usize) -> Option<String> {
    let u16_at = |i: usize| -> Option<usize> {
        Some(usize::from(u16::from_le_bytes(
            bytes.get(i..i + 2)?.try_into().ok()?,
        )))
    };
    let u32_at = |i: usize| -> Option<usize> {
        usize::try_from(u32::from_le_bytes(bytes.get(i..i + 4)?.try_into().ok()?)).ok()
    };
    let from = bytes.len().saturating_sub(22 + 65_535);
    let eocd = (from..bytes.len().saturating_sub(21))
        .rev()
        .find(|&i| bytes[i..].starts_with(b"PK\x05\x06"))?;
    let mut at = offset.checked_add(u32_at(eocd + 16)?)?;
    let count = u16_at(eocd + 10)?;
    let mut seen = HashSet::new();
    for _ in 0..count {
        if !bytes.get(at..)?.starts_with(b"PK\x01\x02") {
            return None;
        }
        let (name_len, extra, comment) = (u16_at(at + 28)?, u16_at(at + 30)?, u16_at(at + 32)?);
        let name = String::from_utf8_lossy(bytes.get(at + 46..at + 46 + name_len)?).into_owned();
        if !seen.insert(name.clone()) {
            return Some(name);
        }
        at += 46 + name_len + extra + comment;
    }
    None
}

/// An archive being read: the zip directory and what has been inflated so far.
struct Archive<'b> {
    zip: zip::ZipArchive<std::io::Cursor<&'b [u8]>>,
    source: String,
    limits: Limits,
    inflated: u64,
}

impl Archive<'_> {
    /// The decompressed bytes of entry `i` (named `name`): stored, deflate, or zstd (method 93,
    /// what inspect_ai writes since 2025, frame by frame), read to at most the bounds and
    /// checked against the entry's CRC-32.
    fn entry(&mut self, i: usize, name: &str) -> Result<Vec<u8>> {
        let source = self.source.clone();
        let fail = |m: &str| zip_error(&source, name, m);
        let mut raw = self.zip.by_index_raw(i).map_err(|e| fail(&e.to_string()))?;
        let (method, crc, declared) = (raw.compression(), raw.crc32(), raw.size());
        let left = self.limits.total.saturating_sub(self.inflated);
        let budget = self.limits.entry.min(left);
        let too_large = |entry_limit: bool| AnalyzeError::Archive {
            source_name: source.clone(),
            entry: name.to_string(),
            message: if entry_limit {
                format!(
                    "inflates to more than {} (the bound on one entry of an `.eval` archive); \
                     refused unread: a sample or header this large is not an inspect_ai log \
                     entry (a damaged or hostile archive)",
                    size(self.limits.entry)
                )
            } else {
                format!(
                    "the archive inflates to more than {} in total by this entry (the bound on \
                     one `.eval` archive); refused: split the log (`inspect log` tools) or \
                     analyse fewer samples at a time",
                    size(self.limits.total)
                )
            },
        };
        let over = |n: u64| too_large(n > self.limits.entry);
        if declared > budget {
            return Err(over(declared));
        }
        let mut compressed = Vec::new();
        let mut out = Vec::new();
        let cap = budget + 1;
        match method {
            zip::CompressionMethod::Stored => {
                (&mut raw)
                    .take(cap)
                    .read_to_end(&mut out)
                    .map_err(|e| fail(&e.to_string()))?;
            }
            zip::CompressionMethod::Deflated => {
                flate2::read::DeflateDecoder::new(&mut raw)
                    .take(cap)
                    .read_to_end(&mut out)
                    .map_err(|e| fail(&format!("deflate: {e}")))?;
            }
            zip::CompressionMethod::ZSTD => {
                raw.read_to_end(&mut compressed)
                    .map_err(|e| fail(&e.to_string()))?;
                let mut rest: &[u8] = &compressed;
                while !rest.is_empty() && (out.len() as u64) < cap {
                    let dec = ruzstd::decoding::StreamingDecoder::new(&mut rest)
                        .map_err(|e| fail(&format!("zstd: {e}")))?;
                    dec.take(cap - out.len() as u64)
                        .read_to_end(&mut out)
                        .map_err(|e| fail(&format!("zstd: {e}")))?;
                }
            }
            other => {
                return Err(fail(&format!(
                    "compression method {other} is not read (inspect_ai writes zstd or deflate)"
                )))
            }
        }
        let n = out.len() as u64;
        if n > budget {
            return Err(over(n));
        }
        self.inflated += n;
        let actual = crc32fast::hash(&out);
        if actual != crc {
            return Err(fail(&format!(
                "CRC-32 mismatch: the archive records {crc:08x}, the entry's data has \
                 {actual:08x}, so the data is not what was written"
            )));
        }
        if n != declared {
            return Err(fail(&format!(
                "inflates to {n} bytes, but the archive records {declared}"
            )));
        }
        Ok(out)
    }
}

fn parse_entry<T: for<'de> Deserialize<'de>>(bytes: &[u8], source: &str, name: &str) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|e| AnalyzeError::Json {
        source_name: format!("{source} ({name})"),
        line: e.line(),
        message: format!("{e} (column {})", e.column()),
    })
}

#[derive(Deserialize)]
struct EvalHeader {
    eval: Option<InspectEval>,
    status: Option<String>,
    results: Option<InspectResults>,
}

/// Reads an `.eval` archive (its bytes, at most [`MAX_ARCHIVE_BYTES`]) into `builder`.
pub(super) fn read_eval_archive(
    bytes: &[u8],
    builder: &mut DatasetBuilder,
    choice: ScoreChoice<'_>,
    limits: Limits,
) -> Result<()> {
    let source = builder.source().to_string();
    let zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| zip_error(&source, "archive", &e.to_string()))?;
    if zip.has_duplicate_names() {
        let offset = usize::try_from(zip.offset()).unwrap_or(0);
        let name = duplicate_name(bytes, offset).unwrap_or_else(|| "?".to_string());
        return Err(AnalyzeError::Archive {
            source_name: source,
            entry: name,
            message: "this entry name occurs more than once in the archive, so which copy holds \
                      the data is a guess; inspect_ai writes each entry once: the archive was \
                      altered or damaged and must be written again"
                .to_string(),
        });
    }
    let mut archive = Archive {
        zip,
        source: source.clone(),
        limits,
        inflated: 0,
    };
    // Entry order in the archive is the order the samples were written.
    let mut order: Vec<(usize, String)> = Vec::new();
    for i in 0..archive.zip.len() {
        let name = archive
            .zip
            .by_index_raw(i)
            .map_err(|e| zip_error(&source, "archive", &e.to_string()))?
            .name()
            .map(|n| n.to_string())
            .map_err(|e| zip_error(&source, "archive", &e.to_string()))?;
        order.push((i, name));
    }
    let find = |want: &str| order.iter().find(|(_, n)| n == want).map(|(i, _)| *i);
    let mut state = new_state(builder, choice);
    match find("header.json") {
        Some(i) => {
            let header: EvalHeader =
                parse_entry(&archive.entry(i, "header.json")?, &source, "header.json")?;
            state.model = header.eval.and_then(|e| e.model);
            state.status = header.status;
            state.results = header.results;
        }
        None => {
            // A log still running or cut short: the eval is in the journal's start entry.
            state.status = Some("started (no header.json: the run did not finish)".to_string());
            if let Some(i) = find("_journal/start.json") {
                let start: BTreeMap<String, Value> = parse_entry(
                    &archive.entry(i, "_journal/start.json")?,
                    &source,
                    "_journal/start.json",
                )?;
                state.model = start
                    .get("eval")
                    .and_then(|e| e.get("model"))
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
        }
    }
    if let Some(i) = find("reductions.json") {
        state.reductions = Some(parse_entry(
            &archive.entry(i, "reductions.json")?,
            &source,
            "reductions.json",
        )?);
    }
    for (i, name) in &order {
        if !(name.starts_with("samples/") && name.ends_with(".json")) {
            continue;
        }
        state.samples_seen = true;
        let data = archive.entry(*i, name)?;
        let sample: InspectSample = parse_entry(&data, &source, name)?;
        drop(data);
        state.entry = Some(name.clone());
        state.add(sample)?;
    }
    if !state.samples_seen {
        return Err(AnalyzeError::MissingField {
            source_name: source,
            line: 0,
            field: "samples/".to_string(),
            expected: "an `.eval` log written with samples (inspect_ai logs them by default)"
                .to_string(),
        });
    }
    state.entry = None;
    state.finish()
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::analyze::normalize::Normalization;

    /// A zip archive of stored entries (CRCs right), as inspect_ai would lay one out.
    fn archive(entries: &[(String, Vec<u8>)]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        for (name, bytes) in entries {
            w.start_file(name.as_str(), options).expect("entry");
            w.write_all(bytes).expect("write");
        }
        w.finish().expect("finish").into_inner()
    }

    fn read(bytes: &[u8], limits: Limits) -> Result<crate::analyze::Dataset> {
        let mut b = DatasetBuilder::new("bombs.eval", "m", Normalization::Standard);
        read_eval_archive(bytes, &mut b, ScoreChoice::default(), limits)?;
        b.finish()
    }

    /// Many entries, each under the bound on one entry, that together inflate past the bound on
    /// the archive: refused at the entry that crosses it, having inflated no more than the bound.
    #[test]
    fn an_archive_of_many_small_bombs_ran_past_a_minute() {
        let mut entries = vec![(
            "header.json".to_string(),
            br#"{"eval": {"model": "m"}, "status": "success"}"#.to_vec(),
        )];
        for i in 0..10 {
            let mut s =
                format!(r#"{{"id": {i}, "epoch": 1, "scores": {{"s": {{"value": "C"}}}}}}"#)
                    .into_bytes();
            s.resize(1000, b' ');
            entries.push((format!("samples/{i}_epoch_1.json"), s));
        }
        let bytes = archive(&entries);
        let ok = read(&bytes, LIMITS).expect("within the bounds");
        assert_eq!(ok.models[0].problems.len(), 10);
        let err = read(
            &bytes,
            Limits {
                entry: 2000,
                total: 5000,
            },
        )
        .expect_err("past the total")
        .to_string();
        assert!(
            err.contains("bombs.eval: entry `samples/4_epoch_1.json`")
                && err.contains("more than 5000 bytes in total"),
            "{err}"
        );
        let err = read(
            &bytes,
            Limits {
                entry: 999,
                total: 1 << 20,
            },
        )
        .expect_err("past one entry")
        .to_string();
        assert!(
            err.contains("samples/0_epoch_1.json") && err.contains("more than 999 bytes"),
            "{err}"
        );
    }
}

//! Where a scenario's text comes from: a file path, `scenarios/NAME.toml` under the current
//! directory, or a named scenario compiled into the binary. The only file reading of the
//! scenario layer; it depends on [`super::error`] and [`super::spec`] only.
use std::path::Path;

use super::error::{Locator, ScenarioError};
use super::spec::Scenario;

/// The named scenarios shipped with evalsim (also compiled into the binary).
pub const NAMED: &[(&str, &str)] = &[
    ("note", include_str!("../../scenarios/note.toml")),
    (
        "concentrated",
        include_str!("../../scenarios/concentrated.toml"),
    ),
    (
        "contamination",
        include_str!("../../scenarios/contamination.toml"),
    ),
    ("modes", include_str!("../../scenarios/modes.toml")),
    ("verifier", include_str!("../../scenarios/verifier.toml")),
    (
        "extraction",
        include_str!("../../scenarios/extraction.toml"),
    ),
    (
        "submissions",
        include_str!("../../scenarios/submissions.toml"),
    ),
    ("judge", include_str!("../../scenarios/judge.toml")),
    (
        "confidence",
        include_str!("../../scenarios/confidence.toml"),
    ),
];

impl Scenario {
    /// Loads a scenario by name or path: an existing file path (or anything ending in `.toml`),
    /// then `scenarios/NAME.toml` under the current directory, then the compiled-in named
    /// scenarios.
    ///
    /// # Errors
    /// [`ScenarioError::Read`] when a file cannot be read, [`ScenarioError::UnknownName`] when
    /// the name matches nothing, and any error of [`Scenario::from_toml`].
    pub fn load(name_or_path: &str) -> Result<Scenario, ScenarioError> {
        Scenario::load_seeded(name_or_path, None)
    }

    /// [`Scenario::load`] with `seed`, when given, in place of the file's (a `--seed` flag): the
    /// seed is set before resolving, so every experiment's spec (the plan's too) holds it.
    ///
    /// # Errors
    /// As [`Scenario::load`].
    pub fn load_seeded(name_or_path: &str, seed: Option<u64>) -> Result<Scenario, ScenarioError> {
        let src = read_source(name_or_path)?;
        Scenario::from_toml_seeded(&src.text, &src.name, &src.file, seed)
    }

    /// [`Scenario::from_toml`] with `seed`, when given, in place of the text's `seed`.
    ///
    /// # Errors
    /// As [`Scenario::from_toml`].
    pub fn from_toml_seeded(
        text: &str,
        name: &str,
        file: &str,
        seed: Option<u64>,
    ) -> Result<Scenario, ScenarioError> {
        let mut raw = super::resolve::parse(text, file)?;
        if let Some(seed) = seed {
            raw.seed = Some(toml::Spanned::new(0..0, seed));
        }
        Scenario::from_raw(raw, text, name, file)
    }
}

#[derive(Debug, Clone)]
pub struct ScenarioSource {
    /// The TOML text.
    pub text: String,
    /// Short name (named scenario or file stem).
    pub name: String,
    /// What error messages call the source (a path or `<embedded NAME>`).
    pub file: String,
}

/// Finds a scenario's text the way [`Scenario::load`] does: an existing file path (or anything
/// ending in `.toml`), then `scenarios/NAME.toml`, then the compiled-in named scenarios.
///
/// # Errors
/// [`ScenarioError::Read`] when a file cannot be read, [`ScenarioError::UnknownName`] when the
/// name matches nothing.
pub fn read_source(name_or_path: &str) -> Result<ScenarioSource, ScenarioError> {
    let path = Path::new(name_or_path);
    let local = Path::new("scenarios").join(format!("{name_or_path}.toml"));
    let file = if path.is_file() || name_or_path.ends_with(".toml") {
        Some(path.to_path_buf())
    } else if !name_or_path.contains(['/', '\\']) && local.is_file() {
        Some(local)
    } else {
        None
    };
    if let Some(file) = file {
        let bytes = std::fs::read(&file).map_err(|e| ScenarioError::Read {
            path: crate::text::path_shown(&file),
            reason: e.to_string(),
        })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            let bad = e.as_bytes().get(at).copied().unwrap_or(0);
            let lossy = String::from_utf8_lossy(e.as_bytes());
            let display = crate::text::path_shown(&file);
            let loc = Locator::new(&display, &lossy);
            loc.error(
                at..at,
                loc.key_at(at),
                format!("byte 0x{bad:02X} is not valid UTF-8: scenario files must be UTF-8 text"),
            )
        })?;
        let name = file
            .file_stem()
            .map_or("scenario".into(), |s| s.to_string_lossy().into_owned());
        return Ok(ScenarioSource {
            text,
            name,
            file: crate::text::path_shown(&file),
        });
    }
    match NAMED.iter().find(|(n, _)| *n == name_or_path) {
        Some((n, src)) => Ok(ScenarioSource {
            text: (*src).to_string(),
            name: (*n).to_string(),
            file: format!("<embedded {n}>"),
        }),
        None => Err(ScenarioError::UnknownName {
            name: name_or_path.to_string(),
            available: NAMED.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "),
        }),
    }
}

//! `evalsim init`: prints the commented template scenario.
use clap::Args;

use super::{Failure, EXIT_OK};

/// Flags of `evalsim init`.
#[derive(Debug, Args)]
pub(super) struct InitArgs {
    /// The scenario's title [default: my-scenario]
    pub(super) name: Option<String>,
}

/// The template `evalsim init` prints; `@TITLE@` is replaced by the quoted title.
const TEMPLATE: &str = include_str!("template.toml");

/// The template scenario titled `name`, as `evalsim init NAME` prints it.
pub fn template(name: &str) -> String {
    TEMPLATE.replace(
        "@TITLE@",
        &toml::Value::String(name.to_string()).to_string(),
    )
}

/// Prints the template titled by the flag (or `my-scenario`).
pub(super) fn init(a: &InitArgs) -> Result<u8, Failure> {
    super::say(&template(a.name.as_deref().unwrap_or("my-scenario")))?;
    Ok(EXIT_OK)
}

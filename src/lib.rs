//! evalsim: a Monte Carlo workbench for the statistics of evaluating sampled language models.
//!
//! Data flows one way: [`scenario`] (TOML -> validated [`scenario::Scenario`]) -> [`model`]
//! (immutable parameter structs) -> [`exact`] (closed forms, pure) and [`sim`] (deterministic
//! Monte Carlo) -> [`experiments`] (exact paired with simulated, plus checks) -> [`report`]
//! (CSV / JSON / Markdown / PNG / SVG) -> [`cli`]. [`numerics`] (root finders) sits below them all.
#![forbid(unsafe_code)]

pub mod analyze;
pub mod cli;
pub mod exact;
pub mod experiments;
pub mod interrupt;
pub mod model;
pub mod numerics;
pub mod report;
pub mod scenario;
pub mod sim;
pub mod text;

//! General numerical methods shared by the exact layer and the analysis: bracketing root
//! finders ([`root`]) and minimisers with their matrix helpers ([`optimise`]). Pure functions
//! of their arguments, with no knowledge of the model; the callers state what they search and
//! to which precision. Depends on nothing in the crate.

pub mod optimise;
pub mod root;

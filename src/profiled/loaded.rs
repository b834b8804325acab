//! A profile loaded for comparison (`diff`, `check`) or kept by a
//! notebook: an instance's, profiled now, or a baseline's, saved earlier.

use super::{Account, Profile, ProfiledInput};

/// A loaded profile and what it was loaded from.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub profiled: ProfiledInput,
    /// Which of the report's accounts is compared.
    pub account: Account,
    /// Set when the input was a baseline.
    pub baseline: Option<BaselineInfo>,
}

impl Loaded {
    pub fn profile(&self) -> Profile<'_> {
        Profile::of(&self.profiled, self.account)
    }

    /// The file as given on the command line.
    pub fn name(&self) -> &str {
        &self.profiled.input.name
    }

    /// "baseline of X" or the instance's layer label.
    pub fn describe(&self) -> String {
        let layers = self.profile().layer_label();
        match &self.baseline {
            Some(info) => format!(
                "baseline of {}, {layers}",
                crate::profiled::escape_control(&info.input)
            ),
            None => layers,
        }
    }
}

/// What a baseline says about where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselineInfo {
    /// The input the baseline was made from, as named then.
    pub input: String,
    /// The memprof that wrote it.
    pub tool: Option<String>,
}

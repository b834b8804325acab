//! Several inputs in one run: each input's result with its name and time,
//! and the per-file figures `inspect` shows for them.

use std::time::Duration;

use serde::Serialize;

use super::{Profile, ProfiledInput};

/// One input's result and how long it took.
#[derive(Debug)]
pub struct FileRun<T> {
    pub name: String,
    pub value: T,
    pub elapsed: Duration,
}

/// One input's figures.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FileSummary {
    pub file: String,
    pub instances: usize,
    pub variables: u64,
    pub constraints: u64,
    pub terms: u64,
    /// Size of the input as stored, when known (not for stdin).
    pub file_bytes: Option<u64>,
    pub logical_bytes: u64,
    /// Wall time to read and profile this input (the only figure that
    /// varies from run to run).
    pub seconds: f64,
}

impl FileSummary {
    pub fn of(run: &FileRun<ProfiledInput>) -> Self {
        let profile = Profile::new(&run.value);
        let summary = profile.summary();
        Self {
            file: run.name.clone(),
            instances: run.value.instances.len(),
            variables: summary.variables,
            constraints: summary.constraints,
            terms: summary.terms,
            file_bytes: run.value.input.file_bytes,
            logical_bytes: profile.total_bytes(),
            seconds: run.elapsed.as_secs_f64(),
        }
    }
}

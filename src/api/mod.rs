//! The analysis API: the one door to memprof's engine. Every surface (the
//! `memprof` commands, the Python wheel, the HTML report) turns what its
//! user gave into [`Input`]s and one [`Options`], calls one function here,
//! and shows the document it returns with the renderers (`render/`).
//!
//! Nothing above this floor reads an input, sniffs what it is, runs the
//! pass or applies an accounting or advice rule: a new surface needs only
//! this module and the renderers. The functions:
//! - [`profile`]: the logical profile of one or several inputs, instances
//!   or saved baselines (`inspect`);
//! - [`flamegraph`]: the same, or folded stacks given as input;
//! - [`load`]: one input's profile for comparing or keeping, an instance or
//!   a saved baseline (`diff`, `check`, Python's `profile()`);
//! - [`layers`]: an archive's layers without profiling them (`ls`);
//! - [`registry`]: OMMX's local registry, listed (`ls` without an input);
//!   every function reads an image of it by name (`ghcr.io/org/name:tag`)
//!   where a file of that name does not exist;
//! - [`top`], [`stats`], [`explain`], [`advise`]: the analyses that look at
//!   every entity;
//! - [`diff`] and [`migration`]: two profiles to compare path by path
//!   (`migration`: one input under OMMX 2.9.3's and 3.0's accounting, read
//!   once);
//! - [`check`] and [`check_one`]: budgets and baselines, with a verdict;
//! - [`report`]: what the report page shows: the profile and those analyses
//!   from one pass, and an old side to compare with; [`report_loaded`], the
//!   same of a profile already loaded (a notebook's).

mod batch;
mod check;
mod drill;
mod load;
mod migration;
mod next_steps;
mod registry;
mod report;
mod resolve;

use std::path::{Path, PathBuf};

pub use crate::advise::Severity;
pub use crate::check::budget::{Budget, BudgetValue};
pub use crate::check::{exceeding, BudgetExceeded, Verdicts};
pub use crate::drill::KindFilter;
pub use crate::input::archive::HandedLayer;
pub use crate::input::{Input, Limits};
pub use crate::model::EntityKind;
pub use crate::names::{from_name, Named};
/// The global allocator every surface installs (see [`crate::pages::Allocator`]).
pub use crate::pages::Allocator;
pub use crate::profile::family::GroupBy;
pub use crate::profiled::files::{FileRun, FileSummary};
pub use crate::profiled::{Account, Accounting, Loaded, Profile, ProfiledInput, Schema};
pub use crate::real_memory::Effort;
pub use crate::units::parse_size;
pub use batch::expand;
pub use check::{check, check_one, BaselineSource, CheckOutcome, CheckRequest};
pub use drill::{advise, explain, stats, top, Advice, Explained, Stats, Top};
pub use load::{diff, flamegraph, layers, load, profile, Graph, Profiled};
pub use migration::migration;
pub use registry::registry;
pub use report::{report, report_loaded, Findings, Reported};

use crate::pass::{Pass, ProfileOptions, Reading, Settings};

/// How every input of one call is read and profiled: the one options type
/// of every surface.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// Family frames under the entity containers (`--group-by name`).
    pub group_by: GroupBy,
    /// Also account the encoded bytes per path (the wire view); the
    /// comparisons then compare those.
    pub wire: bool,
    /// The schema raw input is read as; `None`: ommx.v1, then ommx.v2.
    pub schema: Option<Schema>,
    /// Whose accounting counts ommx.v1 input; `None`: 2.9.3's (v2 input is
    /// counted as 3.0 holds it, always).
    pub accounting: Option<Accounting>,
    /// Only the N-th instance layer (0-based, manifest order), without a
    /// root frame.
    pub layer: Option<usize>,
    /// What an input may make memprof read and hold.
    pub limits: Limits,
    /// The most threads one input decodes with (`None`: the machine's).
    pub threads: Option<usize>,
    /// A progress bar on stderr while an input is read (only drawn on a
    /// terminal).
    pub progress: bool,
    /// How much work the real-memory estimate may do: outputs that do not
    /// show it ask for the closed form only.
    pub real_memory: Effort,
    /// The root of OMMX's local registry that image names are found in
    /// (`None`: `$OMMX_LOCAL_REGISTRY_ROOT`, else OMMX's default).
    pub registry: Option<std::path::PathBuf>,
}

impl Options {
    /// Which of a report's accounts its profile shows and compares.
    pub fn account(&self) -> Account {
        if self.wire {
            Account::Wire
        } else {
            Account::Memory
        }
    }

    fn selection(&self) -> crate::input::Selection {
        self.layer
            .map_or(crate::input::Selection::All, crate::input::Selection::Layer)
    }

    /// The pass these options ask for, showing entities to `observer`,
    /// decoding with at most `threads` threads.
    fn pass<'o>(
        &self,
        observer: &'o mut dyn crate::pass::EntityObserver,
        threads: Option<usize>,
    ) -> Pass<'o> {
        Pass {
            options: ProfileOptions {
                group_by: self.group_by,
                wire: self.wire,
                table_order: self.real_memory == Effort::Simulate,
            },
            reading: Reading {
                raw_schema: self.schema,
                accounting: self.accounting,
                compare: None,
            },
            settings: Settings {
                cap: threads,
                ..Settings::from_environment()
            },
            max_element: self.limits.max_element,
            observer,
        }
    }
}

/// The inputs a command line names (patterns already [`expand`]ed), `-`
/// for standard input.
pub fn inputs(paths: &[PathBuf]) -> Vec<Input> {
    paths.iter().map(|p| Input::from_path(p)).collect()
}

/// Refuses a command line that reads standard input more than once.
pub fn one_stdin<'a>(args: impl IntoIterator<Item = &'a Path>) -> anyhow::Result<()> {
    if args.into_iter().filter(|a| a.as_os_str() == "-").count() > 1 {
        anyhow::bail!("-: standard input can be read only once");
    }
    Ok(())
}

/// The error and its causes on one line, as `memprof: error: ...` prints
/// it and Python's `ValueError` says it, control characters escaped.
pub fn one_line(err: &anyhow::Error) -> String {
    // Names from archives and file names may hold control characters: the
    // line reaches a terminal, so they are escaped.
    let line = crate::errors::joined(err).replace(['\n', '\r'], " ");
    crate::profiled::escape_control(&line).into_owned()
}

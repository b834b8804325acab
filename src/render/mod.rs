//! Output formats. Each format is one module and a view of the same
//! [`Profile`]: the aggregate of the selected instance layers (under one root
//! frame per layer when there are several) and the document it came from.

pub mod advice;
pub mod check;
pub mod diff;
pub mod explain;
pub mod files;
pub mod header;
pub mod folded;
pub mod json;
pub mod layers;
pub mod side_by_side;
pub mod stats;
pub mod style;
pub mod svg;
pub mod table;
pub mod top;
pub mod tree;
pub mod width;



pub use crate::profile::family::{escape_frame, escape_frame_chars};
pub use crate::report::{escape_control, file_frame, layer_frame, Account, Profile};

/// The formats of `memprof inspect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// OMMX's folded stacks: `frame;frame;... BYTES`, exactly as
    /// `Instance.logical_memory_profile()` prints them.
    Folded,
    /// An indented tree of inclusive bytes.
    Tree,
    /// The largest paths as a table.
    Table,
    /// The tree as JSON (the baseline format).
    Json,
    /// The tree as YAML.
    Yaml,
}

/// The formats of the drill-down commands (`top`, `stats`, `explain`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum DataFormat {
    /// A table for people.
    #[default]
    Table,
    /// JSON, integers only, fixed key order.
    Json,
    /// The same document as YAML.
    Yaml,
}

/// Which bytes a profile shows (`--view`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum View {
    /// OMMX 2.9.3's logical in-memory bytes.
    #[default]
    Memory,
    /// Encoded protobuf bytes per path; the total is the instance's size.
    Wire,
    /// Both side by side, with the in-memory/on-disk ratio (table format).
    Both,
}

/// Options of the human views.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ViewOptions {
    pub depth: Option<usize>,
    pub min_percent: f64,
    pub top: usize,
}

impl Default for ViewOptions {
    fn default() -> Self {
        Self {
            depth: None,
            min_percent: 0.0,
            top: 25,
        }
    }
}

//! The renderers: every document the commands show, each a module (a
//! folder with a file per format where its formats are long) implementing
//! the one contract, [`Document`]: which formats it offers, and how it
//! writes itself in each. The pictures are documents too, of one format
//! each (the flamegraphs' SVG, `svg.rs` and `diff/svg.rs`; the report
//! page's HTML, `html/`). Beside them, what renderers share (`header`,
//! `data`, `style`, `width`, `svg_frames`).

pub mod advice;
pub mod check;
pub mod data;
pub mod diff;
pub mod document;
pub mod explain;
pub mod format;
pub mod header;
pub mod html;
pub mod layers;
pub mod profile;
pub mod records;
pub mod registry;
pub mod stats;
pub mod style;
pub mod svg;
pub mod svg_frames;
pub mod top;
pub mod width;

pub use crate::profile::family::{escape_frame, escape_frame_chars};
pub use crate::profiled::{escape_control, file_frame, layer_frame, Account, Profile};
pub use document::{offers, write, Document};
pub use format::Format;
pub use profile::{ProfileView, View, ViewOptions};

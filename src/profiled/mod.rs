//! What a run found out about its input: the document (container, layers),
//! each instance's profile and counts, and the view of them every output
//! shows. Floor 0: the vocabulary every other floor speaks.

pub mod accounting;
pub mod envelope;
pub mod files;
pub mod gathered;
pub mod loaded;
pub mod real;
pub mod registry;
pub mod view;

use std::collections::BTreeMap;

use crate::profile::family::escape_frame_chars;
use crate::profile::Aggregate;

pub use accounting::{Accounting, Schema};
pub use gathered::{ByOwner, Gathered, Growth, InstanceCounts, Unprofiled};
pub use loaded::{BaselineInfo, Loaded};
pub use view::{Account, Profile};
/// The root frame naming an instance layer when several are shown:
/// `layer[1]`, or `layer[0] (title)` (the parenthesis keeps a title that
/// ends in digits from reading as a count).
pub fn layer_frame(index: usize, title: Option<&str>) -> String {
    match title {
        Some(t) => format!("layer[{index}] ({})", escape_frame_chars(t)),
        None => format!("layer[{index}]"),
    }
}

/// Text from an input (a title, an annotation, a name in an archive), made
/// safe for a terminal: control characters, and the invisible marks that
/// reorder text (bidirectional overrides), are written as escapes (`\x1b`,
/// `\n`, `\u{202e}`); everything else is kept.
pub fn escape_control(text: &str) -> std::borrow::Cow<'_, str> {
    let hazard = |c: char| {
        c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(hazard) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if hazard(c) && (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if hazard(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The root frame naming one input when several are shown: `file[0] (name)`.
pub fn file_frame(index: usize, name: &str) -> String {
    format!("file[{index}] ({})", escape_frame_chars(name))
}

/// Counts a caller may want to show next to the profile.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct InstanceSummary {
    pub variables: u64,
    pub constraints: u64,
    pub removed_constraints: u64,
    pub named_functions: u64,
    /// Stored monomials over the objective, constraints and removed constraints.
    pub terms: u64,
    /// Bytes of the encoded instance.
    pub wire_bytes: u64,
}

/// What one function adds to the summary's terms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Terms {
    pub stored: u64,
    pub unprofiled: Unprofiled,
}

/// What kind of container held the instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Container {
    /// Raw `ommx.v1.Instance` bytes.
    Raw,
    /// An OCI image layout in a tar archive (an `.ommx` file).
    Archive,
    /// An extracted OCI image-layout directory.
    Directory,
    /// An artifact's layers handed over by OMMX itself (a notebook's
    /// `ommx.artifact.Artifact`).
    Artifact,
    /// An image of OMMX's local registry, read by its name (where from:
    /// [`InputInfo::registry`]).
    Registry,
}

/// One layer of an archive's manifest.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LayerInfo {
    /// Position in the manifest (all layers).
    pub index: usize,
    pub media_type: String,
    pub digest: String,
    pub size: u64,
    pub annotations: BTreeMap<String, String>,
    /// Position among the instance layers, for instance layers.
    pub instance_index: Option<usize>,
    /// Why the layer is not profiled, for the others.
    pub not_profiled: Option<String>,
}

impl LayerInfo {
    pub fn title(&self) -> Option<&str> {
        self.annotations
            .get("org.ommx.v1.instance.title")
            .map(String::as_str)
    }
}

/// What the input turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputInfo {
    pub name: String,
    /// Size of the input as stored (compressed, when it is), when known.
    pub file_bytes: Option<u64>,
    pub container: Container,
    pub gzip: bool,
    pub layers: Vec<LayerInfo>,
    /// The schema raw input was read with (`None` for archives and
    /// directories, whose layers name theirs by media type).
    pub raw_schema: Option<Schema>,
    /// Where in OMMX's local registry the input was read from, for an image
    /// named by reference.
    pub registry: Option<Box<registry::Origin>>,
}

/// The profile of one instance.
#[derive(Debug, Clone)]
pub struct ProfiledInstance {
    /// Position among the archive's instance layers; `None` for raw input.
    pub instance_index: Option<usize>,
    /// The position the pass read it at, as the analyses riding on the pass
    /// were told (`EntityObserver::begin`): its own, or, for a layer whose
    /// blob an earlier layer lists too (read once), that layer's.
    pub observed_as: Option<usize>,
    pub title: Option<String>,
    pub summary: InstanceSummary,
    pub aggregate: Aggregate,
    /// Encoded bytes per path, when the pass was asked for the wire view.
    pub wire: Option<Aggregate>,
    /// The schema the payload was read with.
    pub schema: Schema,
    /// Whose accounting the aggregate follows.
    pub accounting: Accounting,
    /// What the pass gathered for the real-memory estimate; `None` for a
    /// profile read back from JSON.
    pub gathered: Option<Gathered>,
    /// What loading it would really take in that accounting's runtime (an
    /// estimate, `real_memory`, made by `api` after the pass); `None` for a
    /// profile read back from JSON that had none.
    pub real_memory: Option<real::RealMemory>,
    /// What OMMX 3.0's accounting makes of the same v1 instance, counted in
    /// the same pass when it was asked to compare (`pass::Reading::compare`):
    /// one per archive layer the pass was told lists its blob (3.0 folds
    /// each layer's annotations into an instance of its own), the
    /// instance's own first; empty otherwise.
    pub compared: Vec<Compared>,
}

/// The comparison of a v1 instance counted under OMMX 2.9.3's accounting
/// with OMMX 3.0's, made in the same pass.
#[derive(Debug, Clone)]
pub enum Compared {
    /// The instance under 3.0's accounting.
    Measured(Box<ProfiledInstance>),
    /// 3.0 refuses what 2.9.3 accepts: its message, as `--accounting 3.0`
    /// gives it.
    Refused(String),
}

#[derive(Debug, Clone)]
pub struct ProfiledInput {
    /// What the input turned out to be: its name, container, layers.
    pub input: InputInfo,
    pub instances: Vec<ProfiledInstance>,
}

//! The check report as data: the overall verdict, and per file every limit
//! of every rule with its worst path and all failing paths.

use std::io::Write;

use anyhow::Result;

use crate::check::Verdicts;
use crate::profiled::envelope::Envelope;

/// The report as JSON or (`yaml`) YAML.
pub(super) fn write(verdicts: &Verdicts, yaml: bool, out: &mut dyn Write) -> Result<()> {
    Envelope::untooled(verdicts).write(yaml, out)
}

//! OMMX's folded-stack text: one `path bytes` line per path holding bytes,
//! sorted as whole strings. Each line ends with a newline.

use std::io::{self, Write};

use crate::report::Profile;

pub fn render(profile: &Profile<'_>, out: &mut dyn Write) -> io::Result<()> {
    for (path, bytes) in profile.aggregate.folded_lines() {
        writeln!(out, "{path} {bytes}")?;
    }
    Ok(())
}

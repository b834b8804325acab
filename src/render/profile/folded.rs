//! OMMX's folded-stack text: one `path bytes` line per path holding bytes,
//! sorted as whole strings. Each line ends with a newline.

use std::io::{self, Write};

use super::ProfileView;

pub(super) fn write(view: &ProfileView<'_>, out: &mut dyn Write) -> io::Result<()> {
    let profile = view.profile;
    for (path, bytes) in profile.aggregate.folded_lines() {
        writeln!(out, "{path} {bytes}")?;
    }
    Ok(())
}

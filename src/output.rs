//! Where rendered bytes go: stdout, or a file written to a temporary name in
//! the same directory and renamed into place, so a failure never leaves a
//! partial or clobbered file.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    Stdout,
    File(PathBuf),
}

impl Output {
    pub fn from_arg(arg: Option<&str>) -> Self {
        match arg {
            None | Some("-") => Output::Stdout,
            Some(path) => Output::File(PathBuf::from(path)),
        }
    }

    /// Refuses to write over an input.
    pub fn check_not_input(&self, inputs: &[&Path]) -> Result<()> {
        let Output::File(out) = self else {
            return Ok(());
        };
        let out_canon = fs::canonicalize(out).ok();
        for input in inputs {
            let same = match (&out_canon, fs::canonicalize(input).ok()) {
                (Some(a), Some(b)) => *a == b,
                _ => out == input,
            };
            if same {
                bail!(
                    "{}: refusing to write the output over the input file",
                    out.display()
                );
            }
        }
        Ok(())
    }

    /// Writes everything `render` produces, atomically for files.
    pub fn write_with(&self, render: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
        let _span = crate::trace::span(crate::trace::Phase::Render);
        self.write_untimed(render)
    }

    /// [`Output::write_with`] without counting the time as rendering (for
    /// the trace file itself).
    pub fn write_untimed(&self, render: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
        match self {
            Output::Stdout => {
                let stdout = io::stdout();
                let mut lock = io::BufWriter::new(stdout.lock());
                render(&mut lock)?;
                lock.flush()?;
                Ok(())
            }
            Output::File(path) => {
                let dir = match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => Path::new("."),
                };
                let mut tmp = tempfile::Builder::new()
                    .prefix(".memprof-")
                    .tempfile_in(dir)
                    .with_context(|| {
                        format!(
                            "{}: cannot create a temporary file in {}",
                            path.display(),
                            dir.display()
                        )
                    })?;
                {
                    let mut w = io::BufWriter::new(tmp.as_file_mut());
                    render(&mut w)?;
                    w.flush()
                        .with_context(|| format!("{}: write failed", path.display()))?;
                }
                tmp.persist(path).with_context(|| {
                    format!("{}: cannot move the output into place", path.display())
                })?;
                Ok(())
            }
        }
    }
}

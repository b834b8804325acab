//! Where rendered bytes go: stdout, or a file written to a temporary name in
//! the same directory and renamed into place, so a failure never leaves a
//! partial or clobbered file. The output may not be one of the inputs, under
//! any name (another spelling, a symbolic or a hard link).

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
        if inputs.iter().any(|input| names_same_file(out, input)) {
            bail!(
                "{}: refusing to write the output over the input file",
                out.display()
            );
        }
        Ok(())
    }

    /// Writes everything `render` produces, atomically for files. An error,
    /// from the renderer or the disk, leaves an existing file untouched and
    /// removes the temporary one.
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
                let mut out = PipeWatch {
                    inner: io::BufWriter::new(stdout.lock()),
                    broken: false,
                };
                let written = render(&mut out).and_then(|()| Ok(out.flush()?));
                match written {
                    // Whatever wrapped it (a YAML error hides its cause), a
                    // reader that went away (`| head`) is a broken pipe.
                    Err(_) if out.broken => Err(io::Error::from(io::ErrorKind::BrokenPipe).into()),
                    written => written,
                }
            }
            Output::File(path) => {
                let dir = match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => Path::new("."),
                };
                let mut builder = tempfile::Builder::new();
                builder.prefix(".memprof-");
                // A new file's usual mode (0666 less the umask), not 0600.
                #[cfg(unix)]
                builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
                let mut tmp = builder.tempfile_in(dir).with_context(|| {
                    format!(
                        "{}: cannot create a temporary file in {}",
                        path.display(),
                        dir.display()
                    )
                })?;
                {
                    let mut w = io::BufWriter::new(tmp.as_file_mut());
                    render(&mut w)
                        .and_then(|()| Ok(w.flush()?))
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

/// A writer that remembers whether a write failed because its reader went
/// away.
struct PipeWatch<W> {
    inner: W,
    broken: bool,
}

impl<W: Write> PipeWatch<W> {
    fn watch<T>(&mut self, result: io::Result<T>) -> io::Result<T> {
        if let Err(e) = &result {
            self.broken |= e.kind() == io::ErrorKind::BrokenPipe;
        }
        result
    }
}

impl<W: Write> Write for PipeWatch<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let result = self.inner.write(buf);
        self.watch(result)
    }

    fn flush(&mut self) -> io::Result<()> {
        let result = self.inner.flush();
        self.watch(result)
    }
}

/// Whether two existing paths are one file (hard links included).
/// The files among command-line inputs (`-`, stdin, is not one), to check
/// an output against.
pub fn input_files<'a>(args: impl IntoIterator<Item = &'a str>) -> Vec<&'a Path> {
    args.into_iter()
        .filter(|a| *a != "-")
        .map(Path::new)
        .collect()
}

/// Whether two paths name the same file: another spelling, a symbolic or a
/// hard link, or (for a file not yet written) the same name in the same
/// directory.
pub fn names_same_file(a: &Path, b: &Path) -> bool {
    match (resolve(a), resolve(b)) {
        (Some(x), Some(y)) => x == y || same_file(&x, &y),
        _ => a == b,
    }
}

/// The canonical path of `path`, or of its directory joined with its name
/// when the file does not exist yet.
fn resolve(path: &Path) -> Option<PathBuf> {
    if let Ok(canonical) = fs::canonicalize(path) {
        return Some(canonical);
    }
    let name = path.file_name()?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(fs::canonicalize(dir).ok()?.join(name))
}

fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(a), Ok(b)) = (fs::metadata(a), fs::metadata(b)) {
            return a.dev() == b.dev() && a.ino() == b.ino();
        }
    }
    let _ = (a, b);
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn an_error_mid_render_keeps_the_old_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        fs::write(&path, "previous").unwrap();
        let output = Output::File(path.clone());
        let err = output
            .write_with(|w| {
                // More than a BufWriter holds, so part of it reaches the disk.
                w.write_all(&[b'x'; 100_000])?;
                anyhow::bail!("the renderer gave up")
            })
            .unwrap_err();
        assert!(format!("{err:#}").contains("out.txt: write failed: the renderer gave up"));
        assert_eq!(fs::read_to_string(&path).unwrap(), "previous");
        assert_eq!(entries(dir.path()), ["out.txt"]);
    }

    #[test]
    fn a_finished_render_replaces_the_file_by_renaming() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        fs::write(&path, "previous").unwrap();
        // A second name for the old file: written in place, it would change too.
        let old = dir.path().join("old.txt");
        fs::hard_link(&path, &old).unwrap();
        Output::File(path.clone())
            .write_with(|w| Ok(w.write_all(b"new")?))
            .unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(fs::read_to_string(&old).unwrap(), "previous");
        assert_eq!(entries(dir.path()), ["old.txt", "out.txt"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_ne!(
                mode & 0o044,
                0,
                "readable beyond the owner as usual: {mode:o}"
            );
        }
    }

    #[test]
    fn the_input_is_refused_under_any_name() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.pb");
        fs::write(&input, "x").unwrap();
        let respelled = dir.path().join(".").join("in.pb");
        let hard = dir.path().join("hard.pb");
        fs::hard_link(&input, &hard).unwrap();
        let mut names = vec![input.clone(), respelled, hard];
        #[cfg(unix)]
        {
            let soft = dir.path().join("soft.pb");
            std::os::unix::fs::symlink(&input, &soft).unwrap();
            names.push(soft);
        }
        for name in names {
            let err = Output::File(name.clone())
                .check_not_input(&[&input])
                .unwrap_err();
            assert!(err.to_string().contains("refusing"), "{}", name.display());
        }
        let other = dir.path().join("other.svg");
        Output::File(other).check_not_input(&[&input]).unwrap();
        Output::Stdout.check_not_input(&[&input]).unwrap();
    }
}

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

    /// Refuses to write over an input, or anywhere inside an input that is
    /// a directory (an OCI layout, a `--baseline` directory).
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
        if let Some(dir) = inputs.iter().find(|input| is_inside(out, input)) {
            bail!(
                "{}: refusing to write the output inside the input directory {}",
                out.display(),
                dir.display()
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
                let mut lock = io::BufWriter::new(stdout.lock());
                render(&mut lock)?;
                lock.flush()?;
                Ok(())
            }
            Output::File(path) if !replaceable(path) => {
                // A FIFO, a device, /dev/stdout: written into as it is, never
                // replaced (a temporary file renamed over /dev/null would
                // turn it into a regular file).
                let file = fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .with_context(|| format!("{}: cannot open for writing", path.display()))?;
                let mut w = io::BufWriter::new(file);
                render(&mut w)
                    .and_then(|()| Ok(w.flush()?))
                    .with_context(|| format!("{}: write failed", path.display()))?;
                Ok(())
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

/// Whether `path` is a file that may be replaced by renaming a new one over
/// it: a regular file, or nothing yet. Anything else (a FIFO, a character
/// or block device, a socket), and every name under `/dev` and `/proc`
/// (`/dev/stdout` is a link into `/proc`), is written into in place.
fn replaceable(path: &Path) -> bool {
    let special_dir = |p: &Path| p.starts_with("/dev") || p.starts_with("/proc");
    if special_dir(path) || resolve(path).is_some_and(|p| special_dir(&p)) {
        return false;
    }
    // A directory is left to the rename, which refuses it.
    fs::metadata(path).map_or(true, |meta| meta.is_file() || meta.is_dir())
}

/// Whether `path` would land inside `dir`, an existing directory.
fn is_inside(path: &Path, dir: &Path) -> bool {
    if !dir.is_dir() {
        return false;
    }
    match (resolve(path), fs::canonicalize(dir)) {
        (Some(path), Ok(dir)) => path.starts_with(&dir),
        _ => false,
    }
}

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

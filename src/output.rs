//! Where rendered bytes go: stdout, or a file written to a temporary name in
//! the same directory and renamed into place, so a failure never leaves a
//! partial or clobbered file. The output may not be one of the inputs, under
//! any name (another spelling, a symbolic or a hard link).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

use anyhow::{bail, Context, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    Stdout,
    File(PathBuf),
}

impl Output {
    pub fn from_arg(arg: Option<&Path>) -> Self {
        match arg {
            None => Output::Stdout,
            Some(path) if path.as_os_str() == "-" => Output::Stdout,
            Some(path) => Output::File(path.to_path_buf()),
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
            Output::File(path) => write_atomically(path, render),
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

/// Named temporary files in flight, removed if SIGINT, SIGTERM or SIGHUP
/// ends the process before they are renamed into place or deleted.
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Starts, once, the thread that removes [`TEMPORARIES`] when a signal
/// arrives and then ends the process as the signal would have.
fn remove_temporaries_on_signals() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                // Held to the end: no temporary is named meanwhile.
                let temporaries = TEMPORARIES.lock().unwrap_or_else(|e| e.into_inner());
                for path in temporaries.iter() {
                    let _ = fs::remove_file(path);
                }
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                std::process::exit(128 + signal);
            }
        });
    });
}

/// A name registered in [`TEMPORARIES`] while it lives.
struct Registered(PathBuf);

impl Registered {
    /// Runs `create`, which names a file, with the registry locked, so that
    /// a signal cannot slip in between the file's creation and its
    /// registration.
    fn create<T>(create: impl FnOnce() -> io::Result<(T, PathBuf)>) -> io::Result<(T, Self)> {
        remove_temporaries_on_signals();
        let mut temporaries = TEMPORARIES.lock().unwrap_or_else(|e| e.into_inner());
        let (value, path) = create()?;
        temporaries.push(path.clone());
        Ok((value, Registered(path)))
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut temporaries = TEMPORARIES.lock().unwrap_or_else(|e| e.into_inner());
        temporaries.retain(|p| *p != self.0);
    }
}

/// An unnamed file in `dir` (Linux's O_TMPFILE): if the process dies, even
/// by SIGKILL, it vanishes. `None` where the file system cannot make one.
#[cfg(target_os = "linux")]
fn unnamed_file_in(dir: &Path) -> io::Result<Option<fs::File>> {
    use rustix::fs::{Mode, OFlags};
    use rustix::io::Errno;
    match rustix::fs::open(
        dir,
        OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o666),
    ) {
        Ok(fd) => Ok(Some(fs::File::from(fd))),
        Err(Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(target_os = "linux"))]
fn unnamed_file_in(_dir: &Path) -> io::Result<Option<fs::File>> {
    Ok(None)
}

/// Gives the unnamed `file` the name `path` (which must not exist).
#[cfg(target_os = "linux")]
fn link_unnamed(file: &fs::File, path: &Path) -> io::Result<()> {
    use rustix::fs::{AtFlags, CWD};
    use std::os::fd::AsRawFd;
    let proc_path = format!("/proc/self/fd/{}", file.as_raw_fd());
    rustix::fs::linkat(CWD, proc_path.as_str(), CWD, path, AtFlags::SYMLINK_FOLLOW)
        .or_else(|_| rustix::fs::linkat(file, "", CWD, path, AtFlags::EMPTY_PATH))
        .map_err(io::Error::from)
}

#[cfg(not(target_os = "linux"))]
fn link_unnamed(_file: &fs::File, _path: &Path) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

/// A path that opens `file` again, unnamed or not (`/proc/self/fd/N`).
#[cfg(unix)]
pub fn descriptor_path(file: &fs::File) -> PathBuf {
    use std::os::fd::AsRawFd;
    let dir = if cfg!(target_os = "linux") {
        "/proc/self/fd"
    } else {
        "/dev/fd"
    };
    PathBuf::from(format!("{dir}/{}", file.as_raw_fd()))
}

/// A fresh name for a temporary file in `dir`.
fn temporary_name(dir: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    dir.join(format!(".memprof-{}-{n}-{nanos:08x}", std::process::id()))
}

/// Writes `render`'s output to `path` atomically: into an unnamed file
/// where the system has them (else a registered temporary name), renamed
/// into place when complete. A failure leaves `path` as it was.
fn write_atomically(path: &Path, render: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let cannot_create = || {
        format!(
            "{}: cannot create a temporary file in {}",
            path.display(),
            dir.display()
        )
    };
    let write = |file: &mut fs::File| -> Result<()> {
        let mut w = io::BufWriter::new(file);
        render(&mut w)
            .and_then(|()| Ok(w.flush()?))
            .with_context(|| format!("{}: write failed", path.display()))
    };
    let cannot_move = || format!("{}: cannot move the output into place", path.display());
    if let Some(mut file) = unnamed_file_in(dir).with_context(cannot_create)? {
        write(&mut file)?;
        // Named only for the instant between the link and the rename.
        let ((), name) = Registered::create(|| {
            let name = temporary_name(dir);
            link_unnamed(&file, &name).map(|()| ((), name))
        })
        .with_context(cannot_create)?;
        let renamed = fs::rename(&name.0, path);
        if renamed.is_err() {
            let _ = fs::remove_file(&name.0);
        }
        drop(name);
        return renamed.with_context(cannot_move);
    }
    let mut builder = tempfile::Builder::new();
    builder.prefix(".memprof-");
    // A new file's usual mode (0666 less the umask), not 0600.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let (mut tmp, name) = Registered::create(|| {
        let tmp = builder.tempfile_in(dir)?;
        let name = tmp.path().to_path_buf();
        Ok((tmp, name))
    })
    .with_context(cannot_create)?;
    write(tmp.as_file_mut())?;
    tmp.persist(path).with_context(cannot_move)?;
    drop(name);
    Ok(())
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

/// Refuses outputs of one command that name one file twice (under any
/// name): the later would silently replace the earlier.
pub fn check_distinct(outputs: &[PathBuf]) -> Result<()> {
    for (i, a) in outputs.iter().enumerate() {
        if let Some(b) = outputs[..i].iter().find(|b| names_same_file(a, b)) {
            let spelled = match a == b {
                true => String::new(),
                false => format!(" (also as {})", b.display()),
            };
            bail!(
                "{}: two outputs of the command name this file{spelled}; one would replace the other",
                a.display(),
            );
        }
    }
    Ok(())
}

/// The files among command-line inputs (`-`, stdin, is not one), to check
/// an output against.
pub fn input_files<'a>(args: impl IntoIterator<Item = &'a Path>) -> Vec<&'a Path> {
    args.into_iter().filter(|a| a.as_os_str() != "-").collect()
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

    #[test]
    fn two_outputs_of_one_command_may_not_be_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.svg");
        let b = dir.path().join("b.svg");
        check_distinct(&[a.clone(), b.clone()]).unwrap();
        let err = check_distinct(&[a.clone(), b, a.clone()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: two outputs of the command name this file; one would replace the other",
                a.display()
            )
        );
        fs::create_dir(dir.path().join("sub")).unwrap();
        let respelled = dir.path().join("sub/../a.svg");
        let err = check_distinct(&[respelled.clone(), a.clone()]).unwrap_err();
        assert!(
            err.to_string()
                .contains(&format!("(also as {})", respelled.display())),
            "{err}"
        );
    }
}

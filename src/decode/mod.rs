//! From a file name to profiled instances: sniff what the input is (raw
//! protobuf, OCI archive, OCI directory, any of them gzip-compressed, or
//! stdin), find the instance layers, and stream each through
//! [`instance::profile_instance`] into its own [`Aggregate`].
//!
//! The input kind is decided by content, never by the file name.

pub mod archive;
pub mod baseline;
pub mod instance;
pub mod limits;
pub mod wire;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use indicatif::ProgressBar;

use crate::profile::Aggregate;
pub use archive::ArchiveError;
pub use instance::{EntityObserver, InstanceError, InstanceSummary, ProfileOptions};
pub use limits::Limits;

/// Read buffer size: large enough that syscalls do not show in profiles.
const BUF_SIZE: usize = 256 * 1024;

pub const INSTANCE_MEDIA_TYPE: &str = "application/org.ommx.v1.instance";

/// Where the bytes come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Stdin,
    Path(PathBuf),
}

impl Input {
    pub fn from_arg(arg: &str) -> Self {
        if arg == "-" {
            Input::Stdin
        } else {
            Input::Path(PathBuf::from(arg))
        }
    }

    /// `-` is stdin; anything else a path, whatever its bytes.
    pub fn from_path(arg: &std::path::Path) -> Self {
        if arg.as_os_str() == "-" {
            Input::Stdin
        } else {
            Input::Path(arg.to_path_buf())
        }
    }

    /// How the input is named in messages and reports.
    pub fn display_name(&self) -> String {
        match self {
            Input::Stdin => "<stdin>".to_string(),
            Input::Path(p) => p.display().to_string(),
        }
    }
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
pub struct Document {
    pub name: String,
    /// Size of the input as stored (compressed, when it is), when known.
    pub file_bytes: Option<u64>,
    pub container: Container,
    pub gzip: bool,
    pub layers: Vec<LayerInfo>,
}

/// The profile of one instance.
#[derive(Debug, Clone)]
pub struct ProfiledInstance {
    /// Position among the archive's instance layers; `None` for raw input.
    pub instance_index: Option<usize>,
    pub title: Option<String>,
    pub summary: InstanceSummary,
    pub aggregate: Aggregate,
    /// Encoded bytes per path, when [`ProfileOptions::wire`] asked for them.
    pub wire: Option<Aggregate>,
}

#[derive(Debug, Clone)]
pub struct Report {
    pub document: Document,
    pub instances: Vec<ProfiledInstance>,
}

/// Which instances to profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// Every instance layer.
    All,
    /// The N-th instance layer (0-based, manifest order).
    Layer(usize),
    /// None: list the layers only.
    ListOnly,
}

/// Everything that can go wrong reading an input. Messages do not repeat the
/// file name; the caller puts it in front.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("cannot read: {0}")]
    Io(#[from] io::Error),
    #[error("the input is empty")]
    Empty,
    #[error("cannot read: the file changed size while it was read ({opened} bytes when opened, {now} after); read it once it is complete")]
    Changed { opened: u64, now: u64 },
    #[error("not an OMMX instance or archive: the content looks like {0}")]
    WrongKind(&'static str),
    #[error("gzip data is corrupt: {0}")]
    Gzip(io::Error),
    #[error("{}", limits::decompressed_too_large(*.0))]
    DecompressedTooLarge(u64),
    #[error("{}", limits::stream_too_long(*.0))]
    StreamTooLong(u64),
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    #[error("the archive has no {INSTANCE_MEDIA_TYPE} layer (layers: {0})")]
    NoInstanceLayer(String),
    #[error("--layer {requested} is out of range: the input has {available} instance layer(s)")]
    LayerOutOfRange { requested: usize, available: usize },
    #[error("{}{source}", layer.map(|l| format!("instance layer {l}: ")).unwrap_or_default())]
    Instance {
        layer: Option<usize>,
        source: InstanceError,
    },
}

/// Magic numbers of formats people mistake for instances, for a helpful message.
fn looks_like(head: &[u8]) -> Option<&'static str> {
    let trimmed = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map(|i| &head[i..]);
    Some(match head {
        [0x89, b'P', b'N', b'G', ..] => "a PNG image",
        [0xff, 0xd8, 0xff, ..] => "a JPEG image",
        [b'%', b'P', b'D', b'F', ..] => "a PDF document",
        [b'P', b'K', 3, 4, ..] => "a zip archive",
        [0x28, 0xb5, 0x2f, 0xfd, ..] => "zstd-compressed data (decompress it first)",
        [b'B', b'Z', b'h', ..] => "bzip2-compressed data (decompress it first)",
        [0xfd, b'7', b'z', b'X', b'Z', 0, ..] => "xz-compressed data (decompress it first)",
        _ => match trimmed {
            Some([b'{' | b'[', ..]) => "JSON text",
            Some([b'<', ..]) => "XML or HTML text",
            _ => return None,
        },
    })
}

fn is_gzip(head: &[u8]) -> bool {
    head.starts_with(&[0x1f, 0x8b])
}

/// A tar header has "ustar" at offset 257 (POSIX "ustar\0", GNU "ustar  ").
fn is_tar(head: &[u8]) -> bool {
    head.len() >= 262 && &head[257..262] == b"ustar"
}

/// Reads up to `n` bytes without consuming them.
fn peek<R: BufRead>(reader: &mut R, n: usize) -> io::Result<Vec<u8>> {
    // A BufReader's buffer may hold less than n after one fill; that is fine
    // for sniffing: BUF_SIZE is far above the 512 bytes a tar header needs.
    let buf = reader.fill_buf()?;
    Ok(buf[..buf.len().min(n)].to_vec())
}

/// How each instance is profiled, and the analysis riding on the pass (it
/// sees every instance's entities, told of each instance by
/// [`EntityObserver::begin`]).
pub struct Pass<'a> {
    pub options: ProfileOptions,
    pub observer: &'a mut dyn EntityObserver,
}

/// Opens, sniffs and (unless listing only) profiles `input` with OMMX's
/// logical accounting only, within the default [`Limits`].
pub fn read(
    input: &Input,
    selection: Selection,
    progress: &ProgressBar,
) -> Result<Report, DecodeError> {
    let mut nothing = ();
    let mut pass = Pass {
        options: ProfileOptions::default(),
        observer: &mut nothing,
    };
    read_with(input, selection, &Limits::default(), &mut pass, progress)
}

/// Opens, sniffs and (unless listing only) profiles `input` within `limits`,
/// as `pass` asks.
pub fn read_with(
    input: &Input,
    selection: Selection,
    limits: &Limits,
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
) -> Result<Report, DecodeError> {
    let name = input.display_name();
    match input {
        Input::Path(path) if path.is_dir() => {
            archive::read_directory(path, name, selection, pass, progress)
        }
        Input::Path(path) => {
            let file = File::open(path)?;
            let opened = file.metadata()?;
            if opened.is_file() {
                let handle = file.try_clone()?;
                let result = read_file(file, name, selection, limits, pass, progress);
                // What was read from a file that shrank or grew meanwhile is
                // not the file (a gzip member boundary, say, reads as an end).
                let now = handle.metadata()?.len();
                if now != opened.len() {
                    return Err(DecodeError::Changed {
                        opened: opened.len(),
                        now,
                    });
                }
                result
            } else {
                // A pipe (`<(...)`), a FIFO or a device: no size, no seeking.
                read_stream(file, name, selection, limits, pass, progress)
            }
        }
        Input::Stdin => read_stream(io::stdin(), name, selection, limits, pass, progress),
    }
}

/// Reads an input of unknown size that cannot seek (stdin, a pipe). At most
/// `limits.max_decompressed` bytes are read from it, so an endless stream
/// ends in an error rather than in exhausted memory or disk.
fn read_stream<R: Read + Send>(
    reader: R,
    name: String,
    selection: Selection,
    limits: &Limits,
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
) -> Result<Report, DecodeError> {
    let tripped = Arc::new(AtomicBool::new(false));
    let capped = limits::Capped::new(reader, limits.max_decompressed, tripped.clone());
    let result = (|| {
        let mut stream = BufReader::with_capacity(BUF_SIZE, capped);
        let head = peek(&mut stream, 512)?;
        if is_gzip(&head) || is_tar(&head) {
            // Archives need random access: spool to an unlinked temporary file.
            let mut spool = tempfile::tempfile()?;
            io::copy(&mut stream, &mut spool)?;
            let mut report = read_file(spool, name, selection, limits, pass, progress)?;
            report.document.file_bytes = None;
            Ok(report)
        } else {
            read_raw(stream, None, name, false, selection, pass, progress)
        }
    })();
    if result.is_err() && tripped.load(Ordering::Relaxed) {
        return Err(DecodeError::StreamTooLong(limits.max_decompressed));
    }
    result
}

/// Sniffs and profiles an open file (read from its start) of any kind but a
/// directory; `name` is how reports call it.
pub fn read_file(
    file: File,
    name: String,
    selection: Selection,
    limits: &Limits,
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
) -> Result<Report, DecodeError> {
    let tripped = Arc::new(AtomicBool::new(false));
    let result = read_file_capped(file, name, selection, limits, &tripped, pass, progress);
    // Whatever a reader made of a stream stopped at the limit, say so.
    if result.is_err() && tripped.load(Ordering::Relaxed) {
        return Err(DecodeError::DecompressedTooLarge(limits.max_decompressed));
    }
    result
}

fn read_file_capped(
    mut file: File,
    name: String,
    selection: Selection,
    limits: &Limits,
    tripped: &Arc<AtomicBool>,
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
) -> Result<Report, DecodeError> {
    file.seek(SeekFrom::Start(0))?;
    let file_bytes = file.metadata()?.len();
    progress.set_length(file_bytes);
    let mut reader = BufReader::with_capacity(BUF_SIZE, file);
    let head = peek(&mut reader, 512)?;
    if head.is_empty() {
        return Err(DecodeError::Empty);
    }
    if is_gzip(&head) {
        let mut gz = BufReader::with_capacity(
            BUF_SIZE,
            limits::Capped::new(
                crate::trace::TimedRead {
                    inner: flate2::bufread::MultiGzDecoder::new(reader),
                    phase: crate::trace::Phase::Decompress,
                },
                limits.max_decompressed,
                tripped.clone(),
            ),
        );
        let inner = peek(&mut gz, 512).map_err(DecodeError::Gzip)?;
        if is_tar(&inner) {
            let file = gz.into_inner().into_inner().inner.into_inner().into_inner();
            return archive::read_tar(
                archive::TarSource::gzip(file, limits.max_decompressed, tripped.clone())?,
                name,
                file_bytes,
                selection,
                pass,
                progress,
            );
        }
        return read_raw(gz, Some(file_bytes), name, true, selection, pass, progress);
    }
    if is_tar(&head) {
        let file = reader.into_inner();
        return archive::read_tar(
            archive::TarSource::plain(file)?,
            name,
            file_bytes,
            selection,
            pass,
            progress,
        );
    }
    read_raw(
        reader,
        Some(file_bytes),
        name,
        false,
        selection,
        pass,
        progress,
    )
}

fn read_raw<R: BufRead + Send>(
    mut reader: R,
    file_bytes: Option<u64>,
    name: String,
    gzip: bool,
    selection: Selection,
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
) -> Result<Report, DecodeError> {
    let head =
        peek(&mut reader, 512).map_err(|e| if gzip { DecodeError::Gzip(e) } else { e.into() })?;
    if head.is_empty() {
        return Err(DecodeError::Empty);
    }
    if let Some(kind) = looks_like(&head) {
        return Err(DecodeError::WrongKind(kind));
    }
    let document = Document {
        name,
        file_bytes,
        container: Container::Raw,
        gzip,
        layers: Vec::new(),
    };
    let mut instances = Vec::new();
    match selection {
        Selection::ListOnly => {}
        Selection::Layer(n) if n > 0 => {
            return Err(DecodeError::LayerOutOfRange {
                requested: n,
                available: 1,
            })
        }
        _ => {
            // Count progress per buffer refill, not per (often one-byte) read.
            let reader = BufReader::with_capacity(BUF_SIZE, progress.wrap_read(reader));
            // Only an uncompressed file's size bounds the instance's length.
            let total = if gzip { None } else { file_bytes };
            instances.push(profile_one(reader, total, None, None, pass)?);
        }
    }
    Ok(Report {
        document,
        instances,
    })
}

/// Profiles one instance stream into fresh accounts; a stream of unknown
/// length is read under the `--max-element` limit.
pub(crate) fn profile_one<R: Read + Send>(
    reader: R,
    total: Option<u64>,
    instance_index: Option<usize>,
    title: Option<String>,
    pass: &mut Pass<'_>,
) -> Result<ProfiledInstance, DecodeError> {
    let max_element = total.is_none().then(limits::max_element);
    profile_one_within(reader, total, max_element, instance_index, title, pass)
}

/// [`profile_one`] with the element limit given.
pub(crate) fn profile_one_within<R: Read + Send>(
    reader: R,
    total: Option<u64>,
    max_element: Option<u64>,
    instance_index: Option<usize>,
    title: Option<String>,
    pass: &mut Pass<'_>,
) -> Result<ProfiledInstance, DecodeError> {
    let mut accounts = instance::Accounts::new(pass.options);
    pass.observer.begin(instance_index);
    let summary = instance::profile_instance_within(
        reader,
        total,
        max_element,
        &mut accounts,
        &mut *pass.observer,
    )
    .map_err(|source| DecodeError::Instance {
        layer: instance_index,
        source,
    })?;
    accounts.memory.release_cache();
    if let Some(wire) = &mut accounts.wire {
        wire.release_cache();
    }
    Ok(ProfiledInstance {
        instance_index,
        title,
        summary,
        aggregate: accounts.memory,
        wire: accounts.wire,
    })
}

//! From a file name to profiled instances: sniff what the input is (raw
//! protobuf, OCI archive, OCI directory, any of them gzip-compressed, or
//! stdin), find the instance layers, and stream each through
//! [`instance::profile_instance`] into its own [`Aggregate`].
//!
//! The input kind is decided by content, never by the file name.

pub mod archive;
pub mod baseline;
pub mod folded;
pub mod instance;
pub mod limits;
pub mod objective;
pub mod schema;
pub mod terms;
mod text_formats;
pub mod v2;
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
pub use schema::{Accounting, Reading, Schema};

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
    /// The schema raw input was read with (`None` for archives and
    /// directories, whose layers name theirs by media type).
    pub raw_schema: Option<Schema>,
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
    /// The schema the payload was read with.
    pub schema: Schema,
    /// Whose accounting the aggregate follows.
    pub accounting: Accounting,
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
    #[error("the gzip stream holds another gzip stream: decompress the file once (gunzip) and try again")]
    NestedGzip,
    #[error("an empty tar archive: it ends before its first entry, so it holds no OCI layout")]
    EmptyTar,
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
    #[error("{}{source}", layer.map(|l| format!("instance layer {l}: ")).unwrap_or_default())]
    V2 {
        layer: Option<usize>,
        source: v2::V2PassError,
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
            _ => return text_formats::describe(head),
        },
    })
}

/// Gzip's magic number. Safe to go by: no protobuf message starts with
/// 0x1f (its low three bits, a first tag's wire type, would be 7), and a
/// stream that starts so but does not inflate is reported as corrupt gzip.
fn is_gzip(head: &[u8]) -> bool {
    head.starts_with(&[0x1f, 0x8b])
}

/// A tar archive is one whose first 512-byte header carries a valid
/// checksum: the octal number at offset 148 equals the sum of the header's
/// bytes with that field read as spaces (unsigned, or signed as some old
/// writers summed). "ustar" at offset 257 proves nothing: a protobuf string
/// can hold it there.
fn is_tar(head: &[u8]) -> bool {
    let Some(header) = head.get(..512) else {
        return false;
    };
    let field = &header[148..156];
    let digits = field
        .iter()
        .copied()
        .skip_while(|&b| b == b' ')
        .take_while(|b| (b'0'..=b'7').contains(b))
        .collect::<Vec<u8>>();
    let rest_is_padding = field
        .iter()
        .skip_while(|&&b| b == b' ')
        .skip(digits.len())
        .all(|&b| b == b' ' || b == 0);
    if digits.is_empty() || !rest_is_padding {
        return false;
    }
    let Ok(stored) = u32::from_str_radix(std::str::from_utf8(&digits).unwrap_or(""), 8) else {
        return false;
    };
    let outside = header[..148].iter().chain(&header[156..]);
    let unsigned: u32 = outside.clone().map(|&b| u32::from(b)).sum::<u32>() + 8 * u32::from(b' ');
    let signed: i32 = outside.map(|&b| i32::from(b as i8)).sum::<i32>() + 8 * i32::from(b' ');
    stored == unsigned || i64::from(stored) == i64::from(signed)
}

/// An archive with no entries: tar's end-of-archive marker, a block of
/// zeros, comes first. (No protobuf message starts with a zero byte: field
/// number 0 does not exist.)
fn is_empty_tar(head: &[u8]) -> bool {
    head.len() >= 512 && head[..512].iter().all(|&b| b == 0)
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

/// A gzip file as its decoder reads it, moving the bar by the compressed
/// bytes read: the position the file's size bounds.
struct Compressed {
    file: File,
    progress: ProgressBar,
}

impl Read for Compressed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(buf)?;
        self.progress.inc(n as u64);
        Ok(n)
    }
}

/// Bytes read to decide what an input is: one tar header.
const HEAD: usize = 512;

/// Reads the first [`HEAD`] bytes (fewer only at the end of the input),
/// however the reader hands them out: a pipe or a decompressor may give a
/// few bytes at a time.
fn read_head<R: Read>(reader: &mut R) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(HEAD);
    reader.take(HEAD as u64).read_to_end(&mut head)?;
    Ok(head)
}

/// The reader again as it was before its head was read.
fn unread<R: Read>(head: Vec<u8>, reader: R) -> io::Chain<io::Cursor<Vec<u8>>, R> {
    io::Cursor::new(head).chain(reader)
}

/// Reads an input of unknown size that cannot seek (stdin, a pipe). At most
/// `limits.max_decompressed` bytes are read from it, so an endless stream
/// ends in an error rather than in exhausted memory or disk.
pub(crate) fn read_stream<R: Read + Send>(
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
        let head = read_head(&mut stream)?;
        if is_gzip(&head) || is_tar(&head) || is_empty_tar(&head) {
            // Archives need random access: spool to an unlinked temporary file.
            let mut spool = tempfile::tempfile()?;
            io::copy(&mut unread(head, stream), &mut spool)?;
            let mut report = read_file(spool, name, selection, limits, pass, progress)?;
            report.document.file_bytes = None;
            Ok(report)
        } else {
            let reader = BufReader::with_capacity(BUF_SIZE, unread(head.clone(), stream));
            read_raw(
                reader, &head, None, name, false, selection, pass, progress, None,
            )
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

/// Decides what a file is by its structure: a gzip stream (by its magic,
/// which no protobuf message can start with, then by inflating), a tar
/// archive (by its first header's checksum), and otherwise an instance,
/// which only a decode can confirm.
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
    let head = read_head(&mut reader)?;
    if head.is_empty() {
        return Err(DecodeError::Empty);
    }
    if is_gzip(&head) {
        let mut file = reader.into_inner();
        file.seek(SeekFrom::Start(0))?;
        let again = file.try_clone()?;
        // The bar follows the compressed position against the file's size.
        let compressed = Compressed {
            file,
            progress: progress.clone(),
        };
        let mut gz = limits::Capped::new(
            crate::trace::TimedRead {
                inner: flate2::bufread::MultiGzDecoder::new(BufReader::with_capacity(
                    BUF_SIZE, compressed,
                )),
                phase: crate::trace::Phase::Decompress,
            },
            limits.max_decompressed,
            tripped.clone(),
        );
        let inner = read_head(&mut gz).map_err(DecodeError::Gzip)?;
        if is_gzip(&inner) {
            return Err(DecodeError::NestedGzip);
        }
        if is_tar(&inner) {
            let file = gz.into_inner().inner.into_inner().into_inner().file;
            progress.set_position(0);
            return archive::read_tar(
                archive::TarSource::gzip(file, limits.max_decompressed, tripped.clone())?,
                name,
                file_bytes,
                selection,
                pass,
                progress,
            );
        }
        if is_empty_tar(&inner) {
            return Err(DecodeError::EmptyTar);
        }
        let tripped = tripped.clone();
        let max = limits.max_decompressed;
        let rewind = move || -> io::Result<Box<dyn Read + Send>> {
            let mut file = again.try_clone()?;
            file.seek(SeekFrom::Start(0))?;
            let gz = flate2::bufread::MultiGzDecoder::new(BufReader::with_capacity(BUF_SIZE, file));
            Ok(Box::new(limits::Capped::new(gz, max, tripped.clone())))
        };
        let reader = BufReader::with_capacity(BUF_SIZE, unread(inner.clone(), gz));
        return read_raw(
            reader,
            &inner,
            Some(file_bytes),
            name,
            true,
            selection,
            pass,
            progress,
            Some(Box::new(rewind)),
        );
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
    if is_empty_tar(&head) {
        return Err(DecodeError::EmptyTar);
    }
    let again = reader.get_ref().try_clone()?;
    let rewind = move || -> io::Result<Box<dyn Read + Send>> {
        let mut file = again.try_clone()?;
        file.seek(SeekFrom::Start(0))?;
        Ok(Box::new(file))
    };
    let reader = BufReader::with_capacity(BUF_SIZE, unread(head.clone(), reader));
    read_raw(
        reader,
        &head,
        Some(file_bytes),
        name,
        false,
        selection,
        pass,
        progress,
        Some(Box::new(rewind)),
    )
}

/// Opens raw input again from its start, for a second reading with another
/// schema. Streams that cannot be read twice (stdin, pipes) have none.
type Rewind<'r> = Option<Box<dyn FnMut() -> io::Result<Box<dyn Read + Send>> + 'r>>;

/// Profiles raw instance bytes; `head` is their start, for the hint an
/// error gets when the bytes turn out to be something else. Unless
/// `--schema` says, they are read as ommx.v1 and, if that fails and the input
/// can be read again, as ommx.v2; when both fail, v1's error is the one
/// reported (as before v2 existed).
#[allow(clippy::too_many_arguments)]
fn read_raw<R: BufRead + Send>(
    reader: R,
    head: &[u8],
    file_bytes: Option<u64>,
    name: String,
    gzip: bool,
    selection: Selection,
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
    mut rewind: Rewind<'_>,
) -> Result<Report, DecodeError> {
    if head.is_empty() {
        return Err(DecodeError::Empty);
    }
    let reading = pass.observer.reading();
    let forced = reading.raw_schema;
    let mut document = Document {
        name,
        file_bytes,
        container: Container::Raw,
        gzip,
        layers: Vec::new(),
        raw_schema: Some(forced.unwrap_or(Schema::V1)),
    };
    // Only an uncompressed file's size bounds the instance's length.
    let total = if gzip { None } else { file_bytes };
    let mut instances = Vec::new();
    match selection {
        // Listing does not decode when the schema is forced; otherwise it
        // decodes to tell v1 from v2 (and, when the bytes look like another
        // format, an instance from, say, JSON).
        Selection::ListOnly if forced.is_some() && looks_like(head).is_none() => {}
        Selection::ListOnly => {
            let mut nothing = ();
            let mut reads = reading.with(&mut nothing);
            let mut plain = Pass {
                options: ProfileOptions::default(),
                observer: &mut reads,
            };
            match detect(reader, total, forced, &mut rewind, &mut plain) {
                Ok(p) => document.raw_schema = Some(p.schema),
                Err(e) if looks_like(head).is_some() => return Err(hint(e, head)),
                // Listed as before: ls says what the bytes are meant to be.
                Err(_) => {}
            }
        }
        Selection::Layer(n) if n > 0 => {
            return Err(DecodeError::LayerOutOfRange {
                requested: n,
                available: 1,
            })
        }
        _ => {
            // Count progress per buffer refill, not per (often one-byte) read;
            // gzip input is counted where it is read, compressed.
            let counted = if gzip {
                ProgressBar::hidden()
            } else {
                progress.clone()
            };
            let reader = BufReader::with_capacity(BUF_SIZE, counted.wrap_read(reader));
            let profiled =
                detect(reader, total, forced, &mut rewind, pass).map_err(|e| hint(e, head))?;
            document.raw_schema = Some(profiled.schema);
            instances.push(profiled);
        }
    }
    Ok(Report {
        document,
        instances,
    })
}

/// Reads raw bytes as v1 (or the forced schema) and, when detecting and v1
/// refuses them, as v2 from a rewound reader. When both fail, v1's error
/// stands, unless the bytes did read as v2 and only what was asked of them
/// is refused.
fn detect<R: Read + Send>(
    reader: R,
    total: Option<u64>,
    forced: Option<Schema>,
    rewind: &mut Rewind<'_>,
    pass: &mut Pass<'_>,
) -> Result<ProfiledInstance, DecodeError> {
    let first = profile_one(
        reader,
        total,
        None,
        None,
        forced.unwrap_or(Schema::V1),
        pass,
    );
    let retry = forced.is_none() && matches!(first, Err(DecodeError::Instance { .. }));
    let (true, Some(rewind)) = (retry, rewind.as_mut()) else {
        return first;
    };
    let v1 = first.expect_err("a v1 refusal");
    let again = BufReader::with_capacity(BUF_SIZE, rewind()?);
    profile_one(again, total, None, None, Schema::V2, pass).map_err(|v2| match v2 {
        DecodeError::V2 {
            source:
                v2::V2PassError::V1Analysis(_) | v2::V2PassError::WireView | v2::V2PassError::GroupBy,
            ..
        } => v2,
        _ => v1,
    })
}

/// An instance that failed to decode and starts like a known other format
/// is reported as that format.
fn hint(err: DecodeError, head: &[u8]) -> DecodeError {
    match (&err, looks_like(head)) {
        (DecodeError::Instance { .. }, Some(kind)) => DecodeError::WrongKind(kind),
        _ => err,
    }
}

/// Profiles one instance stream of `schema` into fresh accounts; a stream
/// of unknown length is read under the `--max-element` limit.
pub(crate) fn profile_one<R: Read + Send>(
    reader: R,
    total: Option<u64>,
    instance_index: Option<usize>,
    title: Option<String>,
    schema: Schema,
    pass: &mut Pass<'_>,
) -> Result<ProfiledInstance, DecodeError> {
    let max_element = total.is_none().then(limits::max_element);
    profile_one_within(
        reader,
        total,
        max_element,
        instance_index,
        title,
        schema,
        pass,
    )
}

/// [`profile_one`] with the element limit given, with the accounting `pass`
/// asks for: the streaming v1 pass for OMMX 2.9.3's, [`v2::profile`] for
/// OMMX 3.0's (a v2 payload is read whole: it is one element).
pub(crate) fn profile_one_within<R: Read + Send>(
    reader: R,
    total: Option<u64>,
    max_element: Option<u64>,
    instance_index: Option<usize>,
    title: Option<String>,
    schema: Schema,
    pass: &mut Pass<'_>,
) -> Result<ProfiledInstance, DecodeError> {
    let accounting = match schema {
        Schema::V1 => pass
            .observer
            .reading()
            .accounting
            .unwrap_or(Accounting::Ommx29),
        Schema::V2 => Accounting::Ommx30,
    };
    if accounting == Accounting::Ommx30 {
        return v2::profile(
            reader,
            total,
            max_element,
            instance_index,
            title,
            schema,
            pass,
        );
    }
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
        schema,
        accounting,
    })
}

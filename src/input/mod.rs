//! From a file name (or stdin, or bytes) to what it holds: [`sniff`] decides
//! what the input is by its structure (an instance as raw protobuf, an OCI
//! archive or directory, any of them gzip-compressed; a baseline JSON;
//! folded stacks), and for instances this module finds the instance layers
//! and hands each payload to the [`Pass`] (a floor below) to profile.
//!
//! The input kind is decided by content, never by the file name.

pub mod archive;
pub mod baseline;
pub mod error;
pub mod folded;
pub mod limits;
pub mod registry;
mod rewind;
pub mod sniff;
mod text_formats;

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use indicatif::ProgressBar;

use crate::pass::{InFile, Pass, PassError, Payload};
use sniff::{hint, is_empty_tar, is_gzip, is_tar, looks_like};

pub use crate::profiled::{Accounting, Schema};
pub use crate::profiled::{
    Container, InputInfo, InstanceSummary, LayerInfo, ProfiledInput, ProfiledInstance,
};
pub use archive::ArchiveError;
pub use error::DecodeError;
pub use limits::Limits;

/// Read buffer size: large enough that syscalls do not show in profiles.
const BUF_SIZE: usize = 256 * 1024;

pub const INSTANCE_MEDIA_TYPE: &str = "application/org.ommx.v1.instance";

/// Where the bytes come from.
#[derive(Debug, Clone)]
pub enum Input {
    Stdin,
    /// A file or an OCI layout directory; `-` is [`Input::Stdin`].
    Path(PathBuf),
    /// Bytes handed over in memory (a notebook's instance), kept in a
    /// temporary file that lives as long as the input (so memory holds no
    /// second copy however often it is read), named `name` in reports and
    /// errors.
    Bytes {
        name: String,
        file: Arc<tempfile::TempPath>,
    },
    /// An artifact handed over as its layers by OMMX itself, named `name`.
    Artifact {
        name: String,
        layers: Arc<[archive::ArtifactLayer]>,
    },
    /// An image of OMMX's local registry, found by its name
    /// (`api` resolves a name that is not a file into one).
    Image(Arc<registry::Image>),
}

impl PartialEq for Input {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Input::Stdin, Input::Stdin) => true,
            (Input::Path(a), Input::Path(b)) => a == b,
            (Input::Bytes { file: a, .. }, Input::Bytes { file: b, .. }) => Arc::ptr_eq(a, b),
            (Input::Artifact { layers: a, .. }, Input::Artifact { layers: b, .. }) => {
                Arc::ptr_eq(a, b)
            }
            (Input::Image(a), Input::Image(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Input {}

impl Input {
    /// `data` as an input named `name` ([`Input::Bytes`]).
    pub fn from_bytes(name: &str, data: &[u8]) -> io::Result<Self> {
        let mut file = tempfile::NamedTempFile::new()?;
        io::Write::write_all(&mut file, data)?;
        io::Write::flush(&mut file)?;
        Ok(Input::Bytes {
            name: name.to_string(),
            file: Arc::new(file.into_temp_path()),
        })
    }

    /// An artifact's layers as input: the instance layers' blobs (`Some`
    /// for those, `None` for the others) go to temporary files.
    pub fn from_artifact(name: &str, layers: Vec<archive::HandedLayer>) -> io::Result<Self> {
        let layers = layers
            .into_iter()
            .map(|layer| {
                let blob = layer
                    .bytes
                    .map(|bytes| -> io::Result<_> {
                        let mut file = tempfile::NamedTempFile::new()?;
                        io::Write::write_all(&mut file, &bytes)?;
                        Ok(Arc::new(file.into_temp_path()))
                    })
                    .transpose()?;
                Ok(archive::ArtifactLayer {
                    media_type: layer.media_type,
                    digest: layer.digest,
                    size: layer.size,
                    annotations: layer.annotations,
                    blob,
                })
            })
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Input::Artifact {
            name: name.to_string(),
            layers: layers.into(),
        })
    }

    /// The file to open, for inputs that are files (or directories).
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            Input::Stdin | Input::Artifact { .. } | Input::Image(_) => None,
            Input::Path(path) => Some(path),
            Input::Bytes { file, .. } => Some(file),
        }
    }

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

    /// How the input is named among several (their rows and root frames) and
    /// in messages about the command line: as given, `-` for stdin.
    pub fn label(&self) -> String {
        match self {
            Input::Stdin => "-".to_string(),
            other => other.display_name(),
        }
    }

    /// How the input is named in messages and reports.
    pub fn display_name(&self) -> String {
        match self {
            Input::Stdin => "<stdin>".to_string(),
            Input::Path(p) => p.display().to_string(),
            Input::Bytes { name, .. } | Input::Artifact { name, .. } => name.clone(),
            Input::Image(image) => image.given.clone(),
        }
    }
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

/// [`read_with`] with OMMX's logical accounting only, within the default
/// limits.
pub fn read_plain(
    input: &Input,
    selection: Selection,
    progress: &ProgressBar,
) -> Result<ProfiledInput, DecodeError> {
    let mut nothing = ();
    read_with(
        input,
        selection,
        &Limits::default(),
        &mut Pass::new(&mut nothing),
        progress,
    )
}

/// Opens, sniffs and (unless listing only) profiles `input` within `limits`
/// with `pass`.
pub fn read_with(
    input: &Input,
    selection: Selection,
    limits: &Limits,
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
) -> Result<ProfiledInput, DecodeError> {
    let name = input.display_name();
    match input.path() {
        Some(path) if path.is_dir() => {
            archive::read_directory(path, name, selection, pass, progress)
        }
        Some(path) => {
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
        None => match input {
            Input::Artifact { layers, .. } => {
                archive::read_artifact(layers, name, selection, pass, progress)
            }
            Input::Image(image) => registry::read(image, selection, pass, progress),
            _ => read_stream(io::stdin(), name, selection, limits, pass, progress),
        },
    }
}

/// A gzip file as its decoder reads it, moving the bar by the compressed
/// bytes read: the position the file's size bounds.
struct Compressed {
    file: File,
    progress: ProgressBar,
    /// Where this reading is in the file (a reading again starts over).
    at: u64,
}

impl Compressed {
    fn new(file: File, progress: ProgressBar) -> Self {
        Self {
            file,
            progress,
            at: 0,
        }
    }
}

impl Read for Compressed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(buf)?;
        self.at += n as u64;
        self.progress.set_position(self.at);
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
) -> Result<ProfiledInput, DecodeError> {
    let tripped = Arc::new(AtomicBool::new(false));
    let capped = limits::Capped::new(reader, limits.max_decompressed, tripped.clone());
    let result = (|| {
        let mut stream = BufReader::with_capacity(BUF_SIZE, capped);
        let head = read_head(&mut stream)?;
        if is_empty_tar(&head) {
            // Its first block ends it, whatever follows (an endless stream of
            // zeros, say): refused before anything more is read.
            return Err(DecodeError::EmptyTar);
        }
        if is_gzip(&head) || is_tar(&head) {
            // Archives need random access: copied to an unlinked temporary file.
            let mut copy = tempfile::tempfile()?;
            io::copy(&mut unread(head, stream), &mut copy)?;
            let mut profiled = read_file(copy, name, selection, limits, pass, progress)?;
            profiled.input.file_bytes = None;
            Ok(profiled)
        } else if pass.raw_schema().is_some() {
            let reader = BufReader::with_capacity(BUF_SIZE, unread(head.clone(), stream));
            read_raw(
                reader, &head, None, None, name, false, selection, pass, progress, None,
            )
        } else {
            // Detecting reads it more than once: keep a copy as it streams,
            // each byte counted as the stream gives it, whichever reading
            // takes it.
            let counted = progress.wrap_read(unread(head.clone(), stream));
            let recording = rewind::Recording::new(counted)?;
            let reader = BufReader::with_capacity(BUF_SIZE, recording.reader());
            let rewind = move || recording.rewind();
            read_raw(
                reader,
                &head,
                None,
                None,
                name,
                false,
                selection,
                pass,
                &ProgressBar::hidden(),
                Some(Box::new(rewind)),
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
) -> Result<ProfiledInput, DecodeError> {
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
) -> Result<ProfiledInput, DecodeError> {
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
        let compressed = Compressed::new(file, progress.clone());
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
        let bar = progress.clone();
        let rewind = move || -> io::Result<Box<dyn Read + Send>> {
            let mut file = again.try_clone()?;
            file.seek(SeekFrom::Start(0))?;
            // Read again from the start, the bar follows this reading.
            let compressed = Compressed::new(file, bar.clone());
            let gz = flate2::bufread::MultiGzDecoder::new(BufReader::with_capacity(
                BUF_SIZE, compressed,
            ));
            Ok(Box::new(limits::Capped::new(gz, max, tripped.clone())))
        };
        let reader = BufReader::with_capacity(BUF_SIZE, unread(inner.clone(), gz));
        return read_raw(
            reader,
            &inner,
            Some(file_bytes),
            None,
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
    // The pass may read the file itself, on several threads, with positioned
    // reads, which on Unix leave the offset that `reader` reads from alone.
    let whole = reader.get_ref().try_clone()?;
    let whole = cfg!(unix).then_some(&whole);
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
        whole,
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
type Rewind<'r> = Option<Box<dyn FnMut() -> io::Result<Box<dyn Read + Send + 'r>> + 'r>>;

/// Profiles raw instance bytes; `head` is their start, for the hint an
/// error gets when the bytes turn out to be something else; `in_file`, the
/// regular file they are, when they are one. Unless
/// `--schema` says, they are read as ommx.v1 and, if that fails and the input
/// can be read again, as ommx.v2; when both fail, the error of the reading
/// that got further is reported, naming its schema ([`detect`]).
#[allow(clippy::too_many_arguments)]
fn read_raw<R: BufRead + Send>(
    reader: R,
    head: &[u8],
    file_bytes: Option<u64>,
    in_file: Option<&File>,
    name: String,
    gzip: bool,
    selection: Selection,
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
    mut rewind: Rewind<'_>,
) -> Result<ProfiledInput, DecodeError> {
    if head.is_empty() {
        return Err(DecodeError::Empty);
    }
    let forced = pass.raw_schema();
    let mut document = InputInfo {
        name,
        file_bytes,
        container: Container::Raw,
        gzip,
        layers: Vec::new(),
        raw_schema: Some(forced.unwrap_or(Schema::V1)),
        registry: None,
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
            let whole = in_file.map(|file| InFile::whole(file, &|_| {}));
            match detect(reader, total, whole, forced, &mut rewind, pass, true) {
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
            let tick = |n| counted.inc(n);
            let whole = in_file.map(|file| InFile::whole(file, &tick));
            let profiled = detect(reader, total, whole, forced, &mut rewind, pass, false)
                .map_err(|e| hint(e, head))?;
            document.raw_schema = Some(profiled.schema);
            instances.push(profiled);
        }
    }
    Ok(ProfiledInput {
        input: document,
        instances,
    })
}

/// Raw bytes as the pass reads them: no layer, no title, no annotations.
fn raw_payload<'a>(
    reader: &'a mut (dyn Read + Send),
    schema: Schema,
    in_file: Option<InFile<'a>>,
    total: Option<u64>,
    max_element: Option<u64>,
) -> Payload<'a> {
    Payload {
        reader,
        total,
        in_file,
        max_element,
        instance_index: None,
        title: None,
        schema,
        layer_annotations: None,
    }
}

/// Reads raw bytes as v1 (or the forced schema) and, when detecting and v1
/// refuses them, as v2 from a rewound reader. When both fail, the reading
/// that got further is reported ([`PassError::Neither`]).
fn detect<R: Read + Send>(
    reader: R,
    total: Option<u64>,
    in_file: Option<InFile<'_>>,
    forced: Option<Schema>,
    rewind: &mut Rewind<'_>,
    pass: &mut Pass<'_>,
    probe: bool,
) -> Result<ProfiledInstance, DecodeError> {
    let max_element = total.is_none().then_some(pass.max_element);
    let payload =
        |reader, schema, in_file| raw_payload(reader, schema, in_file, total, max_element);
    let mut reader = reader;
    // A stream walked past its first fields is read again from its start.
    let mut again = None;
    match (
        forced.is_none() && !probe,
        in_file.is_some(),
        rewind.as_mut(),
    ) {
        // Read where it lies: the reader is left for the usual reading.
        (true, true, _) => {
            let mut nothing = io::empty();
            let ahead = raw_payload(&mut nothing, Schema::V2, in_file, total, max_element);
            if let Some(done) = pass.profile_v2_first(ahead) {
                return Ok(done);
            }
        }
        // A stream v1 certainly refuses by its first fields: read as v2.
        (true, false, Some(rewind)) => {
            if pass.v1_refuses_stream(&mut reader) {
                let mut v2 = BufReader::with_capacity(BUF_SIZE, rewind()?);
                let streamed = raw_payload(&mut v2, Schema::V2, None, total, max_element);
                if let Some(done) = pass.profile_v2_first_streamed(streamed) {
                    return Ok(done);
                }
            }
            again = Some(BufReader::with_capacity(BUF_SIZE, rewind()?));
        }
        _ => {}
    }
    let schema = forced.unwrap_or(Schema::V1);
    let first = match again.as_mut() {
        Some(again) => payload(again, schema, in_file),
        None => payload(&mut reader, schema, in_file),
    };
    // The second reading may read the file where it lies too.
    let first = match probe {
        true => pass.probe(first),
        false => pass.profile(first),
    };
    let retry = forced.is_none() && matches!(first, Err(PassError::Instance { .. }));
    let (true, Some(rewind)) = (retry, rewind.as_mut()) else {
        return Ok(first?);
    };
    let v1 = first.expect_err("a v1 refusal");
    let mut again = BufReader::with_capacity(BUF_SIZE, rewind()?);
    // Read again through the rewound reader (the second reading is a stream).
    Ok(pass.reread_as_v2(payload(&mut again, Schema::V2, in_file), v1, probe)?)
}

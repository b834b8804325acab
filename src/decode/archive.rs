//! OMMX artifacts: an OCI image layout (`index.json` → manifest → layers,
//! blobs at `blobs/sha256/<hex>`) in a tar archive, a gzip-compressed tar
//! archive, or an extracted directory.
//!
//! A tar is read in two passes: the first records where each regular file's
//! data starts (seeking past data in plain files) and keeps small files; the
//! second streams the blobs the manifest names, in manifest order. Nothing is
//! extracted to disk; entries that are not regular files, or whose names are
//! absolute or climb with `..`, are ignored. Every blob used is checked
//! against its digest and declared size.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::{Component, Path as FsPath};

use indicatif::ProgressBar;
use sha2::{Digest, Sha256};

use super::{
    profile_one, Container, DecodeError, Document, LayerInfo, Observers, Report, Selection,
    BUF_SIZE, INSTANCE_MEDIA_TYPE,
};

/// Caps on the small JSON documents read whole.
const INDEX_CAP: u64 = 1 << 20;
const MANIFEST_CAP: u64 = 4 << 20;
/// Small entries kept from the first tar pass (manifests are a few KB).
const KEEP_ENTRY: u64 = 64 << 10;
const KEEP_TOTAL: u64 = 8 << 20;

#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("corrupt tar archive: {0}")]
    Tar(io::Error),
    #[error("the archive has no index.json (not an OCI image layout)")]
    NoIndex,
    #[error("{what} is {size} bytes, more than the {cap}-byte limit")]
    TooLarge { what: String, size: u64, cap: u64 },
    #[error("{what} is not valid JSON of the expected shape: {error}")]
    Json {
        what: String,
        error: serde_json::Error,
    },
    #[error("index.json lists no manifest")]
    NoManifest,
    #[error("unsupported digest {0:?} (expected sha256:<64 hex digits>)")]
    BadDigest(String),
    #[error("blob {0} is missing from the archive")]
    MissingBlob(String),
    #[error("blob {digest} is {actual} bytes but its descriptor says {declared}")]
    SizeMismatch {
        digest: String,
        declared: u64,
        actual: u64,
    },
    #[error("blob {digest} does not match its digest (content hashes to sha256:{actual})")]
    DigestMismatch { digest: String, actual: String },
    #[error("{0} is a symbolic link; memprof does not follow links in an image layout")]
    Symlink(String),
}

/// An OCI content descriptor.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Descriptor {
    media_type: String,
    digest: String,
    size: u64,
    #[serde(default)]
    annotations: BTreeMap<String, String>,
}

#[derive(Debug, serde::Deserialize)]
struct Index {
    manifests: Vec<Descriptor>,
}

#[derive(Debug, serde::Deserialize)]
struct Manifest {
    #[serde(default)]
    layers: Vec<Descriptor>,
}

/// The hex part of a `sha256:` digest, validated.
fn digest_hex(digest: &str) -> Result<&str, ArchiveError> {
    match digest.strip_prefix("sha256:") {
        Some(hex)
            if hex.len() == 64
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) =>
        {
            Ok(hex)
        }
        _ => Err(ArchiveError::BadDigest(digest.to_string())),
    }
}

/// A file of the layout opened for reading, with its size.
type Opened<'a> = Option<(Box<dyn Read + Send + 'a>, u64)>;

/// Where the layout's files are.
trait Store {
    /// Opens the file at `name` (relative to the layout root), if present.
    fn open(&mut self, name: &str) -> Result<Opened<'_>, DecodeError>;
}

/// Hashes everything read through it.
struct Hashing<R> {
    inner: R,
    hasher: Sha256,
    read: u64,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.read += n as u64;
        Ok(n)
    }
}

impl<R: Read> Hashing<R> {
    /// Reads what is left and checks size and digest against `descriptor`.
    fn verify(mut self, descriptor: &Descriptor) -> Result<(), DecodeError> {
        io::copy(&mut self, &mut io::sink())?;
        let actual = hex::encode(self.hasher.finalize());
        if self.read != descriptor.size {
            return Err(ArchiveError::SizeMismatch {
                digest: descriptor.digest.clone(),
                declared: descriptor.size,
                actual: self.read,
            }
            .into());
        }
        if descriptor.digest != format!("sha256:{actual}") {
            return Err(ArchiveError::DigestMismatch {
                digest: descriptor.digest.clone(),
                actual,
            }
            .into());
        }
        Ok(())
    }
}

fn read_capped(
    store: &mut dyn Store,
    name: &str,
    what: &str,
    cap: u64,
) -> Result<Option<Vec<u8>>, DecodeError> {
    let Some((reader, size)) = store.open(name)? else {
        return Ok(None);
    };
    if size > cap {
        return Err(ArchiveError::TooLarge {
            what: what.to_string(),
            size,
            cap,
        }
        .into());
    }
    let mut bytes = Vec::with_capacity(size as usize);
    reader.take(cap).read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

fn parse_json<T: serde::de::DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T, ArchiveError> {
    serde_json::from_slice(bytes).map_err(|error| ArchiveError::Json {
        what: what.to_string(),
        error,
    })
}

fn open_blob<'s>(
    store: &'s mut dyn Store,
    descriptor: &Descriptor,
) -> Result<(Hashing<Box<dyn Read + Send + 's>>, u64), DecodeError> {
    let hex = digest_hex(&descriptor.digest)?;
    let (reader, size) = store
        .open(&format!("blobs/sha256/{hex}"))?
        .ok_or_else(|| ArchiveError::MissingBlob(descriptor.digest.clone()))?;
    if size != descriptor.size {
        return Err(ArchiveError::SizeMismatch {
            digest: descriptor.digest.clone(),
            declared: descriptor.size,
            actual: size,
        }
        .into());
    }
    Ok((
        Hashing {
            inner: reader,
            hasher: Sha256::new(),
            read: 0,
        },
        size,
    ))
}

fn not_profiled_reason(media_type: &str) -> String {
    let why = match media_type {
        "application/org.ommx.v1.solution" => "a solution, not an instance",
        "application/org.ommx.v1.sample-set" => "a sample set, not an instance",
        "application/org.ommx.v1.parametric-instance" => {
            "a parametric instance; OMMX 2.9.3 profiles Instance only"
        }
        t if t.starts_with("application/org.ommx.v2.") => {
            "an OMMX 3.0 (ommx.v2) layer, which OMMX 2.9.3 cannot read"
        }
        "application/vnd.numpy" | "application/vnd.apache.parquet" | "application/json" => {
            "a data layer, not an instance"
        }
        _ => "not an OMMX instance layer",
    };
    why.to_string()
}

/// Reads the layout in `store`: index, manifests, then each layer.
fn read_layout(
    store: &mut dyn Store,
    mut document: Document,
    selection: Selection,
    progress: &ProgressBar,
    observers: &mut dyn Observers,
) -> Result<Report, DecodeError> {
    let index =
        read_capped(store, "index.json", "index.json", INDEX_CAP)?.ok_or(ArchiveError::NoIndex)?;
    let index: Index = parse_json(&index, "index.json")?;
    if index.manifests.is_empty() {
        return Err(ArchiveError::NoManifest.into());
    }
    let mut descriptors = Vec::new();
    for m in &index.manifests {
        let what = format!("manifest {}", m.digest);
        if m.size > MANIFEST_CAP {
            return Err(ArchiveError::TooLarge {
                what,
                size: m.size,
                cap: MANIFEST_CAP,
            }
            .into());
        }
        let (mut reader, _) = open_blob(store, m)?;
        let mut bytes = Vec::new();
        (&mut reader).take(MANIFEST_CAP).read_to_end(&mut bytes)?;
        reader.verify(m)?;
        let manifest: Manifest = parse_json(&bytes, &what)?;
        descriptors.extend(manifest.layers);
    }

    let mut instance_count = 0;
    for (index, d) in descriptors.iter().enumerate() {
        let is_instance = d.media_type == INSTANCE_MEDIA_TYPE;
        document.layers.push(LayerInfo {
            index,
            media_type: d.media_type.clone(),
            digest: d.digest.clone(),
            size: d.size,
            annotations: d.annotations.clone(),
            instance_index: is_instance.then_some(instance_count),
            not_profiled: (!is_instance).then(|| not_profiled_reason(&d.media_type)),
        });
        instance_count += usize::from(is_instance);
    }
    match selection {
        Selection::All if instance_count == 0 => {
            let types: Vec<_> = descriptors.iter().map(|d| d.media_type.as_str()).collect();
            let listed = if types.is_empty() {
                "none".to_string()
            } else {
                types.join(", ")
            };
            return Err(DecodeError::NoInstanceLayer(listed));
        }
        Selection::Layer(n) if n >= instance_count => {
            return Err(DecodeError::LayerOutOfRange {
                requested: n,
                available: instance_count,
            })
        }
        _ => {}
    }

    progress.set_length(descriptors.iter().map(|d| d.size).sum());
    let mut instances = Vec::new();
    for (d, layer) in descriptors.iter().zip(&document.layers) {
        let profile = match (selection, layer.instance_index) {
            (Selection::All, Some(_)) => true,
            (Selection::Layer(n), Some(i)) => n == i,
            _ => false,
        };
        let (mut reader, size) = open_blob(store, d)?;
        let profiled = if profile {
            let title = layer.title().map(str::to_string);
            let stream = BufReader::with_capacity(BUF_SIZE, progress.wrap_read(&mut reader));
            Some(profile_one(
                stream,
                Some(size),
                layer.instance_index,
                title,
                observers,
            ))
        } else {
            progress.inc(size);
            None
        };
        // The digest is checked first: a blob that fails it is reported as
        // corrupt even when the damage also made it undecodable.
        reader.verify(d)?;
        if let Some(profiled) = profiled {
            instances.push(profiled?);
        }
    }
    Ok(Report {
        document,
        instances,
    })
}

/// A tar archive on disk, plain or gzip-compressed.
pub(crate) struct TarSource {
    file: File,
    gzip: bool,
}

impl TarSource {
    pub(crate) fn plain(mut file: File) -> io::Result<Self> {
        file.seek(SeekFrom::Start(0))?;
        Ok(Self { file, gzip: false })
    }

    pub(crate) fn gzip(mut file: File) -> io::Result<Self> {
        file.seek(SeekFrom::Start(0))?;
        Ok(Self { file, gzip: true })
    }
}

type GzStream = BufReader<flate2::bufread::MultiGzDecoder<BufReader<File>>>;

/// The tar's regular files by name: data offset and size, and the content
/// of small ones.
struct TarStore {
    source: TarSource,
    entries: HashMap<String, (u64, u64)>,
    kept: HashMap<String, Vec<u8>>,
    /// The open decompressor and its position, for gzip archives.
    gz: Option<(GzStream, u64)>,
}

/// The entry's name inside the layout, or `None` for names memprof ignores.
fn entry_name(path: &FsPath) -> Option<String> {
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(p) => parts.push(p.to_str()?),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

impl TarStore {
    fn gz_stream(file: &File) -> io::Result<GzStream> {
        let mut file = file.try_clone()?;
        file.seek(SeekFrom::Start(0))?;
        Ok(BufReader::with_capacity(
            BUF_SIZE,
            flate2::bufread::MultiGzDecoder::new(BufReader::with_capacity(BUF_SIZE, file)),
        ))
    }

    fn scan(source: TarSource) -> Result<Self, DecodeError> {
        let mut table = EntryTable::default();
        let tar_err = |e: io::Error| DecodeError::Archive(ArchiveError::Tar(e));
        if source.gzip {
            let mut archive = tar::Archive::new(Self::gz_stream(&source.file)?);
            for entry in archive.entries().map_err(tar_err)? {
                table
                    .record(&mut entry.map_err(tar_err)?)
                    .map_err(tar_err)?;
            }
        } else {
            let mut archive = tar::Archive::new(BufReader::with_capacity(BUF_SIZE, &source.file));
            for entry in archive.entries_with_seek().map_err(tar_err)? {
                table
                    .record(&mut entry.map_err(tar_err)?)
                    .map_err(tar_err)?;
            }
        }
        Ok(Self {
            source,
            entries: table.entries,
            kept: table.kept,
            gz: None,
        })
    }
}

/// What the first pass learns about a tar's entries.
#[derive(Default)]
struct EntryTable {
    entries: HashMap<String, (u64, u64)>,
    kept: HashMap<String, Vec<u8>>,
    kept_total: u64,
}

impl EntryTable {
    /// Records a regular file with a safe name (a later duplicate wins, as in tar).
    fn record<R: Read>(&mut self, entry: &mut tar::Entry<'_, R>) -> io::Result<()> {
        if entry.header().entry_type() != tar::EntryType::Regular {
            return Ok(());
        }
        let Some(name) = entry.path().ok().and_then(|p| entry_name(&p)) else {
            return Ok(());
        };
        let size = entry.size();
        if size <= KEEP_ENTRY && self.kept_total + size <= KEEP_TOTAL {
            let mut bytes = Vec::with_capacity(size as usize);
            entry.read_to_end(&mut bytes)?;
            self.kept_total += size;
            self.kept.insert(name.clone(), bytes);
        } else {
            self.kept.remove(&name);
        }
        self.entries.insert(name, (entry.raw_file_position(), size));
        Ok(())
    }
}

impl Store for TarStore {
    fn open(&mut self, name: &str) -> Result<Opened<'_>, DecodeError> {
        let Some(&(offset, size)) = self.entries.get(name) else {
            return Ok(None);
        };
        if let Some(bytes) = self.kept.get(name) {
            return Ok(Some((Box::new(&bytes[..]), size)));
        }
        if !self.source.gzip {
            let mut file = &self.source.file;
            file.seek(SeekFrom::Start(offset))?;
            return Ok(Some((Box::new(file.take(size)), size)));
        }
        // Gzip: reuse the decompressor when the blob lies ahead, else restart.
        if self.gz.as_ref().is_none_or(|(_, pos)| *pos > offset) {
            self.gz = Some((Self::gz_stream(&self.source.file)?, 0));
        }
        let (stream, pos) = self.gz.as_mut().expect("just set");
        let skip = offset - *pos;
        if io::copy(&mut stream.take(skip), &mut io::sink())? < skip {
            return Err(ArchiveError::Tar(io::ErrorKind::UnexpectedEof.into()).into());
        }
        // Callers read blobs to the end (the digest check does), so the
        // stream is at offset + size afterwards.
        *pos = offset + size;
        Ok(Some((Box::new(stream.take(size)), size)))
    }
}

pub(crate) fn read_tar(
    source: TarSource,
    name: String,
    file_bytes: u64,
    selection: Selection,
    progress: &ProgressBar,
    observers: &mut dyn Observers,
) -> Result<Report, DecodeError> {
    let gzip = source.gzip;
    let mut store = TarStore::scan(source)?;
    let document = Document {
        name,
        file_bytes: Some(file_bytes),
        container: Container::Archive,
        gzip,
        layers: Vec::new(),
    };
    read_layout(&mut store, document, selection, progress, observers)
}

/// An extracted layout: files under a directory, links refused.
struct DirStore<'a> {
    root: &'a FsPath,
}

impl Store for DirStore<'_> {
    fn open(&mut self, name: &str) -> Result<Opened<'_>, DecodeError> {
        let path = self.root.join(name);
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        if meta.file_type().is_symlink() {
            return Err(ArchiveError::Symlink(name.to_string()).into());
        }
        if !meta.is_file() {
            return Ok(None);
        }
        Ok(Some((Box::new(File::open(&path)?), meta.len())))
    }
}

pub(crate) fn read_directory(
    root: &FsPath,
    name: String,
    selection: Selection,
    progress: &ProgressBar,
    observers: &mut dyn Observers,
) -> Result<Report, DecodeError> {
    let document = Document {
        name,
        file_bytes: None,
        container: Container::Directory,
        gzip: false,
        layers: Vec::new(),
    };
    read_layout(
        &mut DirStore { root },
        document,
        selection,
        progress,
        observers,
    )
}

//! OMMX artifacts: an OCI image layout (`index.json` → manifest → layers,
//! blobs at `blobs/sha256/<hex>`) in a tar archive, a gzip-compressed tar
//! archive, or an extracted directory.
//!
//! A tar is read in two passes: the first records where each regular file's
//! data starts (seeking past data in plain files) and keeps small files; the
//! second streams the blobs the manifests name, each distinct blob once, in
//! the order they are stored (so a gzip archive is decompressed about twice,
//! never once per layer). Every blob used is checked against its digest and
//! declared size.
//!
//! Hygiene: nothing is ever extracted to disk and no link is followed.
//! Entries whose names are absolute or climb with `..` are ignored; links,
//! devices and FIFOs are never opened (naming one as a layout file is an
//! error); a name that occurs twice is an error rather than a guess; an
//! entry whose declared size runs past the end of the archive is an error.
//! Fixed caps bound what a hostile archive can make memprof hold: entries,
//! manifests, layers and the size of the JSON documents.

use crate::trace::{Phase, TimedRead};
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::{Component, Path as FsPath};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use indicatif::ProgressBar;
use sha2::{Digest, Sha256};

use super::limits::Capped;
use super::{
    profile_one_within, Container, DecodeError, Document, LayerInfo, Pass, Report, Selection,
    BUF_SIZE, INSTANCE_MEDIA_TYPE,
};

/// Caps on the small JSON documents read whole.
const INDEX_CAP: u64 = 1 << 20;
const MANIFEST_CAP: u64 = 4 << 20;
/// Small entries kept from the first tar pass (manifests are a few KB).
const KEEP_ENTRY: u64 = 64 << 10;
const KEEP_TOTAL: u64 = 8 << 20;
/// Entries in a tar (an OMMX artifact has a handful per layer).
pub const MAX_ENTRIES: u64 = 16_384;
/// Manifests listed by index.json (OMMX writes one).
pub const MAX_MANIFESTS: usize = 256;
/// Layers over all manifests.
pub const MAX_LAYERS: usize = 4096;
/// Layer annotations over all manifests as listed (OMMX writes a few a layer).
pub const MAX_ANNOTATIONS: usize = 65_536;
/// The sizes of the manifests index.json lists, each counted as often as it
/// is listed: what the layer list may cost, however the index repeats them.
const MANIFESTS_LISTED_CAP: u64 = 16 << 20;
/// Longest entry name memprof looks at; layout names are under 80 bytes.
const MAX_NAME: usize = 4096;

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
    #[error("{name} is {kind}; memprof reads only regular files and never follows links")]
    NotAFile { name: String, kind: &'static str },
    #[error(
        "the archive has more than one entry named {0}; memprof does not guess which is meant"
    )]
    DuplicateEntry(String),
    #[error("tar entry {name} declares {size} bytes from byte {offset}, past the end of the archive ({file_len} bytes)")]
    EntryPastEnd {
        name: String,
        offset: u64,
        size: u64,
        file_len: u64,
    },
    #[error("the archive has more than {cap} {what}, the limit")]
    TooMany { what: &'static str, cap: u64 },
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

    /// Where the file's data is stored, for reading blobs in storage order.
    fn position(&self, name: &str) -> Option<u64>;

    /// Whether the sizes of files are only claims about decompressed data
    /// (a gzip archive's tar headers) rather than bytes on disk.
    fn sizes_claimed(&self) -> bool {
        false
    }
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

fn blob_path(descriptor: &Descriptor) -> Result<String, ArchiveError> {
    Ok(format!("blobs/sha256/{}", digest_hex(&descriptor.digest)?))
}

fn open_blob<'s>(
    store: &'s mut dyn Store,
    descriptor: &Descriptor,
) -> Result<(Hashing<Box<dyn Read + Send + 's>>, u64), DecodeError> {
    let (reader, size) = store
        .open(&blob_path(descriptor)?)?
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
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
) -> Result<Report, DecodeError> {
    let index =
        read_capped(store, "index.json", "index.json", INDEX_CAP)?.ok_or(ArchiveError::NoIndex)?;
    let index: Index = parse_json(&index, "index.json")?;
    if index.manifests.is_empty() {
        return Err(ArchiveError::NoManifest.into());
    }
    if index.manifests.len() > MAX_MANIFESTS {
        return Err(ArchiveError::TooMany {
            what: "manifests",
            cap: MAX_MANIFESTS as u64,
        }
        .into());
    }
    // Checked in index order, so the first bad manifest listed is the one named.
    let mut listed: u64 = 0;
    for m in &index.manifests {
        if m.size > MANIFEST_CAP {
            return Err(ArchiveError::TooLarge {
                what: format!("manifest {}", m.digest),
                size: m.size,
                cap: MANIFEST_CAP,
            }
            .into());
        }
        blob_path(m)?;
        // A manifest listed N times is held (its layers) N times.
        listed = listed.saturating_add(m.size);
        if listed > MANIFESTS_LISTED_CAP {
            return Err(ArchiveError::TooLarge {
                what: "the manifests index.json lists (each counted as often as listed)".into(),
                size: listed,
                cap: MANIFESTS_LISTED_CAP,
            }
            .into());
        }
    }
    // A manifest listed twice (two tags of one image) is read once; distinct
    // manifests are read in storage order, so a gzip archive is not
    // decompressed again from the start for each.
    let mut distinct: Vec<&Descriptor> = Vec::new();
    for m in &index.manifests {
        if !distinct.iter().any(|d| d.digest == m.digest) {
            distinct.push(m);
        }
    }
    let mut by_position: Vec<(Option<u64>, usize)> = distinct
        .iter()
        .enumerate()
        .map(|(i, m)| Ok((store.position(&blob_path(m)?), i)))
        .collect::<Result<_, ArchiveError>>()?;
    by_position.sort();
    let mut manifests: HashMap<&str, (u64, Vec<Descriptor>)> = HashMap::new();
    for (_, i) in by_position {
        let m = distinct[i];
        let (mut reader, _) = open_blob(store, m)?;
        let mut bytes = Vec::new();
        (&mut reader).take(MANIFEST_CAP).read_to_end(&mut bytes)?;
        reader.verify(m)?;
        let manifest: Manifest = parse_json(&bytes, &format!("manifest {}", m.digest))?;
        manifests.insert(&m.digest, (m.size, manifest.layers));
    }
    let mut descriptors = Vec::new();
    let mut annotations = 0usize;
    for m in &index.manifests {
        let (size, layers) = &manifests[m.digest.as_str()];
        if *size != m.size {
            return Err(ArchiveError::SizeMismatch {
                digest: m.digest.clone(),
                declared: m.size,
                actual: *size,
            }
            .into());
        }
        if descriptors.len() + layers.len() > MAX_LAYERS {
            return Err(ArchiveError::TooMany {
                what: "layers",
                cap: MAX_LAYERS as u64,
            }
            .into());
        }
        annotations += layers.iter().map(|l| l.annotations.len()).sum::<usize>();
        if annotations > MAX_ANNOTATIONS {
            return Err(ArchiveError::TooMany {
                what: "layer annotations",
                cap: MAX_ANNOTATIONS as u64,
            }
            .into());
        }
        descriptors.extend(layers.iter().cloned());
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

    // Each distinct blob is read once, in storage order; a layer listed
    // twice shares its blob's profile. Blobs that are missing come first, so
    // that error does not wait for the others to be read.
    let selected = |layer: &LayerInfo| match (selection, layer.instance_index) {
        (Selection::All, Some(_)) => true,
        (Selection::Layer(n), Some(i)) => n == i,
        _ => false,
    };
    let mut blobs: Vec<(Option<u64>, &str, usize)> = Vec::new();
    let mut first_use: HashMap<&str, usize> = HashMap::new();
    for (i, d) in descriptors.iter().enumerate() {
        let path = blob_path(d)?;
        if let Some(&first) = first_use.get(d.digest.as_str()) {
            if descriptors[first].size != d.size {
                return Err(ArchiveError::SizeMismatch {
                    digest: d.digest.clone(),
                    declared: d.size,
                    actual: descriptors[first].size,
                }
                .into());
            }
            continue;
        }
        first_use.insert(&d.digest, i);
        blobs.push((store.position(&path), &d.digest, i));
    }
    blobs.sort_by_key(|&(position, _, i)| (position, i));
    // For each blob to profile: the first instance layer using it (named in
    // its errors) and how many selected layers use it.
    let mut profiled_digests: HashMap<&str, (Option<usize>, usize)> = HashMap::new();
    for (d, layer) in descriptors.iter().zip(&document.layers) {
        if selected(layer) {
            profiled_digests
                .entry(&d.digest)
                .or_insert((layer.instance_index, 0))
                .1 += 1;
        }
    }

    progress.set_length(blobs.iter().fold(0u64, |sum, &(_, _, i)| {
        sum.saturating_add(descriptors[i].size)
    }));
    let mut profiles: HashMap<&str, super::ProfiledInstance> = HashMap::new();
    let claimed = store.sizes_claimed();
    for &(_, digest, i) in &blobs {
        let d = &descriptors[i];
        let (mut reader, size) = open_blob(store, d)?;
        let profiled = if let Some(&(instance_index, _)) = profiled_digests.get(digest) {
            let stream = BufReader::with_capacity(BUF_SIZE, progress.wrap_read(&mut reader));
            let max_element = claimed.then(super::limits::max_element);
            Some(profile_one_within(
                stream,
                Some(size),
                max_element,
                instance_index,
                None,
                pass,
            ))
        } else {
            progress.inc(size);
            None
        };
        // The digest is checked first: a blob that fails it is reported as
        // corrupt even when the damage also made it undecodable.
        reader.verify(d)?;
        if let Some(profiled) = profiled {
            profiles.insert(digest, profiled?);
        }
    }

    let mut instances = Vec::new();
    for (d, layer) in descriptors.iter().zip(&document.layers) {
        if selected(layer) {
            let uses = &mut profiled_digests
                .get_mut(d.digest.as_str())
                .expect("counted")
                .1;
            *uses -= 1;
            let mut profiled = if *uses == 0 {
                profiles.remove(d.digest.as_str()).expect("profiled")
            } else {
                profiles[d.digest.as_str()].clone()
            };
            profiled.instance_index = layer.instance_index;
            profiled.title = layer.title().map(str::to_string);
            instances.push(profiled);
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
    /// For gzip archives: the decompressed-size limit and the flag its
    /// reader raises when the limit stops it.
    gzip: Option<(u64, Arc<AtomicBool>)>,
}

impl TarSource {
    pub(crate) fn plain(mut file: File) -> io::Result<Self> {
        file.seek(SeekFrom::Start(0))?;
        Ok(Self { file, gzip: None })
    }

    pub(crate) fn gzip(mut file: File, limit: u64, tripped: Arc<AtomicBool>) -> io::Result<Self> {
        file.seek(SeekFrom::Start(0))?;
        Ok(Self {
            file,
            gzip: Some((limit, tripped)),
        })
    }
}

type GzStream = BufReader<Capped<TimedRead<flate2::bufread::MultiGzDecoder<BufReader<File>>>>>;

/// The tar's regular files by name: data offset and size, and the content
/// of small ones; and the names of entries that are not regular files.
struct TarStore {
    source: TarSource,
    table: EntryTable,
    /// The open decompressor and its position, for gzip archives.
    gz: Option<(GzStream, u64)>,
}

/// The entry's name inside the layout, or `None` for names memprof ignores:
/// absolute, climbing with `..`, not UTF-8, or implausibly long.
fn entry_name(path: &FsPath) -> Option<String> {
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(p) => parts.push(p.to_str()?),
            Component::CurDir => {}
            _ => return None,
        }
    }
    let name = parts.join("/");
    (!name.is_empty() && name.len() <= MAX_NAME).then_some(name)
}

impl TarStore {
    fn gz_stream(file: &File, limit: u64, tripped: &Arc<AtomicBool>) -> io::Result<GzStream> {
        let mut file = file.try_clone()?;
        file.seek(SeekFrom::Start(0))?;
        Ok(BufReader::with_capacity(
            BUF_SIZE,
            Capped::new(
                TimedRead {
                    inner: flate2::bufread::MultiGzDecoder::new(BufReader::with_capacity(
                        BUF_SIZE, file,
                    )),
                    phase: Phase::Decompress,
                },
                limit,
                tripped.clone(),
            ),
        ))
    }

    fn scan(source: TarSource) -> Result<Self, DecodeError> {
        let mut table = EntryTable::default();
        if let Some((limit, tripped)) = &source.gzip {
            let mut archive = tar::Archive::new(Self::gz_stream(&source.file, *limit, tripped)?);
            // Entries are read through, so each one's data is known to be there.
            // Raw: long names and pax headers are read here, within caps.
            for entry in archive.entries().map_err(ArchiveError::Tar)?.raw(true) {
                table.record(&mut entry.map_err(ArchiveError::Tar)?, None)?;
            }
        } else {
            let file_len = source.file.metadata()?.len();
            let mut archive = tar::Archive::new(BufReader::with_capacity(BUF_SIZE, &source.file));
            // Entries are seeked past: each one's extent is checked instead.
            for entry in archive
                .entries_with_seek()
                .map_err(ArchiveError::Tar)?
                .raw(true)
            {
                table.record(&mut entry.map_err(ArchiveError::Tar)?, Some(file_len))?;
            }
        }
        Ok(Self {
            source,
            table,
            gz: None,
        })
    }
}

/// What the first pass learns about a tar's entries.
#[derive(Default)]
struct EntryTable {
    /// Regular files: data offset and size.
    files: HashMap<String, (u64, u64)>,
    /// The content of small regular files.
    kept: HashMap<String, Vec<u8>>,
    kept_total: u64,
    /// Entries that are not regular files (links, devices, ...), by kind.
    special: HashMap<String, &'static str>,
    count: u64,
    /// What GNU long-name and pax headers said about the next entry.
    extension: Extension,
}

/// The metadata headers before an entry, read within [`MAX_EXTENSION`].
/// (The tar crate would read them whole, however large they claim to be.)
#[derive(Default)]
struct Extension {
    /// A GNU long name: `Some(None)` when it is one memprof ignores.
    long_name: Option<Option<String>>,
    /// A pax `path` record.
    pax_path: Option<Option<String>>,
    /// A pax `size` record.
    pax_size: Option<u64>,
}

/// Largest pax header read; a long name longer than [`MAX_NAME`] is skipped
/// unread (its entry is then ignored, as any name that long is).
const MAX_EXTENSION: u64 = 64 << 10;

/// A name from a long-name or pax record, as memprof would use it.
fn extension_name(bytes: &[u8]) -> Option<String> {
    let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
    entry_name(FsPath::new(std::str::from_utf8(bytes).ok()?))
}

/// What a tar entry that is not a regular file is, for entries that could
/// stand where a file is expected; `None` for those memprof simply skips
/// (directories, metadata headers).
fn special_kind(entry_type: tar::EntryType) -> Option<&'static str> {
    use tar::EntryType as T;
    Some(match entry_type {
        T::Symlink => "a symbolic link",
        T::Link => "a hard link",
        T::Char => "a character device",
        T::Block => "a block device",
        T::Fifo => "a FIFO",
        T::GNUSparse => "a sparse file",
        T::Continuous => "a contiguous file",
        _ => return None,
    })
}

impl EntryTable {
    /// Records one entry. `file_len` is the archive's size when entries are
    /// seeked past rather than read through.
    fn record<R: Read>(
        &mut self,
        entry: &mut tar::Entry<'_, R>,
        file_len: Option<u64>,
    ) -> Result<(), DecodeError> {
        self.count += 1;
        if self.count > MAX_ENTRIES {
            return Err(ArchiveError::TooMany {
                what: "entries",
                cap: MAX_ENTRIES,
            }
            .into());
        }
        let entry_type = entry.header().entry_type();
        if entry_type.is_gnu_longname() {
            let name = if entry.size() > MAX_NAME as u64 + 1 {
                None
            } else {
                let mut bytes = Vec::new();
                entry
                    .take(MAX_NAME as u64 + 1)
                    .read_to_end(&mut bytes)
                    .map_err(ArchiveError::Tar)?;
                extension_name(&bytes)
            };
            self.extension.long_name = Some(name);
            return Ok(());
        }
        if entry_type.is_pax_local_extensions() {
            if entry.size() > MAX_EXTENSION {
                return Err(ArchiveError::TooLarge {
                    what: "a pax header".into(),
                    size: entry.size(),
                    cap: MAX_EXTENSION,
                }
                .into());
            }
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).map_err(ArchiveError::Tar)?;
            for record in tar::PaxExtensions::new(&bytes) {
                let record = record.map_err(ArchiveError::Tar)?;
                match record.key_bytes() {
                    b"path" => self.extension.pax_path = Some(extension_name(record.value_bytes())),
                    b"size" => {
                        let size = record.value().ok().and_then(|v| v.parse().ok());
                        self.extension.pax_size = Some(size.ok_or_else(|| {
                            ArchiveError::Tar(io::Error::other("a pax size record is not a number"))
                        })?);
                    }
                    _ => {}
                }
            }
            return Ok(());
        }
        if entry_type.is_gnu_longlink() || entry_type.is_pax_global_extensions() {
            return Ok(());
        }
        let extension = std::mem::take(&mut self.extension);
        if let Some(size) = extension.pax_size.filter(|&size| size != entry.size()) {
            return Err(ArchiveError::Tar(io::Error::other(format!(
                "a pax header gives an entry {size} bytes where its tar header says {}; \
                 memprof does not read such entries",
                entry.size()
            )))
            .into());
        }
        let special = special_kind(entry_type);
        if entry_type != tar::EntryType::Regular && special.is_none() {
            return Ok(());
        }
        let name = match (extension.long_name, extension.pax_path) {
            (Some(name), _) | (None, Some(name)) => name,
            (None, None) => entry.path().ok().and_then(|p| entry_name(&p)),
        };
        let Some(name) = name else {
            return Ok(());
        };
        if self.files.contains_key(&name) || self.special.contains_key(&name) {
            return Err(ArchiveError::DuplicateEntry(name).into());
        }
        if let Some(kind) = special {
            self.special.insert(name, kind);
            return Ok(());
        }
        let (offset, size) = (entry.raw_file_position(), entry.size());
        if let Some(file_len) = file_len {
            if offset.checked_add(size).is_none_or(|end| end > file_len) {
                return Err(ArchiveError::EntryPastEnd {
                    name,
                    offset,
                    size,
                    file_len,
                }
                .into());
            }
        }
        if size <= KEEP_ENTRY && self.kept_total + size <= KEEP_TOTAL {
            let mut bytes = Vec::with_capacity(size as usize);
            entry.read_to_end(&mut bytes).map_err(ArchiveError::Tar)?;
            if bytes.len() as u64 != size {
                return Err(ArchiveError::Tar(io::ErrorKind::UnexpectedEof.into()).into());
            }
            self.kept_total += size;
            self.kept.insert(name.clone(), bytes);
        }
        self.files.insert(name, (offset, size));
        Ok(())
    }
}

impl Store for TarStore {
    fn open(&mut self, name: &str) -> Result<Opened<'_>, DecodeError> {
        if let Some(kind) = self.table.special.get(name) {
            return Err(ArchiveError::NotAFile {
                name: name.to_string(),
                kind,
            }
            .into());
        }
        let Some(&(offset, size)) = self.table.files.get(name) else {
            return Ok(None);
        };
        if let Some(bytes) = self.table.kept.get(name) {
            return Ok(Some((Box::new(&bytes[..]), size)));
        }
        let Some((limit, tripped)) = &self.source.gzip else {
            let mut file = &self.source.file;
            file.seek(SeekFrom::Start(offset))?;
            return Ok(Some((Box::new(file.take(size)), size)));
        };
        // Gzip: reuse the decompressor when the blob lies ahead, else restart.
        if self.gz.as_ref().is_none_or(|(_, pos)| *pos > offset) {
            self.gz = Some((Self::gz_stream(&self.source.file, *limit, tripped)?, 0));
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

    fn position(&self, name: &str) -> Option<u64> {
        self.table.files.get(name).map(|&(offset, _)| offset)
    }

    fn sizes_claimed(&self) -> bool {
        self.source.gzip.is_some()
    }
}

pub(crate) fn read_tar(
    source: TarSource,
    name: String,
    file_bytes: u64,
    selection: Selection,
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
) -> Result<Report, DecodeError> {
    let gzip = source.gzip.is_some();
    let mut store = TarStore::scan(source)?;
    let document = Document {
        name,
        file_bytes: Some(file_bytes),
        container: Container::Archive,
        gzip,
        layers: Vec::new(),
    };
    read_layout(&mut store, document, selection, pass, progress)
}

/// An extracted layout: regular files under a directory. No link is
/// followed, at any level below the root, and nothing but a regular file is
/// opened (a FIFO would block, a device would never end).
struct DirStore<'a> {
    root: &'a FsPath,
}

fn file_kind(file_type: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_symlink() {
        "a symbolic link"
    } else if file_type.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

impl Store for DirStore<'_> {
    fn open(&mut self, name: &str) -> Result<Opened<'_>, DecodeError> {
        let mut path = self.root.to_path_buf();
        let parts: Vec<&str> = name.split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            path.push(part);
            let meta = match std::fs::symlink_metadata(&path) {
                Ok(meta) => meta,
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(e.into()),
            };
            let last = i + 1 == parts.len();
            if !last && meta.is_file() {
                // A file where a directory should be: the blob is not there.
                return Ok(None);
            }
            let fine = if last { meta.is_file() } else { meta.is_dir() };
            if !fine {
                return Err(ArchiveError::NotAFile {
                    name: parts[..=i].join("/"),
                    kind: file_kind(meta.file_type()),
                }
                .into());
            }
        }
        let file = File::open(&path)?;
        // Checked again on the open file, in case the path changed meanwhile.
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(ArchiveError::NotAFile {
                name: name.to_string(),
                kind: file_kind(meta.file_type()),
            }
            .into());
        }
        Ok(Some((Box::new(file), meta.len())))
    }

    fn position(&self, _name: &str) -> Option<u64> {
        // No storage order to follow: manifest order.
        Some(0)
    }
}

pub(crate) fn read_directory(
    root: &FsPath,
    name: String,
    selection: Selection,
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
) -> Result<Report, DecodeError> {
    let document = Document {
        name,
        file_bytes: None,
        container: Container::Directory,
        gzip: false,
        layers: Vec::new(),
    };
    read_layout(&mut DirStore { root }, document, selection, pass, progress)
}

//! OMMX artifacts: an OCI image layout (`index.json` → manifest → layers,
//! blobs at `blobs/sha256/<hex>`) in a tar archive, a gzip-compressed tar
//! archive, or an extracted directory.
//!
//! A tar is read in two passes: the first records where each regular file's
//! data starts (seeking past data in plain files) and keeps small files; the
//! second streams the instance blobs the manifests name, each distinct blob
//! once, in the order they are stored (so a gzip archive is decompressed
//! about twice, never once per layer).
//!
//! What is read follows OMMX 2.9.3, which memprof must agree with: the
//! first entry of a name counts and later ones are ignored (OMMX's own
//! ArtifactBuilder writes a blob twice when a layer is added twice); a blob
//! is what is stored under its digest's name, at the size stored, with
//! neither digest nor declared size checked; blobs of layers that are not
//! profiled are never opened, so a missing foreign blob is no error.
//!
//! Hygiene: nothing is ever extracted to disk and no link is followed.
//! Entries whose names are absolute or climb with `..` are ignored; links,
//! devices and FIFOs are never opened (naming one as a layout file is an
//! error). A plain tar ends at its first damaged header, and an entry whose
//! data runs past the end of the file holds what is there, as in OMMX's
//! reader; a gzip-compressed tar (memprof's own extension) must be whole.
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

use super::limits::Capped;
use super::{
    profile_one, Container, DecodeError, Document, LayerInfo, Profiler, Report, Schema, Selection,
    BUF_SIZE,
};

/// Caps on the small JSON documents read whole.
const INDEX_CAP: u64 = 1 << 20;
const MANIFEST_CAP: u64 = 4 << 20;
/// Small entries kept from the first tar pass (manifests are a few KB).
const KEEP_ENTRY: u64 = 64 << 10;
const KEEP_TOTAL: u64 = 8 << 20;
/// Entries in a tar (an OMMX artifact has a handful per layer).
pub const MAX_ENTRIES: u64 = 16_384;
/// Layers over all manifests.
pub const MAX_LAYERS: usize = 4096;
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
    #[error("the directory has no oci-layout file: OMMX reads a directory only as an OCI image layout (an extracted .ommx archive has none; read the archive itself)")]
    NoOciLayout,
    #[error("oci-layout declares version {0:?}; OMMX reads only 1.0.0")]
    OciLayoutVersion(String),
    #[error("the manifest's artifactType is {}, not {ARTIFACT_TYPE}: not an OMMX artifact", .0.as_deref().map_or("missing".to_string(), |t| format!("{t:?}")))]
    NotOmmx(Option<String>),
    #[error("blob {0} is missing from the archive")]
    MissingBlob(String),
    #[error("{name} is {kind}; memprof reads only regular files and never follows links")]
    NotAFile { name: String, kind: &'static str },
    #[error("the archive has more than {cap} {what}, the limit")]
    TooMany { what: &'static str, cap: u64 },
}

// The layout's JSON documents, shaped as OMMX 2.9.3 reads them (through
// the OCI image-spec types it uses): the same required fields and JSON
// types, so that a document OMMX refuses is refused here too, and unknown
// keys are ignored as there.

/// An OCI content descriptor.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Descriptor {
    media_type: String,
    digest: Digest,
    size: u64,
    #[serde(default, deserialize_with = "nullable_map")]
    annotations: BTreeMap<String, String>,
    #[allow(dead_code)] // read for its type only
    urls: Option<Vec<String>>,
    #[allow(dead_code)]
    platform: Option<Platform>,
    #[allow(dead_code)]
    artifact_type: Option<String>,
    #[allow(dead_code)]
    data: Option<String>,
}

/// A descriptor's platform: read for its shape only.
#[allow(dead_code)]
#[derive(Debug, Clone, serde::Deserialize)]
struct Platform {
    architecture: String,
    os: String,
    #[serde(rename = "os.version")]
    os_version: Option<String>,
    #[serde(rename = "os.features")]
    os_features: Option<Vec<String>>,
    variant: Option<String>,
    features: Option<Vec<String>>,
}

/// `index.json`: only its first manifest is read, as OMMX does.
#[allow(dead_code)] // most fields are read for their shape only
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Index {
    schema_version: u32,
    media_type: Option<String>,
    artifact_type: Option<String>,
    manifests: Vec<Descriptor>,
    subject: Option<Descriptor>,
    annotations: Option<HashMap<String, String>>,
}

#[allow(dead_code)]
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Manifest {
    schema_version: u32,
    media_type: Option<String>,
    artifact_type: Option<String>,
    config: Descriptor,
    layers: Vec<Descriptor>,
    subject: Option<Descriptor>,
    annotations: Option<HashMap<String, String>>,
}

/// The artifact type an OMMX manifest declares; OMMX refuses any other.
pub const ARTIFACT_TYPE: &str = "application/org.ommx.v1.artifact";

fn nullable_map<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, String>, D::Error> {
    use serde::Deserialize;
    Ok(Option::<BTreeMap<String, String>>::deserialize(deserializer)?.unwrap_or_default())
}

/// A content digest, `algorithm:encoded`, valid by the OCI image spec's
/// grammar: algorithm components of `[a-z0-9]` joined by `+._-`, an
/// encoded part of `[a-zA-Z0-9=_-]`, and for sha256/384/512 exactly
/// 64/96/128 lowercase hex digits. Any algorithm is allowed, as in OMMX;
/// its blob lives at `blobs/<algorithm>/<encoded>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Digest(String);

impl Digest {
    fn parse(text: &str) -> Result<Self, String> {
        let (algorithm, encoded) = text
            .split_once(':')
            .ok_or_else(|| format!("digest {text:?} has no ':'"))?;
        let component = |part: &str| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        };
        if !algorithm.split(['+', '.', '_', '-']).all(component) {
            return Err(format!("digest {text:?} has an invalid algorithm"));
        }
        let encoded_ok = !encoded.is_empty()
            && encoded
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'=' | b'_' | b'-'));
        let hex_len = match algorithm {
            "sha256" => Some(64),
            "sha384" => Some(96),
            "sha512" => Some(128),
            _ => None,
        };
        let hex_ok = hex_len.is_none_or(|len| {
            encoded.len() == len
                && encoded
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        });
        if !encoded_ok || !hex_ok {
            return Err(format!("digest {text:?} has an invalid encoded part"));
        }
        Ok(Self(text.to_string()))
    }

    fn as_str(&self) -> &str {
        &self.0
    }

    /// Where the blob is stored in the layout.
    fn blob_path(&self) -> String {
        let (algorithm, encoded) = self.0.split_once(':').expect("parsed");
        format!("blobs/{algorithm}/{encoded}")
    }
}

impl std::fmt::Display for Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for Digest {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Digest::parse(&text).map_err(serde::de::Error::custom)
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

/// Opens the blob a descriptor names. Like OMMX 2.9.3, memprof reads what
/// the archive stores under the digest's name, at the size stored: neither
/// the digest nor the descriptor's size is checked against the content
/// (OMMX checks neither, and reads such archives).
fn open_blob<'s>(
    store: &'s mut dyn Store,
    descriptor: &Descriptor,
) -> Result<(Box<dyn Read + Send + 's>, u64), DecodeError> {
    store
        .open(&descriptor.digest.blob_path())?
        .ok_or_else(|| ArchiveError::MissingBlob(descriptor.digest.to_string()).into())
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
    profiler: &mut dyn Profiler,
    progress: &ProgressBar,
) -> Result<Report, DecodeError> {
    let index =
        read_capped(store, "index.json", "index.json", INDEX_CAP)?.ok_or(ArchiveError::NoIndex)?;
    let index: Index = parse_json(&index, "index.json")?;
    // OMMX reads the first manifest the index lists and no other.
    let m = index.manifests.first().ok_or(ArchiveError::NoManifest)?;
    let what = format!("manifest {}", m.digest);
    let (reader, size) = open_blob(store, m)?;
    if size > MANIFEST_CAP {
        return Err(ArchiveError::TooLarge {
            what,
            size,
            cap: MANIFEST_CAP,
        }
        .into());
    }
    let mut bytes = Vec::new();
    reader.take(MANIFEST_CAP).read_to_end(&mut bytes)?;
    let manifest: Manifest = parse_json(&bytes, &what)?;
    match manifest.artifact_type.as_deref() {
        Some(ARTIFACT_TYPE) => {}
        found => {
            return Err(ArchiveError::NotOmmx(found.map(str::to_string)).into());
        }
    }
    let descriptors = manifest.layers;
    if descriptors.len() > MAX_LAYERS {
        return Err(ArchiveError::TooMany {
            what: "layers",
            cap: MAX_LAYERS as u64,
        }
        .into());
    }

    let mut instance_count = 0;
    for (index, d) in descriptors.iter().enumerate() {
        let is_instance = Schema::of_media_type(&d.media_type).is_some();
        document.layers.push(LayerInfo {
            index,
            media_type: d.media_type.clone(),
            digest: d.digest.to_string(),
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

    // Each distinct instance blob that is profiled is read once, in storage
    // order; a layer listed twice shares its blob's profile. Other blobs are
    // not opened: OMMX does not read them either (a missing foreign blob is
    // no error). Blobs that are missing come first, so that error does not
    // wait for the others to be read.
    let selected = |layer: &LayerInfo| match (selection, layer.instance_index) {
        (Selection::All, Some(_)) => true,
        (Selection::Layer(n), Some(i)) => n == i,
        _ => false,
    };
    // For each blob to profile: the first instance layer using it (named in
    // its errors) and how many selected layers use it.
    let mut profiled_digests: HashMap<&str, (Option<usize>, usize)> = HashMap::new();
    let mut blobs: Vec<(Option<u64>, &str, usize)> = Vec::new();
    for (i, (d, layer)) in descriptors.iter().zip(&document.layers).enumerate() {
        if !selected(layer) {
            continue;
        }
        let uses = profiled_digests
            .entry(d.digest.as_str())
            .or_insert((layer.instance_index, 0));
        uses.1 += 1;
        if uses.1 == 1 {
            blobs.push((store.position(&d.digest.blob_path()), d.digest.as_str(), i));
        }
    }
    blobs.sort_by_key(|&(position, _, i)| (position, i));

    progress.set_length(blobs.iter().fold(0u64, |sum, &(_, _, i)| {
        sum.saturating_add(descriptors[i].size)
    }));
    let mut profiles: HashMap<&str, super::ProfiledInstance> = HashMap::new();
    let claimed = store.sizes_claimed();
    for &(_, digest, i) in &blobs {
        let (reader, size) = open_blob(store, &descriptors[i])?;
        let instance_index = profiled_digests[digest].0;
        let schema = Schema::of_media_type(&descriptors[i].media_type).expect("an instance layer");
        let stream = BufReader::with_capacity(BUF_SIZE, progress.wrap_read(reader));
        let max_element = claimed.then(super::limits::max_element);
        profiles.insert(
            digest,
            profile_one(
                profiler,
                stream,
                Some(size),
                max_element,
                instance_index,
                schema,
            )?,
        );
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
            // Entries are seeked past. The archive ends at the first header
            // that cannot be read (damaged, or cut short), keeping what came
            // before: OMMX 2.9.3's reader does the same, so an archive whose
            // layout files precede the damage is read by both. Raw: long
            // names and pax headers are read here, within caps.
            for entry in archive
                .entries_with_seek()
                .map_err(ArchiveError::Tar)?
                .raw(true)
            {
                let Ok(mut entry) = entry else { break };
                table.record(&mut entry, Some(file_len))?;
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
            // OMMX 2.9.3 reads the first entry of a name and never looks at
            // the others, whatever they hold; ArtifactBuilder itself writes
            // a blob twice when the same layer is added twice.
            return Ok(());
        }
        if let Some(kind) = special {
            self.special.insert(name, kind);
            return Ok(());
        }
        let (offset, declared) = (entry.raw_file_position(), entry.size());
        // An entry whose data runs past the end of the file holds what is
        // there, as OMMX reads it (and nothing can follow it).
        let mut size = file_len.map_or(declared, |len| declared.min(len.saturating_sub(offset)));
        if size <= KEEP_ENTRY && self.kept_total + size <= KEEP_TOTAL {
            let mut bytes = Vec::with_capacity(size as usize);
            entry
                .take(size)
                .read_to_end(&mut bytes)
                .map_err(ArchiveError::Tar)?;
            if bytes.len() as u64 != size && file_len.is_none() {
                return Err(ArchiveError::Tar(io::ErrorKind::UnexpectedEof.into()).into());
            }
            size = bytes.len() as u64;
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
    profiler: &mut dyn Profiler,
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
        raw_schema: None,
    };
    read_layout(&mut store, document, selection, profiler, progress)
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
    profiler: &mut dyn Profiler,
    progress: &ProgressBar,
) -> Result<Report, DecodeError> {
    let document = Document {
        name,
        file_bytes: None,
        container: Container::Directory,
        gzip: false,
        layers: Vec::new(),
        raw_schema: None,
    };
    let mut store = DirStore { root };
    check_oci_layout(&mut store)?;
    read_layout(&mut store, document, selection, profiler, progress)
}

/// `oci-layout` in a directory's layout, as OMMX reads it.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct OciLayout {
    image_layout_version: String,
}

/// OMMX reads a directory only as an OCI image layout: its `oci-layout` file
/// must declare version 1.0.0. (A tar needs none, and `.ommx` archives
/// carry none: an extracted archive is not such a directory.)
fn check_oci_layout(store: &mut dyn Store) -> Result<(), DecodeError> {
    let bytes = read_capped(store, "oci-layout", "oci-layout", INDEX_CAP)?
        .ok_or(ArchiveError::NoOciLayout)?;
    let layout: OciLayout = parse_json(&bytes, "oci-layout")?;
    if layout.image_layout_version != "1.0.0" {
        return Err(ArchiveError::OciLayoutVersion(layout.image_layout_version).into());
    }
    Ok(())
}

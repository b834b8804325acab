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

use std::collections::{BTreeMap, HashMap};
use std::io::{self, BufReader, Read};

use indicatif::ProgressBar;

use crate::pass::{InFile, Pass, Payload};

use super::{DecodeError, InputInfo, LayerInfo, ProfiledInput, Schema, Selection, BUF_SIZE};

mod artifact;
mod dir;
mod tarball;

pub(crate) use artifact::read_artifact;
pub use artifact::{ArtifactLayer, HandedLayer};
pub(crate) use dir::{read_directory, read_layout_in};
pub(crate) use tarball::{read_tar, TarSource};

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
    #[error("the archive has no index.json (not an OCI image layout){}", dotted_note(*.0))]
    NoIndex(bool),
    #[error("{what} is {size} bytes, more than the {cap}-byte limit")]
    TooLarge { what: String, size: u64, cap: u64 },
    #[error("{what} is not valid JSON of the expected shape: {error}")]
    Json {
        what: String,
        error: serde_json::Error,
    },
    #[error("index.json lists no manifest")]
    NoManifest,
    #[error("{what} has no valid digest: {error}")]
    Descriptor { what: String, error: String },
    #[error("the directory has no oci-layout file: OMMX reads a directory only as an OCI image layout (an extracted .ommx archive has none; read the archive itself)")]
    NoOciLayout,
    #[error("oci-layout declares version {0:?}; OMMX reads only 1.0.0")]
    OciLayoutVersion(String),
    #[error("the manifest's artifactType is {}, not {ARTIFACT_TYPE}: not an OMMX artifact", .0.as_deref().map_or("missing".to_string(), |t| format!("{t:?}")))]
    NotOmmx(Option<String>),
    #[error("blob {} is missing from the archive{}", .0, dotted_note(*.1))]
    MissingBlob(String, bool),
    #[error("{name} is {kind}; memprof reads only regular files and never follows links")]
    NotAFile { name: String, kind: &'static str },
    #[error("the archive has more than {cap} {what}, the limit")]
    TooMany { what: &'static str, cap: u64 },
}

/// What a missing layout file's error adds when entries named with a
/// leading `./` were passed over.
fn dotted_note(dotted: bool) -> &'static str {
    match dotted {
        true => {
            "; entries whose names start with ./ are not the layout's files to OMMX \
                 2.9.3, which refuses this archive too (name them from the layout's root: \
                 tar -cf x.ommx -C DIR index.json blobs)"
        }
        false => "",
    }
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
pub(crate) type Opened<'a> = Option<(Box<dyn Read + Send + 'a>, u64)>;

/// Where the layout's files are: a tar's entries, a directory, an
/// artifact's handed-over blobs, or an image of OMMX's local registry
/// (`input/registry/`).
pub(crate) trait Store {
    /// Opens the file at `name` (relative to the layout root), if present.
    fn open(&mut self, name: &str) -> Result<Opened<'_>, DecodeError>;

    /// Where the file's data is stored, for reading blobs in storage order.
    fn position(&self, name: &str) -> Option<u64>;

    /// Whether entries named with a leading `./` were passed over (they
    /// are not the layout's files to OMMX), for the error when one is
    /// missing.
    fn dotted(&self) -> bool {
        false
    }

    /// Whether the sizes of files are only claims about decompressed data
    /// (a gzip archive's tar headers) rather than bytes on disk.
    fn sizes_claimed(&self) -> bool {
        false
    }

    /// The file holding `name`'s data, stored as is, and where the data
    /// starts in it, when the data lies whole inside it: the pass may then
    /// read it where it lies (on every thread, or a table entry at a time).
    fn where_stored(&self, _name: &str) -> Option<(std::fs::File, u64)> {
        None
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
    let dotted = store.dotted();
    store
        .open(&descriptor.digest.blob_path())?
        .ok_or_else(|| ArchiveError::MissingBlob(descriptor.digest.to_string(), dotted).into())
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

/// Reads the layout in `store`: index, manifest, then each layer.
fn read_layout(
    store: &mut dyn Store,
    document: InputInfo,
    selection: Selection,
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
) -> Result<ProfiledInput, DecodeError> {
    let descriptors = read_manifest(store)?.layers;
    profile_layers(store, descriptors, document, selection, pass, progress)
}

/// Profiles the instance layers among `descriptors` (a manifest's, in its
/// order), their blobs read from `store`.
fn profile_layers(
    store: &mut dyn Store,
    descriptors: Vec<Descriptor>,
    mut document: InputInfo,
    selection: Selection,
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
) -> Result<ProfiledInput, DecodeError> {
    let instance_count = list_layers(&descriptors, &mut document);
    check_selection(selection, &descriptors, instance_count)?;
    let selected = |layer: &LayerInfo| match (selection, layer.instance_index) {
        (Selection::All, Some(_)) => true,
        (Selection::Layer(n), Some(i)) => n == i,
        _ => false,
    };
    let layers: Vec<(&Descriptor, &LayerInfo)> = descriptors
        .iter()
        .zip(&document.layers)
        .filter(|(_, layer)| selected(layer))
        .collect();
    let (mut reads, read_of_layer) = plan_reads(store, pass, &layers);
    let mut profiles = profile_blobs(store, pass, progress, &reads)?;
    let instances = layers
        .iter()
        .zip(read_of_layer)
        .map(|(&(_, layer), (r, k))| {
            reads[r].uses -= 1;
            let mut profiled = if reads[r].uses == 0 {
                profiles[r].take().expect("profiled")
            } else {
                profiles[r].clone().expect("profiled")
            };
            // The comparison made for this layer's annotations.
            let compared = std::mem::take(&mut profiled.compared).into_iter().nth(k);
            profiled.compared = compared.into_iter().collect();
            profiled.instance_index = layer.instance_index;
            profiled.title = layer.title().map(str::to_string);
            profiled
        })
        .collect();
    Ok(ProfiledInput {
        input: document,
        instances,
    })
}

/// Profiles the layers of `manifest` (the bytes of an image manifest kept
/// apart from the layout, as OMMX 3.0's registry index keeps it, named
/// `what`), their blobs read from `store`.
pub(crate) fn read_manifest_bytes(
    store: &mut dyn Store,
    manifest: &[u8],
    what: &str,
    document: InputInfo,
    selection: Selection,
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
) -> Result<ProfiledInput, DecodeError> {
    if manifest.len() as u64 > MANIFEST_CAP {
        return Err(ArchiveError::TooLarge {
            what: what.to_string(),
            size: manifest.len() as u64,
            cap: MANIFEST_CAP,
        }
        .into());
    }
    let descriptors = parse_manifest(manifest, what)?.layers;
    profile_layers(store, descriptors, document, selection, pass, progress)
}

/// The manifest the index names first (OMMX reads no other), within the
/// caps, of OMMX's artifact type.
fn read_manifest(store: &mut dyn Store) -> Result<Manifest, DecodeError> {
    let index = read_capped(store, "index.json", "index.json", INDEX_CAP)?
        .ok_or(ArchiveError::NoIndex(store.dotted()))?;
    let index: Index = parse_json(&index, "index.json")?;
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
    parse_manifest(&bytes, &what)
}

/// A manifest's bytes as OMMX reads them: of OMMX's artifact type, within
/// the cap on layers.
fn parse_manifest(bytes: &[u8], what: &str) -> Result<Manifest, DecodeError> {
    let manifest: Manifest = parse_json(bytes, what)?;
    match manifest.artifact_type.as_deref() {
        Some(ARTIFACT_TYPE) => {}
        found => {
            return Err(ArchiveError::NotOmmx(found.map(str::to_string)).into());
        }
    }
    if manifest.layers.len() > MAX_LAYERS {
        return Err(ArchiveError::TooMany {
            what: "layers",
            cap: MAX_LAYERS as u64,
        }
        .into());
    }
    Ok(manifest)
}

/// Lists every layer in the document, numbering the instance layers;
/// returns how many there are.
fn list_layers(descriptors: &[Descriptor], document: &mut InputInfo) -> usize {
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
    instance_count
}

/// Whether the selection names instance layers the archive has.
fn check_selection(
    selection: Selection,
    descriptors: &[Descriptor],
    instance_count: usize,
) -> Result<(), DecodeError> {
    match selection {
        Selection::All if instance_count == 0 => {
            let types: Vec<_> = descriptors.iter().map(|d| d.media_type.as_str()).collect();
            let listed = if types.is_empty() {
                "none".to_string()
            } else {
                types.join(", ")
            };
            Err(DecodeError::NoInstanceLayer(listed))
        }
        Selection::Layer(n) if n >= instance_count => Err(DecodeError::LayerOutOfRange {
            requested: n,
            available: instance_count,
        }),
        _ => Ok(()),
    }
}

/// What decides a layer's profile: its blob, and, where OMMX 3.0 reads it,
/// the annotations it folds into the instance.
type ReadKey<'d> = (&'d Digest, Option<&'d BTreeMap<String, String>>);

/// One blob read and profiled for the layers that share its [`ReadKey`].
struct BlobRead<'d> {
    descriptor: &'d Descriptor,
    /// The first of its layers (named in its errors).
    instance_index: Option<usize>,
    /// How many selected layers it serves.
    uses: usize,
    /// The annotations of those after the first, whose 3.0 comparisons
    /// ([`crate::profiled::ProfiledInstance::compared`]) the reading makes too.
    sharing: Vec<&'d BTreeMap<String, String>>,
    /// Where its blob is stored, to read the blobs in storage order.
    position: Option<u64>,
}

/// Each distinct read the selected layers need (a layer listed twice
/// shares its blob's profile, where nothing of its own is folded into it),
/// and which read each layer takes its profile from (and which of its layers
/// it is there, the first being 0).
fn plan_reads<'d>(
    store: &dyn Store,
    pass: &Pass<'_>,
    layers: &[(&'d Descriptor, &LayerInfo)],
) -> (Vec<BlobRead<'d>>, Vec<(usize, usize)>) {
    let mut reads: Vec<BlobRead<'d>> = Vec::new();
    let mut index: HashMap<ReadKey<'d>, usize> = HashMap::new();
    let mut read_of_layer = Vec::with_capacity(layers.len());
    for &(d, layer) in layers {
        let schema = Schema::of_media_type(&d.media_type).expect("an instance layer");
        let folds = pass.accounting(schema) == crate::profiled::Accounting::Ommx30;
        let key = (&d.digest, folds.then_some(&d.annotations));
        let r = *index.entry(key).or_insert_with(|| {
            reads.push(BlobRead {
                descriptor: d,
                instance_index: layer.instance_index,
                uses: 0,
                sharing: Vec::new(),
                position: store.position(&d.digest.blob_path()),
            });
            reads.len() - 1
        });
        if reads[r].uses > 0 {
            reads[r].sharing.push(&d.annotations);
        }
        read_of_layer.push((r, reads[r].uses));
        reads[r].uses += 1;
    }
    (reads, read_of_layer)
}

/// Profiles each planned read's blob, in storage order (ties in manifest
/// order); blobs of layers that are not profiled are never opened (OMMX
/// does not read them either, so a missing foreign blob is no error).
/// Returns the profiles in the order of `reads`.
fn profile_blobs(
    store: &mut dyn Store,
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
    reads: &[BlobRead<'_>],
) -> Result<Vec<Option<super::ProfiledInstance>>, DecodeError> {
    let mut in_storage_order: Vec<usize> = (0..reads.len()).collect();
    in_storage_order.sort_by_key(|&r| (reads[r].position, r));
    progress.set_length(
        reads
            .iter()
            .fold(0u64, |sum, r| sum.saturating_add(r.descriptor.size)),
    );
    let claimed = store.sizes_claimed();
    let mut profiles = vec![None; reads.len()];
    for r in in_storage_order {
        let d = reads[r].descriptor;
        let stored = store.where_stored(&d.digest.blob_path());
        let (reader, size) = open_blob(store, d)?;
        let schema = Schema::of_media_type(&d.media_type).expect("an instance layer");
        let mut stream = BufReader::with_capacity(BUF_SIZE, progress.wrap_read(reader));
        let tick = |n| progress.inc(n);
        let in_file = stored.as_ref().map(|(file, start)| InFile {
            file,
            start: *start,
            progress: &tick,
        });
        let payload = Payload {
            reader: &mut stream,
            total: Some(size),
            in_file,
            max_element: claimed.then_some(pass.max_element),
            instance_index: reads[r].instance_index,
            title: None,
            schema,
            layer_annotations: Some(&d.annotations),
        };
        profiles[r] = Some(pass.profile_shared(payload, &reads[r].sharing)?);
    }
    Ok(profiles)
}

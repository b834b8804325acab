//! An OMMX artifact handed over as its layers (a notebook's
//! `ommx.artifact.Artifact`, loaded from a local registry or an archive by
//! OMMX itself): the manifest's layer descriptors, and each instance
//! layer's blob in a temporary file. Its instance layers are profiled as an
//! archive's are, by the same code.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use indicatif::ProgressBar;

use super::{profile_layers, ArchiveError, Descriptor, Digest, Opened, Store};
use crate::input::{Container, DecodeError, InputInfo, ProfiledInput, Selection};
use crate::pass::Pass;

/// One layer of an artifact: its descriptor, and for an instance layer
/// its blob (kept in a temporary file as long as the input lives).
#[derive(Debug, Clone)]
pub struct ArtifactLayer {
    pub media_type: String,
    pub digest: String,
    pub size: u64,
    pub annotations: BTreeMap<String, String>,
    pub blob: Option<Arc<tempfile::TempPath>>,
}

/// A layer as the one handing it over describes it, with the bytes of an
/// instance layer's blob.
#[derive(Debug, Clone)]
pub struct HandedLayer {
    pub media_type: String,
    pub digest: String,
    pub size: u64,
    pub annotations: BTreeMap<String, String>,
    pub bytes: Option<Vec<u8>>,
}

/// The layers' blobs by their path in a layout (`blobs/<alg>/<hex>`).
struct Blobs<'a>(HashMap<String, &'a Path>);

impl Store for Blobs<'_> {
    fn open(&mut self, name: &str) -> Result<Opened<'_>, DecodeError> {
        let Some(path) = self.0.get(name) else {
            return Ok(None);
        };
        let file = File::open(path)?;
        let size = file.metadata()?.len();
        Ok(Some((Box::new(file), size)))
    }

    fn position(&self, _name: &str) -> Option<u64> {
        None
    }
}

/// Profiles the instance layers of an artifact handed over as `layers`,
/// named `name`.
pub(crate) fn read_artifact(
    layers: &[ArtifactLayer],
    name: String,
    selection: Selection,
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
) -> Result<ProfiledInput, DecodeError> {
    let mut descriptors = Vec::with_capacity(layers.len());
    let mut blobs = HashMap::new();
    for layer in layers {
        let digest = Digest::parse(&layer.digest).map_err(|error| ArchiveError::Descriptor {
            what: format!("layer {}", descriptors.len()),
            error,
        })?;
        if let Some(blob) = &layer.blob {
            blobs.insert(digest.blob_path(), blob.as_ref().as_ref());
        }
        descriptors.push(Descriptor {
            media_type: layer.media_type.clone(),
            digest,
            size: layer.size,
            annotations: layer.annotations.clone(),
            urls: None,
            platform: None,
            artifact_type: None,
            data: None,
        });
    }
    let document = InputInfo {
        name,
        file_bytes: None,
        container: Container::Artifact,
        gzip: false,
        layers: Vec::new(),
        raw_schema: None,
        registry: None,
    };
    profile_layers(
        &mut Blobs(blobs),
        descriptors,
        document,
        selection,
        pass,
        progress,
    )
}

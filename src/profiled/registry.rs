//! OMMX's local registry as reports speak of it: where an image was read
//! from (its [`Origin`], shown in the header and in JSON) and what `memprof
//! ls` lists of a registry ([`Listing`]).

use serde::Serialize;

/// Which OMMX's layout of the local registry held an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Layout {
    /// OMMX 2.9.3's: an OCI image-layout directory per image,
    /// `ROOT/HOST/NAME/__TAG`.
    #[serde(rename = "2.9.3")]
    Ommx29,
    /// OMMX 3.0's: `ROOT/index.sqlite3` (refs and manifests) beside the
    /// blob store `ROOT/blobs/sha256/`.
    #[serde(rename = "3.0")]
    Ommx30,
}

impl Layout {
    /// The OMMX release that writes this layout, as tables show it.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Ommx29 => "2.9.3",
            Layout::Ommx30 => "3.0",
        }
    }

    /// What the layout is, for the header's `registry:` line.
    pub fn describe(self) -> &'static str {
        match self {
            Layout::Ommx29 => "OMMX 2.9.3's local registry",
            Layout::Ommx30 => "OMMX 3.0's local registry",
        }
    }
}

/// Where an image of the local registry was read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Origin {
    /// The registry's root directory.
    pub root: String,
    pub layout: Layout,
    /// The image's name as that OMMX keys it (`ubuntu:20.04` is
    /// `registry-1.docker.io/ubuntu:20.04` to 2.9.3 and
    /// `docker.io/library/ubuntu:20.04` to 3.0).
    pub image: String,
    /// The image's directory (2.9.3), or the index that names it (3.0).
    pub path: String,
    /// The digest of the image's manifest, where the index says it (3.0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manifest_digest: Option<String>,
}

/// What `memprof ls` lists of a local registry: every image of both
/// layouts, by name and tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Listing {
    pub root: String,
    /// The layouts found under the root (an empty list: no registry there).
    pub layouts: Vec<Layout>,
    /// Whether each instance layer was profiled (`ls --logical`).
    pub logical: bool,
    pub images: Vec<ListedImage>,
}

/// One image of a [`Listing`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListedImage {
    /// The repository: the image name without its tag.
    pub name: String,
    /// The tag, or the digest an image was stored under.
    pub tag: String,
    pub layout: Layout,
    /// When the image was last written: the ref's `updated_at` (3.0), the
    /// modification time of the image's `index.json` (2.9.3); RFC 3339, UTC.
    pub updated: Option<String>,
    /// The manifest's digest, where the index says it (3.0) or the image's
    /// `index.json` does (2.9.3).
    pub manifest_digest: Option<String>,
    /// The instance layers, in manifest order.
    pub instances: Vec<ListedLayer>,
    /// How many layers hold something else (solutions, sample sets, data).
    pub other_layers: usize,
    /// The instance layers' blobs, in bytes, as the manifest gives them.
    pub file_bytes: u64,
    /// Their logical bytes, summed (with `--logical`).
    pub logical_bytes: Option<u64>,
}

/// One instance layer of a [`ListedImage`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListedLayer {
    /// Position in the manifest (all layers).
    pub index: usize,
    pub media_type: String,
    pub digest: String,
    /// The blob's size as the manifest gives it.
    pub size: u64,
    pub title: Option<String>,
    /// Its logical bytes (with `--logical`).
    pub logical_bytes: Option<u64>,
}

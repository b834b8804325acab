//! OMMX's local registry, where `Artifact.load(name)` keeps what it pulls
//! and 3.0's `Artifact.import_archive` files archives: an image named by
//! reference (`ghcr.io/org/name:tag`, `name@sha256:…`) is found there and
//! read as its layers, and the registry can be listed.
//!
//! Two layouts may share one root, and both are searched, 3.0's first (a
//! name in both was filed again by the newer OMMX): OMMX 2.9.3's image
//! directories ([`v29`]) and OMMX 3.0's SQLite index beside its blob store
//! ([`v30`]). Which one held an image is said in its report
//! ([`Origin`]).
//!
//! Read-only and safe beside a running OMMX: nothing under the root is
//! written, created, locked or migrated; nothing outside it is read (a link
//! leading out is an error, [`confined`]); every blob read is checked
//! against its digest first. Nothing is pulled: an image that is not there
//! is an error saying how OMMX would pull it.

mod confined;
mod error;
mod reference;
mod v29;
mod v30;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use indicatif::ProgressBar;

use super::archive::{read_layout_in, read_manifest_bytes};
use super::{Container, DecodeError, InputInfo, ProfiledInput, Selection};
use crate::pass::Pass;
use crate::profiled::registry::{Layout, ListedImage, ListedLayer, Origin};
use confined::Root;
pub use error::RegistryError;
pub use reference::Reference;

/// The environment variable OMMX reads its registry's root from.
pub const ROOT_VARIABLE: &str = "OMMX_LOCAL_REGISTRY_ROOT";

/// The registry's root: `explicit` (`--registry`), else
/// `$OMMX_LOCAL_REGISTRY_ROOT`, else OMMX's default, the data directory of
/// the `directories` crate's `ProjectDirs::from("org", "ommx", "ommx")`:
/// `$XDG_DATA_HOME/ommx` (an absolute `XDG_DATA_HOME`; else
/// `~/.local/share/ommx`) on Linux and other Unix systems,
/// `~/Library/Application Support/org.ommx.ommx` on macOS,
/// `%APPDATA%\ommx\ommx\data` on Windows. `None` when there is no home
/// directory to find the default in.
pub fn root(explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = explicit {
        return Some(path.to_path_buf());
    }
    // As OMMX reads it: a value that is not Unicode is not set.
    if let Ok(path) = std::env::var(ROOT_VARIABLE) {
        return Some(PathBuf::from(if path.is_empty() { "." } else { &path }));
    }
    default_root()
}

#[cfg(target_os = "macos")]
fn default_root() -> Option<PathBuf> {
    Some(home()?.join("Library/Application Support/org.ommx.ommx"))
}

#[cfg(windows)]
fn default_root() -> Option<PathBuf> {
    let app_data = std::env::var_os("APPDATA").filter(|v| !v.is_empty())?;
    Some(
        PathBuf::from(app_data)
            .join("ommx")
            .join("ommx")
            .join("data"),
    )
}

#[cfg(not(any(target_os = "macos", windows)))]
fn default_root() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| Some(home()?.join(".local/share")))?;
    Some(data.join("ommx"))
}

#[cfg(not(windows))]
fn home() -> Option<PathBuf> {
    #[allow(deprecated)] // not deprecated since Rust 1.86; memprof builds with 1.85
    std::env::home_dir().filter(|h| !h.as_os_str().is_empty())
}

/// An image found in the local registry, ready to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// The reference as given, which names it in reports and errors.
    pub given: String,
    pub origin: Origin,
    root: Root,
    place: Place,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    /// 2.9.3's image directory, relative to the root.
    Directory(PathBuf),
    /// 3.0's: the manifest (checked against its digest), its layers' blobs
    /// in the root's blob store.
    Index { manifest: Vec<u8>, digest: String },
}

/// The image `text` names in the registry at `root`: `None` when `text` is
/// not an image reference with a tag or digest; an error when the registry
/// does not have it, or cannot say (an index of a newer OMMX, a link out
/// of the root).
pub fn find(text: &str, root: &Path) -> Result<Option<Image>, RegistryError> {
    let Some(reference) = Reference::parse(text) else {
        return Ok(None);
    };
    let not_found = || RegistryError::NotFound {
        reference: text.to_string(),
        root: root.display().to_string(),
    };
    let Some(root) = Root::open(root)? else {
        return Err(not_found());
    };
    if let Some(index) = v30::Index::open(&root)? {
        if let Some(entry) = index.find(&reference)? {
            let manifest = v30::manifest(&root, &index, &entry)?;
            return Ok(Some(image30(text, &root, &index, entry, manifest)));
        }
    }
    match v29::find(&root, &reference)? {
        Some(rel) => Ok(Some(image29(text, &root, rel, reference.name29()))),
        None => Err(not_found()),
    }
}

fn image29(given: &str, root: &Root, rel: PathBuf, image: String) -> Image {
    Image {
        given: given.to_string(),
        origin: Origin {
            root: root.shown().display().to_string(),
            layout: Layout::Ommx29,
            image,
            path: root.shown().join(&rel).display().to_string(),
            manifest_digest: None,
        },
        root: root.clone(),
        place: Place::Directory(rel),
    }
}

fn image30(
    given: &str,
    root: &Root,
    index: &v30::Index,
    entry: v30::Entry,
    manifest: Vec<u8>,
) -> Image {
    Image {
        given: given.to_string(),
        origin: Origin {
            root: root.shown().display().to_string(),
            layout: Layout::Ommx30,
            image: joined(&entry.name, &entry.reference),
            path: index.shown().to_string(),
            manifest_digest: Some(entry.manifest_digest.clone()),
        },
        root: root.clone(),
        place: Place::Index {
            manifest,
            digest: entry.manifest_digest,
        },
    }
}

/// Reads `image`'s instance layers as `selection` says (its layers only,
/// with [`Selection::ListOnly`]).
pub fn read(
    image: &Image,
    selection: Selection,
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
) -> Result<ProfiledInput, DecodeError> {
    let document = InputInfo {
        name: image.given.clone(),
        file_bytes: None,
        container: Container::Registry,
        gzip: false,
        layers: Vec::new(),
        raw_schema: None,
        registry: Some(Box::new(image.origin.clone())),
    };
    match &image.place {
        Place::Directory(rel) => {
            let mut store = v29::store(&image.root, rel);
            read_layout_in(&mut store, document, selection, pass, progress)
        }
        Place::Index { manifest, digest } => {
            let mut store = confined::Confined {
                root: &image.root,
                base: PathBuf::new(),
            };
            let what = format!("manifest {digest}");
            read_manifest_bytes(
                &mut store, manifest, &what, document, selection, pass, progress,
            )
        }
    }
}

/// What a registry holds: the layouts found under its root, and each
/// image with what its manifest says of it.
#[derive(Debug, Default)]
pub struct Contents {
    pub layouts: Vec<Layout>,
    pub images: Vec<(Image, ListedImage)>,
}

/// Every image of the registry at `root`, 3.0's then 2.9.3's, each by name
/// and tag, with what its manifest says of its layers (no instance is
/// read); and the layouts found.
pub fn list(root: &Path, pass: &mut Pass<'_>) -> Result<Contents, DecodeError> {
    let Some(root) = Root::open(root)? else {
        return Ok(Contents::default());
    };
    let mut layouts = Vec::new();
    let mut images = Vec::new();
    if let Some(index) = v30::Index::open(&root)? {
        layouts.push(Layout::Ommx30);
        for entry in index.all()? {
            let given = joined(&entry.name, &entry.reference);
            let (name, tag, updated) = (
                entry.name.clone(),
                entry.reference.clone(),
                entry.updated_at.clone(),
            );
            let manifest = v30::manifest(&root, &index, &entry).map_err(|e| named(&given, e))?;
            let image = image30(&given, &root, &index, entry, manifest);
            let listed = listed(&image, pass, name, tag, Some(updated))?;
            images.push((image, listed));
        }
    }
    let found29 = v29::list(&root)?;
    if !found29.is_empty() {
        layouts.push(Layout::Ommx29);
    }
    for found in found29 {
        let given = joined(&found.name, &found.tag);
        let updated = v29::updated(&root, &found.rel).map(rfc3339);
        let image = image29(
            &given,
            &root,
            found.rel,
            format!("{}:{}", found.name, found.tag),
        );
        let listed = listed(&image, pass, found.name, found.tag, updated)?;
        images.push((image, listed));
    }
    Ok(Contents { layouts, images })
}

/// A repository and a tag as a reference, `name:tag`, or `name@sha256:HEX`
/// for a digest.
fn joined(name: &str, reference: &str) -> String {
    match reference.contains(':') {
        true => format!("{name}@{reference}"),
        false => format!("{name}:{reference}"),
    }
}

/// An error about the image `given`, naming it.
fn named(given: &str, error: RegistryError) -> DecodeError {
    DecodeError::Image {
        image: given.to_string(),
        error: Box::new(error.into()),
    }
}

/// What the manifest of `image` says of its layers.
fn listed(
    image: &Image,
    pass: &mut Pass<'_>,
    name: String,
    tag: String,
    updated: Option<String>,
) -> Result<ListedImage, DecodeError> {
    let profiled = read(image, Selection::ListOnly, pass, &ProgressBar::hidden()).map_err(|e| {
        DecodeError::Image {
            image: image.given.clone(),
            error: Box::new(e),
        }
    })?;
    let layers = profiled.input.layers;
    let instances: Vec<ListedLayer> = layers
        .iter()
        .filter(|l| l.instance_index.is_some())
        .map(|l| ListedLayer {
            index: l.index,
            media_type: l.media_type.clone(),
            digest: l.digest.clone(),
            size: l.size,
            title: l.title().map(str::to_string),
            logical_bytes: None,
        })
        .collect();
    Ok(ListedImage {
        name,
        tag,
        layout: image.origin.layout,
        updated,
        manifest_digest: image.origin.manifest_digest.clone(),
        other_layers: layers.len() - instances.len(),
        file_bytes: instances.iter().map(|l| l.size).sum(),
        instances,
        logical_bytes: None,
    })
}

/// A time as RFC 3339 in UTC, to the second.
fn rfc3339(time: SystemTime) -> String {
    let secs = match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    };
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_days() {
        let at = |secs| rfc3339(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(secs));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_795_898_860), "2026-11-28T20:47:40Z");
    }
}

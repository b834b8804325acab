//! OMMX 2.9.3's local registry: each image an OCI image-layout directory
//! at `ROOT/HOST[__PORT]/NAME/__TAG` (ocipkg 0.4's `ImageName::as_path`; a
//! digest stored as the tag `sha256__HEX`), read by the archive reader
//! through the confined store.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::confined::{Confined, Root};
use super::error::RegistryError;
use super::reference::Reference;

/// How deep image directories may lie below the root (host, name
/// components, tag).
const MAX_DEPTH: usize = 32;

/// The image's directory, relative to the root, if the registry has it.
pub fn find(root: &Root, reference: &Reference) -> Result<Option<PathBuf>, RegistryError> {
    let rel = reference.path29();
    Ok(root.resolve(&rel)?.filter(|p| p.is_dir()).map(|_| rel))
}

/// One image directory found under the root.
pub struct Listed {
    /// Relative to the root.
    pub rel: PathBuf,
    /// `HOST[:PORT]/NAME`.
    pub name: String,
    /// The tag (`sha256:HEX` for a digest).
    pub tag: String,
}

/// Every image directory under the root (`__TAG` directories at least two
/// levels down holding an `oci-layout`), sorted. Links are not followed here (an image reached
/// through a link is read when named); the root's `blobs/` and
/// `index.sqlite3` are OMMX 3.0's.
pub fn list(root: &Root) -> Result<Vec<Listed>, RegistryError> {
    let mut found = Vec::new();
    walk(root.path(), PathBuf::new(), &mut found)?;
    found.sort_by(|a, b| (&a.name, &a.tag).cmp(&(&b.name, &b.tag)));
    Ok(found)
}

fn walk(root: &Path, rel: PathBuf, found: &mut Vec<Listed>) -> Result<(), RegistryError> {
    let dir = root.join(&rel);
    let io_error = |error| RegistryError::Io {
        path: dir.display().to_string(),
        error,
    };
    let depth = rel.components().count();
    let mut entries: Vec<_> = fs::read_dir(&dir)
        .map_err(io_error)?
        .collect::<Result<_, _>>()
        .map_err(io_error)?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let is_dir = entry.file_type().map_err(io_error)?.is_dir();
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !is_dir || (depth == 0 && name == "blobs") {
            continue;
        }
        let child = rel.join(name);
        // An image directory holds an `oci-layout` file, as OMMX's own
        // listing requires (`get_images`).
        let layout = || root.join(&child).join("oci-layout").is_file();
        match name.strip_prefix("__") {
            Some(tag) if depth >= 2 && layout() => found.push(listed(&child, tag)),
            Some(_) if depth >= 2 => {}
            _ if depth < MAX_DEPTH => walk(root, child, found)?,
            _ => {}
        }
    }
    Ok(())
}

/// ocipkg's `ImageName::from_path`: the first component the host (`__`
/// before a port), the last the tag (`__` for `:`), the name between.
fn listed(rel: &Path, tag: &str) -> Listed {
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let host = parts[0].replacen("__", ":", 1);
    let name = parts[1..parts.len() - 1].join("/");
    Listed {
        rel: rel.to_path_buf(),
        name: format!("{host}/{name}"),
        tag: tag.replace("__", ":"),
    }
}

/// The store of the image directory `rel`.
pub fn store<'r>(root: &'r Root, rel: &Path) -> Confined<'r> {
    Confined {
        root,
        base: rel.to_path_buf(),
    }
}

/// When the image was last written: its `index.json`'s modification time.
pub fn updated(root: &Root, rel: &Path) -> Option<SystemTime> {
    let path = root.resolve(&rel.join("index.json")).ok()??;
    fs::metadata(path).ok()?.modified().ok()
}

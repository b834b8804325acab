//! An extracted OCI layout directory.

use super::{parse_json, read_capped, read_layout, ArchiveError, Opened, Store, INDEX_CAP};
use crate::input::Container;
use crate::input::DecodeError;
use crate::input::InputInfo;
use crate::input::ProfiledInput;
use crate::input::Selection;
use crate::pass::Pass;
use indicatif::ProgressBar;
use std::fs::File;
use std::io;
use std::path::Path;

/// An extracted layout: regular files under a directory. No link is
/// followed, at any level below the root, and nothing but a regular file is
/// opened (a FIFO would block, a device would never end).
struct DirStore<'a> {
    root: &'a Path,
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
    root: &Path,
    name: String,
    selection: Selection,
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
) -> Result<ProfiledInput, DecodeError> {
    let document = InputInfo {
        name,
        file_bytes: None,
        container: Container::Directory,
        gzip: false,
        layers: Vec::new(),
        raw_schema: None,
        registry: None,
    };
    read_layout_in(&mut DirStore { root }, document, selection, pass, progress)
}

/// Reads an OCI image-layout directory whose files `store` opens (an
/// extracted layout, or an image directory of OMMX 2.9.3's local registry).
pub(crate) fn read_layout_in(
    store: &mut dyn Store,
    document: InputInfo,
    selection: Selection,
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
) -> Result<ProfiledInput, DecodeError> {
    check_oci_layout(store)?;
    read_layout(store, document, selection, pass, progress)
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

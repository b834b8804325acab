//! The registry's files, opened only inside its root and only for reading:
//! a path whose links lead outside the root is refused, anything but a
//! regular file is refused (a FIFO would block), and a blob is checked
//! against its digest before a byte of it is used.
//!
//! Links inside the root are followed (a registry moved with `ln -s` still
//! reads). Nothing here writes, creates, locks or renames anything.

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::error::RegistryError;
use crate::input::archive::{Opened, Store};
use crate::input::DecodeError;

/// The registry's root directory, its links resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    path: PathBuf,
    /// As given, which names it and its files in reports and errors.
    shown: PathBuf,
}

impl Root {
    /// The root at `path`, if there is a directory there.
    pub fn open(path: &Path) -> Result<Option<Root>, RegistryError> {
        match fs::canonicalize(path) {
            Ok(real) if real.is_dir() => Ok(Some(Root {
                path: real,
                shown: path.to_path_buf(),
            })),
            Ok(_) => Ok(None),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(RegistryError::Io {
                path: path.display().to_string(),
                error,
            }),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The root as given, for reports and errors.
    pub fn shown(&self) -> &Path {
        &self.shown
    }

    /// `rel` under the root with its links resolved, if something is
    /// there; an error when a link leads outside the root or nowhere.
    pub fn resolve(&self, rel: &Path) -> Result<Option<PathBuf>, RegistryError> {
        let full = self.path.join(rel);
        let shown = self.shown.join(rel).display().to_string();
        match fs::canonicalize(&full) {
            Ok(real) if real.starts_with(&self.path) => Ok(Some(real)),
            Ok(real) => Err(RegistryError::Escapes {
                path: shown,
                target: real.display().to_string(),
                root: self.shown.display().to_string(),
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => match fs::read_link(&full) {
                // A link to nothing: where it points says more than "missing".
                Ok(target) => Err(RegistryError::Dangling {
                    path: shown,
                    target: target.display().to_string(),
                }),
                Err(_) => Ok(None),
            },
            Err(error) => Err(RegistryError::Io { path: shown, error }),
        }
    }

    /// The regular file at `rel`, opened for reading, with its size.
    pub fn file(&self, rel: &Path) -> Result<Option<(File, u64)>, RegistryError> {
        let Some(real) = self.resolve(rel)? else {
            return Ok(None);
        };
        let io_error = |error| RegistryError::Io {
            path: real.display().to_string(),
            error,
        };
        // Refused before opening: opening a FIFO would block.
        let kind = fs::metadata(&real).map_err(io_error)?.file_type();
        if !kind.is_file() {
            return Err(RegistryError::NotAFile {
                path: real.display().to_string(),
                kind: kind_of(kind),
            });
        }
        let file = File::open(&real).map_err(io_error)?;
        let size = file.metadata().map_err(io_error)?.len();
        Ok(Some((file, size)))
    }

    /// The blob of `digest` under `base` (`blobs/sha256/HEX` there), checked
    /// against its digest.
    pub fn blob(&self, base: &Path, digest: &str) -> Result<(File, u64), RegistryError> {
        let Some(hex) = digest.strip_prefix("sha256:") else {
            return Err(RegistryError::Algorithm(digest.to_string()));
        };
        let rel = base.join("blobs").join("sha256").join(hex);
        let (file, size) = self.file(&rel)?.ok_or_else(|| RegistryError::Missing {
            what: format!("blob {digest}"),
            path: self.shown.join(&rel).display().to_string(),
        })?;
        let file = verified(file, hex, &self.shown.join(&rel))?;
        Ok((file, size))
    }
}

/// What a file type is, for an error.
fn kind_of(kind: fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// The hex sha256 of everything `reader` holds.
pub fn sha256_hex(mut reader: impl Read) -> io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// `file` read whole and hashed: back at its start when its sha256 is
/// `hex`, an error naming both otherwise.
fn verified(mut file: File, hex: &str, path: &Path) -> Result<File, RegistryError> {
    let io_error = |error| RegistryError::Io {
        path: path.display().to_string(),
        error,
    };
    let actual = sha256_hex(&mut file).map_err(io_error)?;
    if actual != hex {
        return Err(RegistryError::DigestMismatch {
            digest: format!("sha256:{hex}"),
            actual,
            path: path.display().to_string(),
        });
    }
    file.seek(SeekFrom::Start(0)).map_err(io_error)?;
    Ok(file)
}

/// An OCI layout's files as the archive reader asks for them (`index.json`,
/// `oci-layout`, `blobs/sha256/HEX`), under `base` in the registry: an
/// image's directory (2.9.3), or the root, whose blob store every image
/// shares (3.0). Every file must be there: a missing one is an error.
pub struct Confined<'r> {
    pub root: &'r Root,
    pub base: PathBuf,
}

impl Store for Confined<'_> {
    fn open(&mut self, name: &str) -> Result<Opened<'_>, DecodeError> {
        if let Some(blob) = name.strip_prefix("blobs/") {
            let digest = blob.replacen('/', ":", 1);
            let (file, size) = self.root.blob(&self.base, &digest)?;
            return Ok(Some((Box::new(file), size)));
        }
        let rel = self.base.join(name);
        let (file, size) = self
            .root
            .file(&rel)?
            .ok_or_else(|| RegistryError::Missing {
                what: name.to_string(),
                path: self.root.shown.join(&rel).display().to_string(),
            })?;
        Ok(Some((Box::new(file), size)))
    }

    fn position(&self, _name: &str) -> Option<u64> {
        // No storage order to follow: manifest order.
        Some(0)
    }
}

//! OMMX 3.0's local registry: `ROOT/index.sqlite3` (the refs, `refs`:
//! name, reference, manifest digest, updated_at; the manifests,
//! `artifact_manifests`: digest, JSON), beside the blob store
//! `ROOT/blobs/sha256/`, which holds the manifests too.
//!
//! The index is never opened where it lies. SQLite's read-only mode still
//! writes there: opening a database in write-ahead-log mode creates
//! `index.sqlite3-wal` and `-shm` when they are absent and updates `-shm`
//! when they are present (measured), and `immutable=1`, which writes
//! nothing, ignores the log, where OMMX 3.0.0b7 leaves every commit until
//! its last connection closes. So the index and its log are copied to a
//! private temporary directory (again if either changed meanwhile), and the
//! copy is opened read-only. The registry is never written, locked or
//! migrated; a log in use is read as far as it is committed.

use std::fs::File;
use std::io;
use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, OptionalExtension};

use super::confined::{sha256_hex, Root};
use super::error::{RegistryError, SCHEMA_VERSION};
use super::reference::Reference;

pub const INDEX: &str = "index.sqlite3";
const LOG: &str = "index.sqlite3-wal";
/// Copies tried before giving up on an index that keeps changing.
const TRIES: usize = 5;

/// A private copy of the index, open read-only.
pub struct Index {
    conn: Connection,
    /// The registry's index, as errors name it.
    shown: String,
    _copy: tempfile::TempDir,
}

/// One ref of the index, with its manifest.
pub struct Entry {
    pub name: String,
    pub reference: String,
    pub manifest_digest: String,
    pub updated_at: String,
    /// The index's copy of the manifest (`None`: only the blob store has it).
    pub manifest: Option<Vec<u8>>,
}

const SELECT: &str = "SELECT r.name, r.reference, r.manifest_digest, r.updated_at, \
     m.manifest_json FROM refs r LEFT JOIN artifact_manifests m \
     ON m.manifest_digest = r.manifest_digest";

impl Index {
    /// The root's index, if it has one.
    pub fn open(root: &Root) -> Result<Option<Index>, RegistryError> {
        let shown = root.shown().join(INDEX).display().to_string();
        let Some(copy) = snapshot(root, &shown)? else {
            return Ok(None);
        };
        let sqlite = |error| RegistryError::Sqlite {
            path: shown.clone(),
            error,
        };
        let uri = format!("file:{}?mode=ro", uri_path(&copy.path().join(INDEX)));
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(uri, flags).map_err(sqlite)?;
        let index = Index {
            conn,
            shown,
            _copy: copy,
        };
        index.check_schema()?;
        Ok(Some(index))
    }

    fn sqlite(&self, error: rusqlite::Error) -> RegistryError {
        RegistryError::Sqlite {
            path: self.shown.clone(),
            error,
        }
    }

    /// The schema OMMX 3.0.0b7 writes: its version, and the tables and
    /// columns read here.
    fn check_schema(&self) -> Result<(), RegistryError> {
        let found: i64 = self
            .conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(|e| self.sqlite(e))?;
        if found != SCHEMA_VERSION {
            return Err(RegistryError::Schema {
                path: self.shown.clone(),
                found,
            });
        }
        let needed: [(&'static str, &[&'static str]); 2] = [
            (
                "refs",
                &["name", "reference", "manifest_digest", "updated_at"],
            ),
            ("artifact_manifests", &["manifest_digest", "manifest_json"]),
        ];
        for (table, columns) in needed {
            let mut statement = self
                .conn
                .prepare("SELECT name FROM pragma_table_info(?1)")
                .map_err(|e| self.sqlite(e))?;
            let present: Vec<String> = statement
                .query_map([table], |row| row.get(0))
                .and_then(|rows| rows.collect())
                .map_err(|e| self.sqlite(e))?;
            if let Some(column) = columns.iter().find(|c| !present.iter().any(|p| p == *c)) {
                return Err(RegistryError::MissingTable {
                    path: self.shown.clone(),
                    table,
                    column,
                });
            }
        }
        Ok(())
    }

    /// The ref the reference names: by tag or digest as OMMX 3.0 files it,
    /// and for a digest, failing that, any tag of the repository whose
    /// manifest has that digest.
    pub fn find(&self, reference: &Reference) -> Result<Option<Entry>, RegistryError> {
        let (repository, tag) = reference.key30();
        let by_key = format!("{SELECT} WHERE r.name = ?1 AND r.reference = ?2");
        if let Some(entry) = self.one(&by_key, &repository, tag)? {
            return Ok(Some(entry));
        }
        match reference.digest() {
            Some(digest) => {
                let by_digest = format!(
                    "{SELECT} WHERE r.name = ?1 AND r.manifest_digest = ?2 \
                     ORDER BY r.reference LIMIT 1"
                );
                self.one(&by_digest, &repository, digest)
            }
            None => Ok(None),
        }
    }

    fn one(&self, sql: &str, a: &str, b: &str) -> Result<Option<Entry>, RegistryError> {
        self.conn
            .query_row(sql, [a, b], entry)
            .optional()
            .map_err(|e| self.sqlite(e))
    }

    /// Every ref, by name and reference.
    pub fn all(&self) -> Result<Vec<Entry>, RegistryError> {
        let sql = format!("{SELECT} ORDER BY r.name, r.reference");
        let mut statement = self.conn.prepare(&sql).map_err(|e| self.sqlite(e))?;
        let rows = statement
            .query_map([], entry)
            .and_then(|rows| rows.collect())
            .map_err(|e| self.sqlite(e))?;
        Ok(rows)
    }

    /// The index as errors name it.
    pub fn shown(&self) -> &str {
        &self.shown
    }
}

fn entry(row: &rusqlite::Row<'_>) -> rusqlite::Result<Entry> {
    // OMMX writes the manifest as a BLOB; text is taken too.
    let manifest = match row.get_ref(4)? {
        ValueRef::Blob(b) => Some(b.to_vec()),
        ValueRef::Text(t) => Some(t.to_vec()),
        _ => None,
    };
    Ok(Entry {
        name: row.get(0)?,
        reference: row.get(1)?,
        manifest_digest: row.get(2)?,
        updated_at: row.get(3)?,
        manifest,
    })
}

/// The manifest of `entry`: the index's copy, or the blob store's, either
/// checked against the digest the ref names.
pub fn manifest(root: &Root, index: &Index, entry: &Entry) -> Result<Vec<u8>, RegistryError> {
    let Some(bytes) = &entry.manifest else {
        let (mut file, _) = root.blob(Path::new(""), &entry.manifest_digest)?;
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut file, &mut bytes).map_err(|error| RegistryError::Io {
            path: entry.manifest_digest.clone(),
            error,
        })?;
        return Ok(bytes);
    };
    let actual = format!("sha256:{}", sha256_hex(&bytes[..]).expect("hashing memory"));
    if actual != entry.manifest_digest {
        return Err(RegistryError::ManifestMismatch {
            digest: entry.manifest_digest.clone(),
            path: index.shown.clone(),
        });
    }
    Ok(bytes.clone())
}

/// The index and its log copied to a private directory, or `None` when the
/// root has no index. Copied again when either changed while it was copied
/// (OMMX writing meanwhile), the log first: what a checkpoint moves from
/// the log into the index is then in the copy one way or the other.
fn snapshot(root: &Root, shown: &str) -> Result<Option<tempfile::TempDir>, RegistryError> {
    if root.resolve(Path::new(INDEX))?.is_none() {
        return Ok(None);
    }
    let io_error = |error| RegistryError::Io {
        path: shown.to_string(),
        error,
    };
    for _ in 0..TRIES {
        let before = stamps(root)?;
        let dir = tempfile::tempdir().map_err(io_error)?;
        for name in [LOG, INDEX] {
            if let Some((mut file, _)) = root.file(Path::new(name))? {
                let mut copy = File::create(dir.path().join(name)).map_err(io_error)?;
                io::copy(&mut file, &mut copy).map_err(io_error)?;
            }
        }
        if stamps(root)? == before {
            return Ok(Some(dir));
        }
    }
    Err(RegistryError::Unsettled {
        path: shown.to_string(),
    })
}

/// The size and modification time of the index and its log.
type Stamp = Option<(u64, Option<std::time::SystemTime>)>;

fn stamps(root: &Root) -> Result<[Stamp; 2], RegistryError> {
    let stamp = |name: &str| -> Result<Stamp, RegistryError> {
        Ok(root.resolve(Path::new(name))?.and_then(|path| {
            let meta = std::fs::metadata(path).ok()?;
            Some((meta.len(), meta.modified().ok()))
        }))
    };
    Ok([stamp(INDEX)?, stamp(LOG)?])
}

/// A path as a `file:` URI's path: `%`, `?` and `#` escaped.
fn uri_path(path: &Path) -> String {
    let text = path.display().to_string();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3f"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out
}

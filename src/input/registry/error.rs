//! What can be wrong with an image of the local registry, or with the
//! registry itself. Each message is one line; the reader puts the image's
//! name in front.

/// The schema version (`PRAGMA user_version`) of the index OMMX 3.0.0b7
/// writes, the one memprof reads.
pub const SCHEMA_VERSION: i64 = 2;

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error(
        "{reference} is not in the local registry at {root} (OMMX 2.9.3 and 3.0 layouts \
         searched), nor a file; `ommx` pulls it with Artifact.load(\"{reference}\")"
    )]
    NotFound { reference: String, root: String },
    #[error("{what} is missing from the local registry: no {path}")]
    Missing { what: String, path: String },
    #[error(
        "blob {digest} does not match its digest: its content hashes to sha256:{actual} ({path})"
    )]
    DigestMismatch {
        digest: String,
        actual: String,
        path: String,
    },
    #[error("blob {0} names an algorithm memprof cannot check (sha256 only)")]
    Algorithm(String),
    #[error("{path} is a symbolic link to {target}, outside the registry root {root}: memprof reads nothing outside it")]
    Escapes {
        path: String,
        target: String,
        root: String,
    },
    #[error("{path} is a symbolic link to nothing ({target})")]
    Dangling { path: String, target: String },
    #[error("{path} is {kind}; memprof reads only regular files")]
    NotAFile { path: String, kind: &'static str },
    #[error(
        "{path} has schema version {found}; memprof reads OMMX 3.0.0b7's index (version \
         {SCHEMA_VERSION}){}", schema_note(*.found)
    )]
    Schema { path: String, found: i64 },
    #[error(
        "{path} has no table {table} with a column {column}: not the index OMMX 3.0.0b7 \
         writes (a newer OMMX's?)"
    )]
    MissingTable {
        path: String,
        table: &'static str,
        column: &'static str,
    },
    #[error("{path}: cannot read the index: {error}")]
    Sqlite {
        path: String,
        error: rusqlite::Error,
    },
    #[error("the index's copy of manifest {digest} does not match its digest ({path})")]
    ManifestMismatch { digest: String, path: String },
    #[error(
        "{path} kept changing while it was copied to be read: try again once OMMX is done writing"
    )]
    Unsettled { path: String },
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
}

fn schema_note(found: i64) -> &'static str {
    match found > SCHEMA_VERSION {
        true => ": it was written by a newer OMMX, which memprof does not read yet",
        false => ": an older development index, which OMMX 3.0.0b7 migrates when it opens it",
    }
}

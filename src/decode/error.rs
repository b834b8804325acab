//! Why an input could not be read: the errors of decoding and of the pass
//! that reads its instances (the pass, a floor above, returns these, so that
//! every caller matches one set of errors).

use std::io;

use super::archive::ArchiveError;
use super::limits;
use super::limits::MAX_FAMILIES;
use super::wire::{WireError, WireType};
use super::INSTANCE_MEDIA_TYPE;
use crate::model::v2::V2Error;
use crate::model::ModelError;

/// Why an instance could not be profiled.
#[derive(Debug, thiserror::Error)]
pub enum InstanceError {
    #[error(transparent)]
    Wire(#[from] WireError),
    #[error("malformed protobuf in {field} (element ending at byte {offset}): {source}")]
    Decode {
        field: &'static str,
        offset: u64,
        source: prost::DecodeError,
    },
    #[error("field {field} has wire type {found:?}, expected {expected:?}")]
    WireType {
        field: u32,
        found: WireType,
        expected: WireType,
    },
    #[error("OMMX 2.9.3 rejects this instance: {0}")]
    Rejected(#[from] ModelError),
    #[error(
        "more than {cap} distinct variable ids are used before they are defined, memprof's \
         limit (OMMX writers store the variables first)"
    )]
    TooManyPending { cap: usize },
    #[error(
        "the instance's singular fields (objective, hints, parameters, ...) together are more \
         than {}, the --max-element limit; raise it if the input is trusted",
        super::limits::size_text(*.limit)
    )]
    SingularTooLarge { limit: u64 },
    #[error(
        "--group-by name: the entities have more than {MAX_FAMILIES} distinct names (or more \
         than 1 MiB of them), memprof's limit; a name that differs for every entity (x_1_2 \
         rather than x with subscripts [1, 2]) is a family of its own"
    )]
    TooManyFamilies,
    #[error("cannot read back the temporary copy of the objective: {0}")]
    Spool(io::Error),
}

/// Why a layer could not be profiled with OMMX 3.0's accounting.
#[derive(Debug, thiserror::Error)]
pub enum V2PassError {
    #[error("{0}")]
    Rejected(#[from] V2Error),
    #[error("OMMX 3.0.0b7 cannot convert this ommx.v1 instance: {0}")]
    Conversion(String),
    #[error("the wire view (--view wire/both) of ommx.v1 input shows v1's encoding on OMMX 2.9.3's paths, which are not OMMX 3.0's: use it without --accounting 3.0")]
    WireView,
    #[error("the ommx.v2 instance read from a stream is larger than {0} bytes, the --max-element limit (a v2 layer is read whole); raise it if the input is trusted")]
    TooLarge(u64),
}

/// Everything that can go wrong reading an input. Messages do not repeat the
/// file name; the caller puts it in front.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("cannot read: {0}")]
    Io(#[from] io::Error),
    #[error("the input is empty")]
    Empty,
    #[error("cannot read: the file changed size while it was read ({opened} bytes when opened, {now} after); read it once it is complete")]
    Changed { opened: u64, now: u64 },
    #[error("not an OMMX instance or archive: the content looks like {0}")]
    WrongKind(&'static str),
    #[error("gzip data is corrupt: {0}")]
    Gzip(io::Error),
    #[error("the gzip stream holds another gzip stream: decompress the file once (gunzip) and try again")]
    NestedGzip,
    #[error("an empty tar archive: it ends before its first entry, so it holds no OCI layout")]
    EmptyTar,
    #[error("{}", limits::decompressed_too_large(*.0))]
    DecompressedTooLarge(u64),
    #[error("{}", limits::stream_too_long(*.0))]
    StreamTooLong(u64),
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    #[error("the archive has no {INSTANCE_MEDIA_TYPE} layer (layers: {0})")]
    NoInstanceLayer(String),
    #[error("--layer {requested} is out of range: the input has {available} instance layer(s)")]
    LayerOutOfRange { requested: usize, available: usize },
    #[error("{}{source}", layer.map(|l| format!("instance layer {l}: ")).unwrap_or_default())]
    Instance {
        layer: Option<usize>,
        source: InstanceError,
    },
    #[error("{}{source}", layer.map(|l| format!("instance layer {l}: ")).unwrap_or_default())]
    V2 {
        layer: Option<usize>,
        source: V2PassError,
    },
}

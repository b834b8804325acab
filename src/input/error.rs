//! Why an input could not be read: its container, its bytes, or (wrapped
//! with the layer it is in) one of its instances, as the pass refused it.

use std::io;

use super::archive::ArchiveError;
use super::limits;
use super::registry::RegistryError;
use super::INSTANCE_MEDIA_TYPE;
use crate::pass::PassError;

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
    #[error("--layer {requested} is out of range: the input has {}", crate::units::count(*available as u64, "instance layer", "instance layers"))]
    LayerOutOfRange { requested: usize, available: usize },
    #[error(transparent)]
    Pass(#[from] PassError),
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// An error about one image of a registry listing, naming it.
    #[error("{image}: {error}")]
    Image {
        image: String,
        error: Box<DecodeError>,
    },
}

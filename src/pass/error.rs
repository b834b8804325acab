//! Why the pass could not profile an instance: the wire, prost, OMMX's own
//! rules (as 2.9.3 or 3.0.0b7 states them), or one of memprof's limits.

use std::io;

use crate::model::ommx30::{ConversionError, V2Error};
use crate::model::ModelError;
use crate::profiled::Schema;
use crate::wire::{WireError, WireType};

/// The default `--max-element`: the largest one top-level element of an
/// instance read from gzip data or a stream may be (one variable,
/// constraint or named function, or the singular fields such as the
/// objective together). An element is held whole while it is decoded, and
/// decoded it takes a few times its encoded size (at worst about sixteen
/// times, for a monomial of millions of one-byte ids), so this bounds what
/// a small compressed file can make memprof hold. Files read as stored need
/// no such limit: an element is no larger than the file. A 2,000-variable
/// dense QUBO's objective is 24 MB.
pub const DEFAULT_MAX_ELEMENT: u64 = 32 << 20;

/// Distinct entity names with `--group-by name`: each is a family frame
/// under its container, with a subtree of its own, in every thread's
/// aggregate and in every output, so they are capped (in stream order, the
/// same whatever the threads).
pub const MAX_FAMILIES: usize = 65_536;
/// Bytes of those distinct names.
pub const MAX_FAMILY_BYTES: usize = 1 << 20;

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
    /// The same rule broken by v1 input counted with OMMX 3.0's accounting,
    /// whose `from_v1_bytes` checks it as 2.9.3 does.
    #[error("OMMX 3.0.0b7 rejects this instance: {0}")]
    RejectedBy30(#[source] ModelError),
    #[error(
        "more than {cap} distinct variable ids are used before they are defined, memprof's \
         limit (OMMX writers store the variables first)"
    )]
    TooManyPending { cap: usize },
    #[error(
        "the instance's singular fields (objective, hints, parameters, ...) together are more \
         than {}, the --max-element limit; raise it if the input is trusted",
        crate::units::size_text(*.limit)
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
    /// v1 input that 2.9.3 accepts and OMMX 3.0's `from_v1_bytes` refuses
    /// (reported as [`V2PassError::Conversion`]).
    #[error("{0}")]
    Ommx30(Box<ConversionError>),
}

impl InstanceError {
    /// prost's error decoding the element of `field` that ends at stream
    /// `offset`, as the pass reports it.
    pub(super) fn decoding(
        field: &'static str,
        offset: u64,
    ) -> impl Fn(prost::DecodeError) -> Self {
        move |source| InstanceError::Decode {
            field,
            offset,
            source,
        }
    }
}

/// Why the pass could not profile one payload. The input puts the file's
/// name in front; the layer, when the payload is one of an archive's, is
/// named here.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    #[error("cannot read: {0}")]
    Io(#[from] io::Error),
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
    /// Raw bytes that neither schema reads: the refusal of the reading that
    /// got further (v1's when neither did), naming its schema.
    #[error("{refusal} ({})", match schema {
        Schema::V1 => "read as ommx.v1; ommx.v2 gets no further",
        Schema::V2 => "read as ommx.v2, which gets further than ommx.v1",
    })]
    Neither {
        schema: Schema,
        refusal: Box<PassError>,
    },
}

/// Why a layer could not be profiled with OMMX 3.0's accounting.
#[derive(Debug, thiserror::Error)]
pub enum V2PassError {
    #[error("{0}")]
    Rejected(#[from] V2Error),
    #[error("OMMX 3.0.0b7 cannot convert this ommx.v1 instance: {0}")]
    Conversion(String),
    /// 3.0's refusal as a comparing pass words it
    /// ([`crate::profiled::Compared::Refused`]): as `--accounting 3.0` does.
    #[error("{0}")]
    Compared(String),
    #[error("the wire view (--view wire/both) of ommx.v1 input shows v1's encoding on OMMX 2.9.3's paths, which are not OMMX 3.0's: use it without --accounting 3.0")]
    WireView,
    #[error("the ommx.v2 instance read from a stream is larger than {0} bytes, the --max-element limit (a v2 layer is read whole); raise it if the input is trusted")]
    TooLarge(u64),
}

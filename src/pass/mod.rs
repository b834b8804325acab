//! The streaming pass: from an instance payload to its profile, with the
//! analyses riding on it ([`EntityObserver`]s).
//!
//! An `ommx.v1` payload is framed into its top-level elements, decoded and
//! accounted in batches on several threads ([`pipeline`]), and checked in
//! stream order on the calling thread ([`validate`]), which shows each
//! accepted entity to the observer: the result, and the error reported, are
//! those of a sequential run. Payloads counted with OMMX 3.0's accounting
//! (`ommx.v2`, or v1 through `from_v1_bytes`) go through [`v2`] into the
//! same [`Accounts`], so everything after the pass is shared.
//!
//! The pass plugs into decoding through [`crate::decode::Profiler`]:
//! decoding finds payloads in files, archives and streams and hands each to
//! the [`Pass`].

mod accounts;
mod counted;
mod framing;
mod observer;
mod observers;
mod pipeline;
#[cfg(test)]
mod tests;
mod v2;
mod validate;

use indicatif::ProgressBar;

pub use crate::model::EntityKind;
pub use accounts::{visit_entity_entry, visit_instance_parts, Accounts};
pub use observer::{Cost, EntityObserver, EntityView, NamedFunction, Singular};
pub use observers::Observers;
pub use pipeline::{profile_instance, profile_instance_within};
pub use validate::MAX_PENDING;

use crate::decode::{self, DecodeError, Input, Limits, Payload, Profiler, Selection};
use crate::profile::family::GroupBy;
use crate::report::{Accounting, ProfiledInstance, Report, Schema};

/// What a pass produces besides OMMX's logical profile.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProfileOptions {
    /// Family frames under the entity containers (`--group-by`).
    pub group_by: GroupBy,
    /// Also account the encoded bytes per path (the wire view).
    pub wire: bool,
}

/// How to read instance payloads: which schema a raw payload is (archives
/// say it per layer) and which accounting v1 input gets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reading {
    /// `None`: detect (v1 first, then v2).
    pub raw_schema: Option<Schema>,
    /// `None`: each schema's own (v1: 2.9.3, v2: 3.0). `Some(Ommx30)` counts
    /// v1 input as 3.0 holds it; v2 input has 3.0's accounting only.
    pub accounting: Option<Accounting>,
}

/// How each instance is profiled, and the analysis riding on the pass (it
/// sees every instance's entities, told of each instance by
/// [`EntityObserver::begin`]).
pub struct Pass<'a> {
    pub options: ProfileOptions,
    pub reading: Reading,
    /// The most threads one instance decodes with (`None`: the machine's
    /// parallelism); a command reading several inputs at once divides the
    /// cores between them.
    pub threads: Option<usize>,
    pub observer: &'a mut dyn EntityObserver,
}

impl<'a> Pass<'a> {
    /// A plain profile, read as `reading` says, seen by `observer`.
    pub fn new(observer: &'a mut dyn EntityObserver) -> Self {
        Self {
            options: ProfileOptions::default(),
            reading: Reading::default(),
            threads: None,
            observer,
        }
    }
}

impl Profiler for Pass<'_> {
    fn raw_schema(&self) -> Option<Schema> {
        self.reading.raw_schema
    }

    fn profile(&mut self, payload: Payload<'_>) -> Result<ProfiledInstance, DecodeError> {
        profile_payload(self, payload)
    }

    fn probe(&mut self, payload: Payload<'_>) -> Result<ProfiledInstance, DecodeError> {
        let mut nothing = ();
        let mut plain = Pass {
            options: ProfileOptions::default(),
            reading: self.reading,
            threads: self.threads,
            observer: &mut nothing,
        };
        profile_payload(&mut plain, payload)
    }

    fn abandon(&mut self) {
        self.observer.abandon();
    }
}

/// Opens, sniffs and (unless listing only) profiles `input` within `limits`
/// with `pass`.
pub fn read(
    input: &Input,
    selection: Selection,
    limits: &Limits,
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
) -> Result<Report, DecodeError> {
    decode::read_with(input, selection, limits, pass, progress)
}

/// [`read`] with OMMX's logical accounting only, within the default limits.
pub fn read_plain(
    input: &Input,
    selection: Selection,
    progress: &ProgressBar,
) -> Result<Report, DecodeError> {
    let mut nothing = ();
    read(
        input,
        selection,
        &Limits::default(),
        &mut Pass::new(&mut nothing),
        progress,
    )
}

/// Profiles one payload with the accounting `pass` asks for: the streaming
/// v1 pass for OMMX 2.9.3's, [`v2::profile`] for OMMX 3.0's (a v2 payload
/// is read whole: it is one element).
fn profile_payload(
    pass: &mut Pass<'_>,
    payload: Payload<'_>,
) -> Result<ProfiledInstance, DecodeError> {
    let accounting = match payload.schema {
        Schema::V1 => pass.reading.accounting.unwrap_or(Accounting::Ommx29),
        Schema::V2 => Accounting::Ommx30,
    };
    if accounting == Accounting::Ommx30 {
        return v2::profile(payload, pass);
    }
    let Payload {
        reader,
        total,
        max_element,
        instance_index,
        title,
        schema,
    } = payload;
    let mut accounts = Accounts::new(pass.options);
    pass.observer.begin(instance_index);
    let summary = profile_instance_within(
        // Read ahead by the pass's own field reader.
        reader,
        total,
        max_element,
        pass.threads,
        &mut accounts,
        &mut *pass.observer,
    )
    .map_err(|source| DecodeError::Instance {
        layer: instance_index,
        source,
    })?;
    Ok(accounts.profiled(instance_index, title, summary, schema, accounting))
}

//! The streaming pass: from an instance payload to its profile, with the
//! analyses riding on it ([`EntityObserver`]s).
//!
//! An `ommx.v1` payload is framed into its top-level elements, decoded and
//! accounted in batches on several threads ([`pipeline`]), and checked in
//! stream order on the calling thread ([`validate`]), which shows each
//! accepted entity to the observer: the result, and the error reported, are
//! those of a sequential run. Payloads counted with OMMX 3.0's accounting
//! (`ommx.v2`, or v1 through `from_v1_bytes`) go through [`ommx30`] into the
//! same [`Accounts`], so everything after the pass is shared.
//!
//! The input (a floor up) finds payloads in files, archives and streams
//! and hands each to the [`Pass`] as a [`Payload`].

mod accounts;
mod chain;
mod compare;
mod convert;
mod counted;
mod decode;
mod error;
mod finish;
mod framing;
#[cfg(test)]
mod growths_tests;
mod item;
pub mod objective;
#[cfg(test)]
mod objective_tests;
mod observe;
mod observer;
mod observers;
mod ommx30;
mod pipeline;
mod ranges;
mod reading;
mod settings;
mod shards;
pub mod terms;
#[cfg(test)]
mod tests;
mod v2_file;
mod v2_stream;
mod validate;

use std::collections::BTreeMap;
use std::io::Read;

pub use crate::model::EntityKind;
pub use accounts::{visit_entity_entry, visit_instance_parts, Accounts};
pub use error::{
    InstanceError, PassError, V2PassError, DEFAULT_MAX_ELEMENT, MAX_FAMILIES, MAX_FAMILY_BYTES,
};
pub use observer::{Cost, EntityObserver, EntityView, NamedFunction, Part, Singular, Singular30};
pub use observers::Observers;
pub use pipeline::{profile_instance, profile_instance_within, MAX_THREADS};
pub use ranges::{InFile, CHUNK};
pub use settings::Settings;
pub use validate::MAX_PENDING;

use crate::profile::family::GroupBy;
use crate::profiled::{Accounting, ProfiledInstance, Schema};

/// One instance payload as the input found it.
pub struct Payload<'a> {
    pub reader: &'a mut (dyn Read + Send),
    /// Its length when known (a file's size, a tar entry's claim).
    pub total: Option<u64>,
    /// The regular file whose range of `total` bytes it is, when it is one
    /// (read then on every thread; `reader` reads the same bytes).
    pub in_file: Option<InFile<'a>>,
    /// The longest element allowed (`--max-element`) when nothing else
    /// bounds what one element may make memprof hold.
    pub max_element: Option<u64>,
    /// Position among the archive's instance layers; `None` for raw input.
    pub instance_index: Option<usize>,
    pub title: Option<String>,
    pub schema: Schema,
    /// The annotations of the archive layer it is, which OMMX 3.0 folds into
    /// the instance it reads ([`crate::model::ommx30::fold_layer_annotations`]);
    /// `None` for raw input.
    pub layer_annotations: Option<&'a BTreeMap<String, String>>,
}

/// What a pass produces besides OMMX's logical profile. By default, what
/// the default real-memory estimate reads (the table order), nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfileOptions {
    /// Family frames under the entity containers (`--group-by`).
    pub group_by: GroupBy,
    /// Also account the encoded bytes per path (the wire view).
    pub wire: bool,
    /// Gather a quadratic objective's hash-table order
    /// ([`crate::profiled::Gathered`]'s `objective_growths`), which only the
    /// simulated real-memory estimate reads.
    pub table_order: bool,
}

impl Default for ProfileOptions {
    fn default() -> Self {
        Self {
            group_by: GroupBy::None,
            wire: false,
            table_order: true,
        }
    }
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
    /// `Some`: also count v1 input counted under 2.9.3's accounting under
    /// 3.0's, in the same pass (`ProfiledInstance::compared`), for the
    /// commands that compare the two, 3.0's profile grouped as it says
    /// (diff's migration view groups as asked; advise reads top-level
    /// totals only, which family frames do not change): its entities are
    /// then built and read in stream order.
    pub compare: Option<GroupBy>,
}

/// How each instance is profiled, and the analysis riding on the pass (it
/// sees every instance's entities, told of each instance by
/// [`EntityObserver::begin`]).
pub struct Pass<'a> {
    pub options: ProfileOptions,
    pub reading: Reading,
    /// How it reads: threads, spooling, chunks.
    pub settings: Settings,
    /// The longest element held whole where nothing else bounds it
    /// (`--max-element`): see [`Payload::max_element`].
    pub max_element: u64,
    pub observer: &'a mut dyn EntityObserver,
}

impl<'a> Pass<'a> {
    /// A plain profile, read as `reading` says, seen by `observer`.
    pub fn new(observer: &'a mut dyn EntityObserver) -> Self {
        Self {
            options: ProfileOptions::default(),
            reading: Reading::default(),
            settings: Settings::default(),
            max_element: DEFAULT_MAX_ELEMENT,
            observer,
        }
    }
}

impl Pass<'_> {
    /// The schema raw payloads are read as (`--schema`); `None`: v1 first,
    /// then v2.
    pub fn raw_schema(&self) -> Option<Schema> {
        self.reading.raw_schema
    }

    /// The accounting a payload of `schema` is counted with.
    pub fn accounting(&self, schema: Schema) -> Accounting {
        match schema {
            Schema::V1 => self.reading.accounting.unwrap_or(Accounting::Ommx29),
            Schema::V2 => Accounting::Ommx30,
        }
    }

    /// Profiles one payload as the caller asked.
    pub fn profile(&mut self, payload: Payload<'_>) -> Result<ProfiledInstance, PassError> {
        profile_payload(self, payload, &[])
    }

    /// [`Pass::profile`] of an archive layer's payload whose profile other
    /// layers take too (`sharing`: their annotations): a pass that compares
    /// the accountings (`Reading::compare`) folds each layer's annotations
    /// into a 3.0 instance of its own, as 3.0 reads each layer
    /// (`ProfiledInstance::compared`, the payload's own first).
    pub fn profile_shared(
        &mut self,
        payload: Payload<'_>,
        sharing: &[&BTreeMap<String, String>],
    ) -> Result<ProfiledInstance, PassError> {
        profile_payload(self, payload, sharing)
    }

    /// Reads one payload only to learn whether its schema accepts it (`ls`
    /// of raw input): no analysis sees it, nothing but OMMX's count is kept.
    pub fn probe(&mut self, payload: Payload<'_>) -> Result<ProfiledInstance, PassError> {
        let mut nothing = ();
        profile_payload(&mut self.plain(&mut nothing), payload, &[])
    }

    /// This pass's reading with no analysis riding on it, gathering nothing
    /// for the real-memory estimate (a probe's profile is never estimated).
    fn plain<'n>(&self, nothing: &'n mut ()) -> Pass<'n> {
        Pass {
            options: ProfileOptions {
                table_order: false,
                ..ProfileOptions::default()
            },
            reading: Reading {
                compare: None,
                ..self.reading
            },
            settings: self.settings,
            max_element: self.max_element,
            observer: nothing,
        }
    }

    /// Raw bytes to be read as v1 first, then as v2 (detected, not
    /// forced), that v1 certainly refuses (a top-level field of a wire type
    /// its schema does not allow for its number, which every payload 3.0
    /// writes has) and that v2 reads entry by entry where they lie: their
    /// profile, as reading them as v1 and then again as v2 gives, without
    /// the first reading. `None`: read them as usual. Under 3.0's
    /// accounting of v1, that reading may refuse them for 3.0's reasons
    /// first, and then no v2 reading follows: not here.
    pub fn profile_v2_first(&mut self, payload: Payload<'_>) -> Option<ProfiledInstance> {
        if self.reading.raw_schema.is_some() || self.accounting(Schema::V1) != Accounting::Ommx29 {
            return None;
        }
        debug_assert_eq!(payload.schema, Schema::V2);
        ommx30::in_file(&payload, self, true)?.ok()
    }

    /// Whether raw bytes from a stream, to be read as v1 first and then as
    /// v2, are certainly refused by v1 ([`Pass::profile_v2_first`]'s rule),
    /// from their first top-level fields: `reader` is read past them (a
    /// reading that follows starts the stream again). False where the
    /// schema is forced or the readings' order matters (as there).
    pub fn v1_refuses_stream(&self, reader: &mut (dyn Read + Send)) -> bool {
        let detecting = self.reading.raw_schema.is_none();
        detecting
            && self.accounting(Schema::V1) == Accounting::Ommx29
            && v2_stream::v1_refuses(reader, Some(self.max_element))
    }

    /// [`Pass::profile_v2_first`] for a stream that
    /// [`Pass::v1_refuses_stream`] said v1 refuses, read again from its
    /// start (`payload`): spooled and read entry by entry; `None`: read it
    /// as usual (v1, then v2), nothing seen.
    pub fn profile_v2_first_streamed(&mut self, payload: Payload<'_>) -> Option<ProfiledInstance> {
        debug_assert_eq!(payload.schema, Schema::V2);
        ommx30::streamed_first(payload, self)
    }

    /// Reads raw bytes that ommx.v1 refused (`v1`) again, as ommx.v2 (the
    /// payload's schema): their profile, or, when v2 refuses them too, the
    /// refusal of the reading that got further, naming its schema
    /// ([`PassError::Neither`]). What rides on the pass forgets what it saw
    /// of the first reading; a `probe` is seen by nothing (as
    /// [`Pass::probe`]).
    pub fn reread_as_v2(
        &mut self,
        payload: Payload<'_>,
        v1: PassError,
        probe: bool,
    ) -> Result<ProfiledInstance, PassError> {
        if probe {
            let mut nothing = ();
            return ommx30::reread(payload, &mut self.plain(&mut nothing), v1);
        }
        self.observer.abandon();
        ommx30::reread(payload, self, v1)
    }
}

/// Profiles one payload with the accounting `pass` asks for: the streaming
/// v1 pass for OMMX 2.9.3's, [`ommx30::profile`] for OMMX 3.0's (a v2 payload
/// in a regular file read a table entry at a time, any other whole: it is
/// one element).
fn profile_payload(
    pass: &mut Pass<'_>,
    payload: Payload<'_>,
    sharing: &[&BTreeMap<String, String>],
) -> Result<ProfiledInstance, PassError> {
    let accounting = pass.accounting(payload.schema);
    if payload.schema == Schema::V2 {
        return ommx30::profile(payload, pass);
    }
    let Payload {
        reader,
        total,
        in_file,
        max_element,
        instance_index,
        title,
        schema,
        layer_annotations,
    } = payload;
    // v1 input counted as 3.0 holds it has v1's encoding, whose paths are
    // not 3.0's: its wire view is refused once it reads as an instance.
    let wire_refused = pass.options.wire && accounting == Accounting::Ommx30;
    let mut accounts = Accounts::new(ProfileOptions {
        wire: pass.options.wire && !wire_refused,
        ..pass.options
    });
    accounts.spool_above = pass.settings.spool_above;
    accounts.accounting = accounting;
    // 2.9.3 reads the payload alone; 3.0 folds the layer's annotations in.
    if accounting == Accounting::Ommx30 {
        accounts.layer_annotations = layer_annotations.cloned();
    } else if let Some(group_by) = pass.reading.compare {
        accounts.comparing = true;
        let own = std::iter::once(layer_annotations);
        let layers = own.chain(sharing.iter().copied().map(Some));
        let layers = layers.map(|a| a.cloned()).collect();
        accounts.compare = Some(Box::new(compare::Comparing::new(layers, group_by)));
    }
    pass.observer.begin(instance_index);
    let source = pipeline::Source {
        // Read ahead by the pass's own field reader.
        reader,
        total,
        max_element,
        in_file,
    };
    let counts =
        pipeline::profile_source(source, pass.settings, &mut accounts, &mut *pass.observer)
            .map_err(|source| match source {
                // Read as v1 and refused by 3.0 only: no question of schemas.
                InstanceError::Ommx30(e) => PassError::V2 {
                    layer: instance_index,
                    source: V2PassError::Conversion(e.to_string()),
                },
                // A rule 3.0 shares with 2.9.3: 3.0's verdict, named so.
                InstanceError::Rejected(e) if accounting == Accounting::Ommx30 => {
                    PassError::Instance {
                        layer: instance_index,
                        source: InstanceError::RejectedBy30(e),
                    }
                }
                source => PassError::Instance {
                    layer: instance_index,
                    source,
                },
            })?;
    if wire_refused {
        return Err(PassError::V2 {
            layer: instance_index,
            source: V2PassError::WireView,
        });
    }
    Ok(accounts.profiled(instance_index, title, counts, schema, accounting))
}

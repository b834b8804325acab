//! The OMMX 3.0 side of the pass: an `ommx.v2` payload (in a regular file,
//! or from a stream spooled to one ([`super::v2_stream`]), read a table
//! entry at a time: [`v2_file`]; what that reading leaves, read whole),
//! or an `ommx.v1` one counted as 3.0 holds it after `from_v1_bytes`, read
//! whole and profiled with [`crate::model::ommx30`]'s accounting into the
//! same [`Accounts`] the v1 pass fills, so everything after the pass
//! (renderers, diff, check) is shared.
//!
//! The analyses see each entity as an [`EntityView`] with its cost under
//! 3.0's accounting ([`EntityObserver::entity`](super::EntityObserver::entity)),
//! or every leaf with its rule ([`EntityObserver::leaves`](super::EntityObserver::leaves)).
//! `--group-by name` puts each entity's leaves under a family frame right
//! under its container, as for v1; the wire view walks the `ommx.v2`
//! message (v1 input counted as 3.0 has no 3.0 encoding: refused).

use std::io::Read;

use crate::model::ommx30;
use crate::profile::family::GroupBy;
use std::collections::HashMap;

use crate::profile::wire_view::{self, Table};
use crate::profile::{Aggregate, Frame, Path};

use super::accounts::{Families, Summing};
use super::reading::{self, Stop};
use super::v2_file;
use super::v2_stream::{Arrival, HELD_UP_TO};
use super::InFile;
use super::{Accounts, Cost, EntityView, Pass, Singular30};
use super::{PassError, Payload, V2PassError};
use crate::model::ommx30::V2Error;
use crate::model::{EntityKind, FileWaste};
use crate::profiled::ProfiledInstance;
use crate::profiled::{Accounting, Schema};
use crate::profiled::{ByOwner, Gathered, InstanceCounts, InstanceSummary, Unprofiled};

/// Profiles one payload with OMMX 3.0's accounting.
pub(crate) fn profile(
    payload: Payload<'_>,
    pass: &mut Pass<'_>,
) -> Result<ProfiledInstance, PassError> {
    match read_payload(payload, pass) {
        Reading::Profiled(done) => *done,
        Reading::Whole(model, rest) => {
            let (bytes, model) = (*model).map_err(|stopped| stopped.error)?;
            account(pass, rest, bytes, model)
        }
    }
}

/// How a payload was read: a table entry at a time (its profile, or the
/// refusal the whole reading gives too), or whole (its model, or why not).
enum Reading<'p> {
    Profiled(Box<Result<ProfiledInstance, PassError>>),
    Whole(
        Box<Result<(Vec<u8>, ommx30::Instance), Stopped>>,
        ToAccount<'p>,
    ),
}

/// Reads a payload a table entry at a time where it lies in a regular file,
/// or, from a stream, spooled ([`v2_stream`]); whole where that reading
/// declines it (from the copy, for a spooled one).
fn read_payload<'p>(payload: Payload<'p>, pass: &mut Pass<'_>) -> Reading<'p> {
    if let Some(done) = in_file(&payload, pass, false) {
        return Reading::Profiled(Box::new(done));
    }
    let streamed = payload.in_file.is_none() && reads_table_entries(pass);
    let (read, rest) = split(payload);
    if !streamed {
        return Reading::Whole(Box::new(read_model(read)), rest);
    }
    let held_up_to = HELD_UP_TO.min(pass.settings.spool_above);
    let mut arrival = Arrival::take(read.reader, held_up_to, read.max_element);
    if let Some(done) = read_spooled(&arrival, read.total, &rest, pass, false) {
        return Reading::Profiled(Box::new(done));
    }
    let read = ToRead {
        reader: &mut arrival,
        ..read
    };
    Reading::Whole(Box::new(read_model(read)), rest)
}

/// A payload from a stream that v1 certainly refuses ([`v2_stream::v1_refuses`],
/// asked by the caller of an earlier reading of the same stream), spooled
/// and read a table entry at a time, as [`in_file`] reads a regular file's
/// under `only_if_v1_refuses`: its profile, or `None` (a short payload,
/// which is held, or one that reading does not accept plainly) for the
/// readings that follow, nothing seen by the observer.
pub(super) fn streamed_first(
    payload: Payload<'_>,
    pass: &mut Pass<'_>,
) -> Option<ProfiledInstance> {
    if payload.in_file.is_some() || !reads_table_entries(pass) {
        return None;
    }
    let held_up_to = HELD_UP_TO.min(pass.settings.spool_above);
    let (read, rest) = split(payload);
    let arrival = Arrival::take(read.reader, held_up_to, read.max_element);
    read_spooled(&arrival, read.total, &rest, pass, true)?.ok()
}

/// A payload from a stream that [`Arrival::take`] spooled, read as a
/// regular file's a table entry at a time ([`in_file`], under
/// `only_if_v1_refuses` when asked); `None` where it was held, or where
/// the stream did not keep its container's claim (`total`: the whole
/// reading's to refuse), or as [`in_file`] says.
fn read_spooled(
    arrival: &Arrival<'_>,
    total: Option<u64>,
    rest: &ToAccount<'_>,
    pass: &mut Pass<'_>,
    only_if_v1_refuses: bool,
) -> Option<Result<ProfiledInstance, PassError>> {
    let (file, len) = arrival
        .spooled()
        .filter(|(_, len)| total.is_none_or(|t| t == *len))?;
    let spooled = Payload {
        reader: &mut std::io::empty(),
        total: Some(len),
        in_file: Some(InFile::whole(file, &|_| {})),
        max_element: None,
        instance_index: rest.layer,
        title: rest.title.clone(),
        schema: rest.schema,
        layer_annotations: rest.layer_annotations,
    };
    in_file(&spooled, pass, only_if_v1_refuses)
}

/// Whether [`in_file`] may read a payload a table entry at a time under
/// the pass's options (the wire view under family frames is left to the
/// whole reading).
fn reads_table_entries(pass: &Pass<'_>) -> bool {
    !(pass.options.wire && pass.options.group_by != GroupBy::None)
}

/// A payload in a regular file read a table entry at a time ([`v2_file`])
/// (only when v1 certainly refuses it, if `only_if_v1_refuses`), its
/// entities then built one at a time where an analysis looks at them or
/// the profile groups them ([`v2_file::Show`]); `None`: read it whole.
/// Its profile, or the refusal the whole reading gives too (too many
/// families; under `only_if_v1_refuses`, left to the readings that follow).
pub(super) fn in_file(
    payload: &Payload<'_>,
    pass: &mut Pass<'_>,
    only_if_v1_refuses: bool,
) -> Option<Result<ProfiledInstance, PassError>> {
    let (Some(file), Some(total)) = (&payload.in_file, payload.total) else {
        return None;
    };
    if !reads_table_entries(pass) {
        return None;
    }
    let wire = pass.options.wire;
    let plain = !wire
        && pass.options.group_by == GroupBy::None
        && !pass.observer.sees_entities()
        && pass.observer.counts_only();
    let settings = pass.settings;
    let machine = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = settings.threads.unwrap_or(machine.min(super::MAX_THREADS));
    let threads = settings.cap.map_or(threads, |cap| threads.min(cap.max(1)));
    let mut accounts = Accounts::new(pass.options);
    let ask = v2_file::Ask {
        threads,
        layer_annotations: payload.layer_annotations,
        only_if_v1_refuses,
        in_place_above: accounts.in_place_above,
        entities: !plain,
    };
    // Entities shown put their own leaves in the profile (under their
    // families): the table-entry reading's only check the payload then.
    let mut checked = Aggregate::new();
    let counted = match plain {
        true => &mut accounts.memory,
        false => &mut checked,
    };
    let read = v2_file::profile(file.file, (file.start, total), ask, counted)?;
    drop(checked);
    pass.observer.begin(payload.instance_index);
    if let Some(accepted) = read.accepted {
        let show = v2_file::Show {
            file: file.file,
            start: file.start,
            threads,
            group_by: pass.options.group_by,
            observer: &mut *pass.observer,
            aggregate: &mut accounts.memory,
            wire: accounts.wire.as_mut(),
        };
        match show.show(accepted) {
            Ok(()) => {}
            Err(Some(source)) if !only_if_v1_refuses => {
                let layer = payload.instance_index;
                return Some(Err(PassError::Instance { layer, source }));
            }
            Err(_) => {
                pass.observer.abandon();
                return None;
            }
        }
        let counts = InstanceCounts {
            summary: read.summary,
            gathered: gathered(read.objective_unprofiled),
        };
        let (index, title) = (payload.instance_index, payload.title.clone());
        let profiled = accounts.profiled(index, title, counts, Schema::V2, Accounting::Ommx30);
        return Some(Ok(profiled));
    }
    let cost = Cost {
        bytes: read.objective_bytes,
        wire_bytes: read.objective_wire_bytes,
        waste: FileWaste::default(),
    };
    let view = EntityView::objective(read.objective_terms);
    pass.observer.objective(&view, cost);
    let counts = InstanceCounts {
        summary: read.summary,
        gathered: gathered(read.objective_unprofiled),
    };
    let index = payload.instance_index;
    let title = payload.title.clone();
    Some(Ok(accounts.profiled(
        index,
        title,
        counts,
        Schema::V2,
        Accounting::Ommx30,
    )))
}

/// Reads raw bytes that ommx.v1 refused (`v1`) as ommx.v2 (the payload's
/// schema): their profile, or, when v2 refuses them too, the refusal of the
/// reading that got further (v1's on a tie), naming its schema.
pub(crate) fn reread(
    payload: Payload<'_>,
    pass: &mut Pass<'_>,
    v1: PassError,
) -> Result<ProfiledInstance, PassError> {
    let (model, rest) = match read_payload(payload, pass) {
        Reading::Profiled(done) => return *done,
        Reading::Whole(model, rest) => (model, rest),
    };
    match *model {
        Ok((bytes, model)) => account(pass, rest, bytes, model),
        // The input could not be read again (a gzip checksum, say): not a
        // question of schemas; v1's error stands.
        Err(Stopped {
            error: PassError::Io(_),
            ..
        }) => Err(v1),
        Err(stopped) => {
            let v1_reached = reading::reach::<crate::ommx_v1::Instance>(&stopped.bytes);
            let (schema, refusal) = match stopped.reached > v1_reached {
                true => (Schema::V2, stopped.error),
                false => (Schema::V1, v1),
            };
            Err(PassError::Neither {
                schema,
                refusal: Box::new(refusal),
            })
        }
    }
}

/// What reading a payload needs.
struct ToRead<'p> {
    reader: &'p mut (dyn Read + Send),
    total: Option<u64>,
    max_element: Option<u64>,
    layer: Option<usize>,
    schema: Schema,
}

/// What accounting a payload's model needs besides it.
struct ToAccount<'p> {
    layer: Option<usize>,
    title: Option<String>,
    schema: Schema,
    layer_annotations: Option<&'p std::collections::BTreeMap<String, String>>,
}

fn split(payload: Payload<'_>) -> (ToRead<'_>, ToAccount<'_>) {
    let Payload {
        reader,
        total,
        in_file: _,
        max_element,
        instance_index,
        title,
        schema,
        layer_annotations,
    } = payload;
    let read = ToRead {
        reader,
        total,
        max_element,
        layer: instance_index,
        schema,
    };
    let rest = ToAccount {
        layer: instance_index,
        title,
        schema,
        layer_annotations,
    };
    (read, rest)
}

/// Why a payload could not be read as a model: the error, what was read of
/// it, and where its reading stopped (the end when it read whole).
struct Stopped {
    error: PassError,
    bytes: Vec<u8>,
    reached: usize,
}

/// Reads the v2 payload a field at a time ([`reading::read_fields`]) and
/// builds 3.0's model of it.
fn read_model(read: ToRead<'_>) -> Result<(Vec<u8>, ommx30::Instance), Stopped> {
    let ToRead {
        reader,
        total,
        max_element,
        layer,
        schema,
    } = read;
    let fail = |source| PassError::V2 { layer, source };
    // A payload of unknown length is one element under `--max-element`.
    debug_assert_eq!(
        schema,
        Schema::V2,
        "v1 input is streamed through the v1 pass"
    );
    let read = reading::read_fields(reader, total, max_element).map_err(stopped(layer))?;
    let (bytes, model) = (
        read.bytes,
        ommx30::from_wire(read.message).map_err(|e| fail(e.into())),
    );
    match model {
        Ok(mut model) => {
            model.waste.close(&bytes);
            Ok((bytes, model))
        }
        Err(error) => Err(Stopped {
            error,
            reached: bytes.len(),
            bytes,
        }),
    }
}

/// A reading that stopped, as the pass reports it.
fn stopped<M>(layer: Option<usize>) -> impl Fn((reading::Fields<M>, Stop)) -> Stopped {
    move |(read, stop)| Stopped {
        error: match stop {
            Stop::Io(e) => PassError::Io(e),
            Stop::Decode(why) => PassError::V2 {
                layer,
                source: V2Error::Decode(why).into(),
            },
            Stop::TooLarge(limit) => PassError::V2 {
                layer,
                source: V2PassError::TooLarge(limit),
            },
        },
        bytes: read.bytes,
        reached: read.reached,
    }
}

/// Profiles the model of a payload (`bytes`) into the pass's accounts.
fn account(
    pass: &mut Pass<'_>,
    rest: ToAccount<'_>,
    bytes: Vec<u8>,
    mut model: ommx30::Instance,
) -> Result<ProfiledInstance, PassError> {
    let ToAccount {
        layer: instance_index,
        title,
        schema,
        layer_annotations,
    } = rest;
    if let Some(annotations) = layer_annotations {
        ommx30::fold_layer_annotations(&mut model, annotations);
    }
    let group_by = pass.options.group_by;
    let mut families = Families::new(group_by);
    let mut accounts = Accounts::new(pass.options);
    pass.observer.begin(instance_index);
    model.visit_parts(&mut Path::new(), &mut accounts.memory);
    let used = model.used_variables();
    for e in model.entities() {
        families
            .see(e.name())
            .map_err(|source| PassError::Instance {
                layer: instance_index,
                source,
            })?;
        let family = (group_by == GroupBy::Name).then(|| e.family());
        let mut summing = Summing {
            aggregate: &mut accounts.memory,
            bytes: 0,
        };
        e.visit_under(&mut Path::new(), family, &mut summing);
        let cost = Cost {
            bytes: summing.bytes,
            wire_bytes: model.wire.get(&(e.kind, e.id)).copied().unwrap_or(0),
            waste: model
                .waste
                .entities
                .get(&(e.kind, e.id))
                .copied()
                .unwrap_or_default(),
        };
        let used = (e.kind == EntityKind::Variable).then(|| used.contains(&e.id));
        pass.observer.entity(&EntityView::ommx30(&e, used), cost);
    }
    let zero = ommx30::Func::default();
    let objective = model.objective.as_ref().unwrap_or(&zero);
    let cost = Cost {
        bytes: crate::profile::bytes_of(objective),
        wire_bytes: model.wire.get(&OBJECTIVE).copied().unwrap_or(0),
        waste: model
            .waste
            .entities
            .get(&OBJECTIVE)
            .copied()
            .unwrap_or_default(),
    };
    let terms = objective.stored_terms() as u64;
    pass.observer.objective(&EntityView::objective(terms), cost);
    pass.observer.ommx30_singular(&Singular30 {
        objective: model.objective.as_ref(),
        output_objective: model.output_objective.as_ref().map(|o| &o.function),
        assignments: &model.dependency.assignments,
        description: model.description.as_ref(),
        annotations: &model.annotations,
        framing_waste: model.waste.framing,
    });
    if let Some(mut leaves) = pass.observer.leaves() {
        model.visit_parts(&mut Path::new(), &mut leaves);
    }
    if let Some(mut leaves) = pass.observer.entity_leaves() {
        for e in model.entities() {
            let family = (group_by == GroupBy::Name).then(|| e.family());
            e.visit_under(&mut Path::new(), family, &mut leaves);
        }
    }
    if let Some(wire) = &mut accounts.wire {
        let frames: HashMap<(Table, u64), Frame> = match group_by {
            GroupBy::None => HashMap::new(),
            GroupBy::Name => model
                .entities()
                .filter_map(|e| Some(((table(e.kind)?, e.id), e.family())))
                .collect(),
        };
        let lookup = |t: Table, id: u64| frames.get(&(t, id)).cloned();
        let families = (group_by == GroupBy::Name).then_some(&lookup as wire_view::Families<'_>);
        wire_view::visit_v2_instance(&bytes, families, &mut Path::new(), wire);
    }
    let summary = InstanceSummary {
        variables: model.variable_count() as u64,
        constraints: model.constraint_count() as u64,
        removed_constraints: model.removed_count() as u64,
        named_functions: model.named_functions.len() as u64,
        terms: model.stored_terms() as u64,
        wire_bytes: bytes.len() as u64,
    };
    let objective = model.objective.as_ref().and_then(|f| f.compact());
    let counts = InstanceCounts {
        summary,
        gathered: gathered(objective.map(|f| f.shape().unprofiled).unwrap_or_default()),
    };
    Ok(accounts.profiled(instance_index, title, counts, schema, Accounting::Ommx30))
}

/// What 3.0's estimate reads beside the profile: the rest of its facts come
/// off the profile, but a quadratic objective's linear terms are counted
/// there with its pairs (as the v1 pass gathers them, for the objective
/// alone: the recipe of v2 input makes no quadratic constraint).
fn gathered(objective: Unprofiled) -> Gathered {
    Gathered {
        unprofiled: ByOwner {
            objective,
            ..ByOwner::default()
        },
        objective_growths: None,
    }
}

/// The objective's key in [`ommx30::WireSizes`].
const OBJECTIVE: (EntityKind, u64) = (EntityKind::Objective, 0);

/// The wire view's table of an entity kind (its labels' table); the
/// objective has none.
fn table(kind: EntityKind) -> Option<Table> {
    Some(match kind {
        EntityKind::Variable => Table::Variables,
        EntityKind::Constraint | EntityKind::Removed => Table::Regular,
        EntityKind::Indicator | EntityKind::RemovedIndicator => Table::Indicator,
        EntityKind::OneHot | EntityKind::RemovedOneHot => Table::OneHot,
        EntityKind::Sos1 | EntityKind::RemovedSos1 => Table::Sos1,
        EntityKind::NamedFunction => Table::NamedFunctions,
        EntityKind::Objective => return None,
    })
}

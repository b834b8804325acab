//! The OMMX 3.0 side of the pass: an `ommx.v2` payload, or an `ommx.v1` one
//! counted as 3.0 holds it after `from_v1_bytes`, read whole and profiled
//! with [`crate::model::ommx30`]'s accounting into the same [`Accounts`] the v1
//! pass fills, so everything after the pass (renderers, diff, check) is
//! shared.
//!
//! The analyses see each entity as an [`EntityView`] with its cost under
//! 3.0's accounting ([`EntityObserver::entity`](super::EntityObserver::entity)),
//! or every leaf with its rule ([`EntityObserver::leaves`](super::EntityObserver::leaves)).
//! `--group-by name` puts each entity's leaves under a family frame right
//! under its container, as for v1; the wire view walks the `ommx.v2`
//! message (v1 input counted as 3.0 has no 3.0 encoding: refused).

use std::io::Read;

use crate::model::ommx30;
use crate::ommx_v1::{Function, FunctionArm};
use crate::profile::family::GroupBy;
use std::collections::HashMap;

use crate::profile::wire_view::{self, Table};
use crate::profile::{Frame, Path};

use super::accounts::{Families, Summing};
use super::reading::{self, Stop};
use super::{profile_instance, Accounts, Cost, EntityView, Pass};
use super::{EntityObserver, NamedFunction};
use super::{InstanceError, PassError, Payload, V2PassError};
use crate::model::ommx30::V2Error;
use crate::model::{Constraint, DecisionVariable, EntityKind, FileWaste, RemovedConstraint};
use crate::report::ProfiledInstance;
use crate::report::{Accounting, Schema};
use crate::report::{InstanceCounts, InstanceSummary};

/// Profiles one payload with OMMX 3.0's accounting.
pub(crate) fn profile(
    payload: Payload<'_>,
    pass: &mut Pass<'_>,
) -> Result<ProfiledInstance, PassError> {
    let (read, rest) = split(payload);
    let (bytes, model) = read_model(read).map_err(|stopped| stopped.error)?;
    account(pass, rest, bytes, model)
}

/// Reads raw bytes that ommx.v1 refused (`v1`) as ommx.v2 (the payload's
/// schema): their profile, or, when v2 refuses them too, the refusal of the
/// reading that got further (v1's on a tie), naming its schema.
pub(crate) fn reread(
    payload: Payload<'_>,
    pass: &mut Pass<'_>,
    v1: PassError,
) -> Result<ProfiledInstance, PassError> {
    let (read, rest) = split(payload);
    match read_model(read) {
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

/// Reads the payload and builds 3.0's model of it: a v2 payload a field at
/// a time ([`reading::read_fields`]), a v1 payload whole, then converted.
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
    let (bytes, model) = match schema {
        Schema::V2 => {
            let read = reading::read_fields(reader, total, max_element).map_err(stopped(layer))?;
            (
                read.bytes,
                ommx30::from_wire(read.message).map_err(|e| fail(e.into())),
            )
        }
        Schema::V1 => {
            let read = read_whole(reader, total, max_element).map_err(stopped(layer))?;
            let model = from_v1(&read.bytes, layer);
            (read.bytes, model)
        }
    };
    match model {
        Ok(model) => Ok((bytes, model)),
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

/// A v1 payload read whole (the v1 pass reads it again from memory).
fn read_whole(
    reader: &mut dyn Read,
    total: Option<u64>,
    max_element: Option<u64>,
) -> Result<reading::Fields<()>, (reading::Fields<()>, Stop)> {
    let mut read = reading::Fields {
        bytes: Vec::with_capacity(total.unwrap_or(0).min(1 << 26) as usize),
        message: (),
        reached: 0,
    };
    let cap = max_element.map_or(u64::MAX, |m| m.saturating_add(1));
    if let Err(e) = reader.take(cap).read_to_end(&mut read.bytes) {
        return Err((read, Stop::Io(e)));
    }
    if let Some(limit) = max_element.filter(|&m| read.bytes.len() as u64 > m) {
        return Err((read, Stop::TooLarge(limit)));
    }
    read.reached = read.bytes.len();
    Ok(read)
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
    let fail = |source| PassError::V2 {
        layer: instance_index,
        source,
    };
    if let Some(annotations) = layer_annotations {
        ommx30::fold_layer_annotations(&mut model, annotations);
    }
    // Refused only once the payload reads as one: v1 input counted as 3.0
    // holds it has v1's encoding, whose paths are not 3.0's.
    if pass.options.wire && schema == Schema::V1 {
        return Err(fail(V2PassError::WireView));
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
            waste: FileWaste::default(),
        };
        pass.observer.entity(&EntityView::ommx30(&e, &used), cost);
    }
    let zero = ommx30::Func::default();
    let objective = model.objective.as_ref().unwrap_or(&zero);
    let cost = Cost {
        bytes: crate::profile::bytes_of(objective),
        wire_bytes: model.wire.get(&OBJECTIVE).copied().unwrap_or(0),
        waste: FileWaste::default(),
    };
    let terms = objective.stored_terms() as u64;
    pass.observer.objective(&EntityView::objective(terms), cost);
    if let Some(mut leaves) = pass.observer.leaves() {
        model.visit_parts(&mut Path::new(), &mut leaves);
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
    // 3.0's estimate does not simulate its load: nothing more to gather.
    let counts = InstanceCounts {
        summary,
        gathered: Default::default(),
    };
    Ok(accounts.profiled(instance_index, title, counts, schema, Accounting::Ommx30))
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

/// An `ommx.v1` payload as OMMX 3.0 loads it: first accepted by the v1 pass
/// (2.9.3's validation, which 3.0's reader applies too), then converted.
/// 3.0 reads two things 2.9.3 refuses: expression functions, which the
/// conversion validates, and constraint hints whatever they name (it drops
/// them unread). An instance the v1 pass refuses is read again without
/// them ([`without_what_3_0_reads_alone`]). Each entity's wire bytes are
/// those of its element in the v1 file (as the v1 pass measures them;
/// re-encoded when the copy had to be checked).
fn from_v1(bytes: &[u8], layer: Option<usize>) -> Result<ommx30::Instance, PassError> {
    let mut elements = Elements::default();
    let message = match v1_pass(bytes, layer, &mut elements) {
        Ok(()) => decode_v1(bytes, layer)?,
        Err(
            refused @ PassError::Instance {
                source: InstanceError::Rejected(_),
                ..
            },
        ) => {
            let message = decode_v1(bytes, layer)?;
            let Some(copy) = without_what_3_0_reads_alone(&message) else {
                return Err(refused);
            };
            v1_pass(&copy, layer, &mut Elements::default())?;
            elements = Elements::encoded(&message);
            message
        }
        Err(e) => return Err(e),
    };
    let mut model = ommx30::from_v1(message).map_err(|e| PassError::V2 {
        layer,
        source: V2PassError::Conversion(e.to_string()),
    })?;
    model.wire = elements.sizes;
    Ok(model)
}

/// Checks `bytes` with 2.9.3's rules (the v1 pass), recording each
/// element's size in `sizes`.
fn v1_pass(bytes: &[u8], layer: Option<usize>, sizes: &mut Elements) -> Result<(), PassError> {
    let mut scratch = Accounts::new(Default::default());
    profile_instance(bytes, Some(bytes.len() as u64), &mut scratch, sizes)
        .map(|_| ())
        .map_err(|source| PassError::Instance { layer, source })
}

fn decode_v1(bytes: &[u8], layer: Option<usize>) -> Result<crate::ommx_v1::Instance, PassError> {
    use prost::Message;
    crate::ommx_v1::Instance::decode(bytes).map_err(|e| PassError::Instance {
        layer,
        source: InstanceError::Decode {
            field: "Instance",
            offset: bytes.len() as u64,
            source: e,
        },
    })
}

/// `message` encoded without what 3.0 reads by rules of its own: expression
/// functions (each a constant 0 in the copy) and constraint hints (3.0's
/// `from_v1_bytes` drops them, dangling or repeated references and all).
/// `None` when it has neither, so 2.9.3's verdict is 3.0's.
fn without_what_3_0_reads_alone(message: &crate::ommx_v1::Instance) -> Option<Vec<u8>> {
    use prost::Message;
    let mut copy = message.clone();
    copy.constraint_hints = None;
    for_each_function(&mut copy, &mut |f| {
        if let Some(FunctionArm::Expression(_)) = f.function {
            f.function = Some(FunctionArm::Constant(0.0));
        }
    });
    (copy != *message).then(|| copy.encode_to_vec())
}

/// The encoded size of each v1 entity, keyed as its OMMX 3.0 entity.
#[derive(Default)]
struct Elements {
    sizes: ommx30::WireSizes,
}

impl Elements {
    /// Sizes of `m`'s entities as prost encodes them.
    fn encoded(m: &crate::ommx_v1::Instance) -> Self {
        use prost::encoding::message::encoded_len;
        let mut sizes = ommx30::WireSizes::new();
        for v in &m.decision_variables {
            sizes.insert((EntityKind::Variable, v.id), encoded_len(2, v) as u64);
        }
        for c in &m.constraints {
            sizes.insert((EntityKind::Constraint, c.id), encoded_len(4, c) as u64);
        }
        for r in &m.removed_constraints {
            let id = r.constraint.as_ref().map_or(0, |c| c.id);
            sizes.insert((EntityKind::Removed, id), encoded_len(8, r) as u64);
        }
        for n in &m.named_functions {
            sizes.insert((EntityKind::NamedFunction, n.id), encoded_len(10, n) as u64);
        }
        if let Some(o) = &m.objective {
            sizes.insert(OBJECTIVE, encoded_len(3, o) as u64);
        }
        Self { sizes }
    }
}

/// Records what the v1 pass measured of each element.
impl EntityObserver for Elements {
    fn counts_only(&self) -> bool {
        true
    }
    fn variable(&mut self, v: &DecisionVariable, cost: Cost) {
        self.sizes
            .insert((EntityKind::Variable, v.id), cost.wire_bytes);
    }
    fn constraint(&mut self, c: &Constraint, cost: Cost) {
        self.sizes
            .insert((EntityKind::Constraint, c.id), cost.wire_bytes);
    }
    fn removed_constraint(&mut self, r: &RemovedConstraint, cost: Cost) {
        self.sizes
            .insert((EntityKind::Removed, r.constraint.id), cost.wire_bytes);
    }
    fn named_function(&mut self, n: &NamedFunction, cost: Cost) {
        self.sizes
            .insert((EntityKind::NamedFunction, n.id), cost.wire_bytes);
    }
    fn objective(&mut self, _objective: &EntityView<'_>, cost: Cost) {
        self.sizes.insert(OBJECTIVE, cost.wire_bytes);
    }
}

/// Every function of a v1 instance.
fn for_each_function(i: &mut crate::ommx_v1::Instance, f: &mut dyn FnMut(&mut Function)) {
    i.objective.iter_mut().for_each(&mut *f);
    for c in &mut i.constraints {
        c.function.iter_mut().for_each(&mut *f);
    }
    for r in &mut i.removed_constraints {
        for c in r.constraint.iter_mut() {
            c.function.iter_mut().for_each(&mut *f);
        }
    }
    for n in &mut i.named_functions {
        n.function.iter_mut().for_each(&mut *f);
    }
    i.decision_variable_dependency.values_mut().for_each(f);
}

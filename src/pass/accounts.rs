//! What one pass accumulates: the logical profile and, when asked, the
//! wire one, each entity visited under its container (and family frame);
//! the instance-wide parts visited once the stream has ended.

use std::collections::HashSet;
use std::io;

use super::compare::Comparing;
use super::objective::{Part, Singulars};
use super::observer::Singular;
use super::{Cost, ProfileOptions};
use crate::model::leaves::KeyedLeaves;
use crate::model::ommx30::ConversionError;
use crate::model::FileWaste;
use crate::pass::terms::entities::RepeatCheck;
use crate::pass::InstanceError;
use crate::pass::{MAX_FAMILIES, MAX_FAMILY_BYTES};
use crate::profile::collections::{leaf, BTREE_MAP, ENUM, SCALAR_8};
use crate::profile::family::{family_frame, GroupBy};
use crate::profile::replay::{Replay, Tally};
use crate::profile::wire_view::{self, Positions, TopLevelField};
use crate::profile::{Aggregate, Frame, LogicalMemoryProfile, LogicalMemoryVisitor, Path};
use crate::profiled::{Accounting, InstanceCounts, ProfiledInstance, Schema};

/// The leaves of everything but the entities: the entity containers' own
/// stack parts, the sense and the singular fields.
pub fn visit_instance_parts<V: LogicalMemoryVisitor>(singular: &Singular<'_>, visitor: &mut V) {
    let Singular {
        objective,
        objective_degree: _,
        objective_variables: _,
        objective_waste: _,
        hints,
        dependency,
        parameters,
        description,
        annotations,
    } = singular;
    let mut path = Path::new();
    // Entity containers: their stack part is there even when empty.
    for frame in [
        "Instance.decision_variables",
        "Instance.constraints",
        "Instance.removed_constraints",
    ] {
        leaf(
            &path.with(frame).with("BTreeMap[stack]"),
            visitor,
            &BTREE_MAP,
        );
    }
    leaf(&path.with("Instance.sense"), visitor, &ENUM);
    objective.visit_logical_memory(&mut path.with("Instance.objective"), visitor);
    hints.visit_logical_memory(&mut path.with("Instance.constraint_hints"), visitor);
    dependency.visit_logical_memory(
        &mut path.with("Instance.decision_variable_dependency"),
        visitor,
    );
    parameters.visit_logical_memory(&mut path.with("Instance.parameters"), visitor);
    description.visit_logical_memory(&mut path.with("Instance.description"), visitor);
    annotations.visit_logical_memory(&mut path.with("Instance.annotations"), visitor);
}

/// Passes leaves on to the aggregate (or a visitor of it) and counts their
/// bytes.
pub(super) struct Summing<'a, V: ?Sized = Aggregate> {
    pub(super) aggregate: &'a mut V,
    pub(super) bytes: u64,
}

impl<V: LogicalMemoryVisitor + ?Sized> LogicalMemoryVisitor for Summing<'_, V> {
    fn visit_leaf(&mut self, path: &Path, bytes: usize) {
        self.bytes += bytes as u64;
        self.aggregate.visit_leaf(path, bytes);
    }
}

/// The leaves of one entity map entry (key and value) under its container
/// `frame` and, when grouping, its family frame.
pub fn visit_entity_entry<T: LogicalMemoryProfile, V: LogicalMemoryVisitor>(
    frame: &'static str,
    family: Option<Frame>,
    value: &T,
    path: &mut Path,
    visitor: &mut V,
) {
    let mut p = path.with(frame);
    match family {
        Some(f) => entry_leaves(value, &mut p.with(f), visitor),
        None => entry_leaves(value, &mut p, visitor),
    }
}

pub(super) fn entry_leaves<T: LogicalMemoryProfile, V: LogicalMemoryVisitor>(
    value: &T,
    path: &mut Path,
    visitor: &mut V,
) {
    leaf(&path.with("BTreeMap[key]"), visitor, &SCALAR_8);
    value.visit_logical_memory(path, visitor);
}

/// Visits one entity into `accounts` (logical and, when asked, wire) and
/// returns its cost. `element` is the entity as it was encoded; `key`, when
/// given, determines every leaf of `value` (a variable's or a constraint's
/// [`leaf_key`](crate::model::DecisionVariable::leaf_key)), which are then
/// counted by it, as those of entities counted on the wire are.
pub(super) fn account_entity<T: LogicalMemoryProfile>(
    frame: &'static str,
    name: Option<&str>,
    (value, key): (&T, Option<u128>),
    element: TopLevelField<'_>,
    path: &mut Path,
    accounts: &mut Accounts,
) -> Cost {
    let family = accounts.family(name);
    // Entities of one kind mostly land on the paths the previous one did.
    let kind = match frame {
        "Instance.decision_variables" => 0,
        "Instance.constraints" => 1,
        _ => 2,
    };
    let [memory, wire_bytes] = &mut accounts.held[kind];
    match (&mut accounts.wire, &family) {
        (None, _) => {}
        (Some(_), None) => {
            debug_assert!(path.frames().is_empty(), "entities are top-level fields");
            accounts.wire_positions.count_top_level(element);
        }
        (Some(wire), Some(_)) => {
            let visitor = &mut wire_bytes.entity(wire);
            wire_view::visit_top_level(element, family.clone(), path, visitor);
        }
    }
    let bytes = match (family, key) {
        (None, Some(key)) => {
            let tally = &mut accounts.held_keyed[kind];
            tally.count_summed(Some(key), &mut accounts.memory, |visitor| {
                entry_leaves(value, &mut path.with(frame), &mut { visitor })
            })
        }
        (family, _) => {
            let mut summing = Summing {
                aggregate: &mut memory.entity(&mut accounts.memory),
                bytes: 0,
            };
            visit_entity_entry(frame, family, value, path, &mut summing);
            summing.bytes
        }
    };
    Cost {
        bytes,
        wire_bytes: element.wire_bytes,
        waste: FileWaste::default(),
    }
}

/// Counts one entity read on the wire (`leaves`) under its container
/// `frame` in the tally of its kind.
pub(super) fn account_counted(
    frame: &'static str,
    leaves: &impl KeyedLeaves,
    tally: &mut Tally,
    memory: &mut Aggregate,
    path: &mut Path,
) {
    tally.count(leaves.key(), memory, |visitor| {
        entry_leaves(leaves, &mut path.with(frame), &mut { visitor })
    });
}

/// [`account_counted`] for leaves that hold their own map key (OMMX 3.0's).
pub(super) fn account_counted_as_is(
    frame: &'static str,
    leaves: &impl KeyedLeaves,
    tally: &mut Tally,
    memory: &mut Aggregate,
    path: &mut Path,
) {
    tally.count(leaves.key(), memory, |visitor| {
        leaves.visit_logical_memory(&mut path.with(frame), &mut { visitor })
    });
}

/// The distinct names seen so far, when grouping by name.
pub(super) struct Families {
    names: Option<HashSet<Box<str>>>,
    bytes: usize,
}

impl Families {
    pub(super) fn new(group_by: GroupBy) -> Self {
        Self {
            names: (group_by == GroupBy::Name).then(HashSet::new),
            bytes: 0,
        }
    }

    pub(super) fn see(&mut self, name: Option<&str>) -> Result<(), InstanceError> {
        let (Some(names), Some(name)) = (&mut self.names, name) else {
            return Ok(());
        };
        if !names.contains(name) {
            self.bytes += name.len();
            names.insert(name.into());
            if names.len() > MAX_FAMILIES || self.bytes > MAX_FAMILY_BYTES {
                return Err(InstanceError::TooManyFamilies);
            }
        }
        Ok(())
    }

    /// Adds the names another thread saw, within the same caps.
    pub(super) fn absorb(&mut self, other: Families) -> Result<(), InstanceError> {
        for name in other.names.into_iter().flatten() {
            self.see(Some(&name))?;
        }
        Ok(())
    }
}

/// The profiles one pass accumulates: the logical one and, when asked, the
/// wire one. Each decoding thread fills its own; they are merged at the end.
#[derive(Debug)]
pub struct Accounts {
    pub memory: Aggregate,
    /// Encoded bytes per path; `None` unless [`ProfileOptions::wire`].
    pub wire: Option<Aggregate>,
    /// The node of each v1 wire position in `wire`, for the top-level
    /// fields counted without a family frame.
    pub(super) wire_positions: Positions,
    pub(super) group_by: GroupBy,
    /// Set when no analysis looks at the entities and the profile is the
    /// plain logical one: variables and constraints are then counted on
    /// the wire, not built.
    pub(super) counting: Option<Counting>,
    /// Objective fields longer than this are spooled to a temporary file
    /// when only counted (`Settings::spool_above`).
    pub(super) spool_above: u64,
    /// On every thread (`ranges.rs`), such elements longer than this
    /// are read where they lie in the input file rather than held
    /// ([`crate::pass::objective::IN_PLACE_ABOVE`]).
    pub(super) in_place_above: u64,
    /// Whether a quadratic objective's table order is gathered
    /// ([`ProfileOptions::table_order`]).
    pub(super) table_order: bool,
    /// Where the leaves of the held variables, constraints and removed
    /// constraints went, each kind's previous one (`profile::replay`), in
    /// the logical profile and in the wire view under family frames
    /// (without them, the wire view is counted by position).
    pub(super) held: [[Replay; 2]; 3],
    /// The held variables and constraints whose leaves a key determines,
    /// counted by it in the logical profile (`Tally`), each kind apart;
    /// added to it by [`Accounts::settle`].
    pub(super) held_keyed: [Tally; 3],
    /// Whose layout the leaves follow: OMMX 2.9.3's, or 3.0's for v1 input
    /// counted as 3.0 converts it.
    pub(super) accounting: Accounting,
    /// The archive layer's annotations, which 3.0 folds into the instance.
    pub(super) layer_annotations: Option<std::collections::BTreeMap<String, String>>,
    /// v1 input counted under 2.9.3's accounting is counted under 3.0's
    /// too (`Reading::compare`): entities are built, each checked by 3.0's
    /// rules as it is read.
    pub(super) comparing: bool,
    /// In a comparing pass, 3.0's refusal of the entity read last, which
    /// its batch hands on before it.
    pub(super) ommx30_refused: Option<ConversionError>,
    /// The comparing side of the calling thread's accounts.
    pub(super) compare: Option<Box<Comparing>>,
}

/// What counting entities without building them keeps per thread.
#[derive(Debug, Default)]
pub(super) struct Counting {
    pub(super) variables: Tally,
    pub(super) constraints: Tally,
    pub(super) seen: RepeatCheck,
}

impl Accounts {
    pub fn new(options: ProfileOptions) -> Self {
        Self {
            memory: Aggregate::new(),
            wire: options.wire.then(Aggregate::new),
            wire_positions: Positions::default(),
            group_by: options.group_by,
            counting: None,
            spool_above: crate::pass::objective::SPOOL_ABOVE,
            in_place_above: crate::pass::objective::IN_PLACE_ABOVE,
            table_order: options.table_order,
            held: Default::default(),
            held_keyed: Default::default(),
            accounting: Accounting::Ommx29,
            layer_annotations: None,
            comparing: false,
            ommx30_refused: None,
            compare: None,
        }
    }

    /// Counts entities without building them from now on, if nothing needs
    /// them built: no analysis sees them (`entities_seen` false), no wire
    /// view, no family frames.
    pub(super) fn count_when_unseen(&mut self, entities_seen: bool) {
        let plain = self.wire.is_none() && self.group_by == GroupBy::None;
        if !entities_seen && plain && !self.comparing {
            self.counting = Some(Counting::default());
        }
    }

    /// The profiled instance these complete accounts describe, their
    /// insertion caches freed.
    pub(super) fn profiled(
        mut self,
        instance_index: Option<usize>,
        title: Option<String>,
        counts: InstanceCounts,
        schema: Schema,
        accounting: Accounting,
    ) -> ProfiledInstance {
        self.memory.release_cache();
        if let Some(wire) = &mut self.wire {
            wire.release_cache();
        }
        let InstanceCounts { summary, gathered } = counts;
        let compared = self
            .compare
            .map(|c| c.compared(instance_index, title.clone()))
            .unwrap_or_default();
        ProfiledInstance {
            compared,
            gathered: Some(gathered),
            real_memory: None,
            instance_index,
            observed_as: instance_index,
            title,
            summary,
            aggregate: self.memory,
            wire: self.wire,
            schema,
            accounting,
        }
    }

    /// Adds what was counted by key to the profile; done before the
    /// accounts are read or merged.
    pub(super) fn settle(&mut self) {
        if let Some(wire) = &mut self.wire {
            self.wire_positions.settle(wire);
        }
        for tally in &mut self.held_keyed {
            tally.settle(&mut self.memory);
        }
        if let Some(counting) = &mut self.counting {
            counting.variables.settle(&mut self.memory);
            counting.constraints.settle(&mut self.memory);
        }
    }

    /// Empty accounts for another thread of the same pass.
    pub(super) fn for_worker(&self) -> Self {
        Self {
            counting: self.counting.as_ref().map(|_| Counting::default()),
            spool_above: self.spool_above,
            in_place_above: self.in_place_above,
            accounting: self.accounting,
            comparing: self.comparing,
            ..Self::new(ProfileOptions {
                group_by: self.group_by,
                wire: self.wire.is_some(),
                table_order: self.table_order,
            })
        }
    }

    pub(super) fn merge(&mut self, other: &Accounts) {
        self.memory.merge_under(&[], &other.memory);
        if let (Some(mine), Some(theirs)) = (&mut self.wire, &other.wire) {
            mine.merge_under(&[], theirs);
        }
    }

    /// Adds one top-level field of v1 input, without a family frame, to
    /// the wire view when it is asked for.
    pub(super) fn wire_top_level(&mut self, field: TopLevelField<'_>) {
        if self.wire.is_some() {
            self.wire_positions.count_top_level(field);
        }
    }

    /// [`Accounts::wire_top_level`] of an objective field framed as `part`
    /// (left in a file, or held should spooling have failed), its key and
    /// length prefix taking `tag_bytes` of its `wire_bytes`.
    pub(super) fn wire_objective(
        &mut self,
        part: &Part,
        (tag_bytes, wire_bytes): (u64, u64),
    ) -> io::Result<()> {
        if self.wire.is_none() {
            return Ok(());
        }
        let number = crate::wire::fields::instance::OBJECTIVE;
        match part {
            Part::Spooled(body) => {
                let (file, range) = body.location();
                let head = (number, tag_bytes, wire_bytes);
                self.wire_positions
                    .count_top_level_in_file(head, file, range)
            }
            Part::Field(field) => {
                self.wire_top_level(TopLevelField {
                    number,
                    tag_bytes,
                    wire_bytes,
                    body: Singulars::objective_body(field),
                });
                Ok(())
            }
        }
    }

    /// The family frame of an entity named `name`, when grouping.
    pub(super) fn family(&self, name: Option<&str>) -> Option<Frame> {
        match self.group_by {
            GroupBy::None => None,
            GroupBy::Name => Some(family_frame(name)),
        }
    }
}

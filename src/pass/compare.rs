//! The comparison of the two accountings in one pass (`Reading::compare`):
//! v1 input counted under OMMX 2.9.3's accounting is counted under 3.0's
//! as well, from the entities 2.9.3's reading builds, so that a command
//! showing both (`report`, `advise`'s `ommx-3-layout`, `diff --accounting
//! 2.9,3.0`) reads its input once, a stream included. What 3.0's `from_v1_bytes` makes of an entity
//! 2.9.3 accepts differs only in its leaves and in the rules 3.0 adds: its
//! bound rule and the finiteness of functions (checked by the read step on
//! every thread, a refusal handed on as [`super::item::Item::Ommx30Refusal`]),
//! the fixed and dependent variables in use (the ids kept here, on the
//! checking side) and the instance-wide parts (`finish.rs`).
//! Once 3.0 refuses, nothing more is counted for it; 2.9.3's reading goes
//! on. Under `--group-by name` (diff's migration view asks for it) each
//! entity is built as 3.0 converts it and its leaves go under its family
//! frame, as `--accounting 3.0` puts them; otherwise entities without
//! parameters are counted by key.

use std::collections::BTreeMap;

use super::error::InstanceError;
use super::observer::{NamedFunction, Singular};
use crate::ids::IdSet;
use crate::model::leaves::{ConstraintLeaves, KeyedLeaves, VariableLeaves};
use crate::model::ommx30::{self, ConversionError, Converted, EntityRefusal, V2Error};
use crate::model::{Constraint, DecisionVariable, Function, RemovedConstraint};
use crate::ommx_v1 as pb;
use crate::profile::family::GroupBy;
use crate::profile::replay::Tally;
use crate::profile::{Aggregate, LogicalMemoryProfile, Path};
use crate::profiled::{Accounting, Compared, InstanceCounts, ProfiledInstance, Schema};

/// What 3.0's accounting has made of the instance so far.
#[derive(Debug, Default)]
pub(super) struct Comparing {
    /// 3.0's refusal, the first in its order; nothing is counted after it.
    refused: Option<String>,
    pub(super) uses: Ommx30Uses,
    /// The entities' leaves under 3.0's accounting, then the instance-wide
    /// parts.
    memory: Aggregate,
    variables: Tally,
    constraints: Tally,
    entities: Tally,
    /// The annotations of each archive layer that lists the instance's blob
    /// (`None` for raw input), which 3.0 folds into an instance of its own.
    layers: Vec<Option<BTreeMap<String, String>>>,
    /// 3.0's instance-wide parts but the objective, unfolded, once
    /// finished and accepted.
    instance: Option<ommx30::Instance>,
    /// The instance's counts, once finished.
    counts: Option<InstanceCounts>,
    /// Family frames in 3.0's profile (`--group-by name`).
    group_by: GroupBy,
}

impl Comparing {
    /// Nothing counted yet, of an instance that the archive layers with
    /// `layers`' annotations list (`[None]` for raw input), its 3.0 profile
    /// grouped as `group_by` says.
    pub(super) fn new(layers: Vec<Option<BTreeMap<String, String>>>, group_by: GroupBy) -> Self {
        Self {
            layers,
            group_by,
            ..Self::default()
        }
    }

    /// Whether each entity is built whole and visited under its family
    /// frame, rather than counted by key.
    fn grouped(&self) -> bool {
        self.group_by == GroupBy::Name
    }

    /// Notes 3.0's refusal of the entity read next (or of what the end of
    /// the stream holds), unless an earlier one was noted.
    pub(super) fn refuse(&mut self, e: &ConversionError) {
        self.refuse_with(super::error::V2PassError::Conversion(e.to_string()).to_string());
    }

    fn refuse_with(&mut self, why: String) {
        if self.refused.is_none() {
            self.refused = Some(why);
        }
    }

    fn open(&self) -> bool {
        self.refused.is_none()
    }

    /// Counts a variable 2.9.3 accepted: its bytes under 3.0's accounting,
    /// `None` once 3.0 has refused.
    pub(super) fn variable(&mut self, v: &DecisionVariable) -> Option<u64> {
        if !self.open() {
            return None;
        }
        if v.substituted_value.is_some() {
            self.uses.fix(v.id);
        }
        if !v.parameters.is_empty() || self.grouped() {
            return Some(self.converted(&Converted::of_variable(v)));
        }
        let leaves = VariableLeaves {
            substituted_value: v.substituted_value,
            name: v.name.as_deref(),
            subscripts: v.subscripts.len(),
            parameters: std::iter::empty(),
            description: v.description.as_deref(),
        };
        let leaves = ommx30::CountedVariable(&leaves);
        let (tally, memory) = (&mut self.variables, &mut self.memory);
        Some(account_counted_summed(
            ommx30::VARIABLES,
            &leaves,
            tally,
            memory,
        ))
    }

    /// Counts an active constraint 2.9.3 accepted (see [`Comparing::variable`]).
    pub(super) fn constraint(&mut self, c: &Constraint) -> Option<u64> {
        if !self.open() {
            return None;
        }
        let used = &mut self.uses.used;
        c.function.for_each_variable(|id| _ = used.insert(id));
        if !c.parameters.is_empty() || self.grouped() {
            return Some(self.converted(&Converted::of_constraint(c)));
        }
        let leaves = ConstraintLeaves {
            function: c.function.shape(),
            name: c.name.as_deref(),
            subscripts: c.subscripts.len(),
            parameters: std::iter::empty(),
            description: c.description.as_deref(),
        };
        let leaves = ommx30::CountedConstraint(&leaves);
        let (tally, memory) = (&mut self.constraints, &mut self.memory);
        let frame = ommx30::REGULAR_COLLECTION;
        Some(account_counted_summed(frame, &leaves, tally, memory))
    }

    /// Counts a removed constraint 2.9.3 accepted.
    pub(super) fn removed(&mut self, r: &RemovedConstraint) -> Option<u64> {
        self.open()
            .then(|| self.converted(&Converted::of_removed(r)))
    }

    /// Counts a named function 2.9.3 accepted.
    pub(super) fn named(&mut self, n: &NamedFunction) -> Option<u64> {
        let NamedFunction {
            id,
            function,
            name,
            subscripts,
            parameters,
            description,
        } = n;
        self.open().then(|| {
            let converted =
                Converted::of_named(*id, function, name, subscripts, parameters, description);
            self.converted(&converted)
        })
    }

    /// An entity's leaves as 3.0 holds it, built whole (under its family
    /// frame when grouping); its bytes.
    fn converted(&mut self, c: &Converted) -> u64 {
        let entity = c.entity();
        let family = self.grouped().then(|| entity.family());
        self.entities
            .count_summed(None, &mut self.memory, |visitor| {
                entity.visit_under(&mut Path::new(), family, &mut { visitor })
            })
    }

    /// The objective built (not counted: a count is of finite terms none
    /// of which merged): 3.0 refuses a coefficient that summing terms made
    /// infinite.
    pub(super) fn check_objective(&mut self, objective: &Function) {
        if !self.open() {
            return;
        }
        if let Err(e) = ommx30::check_finite_compact(objective) {
            self.refuse(&e);
        }
    }

    /// The end of an instance 2.9.3 accepted (its instance-wide parts in
    /// `singular`, its `dependency` as the file gave it, its `counts`):
    /// 3.0's rules on what needs the whole stream, and 3.0's instance-wide
    /// parts, as `finish.rs`'s `finish_ommx30` applies and visits them.
    pub(super) fn finish(
        &mut self,
        singular: &Singular<'_>,
        dependency: &BTreeMap<u64, pb::Function>,
        counts: &InstanceCounts,
    ) {
        self.counts = Some(InstanceCounts {
            summary: counts.summary.clone(),
            gathered: crate::profiled::Gathered {
                objective_growths: None,
                ..counts.gathered.clone()
            },
        });
        if !self.open() {
            return;
        }
        // 3.0's rules take the smallest variable in use: any order does.
        let variables = |note: &mut dyn FnMut(u64)| singular.objective_variables.for_each(note);
        let dependency = match ommx30_rules(&self.uses, dependency, &variables) {
            Ok(dependency) => dependency,
            Err(EntityRefusal::Ommx30(e)) => return self.refuse(&e),
            // 2.9.3 read every assignment already; as the pass would say it.
            Err(EntityRefusal::Model(e)) => {
                return self.refuse_with(InstanceError::from(e).to_string())
            }
        };
        self.instance = Some(ommx30::Instance {
            description: singular.description.0.clone(),
            parameters: singular.parameters.0.clone(),
            annotations: singular.annotations.0.clone(),
            dependency,
            ..ommx30::Instance::default()
        });
        let mut path = Path::new();
        let objective = singular.objective;
        objective.visit_logical_memory(&mut path.with(ommx30::OBJECTIVE), &mut self.memory);
    }

    /// The comparison, once the instance is finished, for each of its
    /// layers (in the order given to [`Comparing::new`]): the instance under
    /// 3.0's accounting, the layer's annotations folded in (`instance_index`
    /// and `title` as 2.9.3's), or 3.0's refusal.
    pub(super) fn compared(
        mut self,
        instance_index: Option<usize>,
        title: Option<String>,
    ) -> Vec<Compared> {
        let instance = match (self.refused, self.instance) {
            (Some(why), _) => return vec![Compared::Refused(why); self.layers.len()],
            (None, Some(instance)) => instance,
            (None, None) => unreachable!("compared before the instance was finished"),
        };
        self.variables.settle(&mut self.memory);
        self.constraints.settle(&mut self.memory);
        self.entities.settle(&mut self.memory);
        let InstanceCounts { summary, gathered } = self.counts.unwrap_or_default();
        let measured = |layer: &Option<BTreeMap<String, String>>, mut memory: Aggregate| {
            let mut instance = instance.clone();
            if let Some(layer) = layer {
                ommx30::fold_layer_annotations(&mut instance, layer);
            }
            instance.visit_parts_but_objective(&mut Path::new(), &mut memory);
            memory.release_cache();
            Compared::Measured(Box::new(ProfiledInstance {
                instance_index,
                observed_as: instance_index,
                title: title.clone(),
                summary: summary.clone(),
                aggregate: memory,
                wire: None,
                schema: Schema::V1,
                accounting: Accounting::Ommx30,
                gathered: Some(gathered.clone()),
                real_memory: None,
                compared: Vec::new(),
            }))
        };
        let Some((last, others)) = self.layers.split_last() else {
            return Vec::new();
        };
        let mut all: Vec<Compared> = others
            .iter()
            .map(|layer| measured(layer, self.memory.clone()))
            .collect();
        all.push(measured(last, self.memory));
        all
    }
}

/// Counts one entity of leaves that hold their own map key (3.0's) under
/// its container `frame` in the tally of its kind; its bytes.
fn account_counted_summed(
    frame: &'static str,
    leaves: &impl KeyedLeaves,
    tally: &mut Tally,
    memory: &mut Aggregate,
) -> u64 {
    tally.count_summed(leaves.key(), memory, |visitor| {
        leaves.visit_logical_memory(&mut Path::new().with(frame), &mut { visitor })
    })
}

/// Shows a function's variables, in its order, to the function given.
pub(super) type Walker<'a> = dyn Fn(&mut dyn FnMut(u64)) + 'a;

/// OMMX 3.0's own rules on what needs the whole stream of v1 input, in its
/// order (`from_v1_bytes`), once 2.9.3's hold: the assignments read as 3.0
/// reads them and forming no cycle; then no variable the objective
/// (`objective_variables` shows its variables; none when it was only
/// counted, which it is only when it uses no fixed or assigned variable)
/// or an active constraint uses is assigned, then none is fixed, then no
/// assigned variable is fixed. 3.0 checks the last three on sets ordered by
/// id, so each names the smallest such variable, whatever the stream's
/// order. 3.0's dependency.
pub(super) fn ommx30_rules(
    uses: &Ommx30Uses,
    dependency: &BTreeMap<u64, pb::Function>,
    objective_variables: &Walker<'_>,
) -> Result<ommx30::Dependency, EntityRefusal> {
    // 3.0 reads them in its hash map's order, which differs from process
    // to process: of several it refuses, memprof names the smallest.
    let mut assignments = BTreeMap::new();
    for (&id, f) in dependency {
        let what = || format!("the assignment of variable {id}");
        assignments.insert(id, ommx30::function(f, &what)?);
    }
    let assigned = ommx30::dependency(assignments).map_err(ConversionError::from)?;
    substituted_out(uses, dependency, objective_variables).map_err(ConversionError::from)?;
    Ok(assigned)
}

/// 3.0's partition of the variables: the smallest assigned variable in
/// use (by the objective or an active constraint), else the smallest fixed
/// one in use, else the smallest both fixed and assigned.
fn substituted_out(
    uses: &Ommx30Uses,
    dependency: &BTreeMap<u64, pb::Function>,
    objective_variables: &Walker<'_>,
) -> Result<(), V2Error> {
    let (mut assigned, mut fixed) = (None, None);
    let note = |seen: &mut Option<u64>, id: u64| *seen = Some(seen.map_or(id, |s| s.min(id)));
    // No variable is in use when none is fixed or assigned (every fixed one
    // is listed in `fixed_ids`): the objective's need not be walked.
    if !uses.fixed_ids.is_empty() || !dependency.is_empty() {
        objective_variables(&mut |id| {
            if dependency.contains_key(&id) {
                note(&mut assigned, id);
            }
            if uses.fixed.contains(&id) {
                note(&mut fixed, id);
            }
        });
    }
    let used = |id: &u64| uses.used.contains(id);
    let smallest = |a: Option<u64>, b: Option<u64>| a.into_iter().chain(b).min();
    // The dependency's keys ascend: the first is the smallest.
    let assigned = smallest(assigned, dependency.keys().copied().find(used));
    if let Some(id) = assigned {
        return Err(V2Error::DependentUsed(id));
    }
    let fixed = smallest(fixed, uses.fixed_ids.iter().copied().filter(used).min());
    if let Some(id) = fixed {
        return Err(V2Error::FixedUsed(id));
    }
    match dependency.keys().find(|id| uses.fixed.contains(id)) {
        Some(&id) => Err(V2Error::FixedAndDependent(id)),
        None => Ok(()),
    }
}

/// What OMMX 3.0's cross-entity rules need of v1 input: the variables with
/// a fixed value, and those the objective or an active constraint uses.
#[derive(Debug, Default)]
pub(super) struct Ommx30Uses {
    pub(super) fixed: IdSet,
    /// The same, listed (in stream order; 3.0's rules take the smallest).
    pub(super) fixed_ids: Vec<u64>,
    /// Used by an active constraint.
    pub(super) used: IdSet,
    /// Used by a removed row or a named function, or (added by
    /// `finish.rs`) the objective or the dependency: with `used`, what the
    /// analyses call used.
    pub(super) referenced: IdSet,
}

impl Ommx30Uses {
    pub(super) fn fix(&mut self, id: u64) {
        if self.fixed.insert(id) {
            self.fixed_ids.push(id);
        }
    }
}

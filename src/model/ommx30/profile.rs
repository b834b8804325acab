//! OMMX 3.0.0b7's `logical_memory_profile()` of an instance: the roots, frame
//! names and byte rules written up in fixtures/v2/README.md. Every leaf is
//! emitted through a [`Rule`], as for v1, so `explain` can restate it.

use std::collections::BTreeMap;

use crate::profile::collections::{
    leaf, option_string, scalar_map, string_map, vec_of_strings, MapKind, BTREE_MAP, ENUM,
    FNV_HASHMAP, SCALAR_8, VEC,
};
use crate::profile::{LogicalMemoryProfile, LogicalMemoryVisitor, Noun, Path, Rule};

use super::entity::{
    label_stacks, COLLECTIONS, CONTEXT_LABELS, CONTEXT_PROVENANCE, FIXED_VALUES, FUNCTION_ENTRIES,
    FUNCTION_LABELS, NAMED_FUNCTIONS, VARIABLES, VARIABLE_ENTRIES, VARIABLE_LABELS,
};
use super::{Func, Instance};

/// What 3.0 holds as 2.9.3 does: the dependency graph, an absent
/// description, absent parameters.
pub use crate::model::entities::{DEPENDENCY_GRAPH, DESCRIPTION_NONE, PARAMETERS_NONE};

/// The objective's frame.
pub const OBJECTIVE: &str = "Instance.objective";

pub const OUTPUT_OBJECTIVE_NONE: Rule = Rule::fixed(
    "an absent Option<OutputObjective>",
    Noun::new("absent value", "absent values"),
    48,
);

/// The dependency's assignments: a function per assigned variable.
fn assignments<V: LogicalMemoryVisitor>(
    path: &mut Path,
    visitor: &mut V,
    functions: &BTreeMap<u64, Func>,
) {
    leaf(&path.with("FnvHashMap[stack]"), visitor, &FNV_HASHMAP);
    for f in functions.values() {
        leaf(
            &path.with("FnvHashMap[key]").with("VariableID.0"),
            visitor,
            &SCALAR_8,
        );
        f.visit_logical_memory(path, visitor);
    }
}

impl Instance {
    /// The leaves that belong to no entity: the entity containers' own stack
    /// parts (maps and label stores, there even when empty) and the
    /// instance-wide fields. With every [`Entity`](super::Entity)'s leaves
    /// under its container, they make the whole profile.
    pub fn visit_parts<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        self.visit_parts_but_objective(path, visitor);
        let zero = Func::default();
        self.objective
            .as_ref()
            .unwrap_or(&zero)
            .visit_logical_memory(&mut path.with(OBJECTIVE), visitor);
    }

    /// [`Instance::visit_parts`] but the objective's leaves (under
    /// [`OBJECTIVE`]), for an objective the pass only counted.
    pub fn visit_parts_but_objective<V: LogicalMemoryVisitor>(
        &self,
        path: &mut Path,
        visitor: &mut V,
    ) {
        let Instance {
            variables: _,
            variable_labels: _,
            fixed_values: _,
            objective: _,
            regular: _,
            indicator: _,
            one_hot: _,
            sos1: _,
            dependency,
            named_functions: _,
            named_labels: _,
            description,
            parameters,
            annotations,
            output_objective,
            wire: _,
            waste: _,
        } = self;
        string_map(
            &mut path.with("Instance.annotations"),
            visitor,
            MapKind::HashMap,
            annotations.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        );
        for (frame, names, ..) in COLLECTIONS {
            let mut c = path.with(frame);
            leaf(
                &c.with(names.active).with("BTreeMap[stack]"),
                visitor,
                &BTREE_MAP,
            );
            leaf(
                &c.with(names.removed).with("BTreeMap[stack]"),
                visitor,
                &BTREE_MAP,
            );
            let [context, labels] = CONTEXT_LABELS;
            label_stacks(&mut c.with(context).with(labels), visitor);
            let [context, provenance] = CONTEXT_PROVENANCE;
            leaf(
                &c.with(context).with(provenance).with("FnvHashMap[stack]"),
                visitor,
                &FNV_HASHMAP,
            );
        }
        {
            let mut p = path.with("Instance.decision_variable_dependency");
            assignments(
                &mut p.with("AcyclicAssignments.assignments"),
                visitor,
                &dependency.assignments,
            );
            visitor.visit_rule(
                &p.with("AcyclicAssignments.dependency"),
                &DEPENDENCY_GRAPH,
                [dependency.nodes, dependency.edges],
            );
            let mut order = p.with("AcyclicAssignments.topological_order");
            leaf(&order.with("Vec[stack]"), visitor, &VEC);
            for _ in 0..dependency.assignments.len() {
                leaf(&order.with("VariableID.0"), visitor, &SCALAR_8);
            }
        }
        {
            let mut p = path.with(VARIABLES);
            leaf(
                &p.with(VARIABLE_ENTRIES).with("BTreeMap[stack]"),
                visitor,
                &BTREE_MAP,
            );
            label_stacks(&mut p.with(VARIABLE_LABELS), visitor);
            let [columns, values] = FIXED_VALUES;
            leaf(
                &p.with(columns).with(values).with("BTreeMap[stack]"),
                visitor,
                &BTREE_MAP,
            );
        }
        {
            let mut p = path.with("Instance.description");
            match description {
                None => leaf(&p.with("Option[stack]"), visitor, &DESCRIPTION_NONE),
                // Only these four fields are counted by 3.0 (created, license
                // and dataset are kept but not visited).
                Some(d) => {
                    for (frame, value) in [
                        ("Description.name", &d.name),
                        ("Description.description", &d.description),
                        ("Description.created_by", &d.created_by),
                    ] {
                        option_string(&mut p.with(frame), visitor, value.as_deref());
                    }
                    vec_of_strings(
                        &mut p.with("Description.authors"),
                        visitor,
                        d.authors.iter().map(String::as_str),
                    );
                }
            }
        }
        {
            let mut p = path.with(NAMED_FUNCTIONS);
            leaf(
                &p.with(FUNCTION_ENTRIES).with("BTreeMap[stack]"),
                visitor,
                &BTREE_MAP,
            );
            label_stacks(&mut p.with(FUNCTION_LABELS), visitor);
        }
        {
            let mut p = path.with("Instance.output_objective");
            match output_objective {
                None => leaf(&p.with("Option[stack]"), visitor, &OUTPUT_OBJECTIVE_NONE),
                Some(o) => {
                    leaf(&p.with("OutputObjective.sense"), visitor, &ENUM);
                    o.function
                        .visit_logical_memory(&mut p.with("OutputObjective.function"), visitor);
                    leaf(
                        &p.with("OutputObjective.preserves_optimality"),
                        visitor,
                        &ENUM,
                    );
                }
            }
        }
        {
            let mut p = path.with("Instance.parameters");
            match parameters {
                None => leaf(&p.with("Option[stack]"), visitor, &PARAMETERS_NONE),
                Some(entries) => scalar_map(
                    &mut p.with("Parameters.entries"),
                    visitor,
                    MapKind::HashMap,
                    entries.len(),
                ),
            }
        }
        leaf(&path.with("Instance.sense"), visitor, &ENUM);
    }
}

impl LogicalMemoryProfile for Instance {
    /// OMMX 3.0's `logical_memory_profile()`: the instance-wide parts and
    /// every entity under its container.
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        self.visit_parts(path, visitor);
        for e in self.entities() {
            e.visit_under(path, None, visitor);
        }
    }
}

//! OMMX 3.0.0b7's `logical_memory_profile()` of an instance: the roots, frame
//! names and byte rules written up in fixtures/v2/README.md. Every leaf is
//! emitted through a [`Rule`], as for v1, so `explain` can restate it.

use std::collections::BTreeMap;

use crate::profile::collections::{
    leaf, option_string, scalar_map, string, string_map, vec_of_strings, MapKind, BTREE_MAP,
    BTREE_SET, ENUM, FNV_HASHMAP, SCALAR_8, VEC,
};
use crate::profile::{LogicalMemoryProfile, LogicalMemoryVisitor, Path, Rule};

use super::Func;
use super::{Collection, Instance, Label, Row};

/// 3.0's dependency graph: fixed part, then per node and per edge (as 2.9.3).
pub const DEPENDENCY_GRAPH: Rule = Rule {
    what: "the dependency graph: fixed part, then per node and per edge",
    leaves: "graphs",
    base: 144,
    per: [(8, "nodes"), (16, "edges")],
};
/// One `Provenance` entry (an enum of three id newtypes).
pub const PROVENANCE: Rule = Rule::fixed(
    "a Provenance (which special constraint a row came from)",
    "entries",
    16,
);
pub const DESCRIPTION_NONE: Rule =
    Rule::fixed("an absent Option<Description>", "absent values", 168);
pub const PARAMETERS_NONE: Rule = Rule::fixed("an absent Option<Parameters>", "absent values", 48);
pub const OUTPUT_OBJECTIVE_NONE: Rule =
    Rule::fixed("an absent Option<OutputObjective>", "absent values", 48);

/// Frames of one collection kind: the id newtype, the row type, the maps.
struct Names {
    id: &'static str,
    active: &'static str,
    removed: &'static str,
    /// `Row.equality`, `Row.stage`, and `Row.indicator_variable` or `Row.variables`.
    fields: [&'static str; 3],
}

const REGULAR: Names = Names {
    id: "ConstraintID.0",
    fields: [
        "Constraint.equality",
        "Constraint.stage",
        "Constraint.indicator_variable",
    ],
    active: "constraints",
    removed: "removed_constraints",
};
const INDICATOR: Names = Names {
    id: "IndicatorConstraintID.0",
    fields: [
        "IndicatorConstraint.equality",
        "IndicatorConstraint.stage",
        "IndicatorConstraint.indicator_variable",
    ],
    active: "indicator_constraints",
    removed: "removed_indicator_constraints",
};
const ONE_HOT: Names = Names {
    id: "OneHotConstraintID.0",
    fields: [
        "OneHotConstraint.equality",
        "OneHotConstraint.stage",
        "OneHotConstraint.variables",
    ],
    active: "one_hot_constraints",
    removed: "removed_one_hot_constraints",
};
const SOS1: Names = Names {
    id: "Sos1ConstraintID.0",
    fields: [
        "Sos1Constraint.equality",
        "Sos1Constraint.stage",
        "Sos1Constraint.variables",
    ],
    active: "sos1_constraints",
    removed: "removed_sos1_constraints",
};

fn key<V: LogicalMemoryVisitor>(
    path: &mut Path,
    visitor: &mut V,
    map_key: &'static str,
    id: &'static str,
) {
    leaf(&path.with(map_key).with(id), visitor, &SCALAR_8);
}

/// A `ModelingLabelStore<Id>`: one `FnvHashMap` per field, an entry per row
/// whose field is set.
fn labels<V: LogicalMemoryVisitor>(
    path: &mut Path,
    visitor: &mut V,
    id: &'static str,
    labels: &BTreeMap<u64, Label>,
) {
    let stack = |p: &mut Path, v: &mut V| leaf(&p.with("FnvHashMap[stack]"), v, &FNV_HASHMAP);
    {
        let mut p = path.with("ModelingLabelStore.description");
        stack(&mut p, visitor);
        for d in labels.values().filter_map(|l| l.description.as_deref()) {
            key(&mut p, visitor, "FnvHashMap[key]", id);
            string(&p, visitor, d);
        }
    }
    {
        let mut p = path.with("ModelingLabelStore.name");
        stack(&mut p, visitor);
        for n in labels.values().filter_map(|l| l.name.as_deref()) {
            key(&mut p, visitor, "FnvHashMap[key]", id);
            string(&p, visitor, n);
        }
    }
    {
        let mut p = path.with("ModelingLabelStore.parameters");
        stack(&mut p, visitor);
        for l in labels.values().filter(|l| !l.parameters.is_empty()) {
            key(&mut p, visitor, "FnvHashMap[key]", id);
            string_map(
                &mut p,
                visitor,
                MapKind::FnvHashMap,
                l.parameters.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            );
        }
    }
    {
        let mut p = path.with("ModelingLabelStore.subscripts");
        stack(&mut p, visitor);
        for l in labels.values().filter(|l| !l.subscripts.is_empty()) {
            key(&mut p, visitor, "FnvHashMap[key]", id);
            leaf(&p.with("Vec[stack]"), visitor, &VEC);
            for _ in &l.subscripts {
                leaf(&p, visitor, &SCALAR_8);
            }
        }
    }
}

fn row<V: LogicalMemoryVisitor>(path: &mut Path, visitor: &mut V, names: &Names, row: &Row) {
    let [equality, stage, third] = names.fields;
    match row {
        Row::Regular(f) => {
            leaf(&path.with(equality), visitor, &ENUM);
            f.visit_logical_memory(&mut path.with(stage).with("CreatedData.function"), visitor);
        }
        Row::Indicator(f) => {
            leaf(&path.with(equality), visitor, &ENUM);
            leaf(&path.with(third).with("VariableID.0"), visitor, &SCALAR_8);
            f.visit_logical_memory(&mut path.with(stage).with("CreatedData.function"), visitor);
        }
        Row::Set(n) => {
            let mut p = path.with(third);
            leaf(&p.with("BTreeSet[stack]"), visitor, &BTREE_SET);
            for _ in 0..*n {
                leaf(&p.with("VariableID.0"), visitor, &SCALAR_8);
            }
        }
    }
}

fn collection<V: LogicalMemoryVisitor>(
    path: &mut Path,
    visitor: &mut V,
    names: &Names,
    c: &Collection,
) {
    let Collection {
        active,
        removed,
        labels: row_labels,
        provenance,
    } = c;
    {
        let mut p = path.with(names.active);
        leaf(&p.with("BTreeMap[stack]"), visitor, &BTREE_MAP);
        for r in active.values() {
            key(&mut p, visitor, "BTreeMap[key]", names.id);
            row(&mut p, visitor, names, r);
        }
    }
    {
        let mut p = path.with(names.removed);
        leaf(&p.with("BTreeMap[stack]"), visitor, &BTREE_MAP);
        for (r, reason) in removed.values() {
            key(&mut p, visitor, "BTreeMap[key]", names.id);
            row(&mut p.with("Tuple.0"), visitor, names, r);
            let mut t = p.with("Tuple.1");
            string(&t.with("RemovedReason.reason"), visitor, &reason.reason);
            string_map(
                &mut t.with("RemovedReason.parameters"),
                visitor,
                MapKind::FnvHashMap,
                reason
                    .parameters
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str())),
            );
        }
    }
    let mut context = path.with("context");
    labels(
        &mut context.with("ConstraintContextStore.labels"),
        visitor,
        names.id,
        row_labels,
    );
    let mut p = context.with("ConstraintContextStore.provenance");
    leaf(&p.with("FnvHashMap[stack]"), visitor, &FNV_HASHMAP);
    for &n in provenance.values() {
        key(&mut p, visitor, "FnvHashMap[key]", names.id);
        leaf(&p.with("Vec[stack]"), visitor, &VEC);
        for _ in 0..n {
            leaf(&p, visitor, &PROVENANCE);
        }
    }
}

fn function_map<V: LogicalMemoryVisitor>(
    path: &mut Path,
    visitor: &mut V,
    (stack_frame, stack, key_frame): (&'static str, &'static Rule, &'static str),
    id: &'static str,
    functions: &BTreeMap<u64, Func>,
    value_frame: Option<&'static str>,
) {
    leaf(&path.with(stack_frame), visitor, stack);
    for f in functions.values() {
        key(path, visitor, key_frame, id);
        match value_frame {
            Some(frame) => f.visit_logical_memory(&mut path.with(frame), visitor),
            None => f.visit_logical_memory(path, visitor),
        }
    }
}

impl LogicalMemoryProfile for Instance {
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        let Instance {
            variables,
            variable_labels,
            fixed_values,
            objective,
            regular,
            indicator,
            one_hot,
            sos1,
            dependency,
            named_functions,
            named_labels,
            description,
            parameters,
            annotations,
            output_objective,
        } = self;
        string_map(
            &mut path.with("Instance.annotations"),
            visitor,
            MapKind::HashMap,
            annotations.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        );
        for (frame, names, c) in [
            ("Instance.constraint_collection", &REGULAR, regular),
            (
                "Instance.indicator_constraint_collection",
                &INDICATOR,
                indicator,
            ),
            ("Instance.one_hot_constraint_collection", &ONE_HOT, one_hot),
            ("Instance.sos1_constraint_collection", &SOS1, sos1),
        ] {
            collection(&mut path.with(frame), visitor, names, c);
        }
        {
            let mut p = path.with("Instance.decision_variable_dependency");
            function_map(
                &mut p.with("AcyclicAssignments.assignments"),
                visitor,
                ("FnvHashMap[stack]", &FNV_HASHMAP, "FnvHashMap[key]"),
                "VariableID.0",
                &dependency.assignments,
                None,
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
            let mut p = path.with("Instance.decision_variables");
            {
                let mut e = p.with("DecisionVariableTable.entries");
                leaf(&e.with("BTreeMap[stack]"), visitor, &BTREE_MAP);
                for _ in variables {
                    key(&mut e, visitor, "BTreeMap[key]", "VariableID.0");
                    leaf(&e.with("DecisionVariable.kind"), visitor, &ENUM);
                    let mut b = e.with("DecisionVariable.bound");
                    leaf(&b.with("Bound.lower"), visitor, &SCALAR_8);
                    leaf(&b.with("Bound.upper"), visitor, &SCALAR_8);
                }
            }
            labels(
                &mut p.with("DecisionVariableTable.labels"),
                visitor,
                "VariableID.0",
                variable_labels,
            );
            let mut columns = p.with("DecisionVariableTable.columns");
            let mut f = columns.with("CreatedDecisionVariableColumns.fixed_values");
            leaf(&f.with("BTreeMap[stack]"), visitor, &BTREE_MAP);
            for _ in 0..*fixed_values {
                key(&mut f, visitor, "BTreeMap[key]", "VariableID.0");
                leaf(&f, visitor, &SCALAR_8);
            }
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
            let mut p = path.with("Instance.named_functions");
            function_map(
                &mut p.with("NamedFunctionTable.entries"),
                visitor,
                ("BTreeMap[stack]", &BTREE_MAP, "BTreeMap[key]"),
                "NamedFunctionID.0",
                named_functions,
                Some("NamedFunction.function"),
            );
            labels(
                &mut p.with("NamedFunctionTable.labels"),
                visitor,
                "NamedFunctionID.0",
                named_labels,
            );
        }
        let zero = Func::default();
        objective
            .as_ref()
            .unwrap_or(&zero)
            .visit_logical_memory(&mut path.with("Instance.objective"), visitor);
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

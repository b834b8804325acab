//! What the real-memory estimate needs of an instance, read off its logical
//! profile and what the pass gathered beside it: the logical leaves already
//! say how many terms each kind of function stores, how long the strings
//! are, how many subscripts and parameters there are; the aggregate is
//! walked once when the profile is complete (a few hundred nodes). The
//! rest, which the profile does not carry (a quadratic function's linear
//! terms, a polynomial's ids, the order of a quadratic objective's hash
//! table), the pass gathered as it read ([`Gathered`]).
//!
//! Within one path the leaves are summed, so a group (the linear functions
//! of the constraints, the names of the variables) is taken as that many
//! entities of the group's mean size: exact when they are alike (every
//! constraint of an LP with 50 terms), an approximation where sizes vary
//! across a capacity boundary (see `docs/real-memory.md`).

use crate::model::function::Variant;
use crate::profile::Aggregate;
use crate::profiled::{ByOwner, Gathered, Growth, InstanceSummary, Schema};

/// The kind of entity a value belongs to, by the first frame of its path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Owner {
    Variables,
    Objective,
    Constraints,
    /// Removed constraints (OMMX 3.0 keeps their labels with the
    /// constraints', so there only their maps' nodes and functions).
    Removed,
    /// The instance's description, parameters and whatever no entity owns.
    #[default]
    Instance,
}

impl Owner {
    fn of(frames: &[&str]) -> Owner {
        match frames {
            ["Instance.decision_variables", ..] => Owner::Variables,
            ["Instance.objective", ..] => Owner::Objective,
            ["Instance.constraints", ..] => Owner::Constraints,
            ["Instance.removed_constraints", ..] => Owner::Removed,
            ["Instance.constraint_collection", "removed_constraints", ..] => Owner::Removed,
            ["Instance.constraint_collection", ..] => Owner::Constraints,
            _ => Owner::Instance,
        }
    }
}

/// Functions of one variant on one path: how many and their stored terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Functions {
    pub variant: Variant,
    /// Where they are: the objective, the constraints or the removed ones.
    pub owner: Owner,
    pub count: u64,
    pub terms: u64,
}

impl Functions {
    /// The objective's, not a constraint's.
    pub fn in_objective(&self) -> bool {
        self.owner == Owner::Objective
    }

    /// Terms of one function of the group (the mean, rounded up).
    pub fn terms_each(&self) -> u64 {
        self.terms.div_ceil(self.count.max(1))
    }
}

/// Several values of one path: how many and their summed size (strings:
/// UTF-8 bytes; lists and maps: elements).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Group {
    pub count: u64,
    pub size: u64,
    pub owner: Owner,
    pub field: Field,
}

/// Which field of its owner a group's values are, where OMMX 2.9.3's load
/// treats them apart (the simulated load, `load29`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Field {
    Name,
    Description,
    Subscripts,
    /// A removed constraint's reason.
    RemovedReason,
    /// A parameter map, or its keys or values: an entity's `parameters`, or
    /// a removed constraint's `removed_reason_parameters`.
    Parameters(Map),
    Key(Map),
    Value(Map),
    /// The instance's description's fields, and whatever else.
    #[default]
    Other,
}

/// 3.0's frames of a removed constraint's reason and its parameters.
const REASON: &str = "RemovedReason.reason";
const REASON_PARAMETERS: &str = "RemovedReason.parameters";

/// Which parameter map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Map {
    Parameters,
    RemovedReason,
}

impl Field {
    /// The field a frame names (a map's key: `key` with the map's frame).
    fn of(frame: &str, key: bool) -> Field {
        // A removed constraint's reason and its parameters: 2.9.3's fields,
        // 3.0's `RemovedReason`'s.
        let map = if frame.ends_with(".removed_reason_parameters") || frame == REASON_PARAMETERS {
            Some(Map::RemovedReason)
        } else if frame.ends_with(".parameters") {
            Some(Map::Parameters)
        } else {
            None
        };
        match map {
            Some(map) if key => Field::Key(map),
            Some(map) => Field::Value(map),
            None if frame.starts_with("Description.") => Field::Other,
            None if frame.ends_with(".name") => Field::Name,
            None if frame.ends_with(".description") => Field::Description,
            None if frame.ends_with(".removed_reason") || frame == REASON => Field::RemovedReason,
            None if frame.ends_with(".subscripts") => Field::Subscripts,
            None => Field::Other,
        }
    }
}

impl Group {
    /// Size of one (the mean, rounded up).
    pub fn each(&self) -> u64 {
        self.size.div_ceil(self.count.max(1))
    }
}

/// The instance as far as its real memory depends on it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    pub variables: u64,
    pub constraints: u64,
    pub removed: u64,
    pub functions: Vec<Functions>,
    /// Strings, one group per path.
    pub strings: Vec<Group>,
    /// Subscript lists: how many lists and elements, one group per path.
    pub subscripts: Vec<Group>,
    /// Parameter maps (string to string): how many maps and entries.
    pub parameters: Vec<Group>,
    /// OMMX 3.0's label maps (id to name, subscripts, ...): one map each,
    /// its entries, the field it holds.
    pub label_maps: Vec<Group>,
    /// Bytes of the encoded instance.
    pub payload: u64,
    /// The schema the payload was read with, which decides OMMX 3.0's load
    /// call (`from_v1_bytes` or `from_v2_bytes`); OMMX 2.9.3 reads v1 only.
    pub schema: Schema,
    /// What the functions' loads take that the profile does not count:
    /// quadratic functions' linear terms (counted with their pairs there),
    /// polynomials' ids (the pass counts both).
    pub unprofiled: ByOwner,
    /// A quadratic objective's growths as `to_bytes` reads its table, when
    /// the pass made them ([`Gathered::objective_growths`]).
    pub objective_growths: Option<Vec<Growth>>,
    /// Leaves of 3.0's parts no recipe makes ([`unmade`]: what only v2
    /// input carries beyond variables, constraints and one function).
    pub unmade: u64,
}

/// Bytes of a `String`'s own part, before its UTF-8 bytes.
const STRING: u64 = 24;

impl Facts {
    /// Reads the facts off a complete profile (OMMX 2.9.3's frames or
    /// 3.0's: the rules below look at frame names both use) and what the
    /// pass gathered beside it.
    pub fn of(aggregate: &Aggregate, summary: &InstanceSummary, gathered: &Gathered) -> Facts {
        let mut lists = Paired::default();
        let mut maps = Paired::default();
        let mut facts = Facts {
            variables: summary.variables,
            constraints: summary.constraints,
            removed: summary.removed_constraints,
            payload: summary.wire_bytes,
            unprofiled: gathered.unprofiled,
            objective_growths: gathered.objective_growths.clone(),
            ..Facts::default()
        };
        for id in 1..aggregate.len() {
            let node = aggregate.node(id);
            if node.own_leaves == 0 {
                continue;
            }
            let frames = aggregate.frames_of(id);
            let (last, above) = frames.split_last().expect("a node below the root");
            let parent = above.last().copied();
            let (bytes, leaves) = (node.own_bytes, node.own_leaves);
            if unmade(&frames) {
                facts.unmade += leaves;
            }
            let owner = Owner::of(&frames);
            let strings = |field| Group {
                count: leaves,
                size: bytes.saturating_sub(STRING * leaves),
                owner,
                field,
            };
            match *last {
                "PolynomialBase.terms" => facts.functions.extend(functions(&frames, bytes, leaves)),
                // A map's entries: its keys are strings (its values sit at
                // the map's own path, below).
                "FnvHashMap[key]" | "HashMap[key]" if parent.is_some_and(is_string_map) => {
                    facts
                        .strings
                        .push(strings(Field::of(parent.unwrap_or_default(), true)));
                    maps.size(above, leaves);
                }
                "FnvHashMap[stack]" | "HashMap[stack]" if parent.is_some_and(is_string_map) => {
                    // 3.0: the label map of parameter maps has its own
                    // stack part on the same path as theirs.
                    let own = parent.is_some_and(|p| p.starts_with("ModelingLabelStore."));
                    maps.count(above, leaves - u64::from(own))
                }
                "Vec[stack]" if parent.is_some_and(is_list) => lists.count(above, leaves),
                // 3.0: a label map's id keys.
                frame if frame.ends_with("ID.0") && parent == Some("FnvHashMap[key]") => {
                    let store = above.len().checked_sub(2).map(|i| above[i]);
                    if let Some(field) = store.and_then(|s| s.strip_prefix("ModelingLabelStore.")) {
                        facts.label_maps.push(Group {
                            count: 1,
                            size: leaves,
                            owner,
                            field: label_field(field),
                        });
                    }
                }
                frame if is_list(frame) => lists.size(&frames, bytes / 8),
                frame if is_string_map(frame) || is_string(frame) => {
                    facts.strings.push(strings(Field::of(frame, false)))
                }
                _ => {}
            }
        }
        facts.subscripts = lists.groups();
        facts.parameters = maps.groups();
        facts
    }
}

/// Which field a 3.0 label map holds, by its `ModelingLabelStore` field.
fn label_field(field: &str) -> Field {
    match field {
        "name" => Field::Name,
        "subscripts" => Field::Subscripts,
        "description" => Field::Description,
        "parameters" => Field::Parameters(Map::Parameters),
        _ => Field::Other,
    }
}

/// The functions of one `PolynomialBase.terms` leaf path.
fn functions(frames: &[&str], bytes: u64, leaves: u64) -> Option<Functions> {
    let (variant, width) = match frames[frames.len().checked_sub(2)?] {
        "Linear" => (Variant::Linear, 24),
        "Quadratic" => (Variant::Quadratic, 32),
        "Polynomial" => (Variant::Polynomial, 48),
        _ => return None,
    };
    Some(Functions {
        variant,
        owner: Owner::of(frames),
        count: leaves,
        terms: bytes.saturating_sub(32 * leaves) / width,
    })
}

/// Lists or maps by the path that holds them: how many, from their stack
/// parts, and their elements, from the elements' leaves.
#[derive(Default)]
struct Paired(Vec<(String, Group)>);

impl Paired {
    fn at(&mut self, frames: &[&str]) -> &mut Group {
        let path = frames.join(";");
        match self.0.iter().position(|(p, _)| *p == path) {
            Some(i) => &mut self.0[i].1,
            None => {
                let owner = Owner::of(frames);
                let field = match Field::of(frames.last().copied().unwrap_or_default(), false) {
                    Field::Value(map) => Field::Parameters(map),
                    field => field,
                };
                self.0.push((
                    path,
                    Group {
                        owner,
                        field,
                        ..Group::default()
                    },
                ));
                &mut self.0.last_mut().expect("just pushed").1
            }
        }
    }

    fn count(&mut self, frames: &[&str], count: u64) {
        self.at(frames).count += count;
    }

    fn size(&mut self, frames: &[&str], size: u64) {
        self.at(frames).size += size;
    }

    /// Only the non-empty ones allocate: as many as there are elements at
    /// most.
    fn groups(self) -> Vec<Group> {
        self.0
            .into_iter()
            .filter(|(_, g)| g.size > 0)
            .map(|(_, g)| Group {
                count: g.count.clamp(1, g.size),
                ..g
            })
            .collect()
    }
}

/// Whether a leaf is of a part of 3.0's instance that no recipe makes: the
/// other constraint collections, named functions, an output objective,
/// dependent variables' assignments, fixed values, constraints'
/// provenance, a function held as an expression. Their containers' own
/// (stack) parts are in every instance, their entries only where used.
fn unmade(frames: &[&str]) -> bool {
    const PARTS: [&str; 5] = [
        "Instance.indicator_constraint_collection",
        "Instance.one_hot_constraint_collection",
        "Instance.sos1_constraint_collection",
        "Instance.named_functions",
        "Instance.output_objective",
    ];
    const FIELDS: [&str; 5] = [
        "AcyclicAssignments.assignments",
        "AcyclicAssignments.topological_order",
        "CreatedDecisionVariableColumns.fixed_values",
        "ConstraintContextStore.provenance",
        "Expression",
    ];
    let Some((last, _)) = frames.split_last() else {
        return false;
    };
    !last.ends_with("[stack]")
        && (frames.first().is_some_and(|f| PARTS.contains(f))
            || frames.iter().any(|f| FIELDS.contains(f)))
}

/// A field holding a list of integers (allocated when not empty).
fn is_list(frame: &str) -> bool {
    frame.ends_with(".subscripts")
}

/// A field holding a string.
fn is_string(frame: &str) -> bool {
    frame.ends_with(".name")
        || frame.ends_with(".description")
        || frame.ends_with(".removed_reason")
        || frame == REASON
        || frame.starts_with("Description.")
}

/// A field holding a map of strings to strings.
fn is_string_map(frame: &str) -> bool {
    frame.ends_with(".parameters") || frame.ends_with(".removed_reason_parameters")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A removed constraint's reason and its parameters are the same fields
    /// under 3.0's frames as under 2.9.3's.
    #[test]
    fn a_removed_reason_is_read_off_either_runtimes_frames() {
        let reason = Field::RemovedReason;
        let map = Map::RemovedReason;
        for (frame, key, field) in [
            ("RemovedConstraint.removed_reason", false, reason),
            ("RemovedReason.reason", false, reason),
            (
                "RemovedConstraint.removed_reason_parameters",
                true,
                Field::Key(map),
            ),
            ("RemovedReason.parameters", true, Field::Key(map)),
            ("RemovedReason.parameters", false, Field::Value(map)),
            (
                "Constraint.parameters",
                false,
                Field::Value(Map::Parameters),
            ),
        ] {
            assert_eq!(Field::of(frame, key), field, "{frame}");
            assert!(is_string(frame) || is_string_map(frame), "{frame}");
        }
    }

    /// A part no recipe makes is told by its entries, not by its empty
    /// container, which every 3.0 instance has.
    #[test]
    fn parts_no_recipe_makes_are_told_by_their_entries() {
        let indicator = "Instance.indicator_constraint_collection";
        for frames in [
            &[indicator, "indicator_constraints", "BTreeMap[key]"][..],
            &[
                "Instance.named_functions",
                "NamedFunctionTable.entries",
                "BTreeMap[key]",
            ],
            &["Instance.objective", "Expression", "Push"],
            &[
                "Instance.decision_variable_dependency",
                "AcyclicAssignments.assignments",
                "FnvHashMap[key]",
            ],
        ] {
            assert!(unmade(frames), "{frames:?}");
        }
        for frames in [
            &[indicator, "indicator_constraints", "BTreeMap[stack]"][..],
            &[
                "Instance.decision_variable_dependency",
                "AcyclicAssignments.dependency",
            ],
            &[
                "Instance.decision_variables",
                "DecisionVariableTable.entries",
                "BTreeMap[key]",
            ],
            &["Instance.objective", "Linear", "PolynomialBase.terms"],
            &["Instance.sense"],
        ] {
            assert!(!unmade(frames), "{frames:?}");
        }
    }
}

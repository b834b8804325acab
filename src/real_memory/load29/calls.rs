//! How many malloc calls the generated load makes, counted from the shape
//! without running it, so that a load too large to simulate quickly is not
//! begun. Each part counts the calls the step of the same name makes, for
//! one entity of the group (every one of a group is alike); the small
//! containers (the maps' nodes, the arena's blocks) are counted by their
//! fill rather than node by node, so the count is close, not exact
//! (`bench/simulate.rs` prints both).

use super::labels::Labels;
use super::{capacities, Blueprint, Function, Kind};
use crate::model::alloc::buckets;

/// Keys of a `BTreeMap` filled in order per node it makes (and frees).
pub(in crate::real_memory) const KEYS_PER_NODE: u64 = 5;
/// Ids per node of a bulk-built `BTreeSet`.
const IDS_PER_NODE: u64 = 11;

pub(super) fn predicted(s: &Blueprint) -> u64 {
    let per_variable = labels(&s.variable_labels);
    let per_constraint = labels(&s.constraint_labels) + function(&s.constraint, 1, s.variables);
    // Removed constraints' functions are not checked: no set of their ids.
    let per_removed = labels(&s.removed_labels) + function(&s.removed_function, 1, 0);
    // The maps' nodes: made, cloned, consumed (each freed once).
    let nodes = 4 * (s.variables + s.constraints + s.removed) / KEYS_PER_NODE;
    // The instance's Python object.
    1 + s.variables * per_variable
        + s.constraints * per_constraint
        + s.removed * per_removed
        + function(&s.objective, 0, s.variables)
        + nodes
        + 2 * id_nodes(s.variables)
}

/// An entity's labels' calls: each string decoded, cloned and both freed
/// (the decoded one with the instance, after the load), a list pushed, a
/// map's entries and tables made, replaced and freed.
fn labels(l: &Labels) -> u64 {
    let strings = [l.name, l.description, l.reason];
    let strings = 3 * strings.iter().flatten().count() as u64;
    let subscripts = l.subscripts.map_or(0, |k| pushes(k) + 3);
    let maps = [l.parameters, l.reason_parameters];
    let maps: u64 = maps.iter().flatten().map(|p| 6 * p.entries + 8).sum();
    strings + subscripts + maps
}

/// A function's calls, for `constant` ids its check leaves out and at most
/// `distinct` ids in its set: decoded, converted into its table, its ids
/// checked, cloned, encoded, all freed.
fn function(g: &Function, constant: u64, distinct: u64) -> u64 {
    if g.terms == 0 {
        return 0;
    }
    // Each vector grown, then freed; a quadratic function's linear part has
    // a vector and a table of its own; a polynomial's monomials each their
    // ids, and a long one's ids are cloned and freed once more.
    let (vectors, part, keys) = match g.kind {
        Kind::Linear => (pushes(g.linear_terms) + 1, 0, 0),
        Kind::Quadratic => {
            let vectors = 3 * (pushes(g.pairs) + 1) + pushes(g.linear_terms) + 1;
            let part = if g.linear > 0 {
                2 * table_sizes(g.linear)
            } else {
                0
            };
            (vectors, part, 0)
        }
        Kind::Polynomial => {
            let short = g.terms - g.long;
            let ids = g.long * (pushes(g.long_len) + 1) + short * (pushes(g.short_len) + 1);
            (pushes(g.terms) + 1 + ids, 0, 2 * g.long)
        }
    };
    let ids = g.ids(constant);
    let decode = vectors;
    let convert = 2 * table_sizes(g.terms) - 1 + part;
    let check = 2 + pushes(ids) + 1 + 2 * id_nodes(ids.min(distinct));
    let to_bytes = 2 + vectors + keys;
    decode + convert + check + to_bytes
}

/// Calls a pushed vector's growth makes (the first malloc, then reallocs).
pub(in crate::real_memory) fn pushes(n: u64) -> u64 {
    capacities(n).count() as u64
}

/// Tables a grown hashbrown table passes through.
pub(in crate::real_memory) fn table_sizes(items: u64) -> u64 {
    u64::from(buckets(items).max(4).trailing_zeros() - 1)
}

pub(in crate::real_memory) fn id_nodes(n: u64) -> u64 {
    n.div_ceil(IDS_PER_NODE)
}

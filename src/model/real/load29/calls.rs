//! How many malloc calls the generated load makes, counted from the shape
//! without running it, so that a load too large to simulate quickly is not
//! begun. Each part counts the calls the step of the same name makes, for
//! one entity of the group (every one of a group is alike); the small
//! containers (the maps' nodes, the arena's blocks) are counted by their
//! fill rather than node by node, so the count is close, not exact
//! (`bench/simulate.rs` prints both).

use super::super::alloc::buckets;
use super::{capacities, Function, Labels, Shape};

/// Keys of a `BTreeMap` filled in order per node it makes (and frees).
const KEYS_PER_NODE: u64 = 5;
/// Ids per node of a bulk-built `BTreeSet`.
const IDS_PER_NODE: u64 = 11;

pub(super) fn predicted(s: &Shape) -> u64 {
    let per_variable = labels(&s.variable_labels);
    let per_constraint = labels(&s.constraint_labels) + function(&s.constraint, 1, s.variables);
    // The maps' nodes: made, cloned, consumed (each freed once).
    let nodes = 4 * (s.variables + s.constraints) / KEYS_PER_NODE;
    // The instance's Python object.
    1 + s.variables * per_variable
        + s.constraints * per_constraint
        + function(&s.objective, 0, s.variables)
        + nodes
        + 2 * id_nodes(s.variables)
}

/// A label's calls: decoded, cloned and both freed.
fn labels(l: &Labels) -> u64 {
    let name = l.name.map_or(0, |_| 3);
    let subscripts = l.subscripts.map_or(0, |k| pushes(k) + 3);
    name + subscripts
}

/// A function's calls, for `constant` ids its check leaves out and at most
/// `distinct` ids in its set: decoded, converted into its table, its ids
/// checked, cloned, encoded, all freed.
fn function(g: &Function, constant: u64, distinct: u64) -> u64 {
    if g.terms == 0 {
        return 0;
    }
    // Each vector grown, then freed; a quadratic function's linear part has
    // a vector and a table of its own.
    let vectors = if g.quadratic {
        3 * (pushes(g.pairs) + 1) + pushes(g.linear_terms) + 1
    } else {
        pushes(g.terms) + 1
    };
    let part = if g.quadratic && g.linear > 0 {
        2 * table_sizes(g.linear)
    } else {
        0
    };
    let ids = g.ids(constant);
    let decode = vectors;
    let convert = 2 * table_sizes(g.terms) - 1 + part;
    let check = 2 + pushes(ids) + 1 + 2 * id_nodes(ids.min(distinct));
    let to_bytes = 2 + vectors;
    decode + convert + check + to_bytes
}

/// Calls a pushed vector's growth makes (the first malloc, then reallocs).
fn pushes(n: u64) -> u64 {
    capacities(n).count() as u64
}

/// Tables a grown hashbrown table passes through.
fn table_sizes(items: u64) -> u64 {
    u64::from(buckets(items).max(4).trailing_zeros() - 1)
}

fn id_nodes(n: u64) -> u64 {
    n.div_ceil(IDS_PER_NODE)
}

//! How many malloc calls 3.0's load makes, counted from the shape without
//! running it (as `load29/calls.rs` counts 2.9.3's, with its parts): the
//! decode, the conversion, the checks of the ids made twice, no
//! `to_bytes`; of v1 input or of v2 input (`from_v2_bytes`: its maps
//! decoded into `BTreeMap`s and consumed, its own id sets).

use super::{v2, Recipe};
use crate::profiled::Schema;
use crate::real_memory::load29;
use crate::real_memory::load29::calls::{id_nodes, pushes, table_sizes, KEYS_PER_NODE};
use crate::real_memory::load29::function::{Function, Kind};
use crate::real_memory::load29::labels::Labels;

pub(super) fn predicted(r: &Recipe) -> u64 {
    if r.schema == Schema::V2 {
        return predicted_v2(r);
    }
    let s = &r.blueprint;
    // Each label map's growths, each made and freed.
    let maps =
        |sizes: &[(u64, u64)]| -> u64 { sizes.iter().map(|&(n, _)| 2 * table_sizes(n)).sum() };
    let per_variable = labels(&s.variable_labels);
    let per_constraint = labels(&s.constraint_labels) + function(&s.constraint, 1, s.variables);
    // A removed constraint's function is converted, not checked.
    let per_removed = labels(&s.removed_labels) + converted(&s.removed_function);
    // The maps' nodes (made once; the removed ones' made, freed and made
    // again), the id sets (made and freed).
    let nodes = (s.variables + s.constraints + 3 * s.removed) / 5;
    let sets = 2 * (4 * id_nodes(s.variables) + id_nodes(s.constraints + s.removed)) + 12;
    1 + s.variables * per_variable
        + s.constraints * per_constraint
        + s.removed * per_removed
        + function(&s.objective, 0, s.variables)
        + maps(&r.variable_maps)
        + maps(&r.constraint_maps)
        + nodes
        + sets
}

/// An entity's labels' calls: each string decoded, a list pushed (3.0
/// moves them into its label maps, which `predicted` counts apart), a
/// parameter map's keys and values, its table grown, made anew and freed
/// (a removed constraint's reason's too).
fn labels(l: &Labels) -> u64 {
    let strings = [l.name, l.description, l.reason].iter().flatten().count() as u64;
    let maps = [l.parameters, l.reason_parameters];
    let maps: u64 = maps
        .iter()
        .flatten()
        .map(|p| 2 * p.entries + 2 * table_sizes(p.entries) + 2)
        .sum();
    strings + l.subscripts.map_or(0, pushes) + maps
}

/// A function's calls: decoded, converted into its table, its ids checked
/// twice.
fn function(g: &Function, constant: u64, distinct: u64) -> u64 {
    if g.terms == 0 {
        return 0;
    }
    let ids = g.ids(constant);
    let check = 2 + pushes(ids) + 1 + 2 * id_nodes(ids.min(distinct));
    converted(g) + 2 * check
}

/// A function's calls: decoded, converted into its table.
fn converted(g: &Function) -> u64 {
    if g.terms == 0 {
        return 0;
    }
    let (decode, part) = match g.kind {
        Kind::Linear => (pushes(g.linear_terms) + 1, 0),
        Kind::Quadratic => {
            let vectors = 3 * (pushes(g.pairs) + 1) + pushes(g.linear_terms) + 1;
            let part = if g.linear > 0 {
                2 * table_sizes(g.linear)
            } else {
                0
            };
            (vectors, part)
        }
        Kind::Polynomial => {
            let short = g.terms - g.long;
            let ids = g.long * (pushes(g.long_len) + 1) + short * (pushes(g.short_len) + 1);
            (pushes(g.terms) + 1 + ids, 0)
        }
    };
    decode + 2 * table_sizes(g.terms) - 1 + part
}

/// Calls of the load of v2 input: each decoded map's nodes made and freed
/// as it is consumed, each entity's labels and function, the label maps,
/// the id sets (each list, sort and set made and freed), the constraints'
/// list of pairs and the map built from it, their ids gathered once.
fn predicted_v2(r: &Recipe) -> u64 {
    let s = &r.blueprint;
    let (v, c) = (s.variables, s.constraints);
    let nodes = |n: u64| n.div_ceil(KEYS_PER_NODE);
    let maps =
        |sizes: &[(u64, u64)]| -> u64 { sizes.iter().map(|&(n, _)| 2 * table_sizes(n)).sum() };
    let entries = |sizes: &[(u64, u64)]| -> u64 { sizes.iter().map(|&(n, _)| n).sum() };
    // A set of at most `distinct` ids collected from `n` (the list made,
    // sorted and freed; the set made and freed).
    let set = |n: u64, distinct: u64| match n {
        0 => 0,
        n => 2 + sorted(n) + 2 * bulk_nodes(n.min(distinct)),
    };
    // A function's `n` ids pushed, sorted or not, made a set, all freed.
    let check = |n: u64, sort: bool| match n {
        0 => 0,
        n => pushes(n) + 1 + if sort { sorted(n) } else { 0 } + 2 * bulk_nodes(n.min(v)),
    };
    let labelled = |l: &Labels, n: u64| {
        if !v2::labelled(l) {
            return 0;
        }
        let strings = [l.name, l.description].iter().flatten().count() as u64;
        let parameters = l.parameters.map_or(0, |p| 2 * p.entries + 1 + 2);
        n * (strings + l.subscripts.map_or(0, pushes) + parameters) + 2 * nodes(n)
    };
    let variables = 3 * nodes(v)
        + labelled(&s.variable_labels, v)
        + maps(&r.variable_maps)
        + 2 * set(v, v)
        + set(entries(&r.variable_maps), v);
    let objective = match s.objective.terms {
        0 => 0,
        _ => converted(&s.objective) + 2 * check(s.objective.ids(0), true),
    };
    let constraints = match c {
        0 => 0,
        c => {
            let each = s.constraint.ids(1);
            c * (converted(&s.constraint) + 2 * check(each, false))
                + 2 * nodes(c)
                + pushes(c)
                + 1
                + sorted(c)
                + bulk_nodes(c)
                + labelled(&s.constraint_labels, c)
                + maps(&r.constraint_maps)
                + rounds(entries(&r.constraint_maps))
                    * (2 * set(c, c) + set(entries(&r.constraint_maps), c))
                + u64::from(64 - c.leading_zeros())
                + set(c * each, v)
        }
    };
    2 + objective + variables + constraints
}

/// Times the constraints' ids are checked as a whole: twice where they
/// have labels (`v2::check_constraint_ids`).
fn rounds(labelled: u64) -> u64 {
    if labelled > 0 {
        2
    } else {
        1
    }
}

/// Calls of Rust's sort of `n` ids: its scratch made and freed, where it is
/// not on the stack.
fn sorted(n: u64) -> u64 {
    if load29::sort_scratch(n, 8) > 4096 {
        2
    } else {
        0
    }
}

/// Nodes of a `BTreeMap` bulk-built from `n` entries (`parts::bulk_tree`):
/// each leaf takes 11 and hands one up, each level likewise.
fn bulk_nodes(n: u64) -> u64 {
    let (mut nodes, mut keys) = (0, n);
    while keys > 0 {
        let level = keys / 12 + 1;
        nodes += level;
        keys = level - 1;
    }
    nodes
}

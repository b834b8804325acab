//! OMMX 3.0.0b7 in Python: `ommx.Instance.from_v1_bytes(b)` decodes the
//! same prost message as 2.9.3 and converts it into 3.0's instance: entities
//! in `BTreeMap`s of small values (24 bytes a variable, 48 a constraint),
//! their labels in per-instance hash maps keyed by id, the functions in the
//! same hashbrown tables. There is no `to_bytes` round trip and no Python
//! message: the load is the parse alone. Sizes were read from allocation
//! traces (the 3.0 extension is stripped of debug information).

use super::facts::Facts;
use super::mem::{Allocator, INTERPRETER_THRESHOLD};
use super::ommx29::{by_owner, labels, largest_growth, owned, owned_total, Copy, Message};
use super::{settle, Estimate, Moment};
use crate::model::alloc::{mapped, table};

/// The values of the entity maps: a variable (kind and bound), a
/// constraint, a removed constraint (with its reason), in bytes.
const VARIABLE: u64 = 24;
const CONSTRAINT: u64 = 48;
const REMOVED: u64 = 104;
/// An entry of a label map: an id and a `String`, `Vec` or map.
const LABEL_ENTRY: u64 = 32;

/// The heap's holes, a share of its high-water mark: calibrated apart from
/// 2.9.3's (the parse alone leaves more holes than 2.9.3's round trip, whose
/// later phases fill them).
const FRAGMENTATION_PERCENT: u64 = 25;

pub fn estimate(f: &Facts) -> Estimate {
    let message = Message::of(f, Allocator::after_freeing(INTERPRETER_THRESHOLD));
    let a = Allocator::after_freeing(message.largest.max(INTERPRETER_THRESHOLD));
    let labels = labels(f, a, Copy::Decoded);
    // The entity maps, the functions' tables, the labels and the label maps.
    let owned = owned(
        f,
        a,
        [VARIABLE, CONSTRAINT, REMOVED],
        f.label_maps
            .iter()
            .map(|m| (m.owner, a.one(table(m.size, LABEL_ENTRY)))),
    );
    let held = owned_total(&owned);
    // The end of the conversion: the strings and lists moved over, the
    // entity vectors and term lists not yet freed, the largest table's
    // growth.
    let parse = message.total.max(
        message.total - message.containers - message.terms - labels + held + largest_growth(f, a),
    );
    settle(
        &[Moment {
            live: parse,
            pinned: true,
        }],
        held,
        by_owner(&owned),
        mapped(f.payload),
        a.trim_threshold(),
        FRAGMENTATION_PERCENT,
    )
}

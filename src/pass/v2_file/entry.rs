//! One map entry of an `ommx.v2` table, decoded exactly as prost decodes
//! it: the encoding every writer emits (the key, then the value, each
//! once) read on the wire, and a label's fields read there too unless it
//! has parameters; anything else decoded by prost's own map decoding.

use std::collections::BTreeMap;

use prost::encoding::{btree_map, message, uint64, DecodeContext};
use prost::Message;

use crate::model::ommx30::{Piece, WireLabel};
use crate::profile::replay::Tally;
use crate::profile::{Aggregate, LogicalMemoryProfile, Path};
use crate::wire::fields::map_entry;
use crate::wire::fields::v2::{context, label};
use crate::wire::packed::count_varints;
use crate::wire::{tag, varint, Fields, Value, WireType};

/// One map entry's key and value (its length prefix and body), as prost
/// decodes it.
pub(super) fn entry<V: Message + Default>(bytes: &[u8]) -> Option<(u64, V)> {
    let mut map = BTreeMap::new();
    let mut buf = bytes;
    btree_map::merge(
        uint64::merge,
        message::merge,
        &mut map,
        &mut buf,
        DecodeContext::default(),
    )
    .ok()?;
    map.into_iter().next()
}

/// One `map<uint64, double>` entry.
pub(super) fn number_entry(bytes: &[u8]) -> Option<(u64, f64)> {
    let mut map = BTreeMap::new();
    let mut buf = bytes;
    btree_map::merge(
        uint64::merge,
        prost::encoding::double::merge,
        &mut map,
        &mut buf,
        DecodeContext::default(),
    )
    .ok()?;
    map.into_iter().next()
}

/// The key and the value's body of an entry (its length prefix and body)
/// encoded as writers encode one: the key field, then the value field,
/// each at most once (prost leaves out a zero key and an empty value),
/// nothing else. `None` for any other encoding, which prost then decodes.
pub(super) fn plain(bytes: &[u8]) -> Option<(u64, &[u8])> {
    const KEY: u8 = tag(map_entry::KEY, WireType::Varint);
    const VALUE: u8 = tag(map_entry::VALUE, WireType::Len);
    let mut pos = 0;
    let len = varint(bytes, &mut pos)?;
    let body = &bytes[pos..];
    (usize::try_from(len).ok()? == body.len()).then_some(())?;
    let mut at = 0;
    let mut key = 0;
    if body.first() == Some(&KEY) {
        at = 1;
        key = varint(body, &mut at)?;
    }
    let mut value: &[u8] = &[];
    if at < body.len() {
        (body[at] == VALUE).then_some(())?;
        at += 1;
        let n = usize::try_from(varint(body, &mut at)?).ok()?;
        value = body.get(at..at.checked_add(n)?)?;
        at += n;
    }
    (at == body.len()).then_some((key, value))
}

/// An entry's key and value as [`entry`] gives them, without a map: the
/// plain encoding's value decoded by prost alone (a `DecisionVariable`, or
/// any entry an entity is built from), any other entry by prost's map
/// decoding.
pub(super) fn small_message<V: Message + Default>(bytes: &[u8]) -> Option<(u64, V)> {
    match plain(bytes) {
        Some((id, value)) => Some((id, V::decode(value).ok()?)),
        None => entry(bytes),
    }
}

/// A string field as prost reads it: valid UTF-8.
fn text(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes).ok()
}

/// A `ModelingLabel`'s body read as prost reads it (a string given twice
/// keeps the last; subscripts packed, unpacked or both; unknown fields
/// skipped); `None` for a label with parameters, a wrong wire type or a
/// group, which prost then decodes.
pub(super) fn wire_label(body: &[u8]) -> Option<WireLabel<'_>> {
    let mut l = WireLabel::default();
    let mut fields = Fields::new(body);
    while let Some(field) = fields.next_field().ok()? {
        match field {
            (label::NAME, Value::Len(s)) => l.name = Some(text(s)?),
            (label::SUBSCRIPTS, Value::Len(packed)) => {
                l.subscripts += count_varints(packed).ok()?
            }
            (label::SUBSCRIPTS, Value::Varint(..)) => l.subscripts += 1,
            (label::DESCRIPTION, Value::Len(s)) => l.description = Some(text(s)?),
            (label::NAME..=label::DESCRIPTION, _) => return None,
            _ => {}
        }
    }
    Some(l)
}

/// A `ConstraintContext`'s body with no provenance: its label read on the
/// wire, if any; `None` for one with a provenance, a label given twice
/// (which prost merges) or anything [`wire_label`] leaves to prost.
pub(super) fn wire_context(body: &[u8]) -> Option<Option<WireLabel<'_>>> {
    let mut found = None;
    let mut fields = Fields::new(body);
    while let Some(field) = fields.next_field().ok()? {
        match field {
            (context::LABEL, Value::Len(l)) if found.is_none() => found = Some(wire_label(l)?),
            (context::LABEL | context::PROVENANCE, _) => return None,
            _ => {}
        }
    }
    Some(found)
}

/// A map entry's value (field 2) when the entry holds it once.
pub(super) fn single_value(entry: &[u8]) -> Option<&[u8]> {
    let mut pos = 0;
    varint(entry, &mut pos)?;
    let mut fields = Fields::new(&entry[pos..]);
    let mut value = None;
    while let Some(field) = fields.next_field().ok()? {
        match field {
            (map_entry::VALUE, Value::Len(body)) => value.replace(body).is_none().then_some(())?,
            (map_entry::VALUE, _) => return None,
            _ => {}
        }
    }
    value
}

/// A map entry's key (field 1), as prost reads it: the last one, 0 when
/// absent.
pub(super) fn entry_key(bytes: &[u8]) -> Option<u64> {
    let mut key_value = 0;
    let mut pos = 0;
    varint(bytes, &mut pos)?;
    while pos < bytes.len() {
        let (number, wire_type) = crate::wire::key(varint(bytes, &mut pos)?).ok()?;
        match wire_type {
            WireType::Varint => {
                let v = varint(bytes, &mut pos)?;
                if number == map_entry::KEY {
                    key_value = v;
                }
            }
            WireType::Len => {
                let len = usize::try_from(varint(bytes, &mut pos)?).ok()?;
                pos = pos.checked_add(len)?;
            }
            WireType::Fixed64 => pos += 8,
            WireType::Fixed32 => pos += 4,
            _ => return None,
        }
    }
    (pos == bytes.len()).then_some(key_value)
}

/// Visits `piece` under `path` into `aggregate`, counted by its key in
/// `pieces` where one determines its leaves (a window's state, in the
/// variables' table and in a constraint collection alike).
pub(super) fn visit_piece(
    aggregate: &mut Aggregate,
    path: &mut Path,
    pieces: &mut Tally,
    piece: Piece<'_>,
) {
    pieces.count(piece.key(), aggregate, |visitor| {
        piece.visit_logical_memory(path, &mut { visitor })
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::SplitMix64;
    use crate::ommx_v2 as pb;

    fn random_label(rng: &mut SplitMix64) -> pb::ModelingLabel {
        let text = |rng: &mut SplitMix64| {
            rng.chance(2)
                .then(|| "é".repeat(rng.below(3) as usize) + &"x".repeat(rng.below(200) as usize))
        };
        pb::ModelingLabel {
            name: text(rng),
            subscripts: (0..[0, 1, 3, 70][rng.below(4) as usize])
                .map(|_| [0, 5, 1_000, -1][rng.below(4) as usize])
                .collect(),
            parameters: match rng.chance(5) {
                true => [("k".to_string(), "v".to_string())].into(),
                false => Default::default(),
            },
            description: text(rng),
        }
    }

    /// Labels and contexts read on the wire as prost reads them, or left
    /// to it; entries in the plain encoding read with the key and value
    /// prost's map decoding gives, whatever bytes are changed or added.
    #[test]
    fn entries_read_on_the_wire_as_prost_reads_them() {
        let mut rng = SplitMix64(11);
        let (mut labels, mut plains) = (0, 0);
        for round in 0..20_000 {
            let l = random_label(&mut rng);
            let mut body = l.encode_to_vec();
            match rng.below(4) {
                0 | 1 => {}
                2 if !body.is_empty() => {
                    let at = rng.below(body.len() as u64) as usize;
                    body[at] = rng.next() as u8;
                }
                _ => body.extend(random_label(&mut rng).encode_to_vec()),
            }
            let prost = pb::ModelingLabel::decode(body.as_slice()).ok();
            if let Some(w) = wire_label(&body) {
                labels += 1;
                let p = prost
                    .as_ref()
                    .expect("prost reads what the wire reader reads");
                assert!(p.parameters.is_empty(), "round {round}");
                assert_eq!(w.name, p.name.as_deref(), "round {round}");
                assert_eq!(w.description, p.description.as_deref(), "round {round}");
                assert_eq!(w.subscripts, p.subscripts.len(), "round {round}");
            }
            let c = pb::ConstraintContext {
                label: rng.chance(2).then_some(l),
                provenance: Vec::new(),
            };
            let cbody = c.encode_to_vec();
            if let Some(w) = wire_context(&cbody) {
                assert_eq!(w.is_some(), c.label.is_some(), "round {round}");
            }
            // An entry of the context, maybe changed.
            let id = [0, 1, 300, u64::MAX][rng.below(4) as usize];
            let mut map = BTreeMap::new();
            map.insert(id, c.clone());
            let mut field = Vec::new();
            btree_map::encode(
                uint64::encode,
                uint64::encoded_len,
                message::encode,
                message::encoded_len,
                1,
                &map,
                &mut field,
            );
            let mut pos = 0;
            varint(&field, &mut pos).unwrap();
            let mut bytes = field[pos..].to_vec();
            if rng.chance(3) && bytes.len() > 1 {
                let at = 1 + rng.below(bytes.len() as u64 - 1) as usize;
                bytes[at] = rng.next() as u8;
            }
            let by_prost = entry::<pb::ConstraintContext>(&bytes);
            if let Some((key, value)) = plain(&bytes) {
                plains += 1;
                let decoded = pb::ConstraintContext::decode(value).ok();
                assert_eq!(by_prost, decoded.map(|v| (key, v)), "round {round}");
            }
        }
        assert!(labels > 5_000 && plains > 5_000, "{labels} {plains}");
    }
}

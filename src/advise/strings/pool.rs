//! The distinct strings of an instance, counted by role, for the
//! duplicate-strings rule.

use super::{
    Role, RoleSet, DUPLICATES, REMOVED_ROLES, ROLE_ANNOTATIONS_30, ROLE_ANNOTATION_KEY,
    ROLE_ANNOTATION_VALUE, ROLE_AUTHOR, ROLE_DESCRIPTION, ROLE_DESCRIPTION_30, ROLE_PATHS,
    ROLE_PATHS_30, ROLE_REASON, ROLE_REASON_KEY, ROLE_REASON_VALUE, VARIABLE_ROLES,
};
use crate::advise::details;
use crate::advise::hash::bytes128;
use crate::advise::Change;
use crate::advise::EntityKind;
use crate::advise::Finding;
use crate::advise::Measure;
use crate::advise::Owner;
use crate::advise::Sample;
use crate::advise::SAMPLES;
use crate::ids::BuildIdHasher;
use crate::model::labels;
use crate::model::ommx30::{Label, Reason};
use crate::model::Constraint;
use crate::model::DecisionVariable;
use crate::model::Name;
use crate::model::RemovedConstraint;
use crate::pass::Singular;
use crate::units::exact;
use crate::units::thousands;
use serde_json::json;
use std::collections::BTreeMap;
use std::collections::HashMap;

/// The longest text [`Name`] holds inline.
const INLINE: usize = std::mem::size_of::<Name>();

/// One distinct string: how often, where, and (once it repeats) its text.
#[derive(Debug, Clone)]
struct Entry {
    count: u64,
    len: u64,
    roles: u32,
    first_kind: Owner,
    first_id: Option<u64>,
    /// Kept from the second occurrence on: only repeated text is held.
    text: Option<Box<str>>,
}

/// Every non-empty metadata string, by fingerprint.
#[derive(Debug, Default, Clone)]
pub struct StringPool {
    /// The distinct strings in the order first seen.
    entries: Vec<Entry>,
    /// Where each fingerprint's entry is in `entries`.
    index: HashMap<u128, usize, BuildIdHasher>,
    /// The last string added, where its text is short enough to hold
    /// inline, and its entry: a family's entities come one after another
    /// with the same name, which then costs one comparison (on a 1M-variable
    /// LP of `x`s, fingerprinting each took 2% of `report`'s time).
    last: Option<(Name, usize)>,
    /// Roles index OMMX 3.0's paths ([`ROLE_PATHS_30`]), not 2.9.3's.
    v3: bool,
}

impl StringPool {
    fn add(&mut self, text: &str, role: Role, kind: Owner, id: Option<u64>) {
        if text.is_empty() {
            return;
        }
        let at = match &self.last {
            Some((last, at)) if last.as_str() == text => *at,
            _ => {
                let at = *self
                    .index
                    .entry(bytes128(text.as_bytes()))
                    .or_insert(self.entries.len());
                if at == self.entries.len() {
                    self.entries.push(Entry {
                        count: 0,
                        len: text.len() as u64,
                        roles: 0,
                        first_kind: kind,
                        first_id: id,
                        text: None,
                    });
                }
                // Held inline: a longer text is not worth a copy each time.
                self.last = (text.len() <= INLINE).then(|| (Name::new(text), at));
                at
            }
        };
        let entry = &mut self.entries[at];
        entry.count += 1;
        entry.roles |= 1 << role;
        if entry.count == 2 {
            entry.text = Some(text.into());
        }
    }

    fn entity(
        &mut self,
        kind: Owner,
        id: u64,
        roles: &RoleSet,
        name: Option<&str>,
        description: Option<&str>,
        parameters: &BTreeMap<String, String>,
    ) {
        if let Some(name) = name {
            self.add(name, roles.name, kind, Some(id));
        }
        if let Some(description) = description {
            self.add(description, roles.description, kind, Some(id));
        }
        for (key, value) in parameters {
            self.add(key, roles.key, kind, Some(id));
            self.add(value, roles.value, kind, Some(id));
        }
    }

    pub fn variable(&mut self, v: &DecisionVariable) {
        self.entity(
            Owner::Entity(EntityKind::Variable),
            v.id,
            &VARIABLE_ROLES,
            v.name.as_deref(),
            v.description.as_deref(),
            &v.parameters,
        );
    }

    pub fn constraint(&mut self, c: &Constraint, kind: Owner, roles: &RoleSet) {
        self.entity(
            kind,
            c.id,
            roles,
            c.name.as_deref(),
            c.description.as_deref(),
            &c.parameters,
        );
    }

    pub fn removed(&mut self, r: &RemovedConstraint) {
        let kind = Owner::Entity(EntityKind::Removed);
        let id = Some(r.constraint.id);
        self.constraint(&r.constraint, kind, &REMOVED_ROLES);
        self.add(&r.removed_reason, ROLE_REASON, kind, id);
        for (key, value) in &r.removed_reason_parameters {
            self.add(key, ROLE_REASON_KEY, kind, id);
            self.add(value, ROLE_REASON_VALUE, kind, id);
        }
    }

    /// For OMMX 3.0's layout: roles index [`ROLE_PATHS_30`].
    pub fn new_v3() -> Self {
        Self {
            v3: true,
            ..Self::default()
        }
    }

    /// OMMX 3.0: a label's strings, stored where `role` says.
    pub fn label_v3(&mut self, label: &Label, role: Role, kind: Owner, id: u64) {
        let id = Some(id);
        for text in [label.name.as_deref(), label.description.as_deref()]
            .into_iter()
            .flatten()
        {
            self.add(text, role, kind, id);
        }
        for (key, value) in &label.parameters {
            self.add(key, role, kind, id);
            self.add(value, role, kind, id);
        }
    }

    /// OMMX 3.0: a removed row's reason and its parameters.
    pub fn reason_v3(&mut self, reason: &Reason, role: Role, kind: Owner, id: u64) {
        let id = Some(id);
        self.add(&reason.reason, role, kind, id);
        for (key, value) in &reason.parameters {
            self.add(key, role, kind, id);
            self.add(value, role, kind, id);
        }
    }

    /// OMMX 3.0: the instance's description and annotations.
    pub fn instance_v3(
        &mut self,
        description: Option<&crate::ommx_v1::instance::Description>,
        annotations: &BTreeMap<String, String>,
    ) {
        let kind = Owner::Instance;
        if let Some(d) = description {
            let texts = [&d.name, &d.description, &d.created_by];
            for text in texts.into_iter().flatten().chain(&d.authors) {
                self.add(text, ROLE_DESCRIPTION_30, kind, None);
            }
        }
        for (key, value) in annotations {
            self.add(key, ROLE_ANNOTATIONS_30, kind, None);
            self.add(value, ROLE_ANNOTATIONS_30, kind, None);
        }
    }

    pub fn instance(&mut self, singular: &Singular<'_>) {
        let kind = Owner::Instance;
        if let Some(d) = &singular.description.0 {
            let texts = [
                &d.name,
                &d.description,
                &d.created_by,
                &d.created,
                &d.license,
                &d.dataset,
            ];
            for text in texts.into_iter().flatten() {
                self.add(text, ROLE_DESCRIPTION, kind, None);
            }
            for author in &d.authors {
                self.add(author, ROLE_AUTHOR, kind, None);
            }
        }
        for (key, value) in &singular.annotations.0 {
            self.add(key, ROLE_ANNOTATION_KEY, kind, None);
            self.add(value, ROLE_ANNOTATION_VALUE, kind, None);
        }
    }

    /// Saving if each distinct string's text were stored once, a layout
    /// OMMX does not offer: every occurrence keeps its `String` handle (now
    /// shared), the repeated copies of the text go, `(count - 1) * len` per
    /// string.
    pub fn finding(&self) -> Option<Finding> {
        let mut repeated: Vec<(&Entry, u64)> = Vec::new();
        let (mut concerned, mut saving, mut occurrences, mut roles) = (0, 0, 0, 0u32);
        for entry in self.entries.iter().filter(|e| e.count > 1) {
            let save = (entry.count - 1) * entry.len;
            concerned += entry.count * labels::string(entry.len as usize);
            saving += save;
            occurrences += entry.count;
            roles |= entry.roles;
            repeated.push((entry, save));
        }
        if saving == 0 {
            return None;
        }
        let distinct = repeated.len();
        repeated.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.text.cmp(&b.0.text)));
        let sample = repeated
            .iter()
            .take(SAMPLES)
            .map(|(e, save)| {
                let text = e.text.as_deref().unwrap_or_default();
                Sample {
                    entity: e.first_kind.label(),
                    id: e.first_id,
                    name: None,
                    detail: format!(
                        "{:?} is stored {} times, {} of it repeated; first here",
                        super::super::quote(text),
                        thousands(e.count),
                        exact(*save)
                    ),
                }
            })
            .collect();
        let table: &[&str] = if self.v3 { &ROLE_PATHS_30 } else { &ROLE_PATHS };
        let paths = (0..table.len())
            .filter(|r| roles & (1 << r) != 0)
            .map(|r| table[r].to_string())
            .collect();
        Some(Finding {
            rule: DUPLICATES,
            change: Change::NotInOmmx,
            measure: Measure::Logical,
            title: format!(
                "{} {} stored {} times; the repeats take {}, which a layout that stores each \
                 string once would not (OMMX keeps every copy)",
                thousands(distinct as u64),
                if distinct == 1 {
                    "string is"
                } else {
                    "distinct strings are"
                },
                thousands(occurrences),
                exact(saving)
            ),
            bytes_concerned: concerned,
            saving_bytes: saving,
            paths,
            sample,
            suggestion: "OMMX has no shared strings (a layout OMMX does not offer: an interned \
                string or an index into a string table would store each once). In OMMX, a \
                name repeated across many entities often fits better as one name with \
                subscripts, and leaving labels out (metadata-overhead) removes the repeats \
                with the rest."
                .to_string(),
            details: details([
                ("distinct_repeated_strings", json!(distinct)),
                ("occurrences", json!(occurrences)),
            ]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::SplitMix64;

    /// Runs of one text, short and long (past what the last-text check
    /// holds), each counted as a map of texts counts it.
    #[test]
    fn every_text_is_counted_whether_it_repeats_the_last_or_not() {
        let texts = [
            "x",
            "y",
            "",
            "exactly twenty-four byte",
            "a name longer than twenty-four bytes",
        ];
        assert_eq!(texts[3].len(), INLINE);
        let mut rng = SplitMix64(3);
        let mut pool = StringPool::default();
        let mut expected: HashMap<&str, (u64, Option<u64>, u32)> = HashMap::new();
        for id in 0..2_000 {
            let text = texts[rng.below(texts.len() as u64) as usize];
            let role = rng.below(3) as Role;
            pool.add(text, role, Owner::Entity(EntityKind::Variable), Some(id));
            if !text.is_empty() {
                let e = expected.entry(text).or_insert((0, Some(id), 0));
                e.0 += 1;
                e.2 |= 1 << role;
            }
        }
        assert_eq!(pool.entries.len(), expected.len());
        for (text, (count, first_id, roles)) in expected {
            let entry = &pool.entries[pool.index[&bytes128(text.as_bytes())]];
            let found = (entry.count, entry.first_id, entry.roles, entry.len);
            assert_eq!(
                found,
                (count, first_id, roles, text.len() as u64),
                "{text:?}"
            );
            assert_eq!(entry.text.as_deref(), (count > 1).then_some(text));
        }
    }
}

//! Rules on functions: `identical-functions` (constraints whose functions
//! are equal, or equal up to a scalar factor), `representation-csr` (bytes
//! per stored term against a compressed-sparse-row layout),
//! `representation-variant` (functions kept in a costlier variant than their
//! degree needs) and `wasted-file-bytes` (terms in the file that OMMX drops
//! or merges on load).
//!
//! Functions are compared by fingerprint (see [`super::hash`]): the sum of
//! one fingerprint per stored monomial, so a linear function stored as
//! Linear or as Polynomial compares equal. "Up to a scalar factor" divides
//! every coefficient by the pivot's (the coefficient of the smallest
//! monomial: lowest degree, then smallest ids) and rounds the quotient to 32
//! significant bits, so `2x + 4y` and `x + 2y` match; exact equality uses the
//! coefficients' bits. Only one entry per distinct function is kept.

use std::collections::{HashMap, HashSet};

use serde_json::json;

use super::{details, sample, Change, EntityKind, Finding, Measure, Owner, Samples};
use crate::ids::BuildIdHasher;
use crate::model::elsewhere::{CSR_COEFFICIENT, CSR_ID, CSR_ROW, SHARE_HANDLE};
use crate::model::function::{Shape, Variant};
use crate::model::{labels, Constraint, FileWaste, Function, Name};
use crate::pages::{HugeTables, HugeVec, HUGE_PAGE};
use crate::pass::{NamedFunction, Singular};
use crate::units::{count, exact, thousands};
mod shape;
use shape::{shape, VariantTraits};

pub const IDENTICAL: &str = "identical-functions";
pub const MATRIX: &str = "representation-csr";
pub const VARIANTS: &str = "representation-variant";
pub const WASTED: &str = "wasted-file-bytes";

/// "2 zero terms and 1 merged term", leaving out a count of none.
fn terms_dropped(zero: u64, merged: u64, merged_word: &str) -> String {
    let zero = count(zero, "zero-coefficient term", "zero-coefficient terms");
    let merged = count(
        merged,
        &format!("{merged_word} term"),
        &format!("{merged_word} terms"),
    );
    match (zero.starts_with("0 "), merged.starts_with("0 ")) {
        (false, false) => format!("{zero} and {merged}"),
        (true, false) => merged,
        _ => zero,
    }
}

/// Bytes one more stored term costs in `variant`.
fn per_term(variant: Variant) -> u64 {
    let of = |stored_terms| {
        labels::function(Shape {
            variant,
            stored_terms,
            unprofiled: Default::default(),
        })
    };
    of(1) - of(0)
}

/// Constraints sharing one function up to a scalar factor.
///
/// There is about one group per row, so its size is the rule's memory: 72
/// bytes, with the fingerprints in parts (a `u128` field would align the
/// group to 16 bytes, and pad it to 96).
#[derive(Debug, Clone)]
struct Group {
    /// The high half of the fingerprint of their function up to a scalar
    /// factor.
    key_high: u64,
    /// The upper 32 bits of its low half ([`Groups`]' index holds the
    /// lowest 32).
    key_mid: u32,
    members: u64,
    sum: u64,
    min: u64,
    first_id: u64,
    first_pivot: f64,
    /// The first member's exact fingerprint, low half first.
    first_exact: [u64; 2],
    /// The kinds of entity among the members.
    kinds: u8,
    first_kind: Owner,
}

const _: () = assert!(std::mem::size_of::<Group>() == 72);

/// A fingerprint's halves, low half first.
fn halves(fingerprint: u128) -> [u64; 2] {
    [fingerprint as u64, (fingerprint >> 64) as u64]
}

/// The parts of a fingerprint a [`Group`] holds: its high half, and the
/// upper 32 bits of its low half.
fn key_parts(key: u128) -> (u64, u32) {
    (halves(key)[1], (key >> 32) as u32)
}

impl Group {
    /// Whether `key` is its fingerprint, given that its lowest 32 bits are.
    fn is(&self, key: u128) -> bool {
        (self.key_high, self.key_mid) == key_parts(key)
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Sums {
    functions: u64,
    terms: u64,
    bytes: u64,
    other: u64,
}

/// Function paths by entity kind, for a recommendation's `paths`: OMMX
/// 2.9.3's, or OMMX 3.0's (`v3`).
fn function_path(kind: Owner, v3: bool) -> &'static str {
    if v3 {
        return match kind {
            Owner::Instance | Owner::Entity(EntityKind::Objective) => "Instance.objective",
            Owner::Entity(EntityKind::Removed) => {
                "Instance.constraint_collection;removed_constraints;Tuple.0;Constraint.stage;CreatedData.function"
            }
            Owner::Entity(EntityKind::NamedFunction) => {
                "Instance.named_functions;NamedFunctionTable.entries;NamedFunction.function"
            }
            Owner::Entity(EntityKind::Indicator) => {
                "Instance.indicator_constraint_collection;indicator_constraints;IndicatorConstraint.stage;CreatedData.function"
            }
            Owner::Entity(EntityKind::RemovedIndicator) => {
                "Instance.indicator_constraint_collection;removed_indicator_constraints;Tuple.0;IndicatorConstraint.stage;CreatedData.function"
            }
            // Regular rows; one-hot and SOS1 rows hold no function.
            _ => "Instance.constraint_collection;constraints;Constraint.stage;CreatedData.function",
        };
    }
    match kind {
        Owner::Entity(EntityKind::Removed) => {
            "Instance.removed_constraints;RemovedConstraint.constraint;Constraint.function"
        }
        Owner::Instance | Owner::Entity(EntityKind::Objective) => "Instance.objective",
        Owner::Entity(EntityKind::NamedFunction) => {
            "Instance.named_functions (not counted by OMMX 2.9.3)"
        }
        // OMMX 2.9.3 has no other kind of constraint.
        _ => "Instance.constraints;Constraint.function",
    }
}

const KINDS: [Owner; 6] = [
    Owner::Instance,
    Owner::Entity(EntityKind::Constraint),
    Owner::Entity(EntityKind::Removed),
    Owner::Entity(EntityKind::NamedFunction),
    Owner::Entity(EntityKind::Indicator),
    Owner::Entity(EntityKind::RemovedIndicator),
];

fn kind_bit(kind: Owner) -> u8 {
    1 << KINDS.iter().position(|k| *k == kind).unwrap_or(0)
}

fn paths(mask: u8, v3: bool) -> Vec<String> {
    KINDS
        .iter()
        .filter(|k| mask & kind_bit(**k) != 0)
        .map(|k| function_path(*k, v3).to_string())
        .collect()
}

/// What one recommendation has seen so far: its sums, the kinds of entity
/// they come from, and sample entities.
#[derive(Debug, Default, Clone)]
struct Tally {
    sums: Sums,
    kinds: u8,
    samples: Samples,
}

impl Tally {
    /// Counts one function of an entity of `kind`.
    fn count(&mut self, kind: Owner, terms: u64, bytes: u64, other: u64) {
        self.sums.functions += 1;
        self.sums.terms += terms;
        self.sums.bytes += bytes;
        self.sums.other += other;
        self.kinds |= kind_bit(kind);
    }
}

/// How many groups the first block of [`Groups`] holds: an instance with
/// fewer rows keeps its groups in the global allocator's memory.
const FIRST_BLOCK: usize = 4096;

/// How many groups each later block holds: as many as fill a huge page
/// ([`HugeTables`]).
const HUGE_BLOCK: usize = HUGE_PAGE / std::mem::size_of::<Group>();

/// One slot of [`Groups`]' index: the lowest 32 bits of a group's
/// fingerprint and its place.
#[derive(Debug, Clone, Copy)]
struct Slot {
    low: u32,
    at: u32,
}

/// The index's hash of a fingerprint whose lowest 32 bits are `low`: the
/// bits are uniform already, the multiply spreads them to the top bits the
/// table also uses. A slot holds all it needs to be placed again.
fn slot_hash(low: u32) -> u64 {
    u64::from(low).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// The groups of functions equal up to a scalar factor, in the order their
/// first members came, in blocks that never move; found by an index of
/// 8-byte slots (the lowest 32 bits of a fingerprint, the group's place),
/// whose group holds the rest of the fingerprint; the groups past the
/// 2³²nd, which no slot can place, by a map of whole fingerprints.
///
/// Most rows of an instance are distinct functions, so there are about as
/// many groups as rows. Kept in one table, every growth wrote a table of
/// twice their size into fresh memory (on a 200k-row LP, a sixth of
/// `advise`'s time); here only the index grows that way, at a ninth of
/// the size, and the groups are written once. Past the first block both
/// are in huge pages. With slots of 16 bytes (whole low halves and 64-bit
/// places) `report` on a 200k-row LP took 1.03 of the time.
#[derive(Debug, Default, Clone)]
struct Groups {
    index: hashbrown::HashTable<Slot, HugeTables>,
    beyond: HashMap<u128, u64, BuildIdHasher>,
    blocks: Vec<HugeVec<Group>>,
    /// How many groups there are.
    len: u64,
}

impl Groups {
    /// The group of fingerprint `key`, made by `make` if there is none.
    fn entry(&mut self, key: u128, make: impl FnOnce() -> Group) -> &mut Group {
        let Self {
            index,
            beyond,
            blocks,
            len,
        } = self;
        let low = key as u32;
        let hash = slot_hash(low);
        let slotted = index.find(hash, |s| {
            s.low == low && Self::at(blocks, s.at.into()).is(key)
        });
        // Once a group lies past what a slot can place, every new one does.
        let at = match (slotted, u32::try_from(*len)) {
            (Some(s), _) => u64::from(s.at),
            (None, Ok(at)) if beyond.is_empty() => {
                index.insert_unique(hash, Slot { low, at }, |s| slot_hash(s.low));
                *len
            }
            (None, _) => *beyond.entry(key).or_insert(*len),
        };
        if at == *len {
            if blocks.last().is_none_or(|b| b.len() == b.capacity()) {
                let size = if blocks.is_empty() {
                    FIRST_BLOCK
                } else {
                    HUGE_BLOCK
                };
                blocks.push(HugeVec::with_capacity_in(size, HugeTables));
            }
            let block = blocks.last_mut().expect("a block with room");
            block.push(make());
            *len += 1;
        }
        let (block, offset) = Self::split(at);
        &mut blocks[block][offset]
    }

    /// The block and the place in it of the group at `at`.
    fn split(at: u64) -> (usize, usize) {
        let at = at as usize;
        match at.checked_sub(FIRST_BLOCK) {
            None => (0, at),
            Some(later) => (1 + later / HUGE_BLOCK, later % HUGE_BLOCK),
        }
    }

    fn at(blocks: &[HugeVec<Group>], at: u64) -> &Group {
        let (block, offset) = Self::split(at);
        &blocks[block][offset]
    }

    fn values(&self) -> impl Iterator<Item = &Group> {
        self.blocks.iter().flat_map(|b| b.iter())
    }

    /// Looks up the places of `keys` in the index, for nothing but to bring
    /// them into the cache: the lookups do not wait on one another, so their
    /// memory reads overlap, where each [`Groups::entry`] would wait on its
    /// own.
    fn fetch(&self, keys: impl Iterator<Item = u128>) {
        for key in keys {
            let low = key as u32;
            std::hint::black_box(self.index.find(slot_hash(low), |s| s.low == low));
        }
    }
}

/// How many rows wait for their groups ([`FunctionTally::settle`]).
const WAITING: usize = 8;

/// A row waiting for its group: what the rule needs of it.
#[derive(Debug, Clone)]
struct Waiting {
    scaled: u128,
    exact: u128,
    pivot: f64,
    bytes: u64,
    kind: Owner,
    id: u64,
    /// Its name, while the rule still wants samples.
    name: Option<Name>,
}

#[derive(Debug, Default, Clone)]
pub struct FunctionTally {
    groups: Groups,
    /// Rows not yet in their groups, in stream order.
    waiting: Vec<Waiting>,
    /// The exact fingerprints of the groups' members but their first, where
    /// they differ from the first's (equal functions are in one group, so
    /// these and the first members' tell every exact repeat).
    exact_others: HashSet<u128, BuildIdHasher>,
    exact_repeats: u64,
    identical_samples: Samples,
    /// Constraint functions (active and removed): bytes, `other` = CSR bytes.
    matrix: Tally,
    /// Functions in a costlier variant: bytes, `other` = minimal bytes.
    variants: Tally,
    /// Functions with wasted file bytes: `terms` = zero terms, `other` =
    /// merged terms, `bytes` = encoded bytes.
    wasted: Tally,
    /// For the combined saving: what the cheapest variants save on the
    /// active constraints and on the objective (removed constraints are
    /// left out before).
    variants_kept: u64,
    /// Paths and kinds are OMMX 3.0's.
    v3: bool,
    /// OMMX 3.0: whether the objective's function was shown (the rule
    /// judged it).
    objective_judged: bool,
}

impl FunctionTally {
    fn waste(&mut self, kind: Owner, id: Option<u64>, name: Option<&str>, w: FileWaste) {
        if w.bytes == 0 && w.zero_terms == 0 && w.merged_terms == 0 {
            return;
        }
        self.wasted
            .count(kind, w.zero_terms, w.bytes, w.merged_terms);
        self.wasted.samples.offer(|| {
            sample(
                kind,
                id,
                name,
                format!(
                    "{}: {} of the file",
                    terms_dropped(w.zero_terms, w.merged_terms, "merged"),
                    exact(w.bytes)
                ),
            )
        });
    }

    /// Counts a function stored in a costlier variant than it needs;
    /// returns what the cheapest saves.
    fn variant(
        &mut self,
        kind: Owner,
        id: Option<u64>,
        name: Option<&str>,
        s: &VariantTraits,
    ) -> u64 {
        if s.minimal >= s.bytes {
            return 0;
        }
        self.variants.count(kind, s.terms, s.bytes, s.minimal);
        self.variants.samples.offer(|| {
            sample(
                kind,
                id,
                name,
                format!(
                    "{} of degree {} with {}: {}, {} as {}",
                    s.name,
                    s.degree,
                    count(s.terms, "term", "terms"),
                    exact(s.bytes),
                    exact(s.minimal),
                    s.minimal_variant
                ),
            )
        });
        s.bytes - s.minimal
    }

    /// An active or removed constraint's function.
    pub fn constraint(&mut self, kind: Owner, c: &Constraint, waste: FileWaste) {
        let active = kind == Owner::Entity(EntityKind::Constraint);
        let name = c.name.as_deref();
        self.row(kind, c.id, name, &c.function, waste, active);
    }

    /// For OMMX 3.0's layout: paths and kinds are 3.0's from now on.
    pub fn new_v3() -> Self {
        Self {
            v3: true,
            ..Self::default()
        }
    }

    /// A row's function (a constraint of any kind, active or removed, with
    /// a function): every rule. `kept`: an active row, which the combined
    /// saving keeps.
    pub fn row(
        &mut self,
        kind: Owner,
        id: u64,
        name: Option<&str>,
        f: &Function,
        waste: FileWaste,
        kept: bool,
    ) {
        let s = shape(f, true);
        let v = s.variant;
        self.waste(kind, Some(id), name, waste);
        let saved = self.variant(kind, Some(id), name, &v);
        if kept {
            self.variants_kept += saved;
        }
        self.matrix.count(kind, v.terms, v.bytes, s.csr);
        if v.degree > 0 {
            self.matrix.samples.offer(|| {
                sample(
                    kind,
                    Some(id),
                    name,
                    format!(
                        "{} with {}: {}, {} in CSR",
                        v.name,
                        count(v.terms, "term", "terms"),
                        exact(v.bytes),
                        exact(s.csr)
                    ),
                )
            });
        }
        if v.degree == 0 {
            // Constants are not worth sharing.
            return;
        }
        let name = name.filter(|_| self.identical_samples.wants());
        self.waiting.push(Waiting {
            scaled: s.scaled,
            exact: s.exact,
            pivot: s.pivot,
            bytes: v.bytes,
            kind,
            id,
            name: name.map(Name::from),
        });
        if self.waiting.len() == WAITING {
            self.settle();
        }
    }

    /// Puts the rows that wait into their groups, in stream order: each of
    /// the first row of a function up to a scalar factor makes its group,
    /// every later one is a repeat. The index is looked up for all of them
    /// at once first (on a 200k-row LP, its lookups one at a time were a
    /// tenth of `report`'s time). [`FunctionTally::identical`] settles
    /// the rows still waiting.
    fn settle(&mut self) {
        let mut waiting = std::mem::take(&mut self.waiting);
        self.groups.fetch(waiting.iter().map(|w| w.scaled));
        for w in waiting.drain(..) {
            self.group(w);
        }
        self.waiting = waiting;
    }

    fn group(&mut self, w: Waiting) {
        let (key_high, key_mid) = key_parts(w.scaled);
        let group = self.groups.entry(w.scaled, || Group {
            key_high,
            key_mid,
            members: 0,
            sum: 0,
            min: u64::MAX,
            first_id: w.id,
            first_pivot: w.pivot,
            first_exact: halves(w.exact),
            kinds: 0,
            first_kind: w.kind,
        });
        if group.members > 0 {
            let same = halves(w.exact) == group.first_exact;
            let exact_repeat = same || !self.exact_others.insert(w.exact);
            self.exact_repeats += u64::from(exact_repeat);
            let detail = if same {
                format!(
                    "the same function as {} {}",
                    group.first_kind.label(),
                    group.first_id
                )
            } else {
                format!(
                    "{} × the function of {} {}",
                    w.pivot / group.first_pivot,
                    group.first_kind.label(),
                    group.first_id
                )
            };
            let (kind, id, name) = (w.kind, w.id, w.name.as_deref());
            self.identical_samples
                .offer(|| sample(kind, Some(id), name, detail));
        }
        group.members += 1;
        group.sum += w.bytes;
        group.min = group.min.min(w.bytes);
        group.kinds |= kind_bit(w.kind);
    }

    /// OMMX 3.0: a named function (3.0 counts them): its waste and its
    /// variant, which the combined saving keeps.
    pub fn named_v3(&mut self, id: u64, name: Option<&str>, f: &Function, waste: FileWaste) {
        let kind = Owner::Entity(EntityKind::NamedFunction);
        self.waste(kind, Some(id), name, waste);
        let v = VariantTraits::of_function(f);
        self.variants_kept += self.variant(kind, Some(id), name, &v);
    }

    /// OMMX 3.0: the objective's function, when the pass shows it.
    pub fn objective_v3(&mut self, f: &Function) {
        let v = VariantTraits::of_function(f);
        let name = Some("objective");
        self.objective_judged = true;
        self.variants_kept += self.variant(Owner::Instance, None, name, &v);
    }

    /// OMMX 3.0: a function's file waste alone (the objective's, shown
    /// before its function).
    pub fn waste_v3(&mut self, kind: Owner, id: Option<u64>, name: Option<&str>, w: FileWaste) {
        self.waste(kind, id, name, w);
    }

    /// File bytes of length prefixes around several functions' entries
    /// that their waste shrinks together (an `ommx.v2` collection's): no
    /// function of their own.
    pub fn framing_waste(&mut self, bytes: u64) {
        self.wasted.sums.bytes += bytes;
    }

    pub fn named(&mut self, n: &NamedFunction, waste: FileWaste) {
        self.waste(
            Owner::Entity(EntityKind::NamedFunction),
            Some(n.id),
            n.name.as_deref(),
            waste,
        );
    }

    pub fn objective(&mut self, singular: &Singular<'_>) {
        let v = VariantTraits::of(singular.objective, singular.objective_degree);
        let name = Some("objective");
        self.waste(Owner::Instance, None, name, singular.objective_waste);
        self.variants_kept += self.variant(Owner::Instance, None, name, &v);
    }

    /// Sharing each set of identical functions, a layout OMMX does not
    /// offer: the cheapest member keeps its storage, every other member
    /// keeps a [`SHARE_HANDLE`].
    pub fn identical(&mut self) -> Option<Finding> {
        self.settle();
        let (mut sets, mut repeats, mut concerned, mut saving, mut kinds) = (0, 0, 0, 0, 0u8);
        for g in self.groups.values().filter(|g| g.members > 1) {
            sets += 1;
            repeats += g.members - 1;
            concerned += g.sum;
            saving += (g.sum - g.min).saturating_sub(SHARE_HANDLE * (g.members - 1));
            kinds |= g.kinds;
        }
        if sets == 0 {
            return None;
        }
        let scaled = repeats - self.exact_repeats;
        Some(Finding {
            rule: IDENTICAL,
            change: Change::NotInOmmx,
            measure: Measure::Logical,
            title: format!(
                "{} {} the function of another ({} exactly, {} up to a scalar factor), in {}; \
                 stored once each, they would take {} less",
                count(repeats, "constraint", "constraints"),
                if repeats == 1 { "repeats" } else { "repeat" },
                thousands(self.exact_repeats),
                thousands(scaled),
                count(sets, "set of equal functions", "sets of equal functions"),
                exact(saving)
            ),
            bytes_concerned: concerned,
            saving_bytes: saving,
            paths: paths(kinds, self.v3),
            sample: self.identical_samples.0.clone(),
            suggestion: format!(
                "OMMX stores every constraint's function apart (a layout OMMX does not offer \
                 would store each once, each repeat keeping a {SHARE_HANDLE}-byte reference and \
                 scale factor). In OMMX, a repeat with the same equality (or a positive factor) \
                 is a redundant constraint: leaving it out saves all it costs."
            ),
            details: details([
                ("sets", json!(sets)),
                ("repeating_constraints", json!(repeats)),
                ("exact_repeats", json!(self.exact_repeats)),
                ("scaled_repeats", json!(scaled)),
                ("share_handle_bytes", json!(SHARE_HANDLE)),
            ]),
        })
    }

    /// Constraint functions against the CSR layout, which OMMX does not
    /// offer.
    pub fn matrix(&self) -> Option<Finding> {
        let m = self.matrix.sums;
        if m.terms == 0 || m.bytes <= m.other {
            return None;
        }
        let per_term = |bytes: u64| (bytes as f64 / m.terms as f64 * 10.0).round() / 10.0;
        Some(Finding {
            rule: MATRIX,
            change: Change::NotInOmmx,
            measure: Measure::Logical,
            title: format!(
                "The constraint functions take {} for {} in {}, {:.1} B a term; as one CSR \
                 matrix, a layout OMMX does not offer, they would take {}, {:.1} B a term",
                exact(m.bytes),
                count(m.terms, "stored term", "stored terms"),
                count(m.functions, "function", "functions"),
                per_term(m.bytes),
                exact(m.other),
                per_term(m.other)
            ),
            bytes_concerned: m.bytes,
            saving_bytes: m.bytes - m.other,
            paths: paths(self.matrix.kinds, self.v3),
            sample: self.matrix.samples.0.clone(),
            suggestion: format!(
                "OMMX keeps one term map per constraint. Where the constraints are handed on \
                 (to a solver, or kept by the thousand in memory), a sparse matrix in CSR form \
                 ({CSR_ROW} B per row, {CSR_ID} B per variable id and {CSR_COEFFICIENT} B per \
                 coefficient) would hold them in less."
            ),
            details: details([
                ("functions", json!(m.functions)),
                ("stored_terms", json!(m.terms)),
                ("bytes_per_term", json!(per_term(m.bytes))),
                ("csr_bytes", json!(m.other)),
                ("csr_bytes_per_term", json!(per_term(m.other))),
            ]),
        })
    }

    pub fn variants(&self) -> Option<Finding> {
        let v = self.variants.sums;
        if v.functions == 0 {
            return None;
        }
        Some(Finding {
            rule: VARIANTS,
            change: Change::Ommx,
            measure: Measure::Logical,
            title: format!(
                "{} ({}) {} kept in a costlier variant than {} terms need; the cheapest \
                 would take {} less",
                count(v.functions, "function", "functions"),
                count(v.terms, "stored term", "stored terms"),
                if v.functions == 1 { "is" } else { "are" },
                if v.functions == 1 { "its" } else { "their" },
                exact(v.bytes - v.other)
            ),
            bytes_concerned: v.bytes,
            saving_bytes: v.bytes - v.other,
            paths: paths(self.variants.kinds, self.v3),
            sample: self.variants.samples.0.clone(),
            suggestion: format!(
                "Write a lone constant as `constant` ({} B), functions of degree 1 as \
                 `linear` ({} B a term) and of degree 2 as `quadratic` ({} B a term) rather \
                 than `polynomial` ({} B a term): OMMX keeps the variant the file names.",
                labels::function(Shape {
                    variant: Variant::Constant,
                    stored_terms: 1,
                    unprofiled: Default::default(),
                }),
                per_term(Variant::Linear),
                per_term(Variant::Quadratic),
                per_term(Variant::Polynomial)
            ),
            details: {
                let mut d = details([
                    ("functions", json!(v.functions)),
                    ("stored_terms", json!(v.terms)),
                    ("minimal_bytes", json!(v.other)),
                ]);
                if self.v3 {
                    // Under OMMX 3.0 the objective is judged only when the
                    // pass shows its function.
                    d.insert("objective_judged".into(), json!(self.objective_judged));
                }
                d
            },
        })
    }

    pub fn wasted(&self) -> Option<Finding> {
        let w = self.wasted.sums;
        if w.functions == 0 {
            return None;
        }
        Some(Finding {
            rule: WASTED,
            change: Change::Ommx,
            measure: Measure::File,
            title: format!(
                "{} in the file {} {} that OMMX drops or merges on load; they take {} of the \
                 file",
                count(w.functions, "function", "functions"),
                if w.functions == 1 { "carries" } else { "carry" },
                terms_dropped(w.terms, w.other, "duplicate"),
                exact(w.bytes)
            ),
            bytes_concerned: w.bytes,
            saving_bytes: w.bytes,
            paths: paths(self.wasted.kinds, self.v3),
            sample: self.wasted.samples.0.clone(),
            suggestion: "Drop zero coefficients and sum duplicate terms before writing: the \
                loaded instance is the same and the file smaller. (Counted as a protobuf \
                writer writes the instance, length prefixes included.)"
                .to_string(),
            details: details([
                ("functions", json!(w.functions)),
                ("zero_terms", json!(w.terms)),
                ("merged_terms", json!(w.other)),
            ]),
        })
    }

    /// Step 4 of [`super::combined_saving`]: the objective and the active
    /// constraints' functions in their cheapest variants.
    pub fn variants_kept(&self) -> u64 {
        self.variants_kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linear(terms: &[(u64, f64)], constant: f64) -> Function {
        Function::Linear {
            terms: terms.to_vec(),
            constant,
        }
    }

    #[test]
    fn scaled_and_exact_fingerprints() {
        let a = shape(&linear(&[(1, 2.0), (2, 4.0)], 0.0), true);
        let b = shape(&linear(&[(1, 1.0), (2, 2.0)], 0.0), true);
        let c = shape(&linear(&[(1, 1.0), (2, 3.0)], 0.0), true);
        // Terms in file order: the pivot is still the smallest variable's.
        let a_unsorted = shape(&linear(&[(2, 4.0), (1, 2.0)], 0.0), true);
        assert_eq!((a_unsorted.pivot, a_unsorted.scaled), (a.pivot, a.scaled));
        assert_eq!(a.scaled, b.scaled);
        assert_ne!(a.exact, b.exact);
        assert_ne!(a.scaled, c.scaled);
        // 0.1 * 3 is not exactly 0.3, but it is up to rounding.
        let d = shape(&linear(&[(1, 0.1), (2, 0.1 * 3.0)], 0.0), true);
        let e = shape(&linear(&[(1, 1.0), (2, 3.0)], 0.0), true);
        assert_eq!(d.scaled, e.scaled);
        // The same terms as a Polynomial: equal as functions, costlier to store.
        let p = Function::Polynomial {
            terms: vec![(vec![1], 1.0), (vec![2], 2.0)],
        };
        let p = shape(&p, true);
        assert_eq!(p.exact, b.exact);
        assert_eq!(
            (p.variant.bytes, p.variant.minimal, b.variant.bytes),
            (32 + 96, 32 + 48, 32 + 48)
        );
    }

    #[test]
    fn a_lone_constant_is_cheapest_as_constant() {
        // Linear with one constant term: 32 + 24; Polynomial: 32 + 48;
        // Constant: 40. Empty, Linear's 32 is the cheapest already.
        let lone = linear(&[], 5.0);
        assert_eq!(
            (
                shape(&lone, false).variant.minimal,
                shape(&lone, false).variant.minimal_variant
            ),
            (40, "Constant")
        );
        let p = Function::Polynomial {
            terms: vec![(vec![], 5.0)],
        };
        assert_eq!(
            (
                shape(&p, false).variant.bytes,
                shape(&p, false).variant.minimal
            ),
            (80, 40)
        );
        let empty = linear(&[], 0.0);
        assert_eq!(
            shape(&empty, false).variant.minimal,
            shape(&empty, false).variant.bytes
        );
    }

    fn group(key: u128, id: u64) -> Group {
        let (key_high, key_mid) = key_parts(key);
        Group {
            key_high,
            key_mid,
            members: 0,
            sum: 0,
            min: u64::MAX,
            first_id: id,
            first_pivot: 1.0,
            first_exact: halves(key),
            kinds: 0,
            first_kind: Owner::Entity(EntityKind::Constraint),
        }
    }

    /// Rows settle in stream order across many waits: the samples are the
    /// first repeats, with their names and their first rows.
    #[test]
    fn repeats_far_apart_are_sampled_in_stream_order() {
        let mut tally = FunctionTally::default();
        let kind = Owner::Entity(EntityKind::Constraint);
        let rows = 5 * WAITING as u64;
        let half = rows / 2;
        for id in 0..rows {
            // Row `half + i` is twice row `i`.
            let factor = if id < half { 1.0 } else { 2.0 };
            let f = linear(
                &[(id % half, factor), (rows + id % half, 3.0 * factor)],
                0.0,
            );
            let name = format!("row {id}");
            tally.row(kind, id, Some(&name), &f, FileWaste::default(), true);
        }
        let finding = tally.identical().expect("repeats");
        let found: Vec<(Option<u64>, Option<&str>, &str)> = finding
            .sample
            .iter()
            .map(|s| (s.id, s.name.as_deref(), s.detail.as_str()))
            .collect();
        let expected: Vec<(Option<u64>, Option<String>, String)> = (0..5)
            .map(|i| {
                let detail = format!("2 × the function of constraint {i}");
                (Some(half + i), Some(format!("row {}", half + i)), detail)
            })
            .collect();
        let expected: Vec<_> = expected
            .iter()
            .map(|(id, name, detail)| (*id, name.as_deref(), detail.as_str()))
            .collect();
        assert_eq!(found, expected);
        assert_eq!(finding.details["sets"], json!(half));
        assert_eq!(finding.details["scaled_repeats"], json!(half));
        assert_eq!(finding.details["exact_repeats"], json!(0));
    }

    #[test]
    fn groups_tell_fingerprints_apart_by_every_part_across_blocks() {
        let mut groups = Groups::default();
        let rows = (FIRST_BLOCK + HUGE_BLOCK + 3) as u64;
        // Six keys share each lowest 32 bits, told apart by the rest of
        // the low half, by the high half, or by both.
        let key = |row: u64| {
            (u128::from(row % 2) << 64) | (u128::from(row / 2 % 3) << 32) | u128::from(row / 6)
        };
        for row in 0..rows {
            groups.entry(key(row), || group(key(row), row)).members += 1;
        }
        for row in 0..rows {
            let g = groups.entry(key(row), || unreachable!("row {row} has its group"));
            let found = (g.key_high, g.key_mid, g.first_exact, g.first_id, g.members);
            let k = key(row);
            let (high, mid) = key_parts(k);
            assert_eq!(found, (high, mid, halves(k), row, 1));
            g.members += 1;
        }
        assert_eq!(groups.values().count() as u64, rows);
        assert!(groups.values().all(|g| g.members == 2));
        assert_eq!(groups.blocks.len(), 3);
        assert!(groups.beyond.is_empty());
    }

    #[test]
    fn csr_baseline() {
        // 8 per row, 16 per linear term, 24 per quadratic term, 8 a constant.
        let q = Function::Quadratic {
            quadratic: vec![((1, 2), 1.0)],
            linear: vec![(1, 1.0)],
            constant: 3.0,
        };
        assert_eq!(shape(&q, false).csr, 8 + 24 + 16 + 8);
        assert_eq!(shape(&Function::Zero, false).csr, 8);
    }
}

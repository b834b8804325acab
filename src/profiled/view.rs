//! The profile as shown: a report's instances combined under one account
//! (in-memory or wire bytes), with the counts and labels every format prints.

use super::{
    escape_control, file_frame, layer_frame, Accounting, InstanceSummary, ProfiledInput,
    ProfiledInstance, Schema,
};
use crate::profile::aggregate::Totals;
use crate::profile::{Aggregate, Frame};
use crate::profiled::real::RealMemory;

/// What every format renders.
pub struct Profile<'a> {
    pub profiled: &'a ProfiledInput,
    pub account: Account,
    pub aggregate: Aggregate,
    pub totals: Vec<Totals>,
}

impl<'a> Profile<'a> {
    /// The logical profile of the report's instances.
    pub fn new(profiled: &'a ProfiledInput) -> Self {
        Self::of(profiled, Account::Memory)
    }

    /// Combines the report's instances under `account`: one alone stands at
    /// the root; several each get a layer root frame. The wire account must
    /// have been collected (the pass's wire option).
    pub fn of(profiled: &'a ProfiledInput, account: Account) -> Self {
        let pick = |instance: &'a ProfiledInstance| match account {
            Account::Memory => &instance.aggregate,
            Account::Wire => instance
                .wire
                .as_ref()
                .expect("the wire view is collected whenever it is shown"),
        };
        let aggregate = match profiled.instances.as_slice() {
            [one] => pick(one).clone(),
            many => {
                let mut all = Aggregate::new();
                for instance in many {
                    let frame = layer_frame(
                        instance.instance_index.unwrap_or(0),
                        instance.title.as_deref(),
                    );
                    all.merge_under(&[Frame::Owned(frame)], pick(instance));
                }
                all
            }
        };
        let totals = aggregate.totals();
        Self {
            profiled,
            account,
            aggregate,
            totals,
        }
    }

    /// Several inputs in one profile: each file's profile (layer frames
    /// included) under a root frame of its own. `combined` holds every
    /// instance of every file, for the summary.
    pub fn of_files(
        reports: &[(&str, &ProfiledInput)],
        combined: &'a ProfiledInput,
        account: Account,
    ) -> Self {
        let mut aggregate = Aggregate::new();
        for (i, (name, profiled)) in reports.iter().enumerate() {
            let one = Profile::of(profiled, account);
            aggregate.merge_under(&[Frame::Owned(file_frame(i, name))], &one.aggregate);
        }
        let totals = aggregate.totals();
        Self {
            profiled: combined,
            account,
            aggregate,
            totals,
        }
    }

    pub fn total_bytes(&self) -> u64 {
        self.totals[Aggregate::ROOT].bytes
    }

    /// Sum of the instances' counts.
    pub fn summary(&self) -> InstanceSummary {
        let mut sum = InstanceSummary::default();
        for i in &self.profiled.instances {
            let s = &i.summary;
            sum.variables += s.variables;
            sum.constraints += s.constraints;
            sum.removed_constraints += s.removed_constraints;
            sum.named_functions += s.named_functions;
            sum.terms += s.terms;
            sum.wire_bytes += s.wire_bytes;
        }
        sum
    }

    /// "all 3 instance layers", "instance layer 1 \"title\"" or "raw instance",
    /// with the schema when it is not plain ommx.v1 counted by OMMX 2.9.3.
    pub fn layer_label(&self) -> String {
        match self.profiled.instances.as_slice() {
            [one] => {
                let label = match one.instance_index {
                    None => "raw instance".to_string(),
                    Some(i) => match &one.title {
                        Some(t) => format!("instance layer {i} ({})", escape_control(t)),
                        None => format!("instance layer {i}"),
                    },
                };
                match (one.schema, one.accounting) {
                    (Schema::V1, Accounting::Ommx29) => label,
                    (Schema::V2, _) => format!("{label}, ommx.v2"),
                    (Schema::V1, Accounting::Ommx30) => {
                        format!("{label}, ommx.v1 as OMMX 3.0 loads it")
                    }
                }
            }
            many => format!("all {} instance layers", many.len()),
        }
    }

    /// Whose accounting the in-memory numbers follow: "OMMX 2.9.3",
    /// "OMMX 3.0.0b7", or both (per layer) for a mixed archive.
    pub fn accounting_name(&self) -> String {
        match self.accountings() {
            [Some(a), None] | [None, Some(a)] => format!("OMMX {}", a.version()),
            [Some(_), Some(_)] => "OMMX 2.9.3 (ommx.v1 layers) and 3.0.0b7 (ommx.v2 layers)".into(),
            [None, None] => format!("OMMX {}", Accounting::Ommx29.version()),
        }
    }

    /// "OMMX 2.9.3's estimate", or both accountings' for a mixed archive.
    pub fn estimate(&self) -> String {
        match self.accountings() {
            [Some(_), Some(_)] => {
                "OMMX 2.9.3's estimate for ommx.v1 layers, 3.0.0b7's for ommx.v2".to_string()
            }
            _ => format!("{}'s estimate", self.accounting_name()),
        }
    }

    /// The real-memory estimate of the instances shown, loaded together
    /// ([`RealMemory::combined`]).
    pub fn real_memory(&self) -> Option<RealMemory> {
        let each: Vec<_> = self
            .profiled
            .instances
            .iter()
            .map(|i| i.real_memory)
            .collect();
        RealMemory::combined(&each)
    }

    /// The JSON `accounting` field.
    pub fn accounting_describe(&self) -> &'static str {
        match (self.account, self.accountings()) {
            (Account::Wire, _) => self.account.describe(),
            (Account::Memory, [None, Some(a)]) => a.describe(),
            (Account::Memory, [Some(_), Some(_)]) => MIXED_ACCOUNTING,
            (Account::Memory, _) => self.account.describe(),
        }
    }

    /// `[2.9.3 if any instance follows it, 3.0 if any does]`.
    fn accountings(&self) -> [Option<Accounting>; 2] {
        let has = |a| {
            self.profiled
                .instances
                .iter()
                .any(|i| i.accounting == a)
                .then_some(a)
        };
        [has(Accounting::Ommx29), has(Accounting::Ommx30)]
    }

    /// The node at `path` (`;`-separated frames), if the profile has it.
    pub fn find(&self, path: &str) -> Option<usize> {
        let mut id = Aggregate::ROOT;
        for frame in path.split(';') {
            id = *self
                .aggregate
                .node(id)
                .children
                .iter()
                .find(|&&c| self.aggregate.node(c).name == frame)?;
        }
        Some(id)
    }

    /// Children of `id`, largest first, ties by name.
    pub fn sorted_children(&self, id: usize) -> Vec<usize> {
        let mut children = self.aggregate.node(id).children.clone();
        children.sort_by(|&a, &b| {
            self.totals[b]
                .bytes
                .cmp(&self.totals[a].bytes)
                .then_with(|| {
                    self.aggregate
                        .node(a)
                        .name
                        .cmp(&self.aggregate.node(b).name)
                })
        });
        children
    }
}

/// The JSON `accounting` of a profile whose layers follow both accountings.
pub const MIXED_ACCOUNTING: &str =
    "ommx 2.9.3 (ommx.v1 layers) and 3.0.0b7 (ommx.v2 layers) logical_memory_profile";

/// The accounting one profile follows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Account {
    /// OMMX 2.9.3's logical in-memory bytes.
    #[default]
    Memory,
    /// Encoded protobuf bytes.
    Wire,
}

impl Account {
    /// The JSON `accounting` field.
    pub fn describe(self) -> &'static str {
        match self {
            Account::Memory => Accounting::Ommx29.describe(),
            Account::Wire => "protobuf wire bytes",
        }
    }
}

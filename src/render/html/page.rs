//! The one document a report page shows, and its builder from the results
//! the analysis API returns: the profile (a [`Loaded`]: an instance read
//! now, or a saved baseline), the old side of a diff, and what the analyses
//! riding on the subject's pass found (top entities, size distributions,
//! advice): [`crate::api::report`]'s [`Reported`].
//!
//! The builder is a plain function of those results: it reads no file and
//! runs no pass, so every surface (the `report` command, the Python wheel)
//! gets the same page from the same results. Figures are integers; the
//! page's script formats them.

use serde::Serialize;

use super::flame::FlameTree;
use crate::advise::{LayerAdvice, NotComputed, Recommendation};
use crate::api::Reported;
use crate::diff::{self, Count, Diff, Status};
use crate::drill::stats::{Distribution, StatsLine};
use crate::drill::top::TopEntity;
use crate::profile::family::UNNAMED;
use crate::profiled::real::Held;
use crate::profiled::{
    escape_control, Account, Container, InstanceSummary, Loaded, Profile, ProfiledInput,
};

/// The shape of [`Page`] the page's script reads; bumped with any change.
pub const PAGE_VERSION: u32 = 1;

/// Family rows kept; the rest are summed in one row.
pub const MAX_FAMILIES: usize = 500;

/// Changed paths listed in a diff's table, largest change first.
pub const MAX_CHANGES: usize = 500;

/// Layers whose advice is shown in full (those with the largest savings,
/// when there are more), and layers summed up in one row each.
pub const MAX_ADVICE_LAYERS: usize = 10;
pub const MAX_ADVICE_ROWS: usize = 500;

/// Everything a report page shows.
#[derive(Debug, Clone, Serialize)]
pub struct Page {
    pub page_version: u32,
    pub tool: &'static str,
    pub title: String,
    /// The input, or a diff's old and new.
    pub inputs: Vec<InputFacts>,
    /// What the flamegraph can show, the first shown first: logical bytes,
    /// then encoded bytes when they were collected. Another estimate (real
    /// memory) is one more view.
    pub views: Vec<FlameView>,
    /// A diff's changed paths and counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<Changes>,
    /// What the analyses found about the input (a diff's new side); absent
    /// for a baseline, which holds no entities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top: Option<TopTable>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Vec<StatsRow>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub families: Option<Families>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub advice: Option<Advice>,
}

/// The header facts of one input.
#[derive(Debug, Clone, Serialize)]
pub struct InputFacts {
    /// `input`, or a diff's `old` and `new`.
    pub role: &'static str,
    pub name: String,
    pub container: Container,
    pub gzip: bool,
    pub file_bytes: Option<u64>,
    /// "raw instance", "all 3 instance layers", ...
    pub layers: String,
    /// For a saved baseline: the input it was made from.
    pub baseline_of: Option<String>,
    pub counts: InstanceSummary,
    pub logical_bytes: u64,
    /// Whose count the logical bytes are: "OMMX 2.9.3's estimate", ...
    pub accounting: String,
    /// What loading it would really take (an estimate), when known.
    pub real_memory: Option<RealMemoryFacts>,
}

/// The real-memory estimate, shown beside the logical bytes.
#[derive(Debug, Clone, Serialize)]
pub struct RealMemoryFacts {
    /// "OMMX 2.9.3 (Python)".
    pub runtime: String,
    pub resident_bytes: u64,
    pub load_peak_bytes: u64,
    /// The resident's part the instance's own allocations take, by owner.
    pub held_bytes: Held,
    /// What a fresh process's first load adds, once.
    pub first_load_extra_bytes: u64,
}

/// One way of sizing the frames.
#[derive(Debug, Clone, Serialize)]
pub struct FlameView {
    /// `memory` or `wire`.
    pub id: &'static str,
    /// The switch's label.
    pub label: &'static str,
    /// What the bytes are, in a sentence's words.
    pub note: String,
    pub tree: FlameTree,
}

#[derive(Debug, Clone, Serialize)]
pub struct Changes {
    pub counts: Vec<Count>,
    pub changed: usize,
    pub unchanged: usize,
    /// The largest changes; `changed` counts them all.
    pub rows: Vec<ChangeRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChangeRow {
    pub path: String,
    pub status: Status,
    pub old: u64,
    pub new: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TopTable {
    /// `all`, or the one kind ranked.
    pub kind: &'static str,
    /// How many were asked for.
    pub n: usize,
    pub rows: Vec<TopRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TopRow {
    pub layer: Option<usize>,
    pub kind: &'static str,
    /// `None` for the objective.
    pub id: Option<u64>,
    pub name: String,
    pub terms: Option<u64>,
    pub bytes: u64,
    pub wire_bytes: u64,
}

/// A kind's or a family's distribution.
#[derive(Debug, Clone, Serialize)]
pub struct StatsRow {
    pub kind: &'static str,
    /// The family (entity name), on family rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    pub count: u64,
    pub bytes: Distribution,
    pub terms: Option<Distribution>,
    /// The largest entity: `id name`.
    pub largest: String,
    pub largest_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Families {
    pub rows: Vec<StatsRow>,
    /// Families beyond [`MAX_FAMILIES`], summed.
    pub more: Option<MoreFamilies>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MoreFamilies {
    pub families: usize,
    pub entities: u64,
    pub bytes: u64,
}

/// The advice of every instance layer: in full for a few, a row for the others.
#[derive(Debug, Clone, Serialize)]
pub struct Advice {
    /// In full: every layer when there are few, else those with the
    /// largest estimated savings, largest first.
    pub layers: Vec<AdviceLayer>,
    /// One row per further layer, largest saving first.
    pub others: Vec<AdviceRow>,
    /// Layers beyond those rows.
    pub more: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct AdviceRow {
    pub label: String,
    pub total_bytes: u64,
    pub estimated_saving_bytes: u64,
    pub recommendations: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct AdviceLayer {
    /// "raw instance", "instance layer 1 (title)".
    pub label: String,
    /// "OMMX 2.9.3", whose accounting the numbers follow.
    pub accounting: String,
    pub total_bytes: u64,
    pub file_bytes: u64,
    pub estimated_saving_bytes: u64,
    pub estimated_saving_percent: f64,
    pub file_saving_bytes: u64,
    pub recommendations: Vec<Recommendation>,
    pub not_computed: Vec<NotComputed>,
}

/// What the analyses riding on the subject's pass found; each may be
/// missing (a baseline has no entities to analyse).
#[derive(Debug, Clone, Copy, Default)]
pub struct Analyses<'a> {
    pub top: Option<TopFound<'a>>,
    /// Per-kind and per-family rows, as `StatsCollector::report` gives them.
    pub stats: Option<(&'a [StatsLine], &'a [StatsLine])>,
    pub advice: Option<&'a [LayerAdvice]>,
}

/// `memprof top`'s result and what it was asked.
#[derive(Debug, Clone, Copy)]
pub struct TopFound<'a> {
    pub kind: &'static str,
    pub n: usize,
    pub entities: &'a [TopEntity],
}

impl<'a> Analyses<'a> {
    /// What [`crate::api::report`] found: nothing for a saved baseline.
    pub fn of(reported: &'a Reported) -> Self {
        let Some(found) = &reported.found else {
            return Self::default();
        };
        Self {
            top: Some(TopFound {
                kind: crate::drill::KindFilter::All.name(),
                n: found.n,
                entities: &found.top,
            }),
            stats: Some((&found.kinds, &found.families)),
            advice: Some(&found.advice),
        }
    }
}

impl Page {
    /// The page of what [`crate::api::report`] returned.
    pub fn of(reported: &Reported) -> Page {
        Page::build(
            &reported.loaded,
            reported.old.as_ref(),
            &Analyses::of(reported),
        )
    }

    /// The page of `subject`, compared with `old` when given. The wire view
    /// is offered when every instance of the subject carries it, and not
    /// for a diff (a baseline holds the logical view only).
    pub fn build(subject: &Loaded, old: Option<&Loaded>, analyses: &Analyses<'_>) -> Page {
        let memory = Profile::of(&subject.profiled, Account::Memory);
        let mut views = Vec::new();
        let (inputs, changes, title) = match old {
            None => {
                views.push(memory_view(&memory, FlameTree::of_profile(&memory)));
                if let Some(wire) = wire_profile(&subject.profiled) {
                    views.push(FlameView {
                        id: "wire",
                        label: "Wire bytes",
                        note: "encoded protobuf bytes per path: the instance data as stored".into(),
                        tree: FlameTree::of_profile(&wire),
                    });
                }
                let title = format!("memprof report: {}", escape_control(subject.name()));
                (vec![facts("input", subject, &memory)], None, title)
            }
            Some(old) => {
                let old_memory = Profile::of(&old.profiled, Account::Memory);
                let diff = Diff::of(&old_memory, &memory);
                views.push(memory_view(&memory, FlameTree::of_diff(&diff)));
                let changes = changes(&diff, &old_memory, &memory);
                let title = format!(
                    "memprof report: {} → {}",
                    escape_control(old.name()),
                    escape_control(subject.name())
                );
                let inputs = vec![
                    facts("old", old, &old_memory),
                    facts("new", subject, &memory),
                ];
                (inputs, Some(changes), title)
            }
        };
        Page {
            page_version: PAGE_VERSION,
            tool: crate::profiled::envelope::TOOL,
            title,
            inputs,
            views,
            changes,
            top: analyses.top.map(top_table),
            kinds: analyses
                .stats
                .map(|(kinds, _)| kinds.iter().map(stats_row).collect()),
            families: analyses.stats.map(|(_, families)| families_table(families)),
            advice: analyses.advice.map(advice),
        }
    }
}

fn memory_view(profile: &Profile<'_>, tree: FlameTree) -> FlameView {
    FlameView {
        id: "memory",
        label: "Logical bytes",
        note: format!("logical bytes, {}", profile.estimate()),
        tree,
    }
}

/// The wire profile, when every instance carries one.
fn wire_profile(profiled: &ProfiledInput) -> Option<Profile<'_>> {
    let all = !profiled.instances.is_empty() && profiled.instances.iter().all(|i| i.wire.is_some());
    all.then(|| Profile::of(profiled, Account::Wire))
}

fn facts(role: &'static str, source: &Loaded, profile: &Profile<'_>) -> InputFacts {
    let doc = &source.profiled.input;
    InputFacts {
        role,
        name: escape_control(&doc.name).into_owned(),
        container: doc.container,
        gzip: doc.gzip,
        file_bytes: doc.file_bytes,
        layers: profile.layer_label(),
        baseline_of: source
            .baseline
            .as_ref()
            .map(|b| escape_control(&b.input).into_owned()),
        counts: profile.summary(),
        logical_bytes: profile.total_bytes(),
        accounting: profile.estimate(),
        real_memory: profile.real_memory().map(|r| RealMemoryFacts {
            runtime: r.runtime.to_string(),
            resident_bytes: r.resident_bytes,
            load_peak_bytes: r.load_peak_bytes,
            held_bytes: r.held_bytes,
            first_load_extra_bytes: r.first_load_extra_bytes,
        }),
    }
}

fn changes(diff: &Diff, old: &Profile<'_>, new: &Profile<'_>) -> Changes {
    let root = diff.root();
    let counts = diff::counts(
        &old.summary(),
        &new.summary(),
        root.old.unwrap_or_default(),
        root.new.unwrap_or_default(),
    );
    let changed: Vec<usize> = diff
        .ranked()
        .into_iter()
        .filter(|&id| diff.node(id).status() != Status::Unchanged)
        .collect();
    let rows = changed
        .iter()
        .take(MAX_CHANGES)
        .map(|&id| {
            let n = diff.node(id);
            ChangeRow {
                path: diff.path(id).to_string(),
                status: n.status(),
                old: n.old_bytes(),
                new: n.new_bytes(),
            }
        })
        .collect();
    Changes {
        counts,
        changed: changed.len(),
        unchanged: diff.len() - 1 - changed.len(),
        rows,
    }
}

fn top_table(found: TopFound<'_>) -> TopTable {
    TopTable {
        kind: found.kind,
        n: found.n,
        rows: found
            .entities
            .iter()
            .map(|e| TopRow {
                layer: e.entity.layer,
                kind: e.entity.kind.label(),
                id: e.entity.id,
                name: e.entity.display_name(),
                terms: e.terms,
                bytes: e.bytes,
                wire_bytes: e.wire_bytes,
            })
            .collect(),
    }
}

fn stats_row(s: &StatsLine) -> StatsRow {
    StatsRow {
        kind: s.kind.label(),
        family: s.family.as_ref().map(|f| match f {
            Some(name) => crate::profiled::escape_control(name).into_owned(),
            None => UNNAMED.to_string(),
        }),
        count: s.count,
        bytes: s.bytes.clone(),
        terms: s.terms.clone(),
        largest: format!("{} {}", s.largest.display_id(), s.largest.display_name()),
        largest_bytes: s.largest_bytes,
    }
}

/// The largest families (by total bytes, whatever their kind) and the rest summed.
fn families_table(families: &[StatsLine]) -> Families {
    let mut order: Vec<&StatsLine> = families.iter().collect();
    order.sort_by_key(|s| std::cmp::Reverse(s.bytes.total));
    let (shown, rest) = order.split_at(order.len().min(MAX_FAMILIES));
    Families {
        rows: shown.iter().map(|s| stats_row(s)).collect(),
        more: (!rest.is_empty()).then(|| MoreFamilies {
            families: rest.len(),
            entities: rest.iter().map(|s| s.count).sum(),
            bytes: rest.iter().map(|s| s.bytes.total).sum(),
        }),
    }
}

fn advice(layers: &[LayerAdvice]) -> Advice {
    let mut order: Vec<&LayerAdvice> = layers.iter().collect();
    if order.len() > MAX_ADVICE_LAYERS {
        order.sort_by_key(|l| std::cmp::Reverse(l.estimated_saving_bytes));
    }
    let (full, rest) = order.split_at(order.len().min(MAX_ADVICE_LAYERS));
    let (rows, more) = rest.split_at(rest.len().min(MAX_ADVICE_ROWS));
    Advice {
        layers: full.iter().map(|l| advice_layer(l)).collect(),
        others: rows
            .iter()
            .map(|l| AdviceRow {
                label: layer_label(l),
                total_bytes: l.total_bytes,
                estimated_saving_bytes: l.estimated_saving_bytes,
                recommendations: l.recommendations.len(),
            })
            .collect(),
        more: more.len(),
    }
}

fn layer_label(layer: &LayerAdvice) -> String {
    match (&layer.index, &layer.title) {
        (Some(i), Some(t)) => format!("instance layer {i} ({})", escape_control(t)),
        (Some(i), None) => format!("instance layer {i}"),
        (None, _) => "raw instance".to_string(),
    }
}

fn advice_layer(layer: &LayerAdvice) -> AdviceLayer {
    AdviceLayer {
        label: layer_label(layer),
        accounting: format!("OMMX {}", layer.accounting.version()),
        total_bytes: layer.total_bytes,
        file_bytes: layer.file_bytes,
        estimated_saving_bytes: layer.estimated_saving_bytes,
        estimated_saving_percent: layer.estimated_saving_percent,
        file_saving_bytes: layer.file_saving_bytes,
        recommendations: layer.recommendations.clone(),
        not_computed: layer.not_computed.clone(),
    }
}

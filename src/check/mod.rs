//! `memprof check`: evaluate budget rules on profiles, optionally against a
//! baseline. Each rule is applied to every path it matches (on either side,
//! so a path that disappeared is still seen), once per limit it sets; the
//! result of one limit is the verdict of its worst path.
//!
//! A path absent from the profile holds 0 bytes. Per-entity limits divide by
//! the count of variables, constraints (active ones) or stored terms of the
//! instance the path belongs to: in a multi-layer archive, a path under the
//! root frame `layer[i] ...` is measured against layer i's counts, and only
//! `total` (or a path outside every layer) against the sum. They hold
//! trivially when that count is 0.

pub mod budget;

use serde::Serialize;

use crate::diff::{Diff, DiffNode};
use crate::profile::Aggregate;
use crate::profiled::layer_frame;
use crate::profiled::InstanceSummary;
use crate::profiled::Loaded;
use crate::units::Size;
use crate::units::{self, signed_human, signed_percent, thousands};
use budget::{BudgetRule, Percent};

/// What one limit of a rule measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    Max,
    MaxGrowth,
    MaxPerVariable,
    MaxPerConstraint,
    MaxPerTerm,
}

impl LimitKind {
    pub fn key(self) -> &'static str {
        match self {
            LimitKind::Max => "max",
            LimitKind::MaxGrowth => "max_growth",
            LimitKind::MaxPerVariable => "max_per_variable",
            LimitKind::MaxPerConstraint => "max_per_constraint",
            LimitKind::MaxPerTerm => "max_per_term",
        }
    }
}

/// One matched path under one limit.
#[derive(Debug, Clone, Serialize)]
pub struct PathCheck {
    /// `total` for the whole profile.
    pub path: String,
    pub old_bytes: Option<u64>,
    pub new_bytes: u64,
    /// The measured value in words, e.g. `+5.1% (+51 B)` or `187.5 B per variable`.
    pub measured: String,
    pub pass: bool,
    /// How close to the limit (1.0 = at it); orders the worst path first.
    #[serde(skip)]
    severity: f64,
}

/// One limit of one rule on one file.
#[derive(Debug, Clone, Serialize)]
pub struct LimitResult {
    /// 1-based position of the rule in the budget (0: the default rule).
    pub rule: usize,
    pub path: String,
    pub limit: LimitKind,
    /// The limit as written, with qualifiers (`5% (growth under 1 MiB ignored)`).
    pub limit_text: String,
    /// Paths the rule matched.
    pub matched: usize,
    /// The worst matched path, `None` when nothing matched.
    pub worst: Option<PathCheck>,
    /// Every matched path that exceeded the limit, the worst first, up to
    /// [`MAX_LISTED_FAILURES`] over a file's results.
    pub failures: Vec<PathCheck>,
    /// Failing paths beyond those listed (counted, not kept).
    #[serde(skip_serializing_if = "is_zero")]
    pub failures_not_listed: usize,
    pub pass: bool,
    pub message: Option<String>,
}

/// The verdict on one file.
#[derive(Debug, Clone, Serialize)]
pub struct FileVerdict {
    pub file: String,
    pub baseline: Option<String>,
    /// `check --baseline DIR` found no baseline for the file: a new
    /// instance, checked against the rules that need no baseline.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub added: bool,
    pub pass: bool,
    pub results: Vec<LimitResult>,
}

/// The verdict on every file.
#[derive(Debug, Clone, Serialize)]
pub struct Verdicts {
    pub budget: Option<String>,
    pub pass: bool,
    pub files: Vec<FileVerdict>,
}

impl Verdicts {
    pub fn new(budget: Option<String>, files: Vec<FileVerdict>) -> Self {
        Self {
            budget,
            pass: files.iter().all(|f| f.pass),
            files,
        }
    }

    pub fn failed_files(&self) -> usize {
        self.files.iter().filter(|f| !f.pass).count()
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Failing paths listed in one file's results; a budget of thousands of
/// rules over a profile of thousands of paths could otherwise list
/// millions. The rest are counted.
pub const MAX_LISTED_FAILURES: usize = 10_000;

/// Most rule-by-path comparisons one file's check may take: each rule is
/// matched against every path of the diff.
pub const MAX_MATCHES: u64 = 20_000_000;

/// Refuses a check whose rules × paths is past [`MAX_MATCHES`].
pub fn check_work(paths: usize, rules: usize) -> Result<(), String> {
    let work = (paths as u64).saturating_mul(rules as u64);
    if work > MAX_MATCHES {
        return Err(format!(
            "{rules} budget rules against {paths} paths is {work} comparisons, more than \
             memprof's limit of {MAX_MATCHES}; use fewer rules or a smaller profile"
        ));
    }
    Ok(())
}

/// The verdict on one file: `new` (named `file`) against `baseline`, or
/// against nothing. Also returns the positions in `rules` of the rules that
/// matched no path. Refuses rules × paths past [`MAX_MATCHES`].
pub fn check_file(
    file: &str,
    new: &Loaded,
    baseline: Option<&Loaded>,
    rules: &[(usize, BudgetRule)],
) -> anyhow::Result<(FileVerdict, Vec<usize>)> {
    let new_profile = new.profile();
    let empty = Aggregate::new();
    let (diff, baseline_name) = match baseline {
        Some(old) => (
            Diff::of(&old.profile(), &new_profile),
            Some(old.name().to_string()),
        ),
        None => (Diff::new(&empty, &new_profile.aggregate), None),
    };
    check_work(diff.len(), rules.len()).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
    let layers: Vec<(String, InstanceSummary)> = match new.profiled.instances.as_slice() {
        [_] | [] => Vec::new(),
        many => many
            .iter()
            .map(|i| {
                let frame = layer_frame(i.instance_index.unwrap_or(0), i.title.as_deref());
                (frame, i.summary.clone())
            })
            .collect(),
    };
    let (real, logical): (Vec<_>, Vec<_>) =
        (0..rules.len()).partition(|&i| rules[i].1.measure == budget::Measure::Real);
    let pick = |positions: &[usize]| -> Vec<(usize, BudgetRule)> {
        positions.iter().map(|&i| rules[i].clone()).collect()
    };
    let (mut results, unmatched) = evaluate_by_layer(
        &diff,
        baseline.is_some(),
        &new_profile.summary(),
        &layers,
        &pick(&logical),
    );
    let mut unmatched: Vec<usize> = unmatched.into_iter().map(|i| logical[i]).collect();
    if !real.is_empty() {
        let (real_results, real_unmatched) = check_real(file, new, baseline, &pick(&real))?;
        results.extend(real_results);
        results.sort_by_key(|r| r.rule);
        unmatched.extend(real_unmatched.into_iter().map(|i| real[i]));
        unmatched.sort_unstable();
    }
    let verdict = FileVerdict {
        file: file.to_string(),
        baseline: baseline_name,
        added: false,
        pass: results.iter().all(|r| r.pass),
        results,
    };
    Ok((verdict, unmatched))
}

/// The `measure: real` rules (path `total`): their limits against the
/// estimated load peak of the file's instances, and of the baseline's when
/// a limit compares with it.
fn check_real(
    file: &str,
    new: &Loaded,
    baseline: Option<&Loaded>,
    rules: &[(usize, BudgetRule)],
) -> anyhow::Result<(Vec<LimitResult>, Vec<usize>)> {
    let peak = |loaded: &Loaded, what: &str| {
        let real = loaded.profile().real_memory().ok_or_else(|| {
            anyhow::anyhow!(
                "{file}: a measure: real rule needs the real-memory estimate, which {what} \
                 does not have (a baseline written before memprof estimated it: regenerate it \
                 with `memprof inspect --format json`)"
            )
        })?;
        let mut one = Aggregate::new();
        one.add(Aggregate::ROOT, real.load_peak_bytes, 1);
        anyhow::Ok(one)
    };
    let new_peak = peak(new, "the profile")?;
    let empty = Aggregate::new();
    let old_peak = match baseline {
        Some(old) if rules.iter().any(|(_, r)| r.needs_baseline()) => {
            Some(peak(old, "its baseline")?)
        }
        _ => None,
    };
    let diff = Diff::new(old_peak.as_ref().unwrap_or(&empty), &new_peak);
    let (mut results, unmatched) =
        evaluate(&diff, old_peak.is_some(), &new.profile().summary(), rules);
    for r in &mut results {
        r.limit_text = format!("{} (real memory: estimated load peak)", r.limit_text);
    }
    Ok((results, unmatched))
}

/// Refuses rules that need a baseline when there is none; `budget` names
/// the budget file in the message.
pub fn require_baseline(rules: &[(usize, BudgetRule)], budget: &str) -> anyhow::Result<()> {
    if let Some((n, rule)) = rules.iter().find(|(_, r)| r.needs_baseline()) {
        anyhow::bail!(
            "{budget}: rule {n} (path {:?}) sets max_growth, which needs --baseline",
            rule.path.text
        );
    }
    Ok(())
}

/// Applies `rules` to the diff of a file against its baseline (`has_old`)
/// or against nothing. Returns the results and the positions in `rules` of
/// the rules that matched no path.
pub fn evaluate(
    diff: &Diff,
    has_old: bool,
    summary: &InstanceSummary,
    rules: &[(usize, BudgetRule)],
) -> (Vec<LimitResult>, Vec<usize>) {
    evaluate_by_layer(diff, has_old, summary, &[], rules)
}

/// [`evaluate`] with each layer's counts (`layers`: root frame and counts):
/// per-entity limits on a path under a layer's root frame divide by that
/// layer's counts, not by the sum over all layers (`summary`).
pub fn evaluate_by_layer(
    diff: &Diff,
    has_old: bool,
    summary: &InstanceSummary,
    layers: &[(String, InstanceSummary)],
    rules: &[(usize, BudgetRule)],
) -> (Vec<LimitResult>, Vec<usize>) {
    let mut results = Vec::new();
    let mut unmatched = Vec::new();
    let mut listed = 0;
    let frames: Vec<Vec<&str>> = (0..diff.len()).map(|id| diff.frames(id)).collect();
    let counts_of = |id: usize| -> &InstanceSummary {
        frames[id]
            .first()
            .and_then(|root| layers.iter().find(|(frame, _)| frame == root))
            .map_or(summary, |(_, counts)| counts)
    };
    for (position, (number, rule)) in rules.iter().enumerate() {
        let matched: Vec<usize> = (0..diff.len())
            .filter(|&id| rule.path.matches(&frames[id]))
            .collect();
        if matched.is_empty() {
            unmatched.push(position);
        }
        let mut limits: Vec<(LimitKind, String, Measure)> = Vec::new();
        if let Some(max) = &rule.max {
            let max = max.clone();
            limits.push((
                LimitKind::Max,
                max.text.clone(),
                Box::new(move |n, _| {
                    let bytes = n.new_bytes();
                    (
                        max.holds(bytes),
                        units::human_exact(bytes),
                        ratio(bytes as f64, max.bytes() as f64),
                    )
                }),
            ));
        }
        if let Some(growth) = &rule.max_growth {
            let text = match &rule.min_delta {
                Some(d) => format!("{} (growth under {} ignored)", growth.text, d.text),
                None => growth.text.clone(),
            };
            let (growth, min_delta) = (growth.clone(), rule.min_delta.clone());
            limits.push((
                LimitKind::MaxGrowth,
                text,
                Box::new(move |n, _| growth_check(n, &growth, min_delta.as_ref())),
            ));
        }
        let per_kind: [(LimitKind, &Option<Size>, Count, &str); 3] = [
            (
                LimitKind::MaxPerVariable,
                &rule.max_per_variable,
                |s| s.variables,
                "variable",
            ),
            (
                LimitKind::MaxPerConstraint,
                &rule.max_per_constraint,
                |s| s.constraints,
                "constraint",
            ),
            (
                LimitKind::MaxPerTerm,
                &rule.max_per_term,
                |s| s.terms,
                "term",
            ),
        ];
        for (kind, size, count, noun) in per_kind {
            if let Some(size) = size {
                let size = size.clone();
                limits.push((
                    kind,
                    size.text.clone(),
                    Box::new(move |n, counts| per_entity(n, &size, count(counts), noun)),
                ));
            }
        }
        for (kind, limit_text, measure) in limits {
            let mut checks: Vec<PathCheck> = matched
                .iter()
                .map(|&id| {
                    let n = diff.node(id);
                    let (pass, measured, severity) = measure(n, counts_of(id));
                    PathCheck {
                        path: if id == Diff::ROOT {
                            "total".to_string()
                        } else {
                            diff.path(id).to_string()
                        },
                        old_bytes: has_old.then(|| n.old_bytes()),
                        new_bytes: n.new_bytes(),
                        measured,
                        pass,
                        severity,
                    }
                })
                .collect();
            // Failures first, then the closest to its limit, then by path.
            checks.sort_by(|a, b| {
                a.pass
                    .cmp(&b.pass)
                    .then(b.severity.total_cmp(&a.severity))
                    .then_with(|| a.path.cmp(&b.path))
            });
            let failed = checks.iter().filter(|c| !c.pass).count();
            let room = MAX_LISTED_FAILURES.saturating_sub(listed).min(failed);
            listed += room;
            // Failures sort first.
            let failures: Vec<PathCheck> = checks[..room].to_vec();
            results.push(LimitResult {
                rule: *number,
                path: rule.path.text.clone(),
                limit: kind,
                limit_text,
                matched: checks.len(),
                pass: failed == 0,
                worst: checks.into_iter().next(),
                failures,
                failures_not_listed: failed - room,
                message: rule.message.clone(),
            });
        }
    }
    (results, unmatched)
}

/// Measures one matched path: passes?, measured value in words, severity.
/// One count of an instance's summary.
type Count = fn(&InstanceSummary) -> u64;

/// Takes the counts of the instance the path belongs to.
type Measure<'a> = Box<dyn Fn(&DiffNode, &InstanceSummary) -> (bool, String, f64) + 'a>;

fn ratio(measured: f64, limit: f64) -> f64 {
    if limit == 0.0 {
        if measured == 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        measured / limit
    }
}

fn growth_check(n: &DiffNode, growth: &Percent, min_delta: Option<&Size>) -> (bool, String, f64) {
    let (old, delta) = (n.old_bytes(), n.delta());
    let change = match (old, n.delta_percent()) {
        (0, _) if delta > 0 => format!("new path ({})", signed_human(delta)),
        (_, Some(p)) => format!("{} ({})", signed_percent(p), signed_human(delta)),
        _ => signed_human(delta),
    };
    if delta <= 0 {
        return (true, change, 0.0);
    }
    let grown = delta as u64;
    if let Some(min) = min_delta {
        if !min.reached_by(grown) {
            return (true, format!("{change}, under min_delta"), 0.0);
        }
    }
    if old == 0 {
        return (false, change, f64::INFINITY);
    }
    let percent = grown as f64 * 100.0 / old as f64;
    (
        growth.holds(old, grown),
        change,
        ratio(percent, growth.as_f64()),
    )
}

fn per_entity(n: &DiffNode, size: &Size, count: u64, noun: &str) -> (bool, String, f64) {
    let bytes = n.new_bytes();
    if count == 0 {
        return (true, format!("{} B, no {noun}s", thousands(bytes)), 0.0);
    }
    let per = bytes as f64 / count as f64;
    (
        size.holds_per(bytes, count),
        format!(
            "{per:.1} B per {noun} ({} B over {})",
            thousands(bytes),
            units::count(count, noun, &format!("{noun}s"))
        ),
        ratio(per, size.bytes().max(1) as f64),
    )
}

/// `1 of 3 files exceeds a budget`, `2 of 3 files exceed a budget`.
pub fn exceeding(failed: usize, files: usize) -> String {
    format!(
        "{} of {} {} a budget",
        thousands(failed as u64),
        units::count(files as u64, "file", "files"),
        if failed == 1 { "exceeds" } else { "exceed" }
    )
}

/// `every budget holds in 1 file`, `... in 3 files`.
pub fn holding(files: usize) -> String {
    format!(
        "every budget holds in {}",
        units::count(files as u64, "file", "files")
    )
}

/// Returned by `memprof check` when a budget is exceeded: the binary exits
/// with 1 (not 2, which means an error).
#[derive(Debug, thiserror::Error)]
#[error("{}", exceeding(*failed, *files))]
pub struct BudgetExceeded {
    pub failed: usize,
    pub files: usize,
    /// What to run next: the command that shows why, and the one that
    /// accepts intended growth.
    pub next_steps: Vec<String>,
}

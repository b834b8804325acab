//! What a recommendation is: its severity, what it measures, what it asks
//! of the user ([`Change`]), its samples; and what a rule reports before the
//! totals are known ([`Finding`]).

use serde::Serialize;

use super::EntityKind;

/// How much a recommendation matters. A change the user can make in OMMX
/// is ranked by its saving's share of the total (logical bytes, or file
/// bytes for file rules); the others are info, below every change the user
/// controls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Low,
    Medium,
    High,
}

impl crate::names::Named for Severity {
    const ALL: &'static [Self] = &[
        Severity::Info,
        Severity::Low,
        Severity::Medium,
        Severity::High,
    ];
    fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        }
    }
}

impl Severity {
    /// Lower bounds, in percent of the total, of each severity above info.
    pub const THRESHOLDS: [(Severity, f64); 3] = [
        (Severity::High, 20.0),
        (Severity::Medium, 5.0),
        (Severity::Low, 1.0),
    ];

    /// The severity of saving `part` bytes of `whole`.
    pub fn from_share(part: u64, whole: u64) -> Self {
        let percent = share_percent(part, whole);
        Self::THRESHOLDS
            .iter()
            .find(|(_, at_least)| percent >= *at_least)
            .map_or(Severity::Info, |(s, _)| *s)
    }

    pub fn label(self) -> &'static str {
        crate::names::Named::name(self)
    }
}

pub(super) fn share_percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// Which bytes a recommendation counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Measure {
    /// OMMX's logical bytes; percentages are of the logical total.
    Logical,
    /// Encoded bytes of the instance in the file; percentages are of those.
    File,
}

/// What a recommendation asks of the user, and so how its saving is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Change {
    /// A change to the instance that the OMMX version counting it reads:
    /// the saving is what OMMX reports once it is made.
    #[serde(rename = "ommx")]
    Ommx,
    /// Moving to OMMX 3.0 (3.0.0b7, a pre-release): the instance as 3.0
    /// holds it, counted by the same code as `--accounting 3.0`.
    #[serde(rename = "ommx-3.0")]
    Ommx30,
    /// A layout OMMX does not offer: what the same data would take in it,
    /// for comparison only.
    #[serde(rename = "not-in-ommx")]
    NotInOmmx,
}

impl Change {
    /// A few words for a table's column.
    pub fn label(self) -> &'static str {
        match self {
            Change::Ommx => "in OMMX",
            Change::Ommx30 => "to OMMX 3.0b7",
            Change::NotInOmmx => "not in OMMX",
        }
    }
}

/// Who owns a function or string an advise rule counts: an entity of a
/// kind, or the instance itself (the objective, the instance's metadata).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Owner {
    Entity(EntityKind),
    Instance,
}

impl Owner {
    pub fn label(self) -> &'static str {
        match self {
            Owner::Entity(kind) => kind.noun(),
            Owner::Instance => "instance",
        }
    }
}

/// One affected entity, as an example.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sample {
    pub entity: &'static str,
    pub id: Option<u64>,
    pub name: Option<String>,
    pub detail: String,
}

/// Samples kept per recommendation.
pub(super) const SAMPLES: usize = 5;
/// Longest user text (names, strings) quoted in a sample, in characters.
const QUOTE_CHARS: usize = 48;

/// User text cut to [`QUOTE_CHARS`] characters (with an ellipsis when cut).
pub(super) fn quote(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(QUOTE_CHARS).collect();
    if chars.next().is_some() {
        head + "…"
    } else {
        head
    }
}

pub(super) fn sample(kind: Owner, id: Option<u64>, name: Option<&str>, detail: String) -> Sample {
    Sample {
        entity: kind.label(),
        id,
        name: name.map(quote),
        detail,
    }
}

/// Keeps the first [`SAMPLES`] samples offered.
#[derive(Debug, Default, Clone)]
pub(super) struct Samples(pub(super) Vec<Sample>);

impl Samples {
    pub(super) fn wants(&self) -> bool {
        self.0.len() < SAMPLES
    }
    pub(super) fn offer(&mut self, make: impl FnOnce() -> Sample) {
        if self.wants() {
            self.0.push(make());
        }
    }
}

/// Keeps the [`SAMPLES`] samples of most content offered (of equal
/// content, the earliest), read largest first.
#[derive(Debug, Default, Clone)]
pub(super) struct TopSamples {
    /// (content, arrival, sample).
    top: Vec<(u64, u64, Sample)>,
    arrivals: u64,
    /// Once full, the index of the weakest kept (least content, latest
    /// arrival), which changes only when a sample is replaced: most offers
    /// are then one comparison.
    weakest: usize,
}

impl TopSamples {
    /// Offers a sample of `content` bytes (none is kept of 0), made only
    /// when kept.
    pub(super) fn offer(&mut self, content: u64, make: impl FnOnce() -> Sample) {
        self.arrivals += 1;
        if content == 0 {
            return;
        }
        if self.top.len() < SAMPLES {
            self.top.push((content, self.arrivals, make()));
        } else if content > self.top[self.weakest].0 {
            self.top[self.weakest] = (content, self.arrivals, make());
        } else {
            return;
        }
        if self.top.len() == SAMPLES {
            let (weakest, _) = self
                .top
                .iter()
                .enumerate()
                .min_by(|(_, a), (_, b)| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
                .expect("full");
            self.weakest = weakest;
        }
    }

    /// The samples kept, most content first (then in arrival order).
    pub(super) fn sorted(&self) -> Vec<Sample> {
        let mut top = self.top.clone();
        top.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        top.into_iter().map(|(_, _, s)| s).collect()
    }
}

/// One recommendation, backed by numbers.
#[derive(Debug, Clone, Serialize)]
pub struct Recommendation {
    /// Stable identifier of the rule that produced it.
    pub rule: &'static str,
    /// What it asks of the user: a change in OMMX, moving to OMMX 3.0, or
    /// a layout OMMX does not offer.
    pub change: Change,
    pub severity: Severity,
    pub measure: Measure,
    /// What was found, in one sentence.
    pub title: String,
    /// Bytes the recommendation is about.
    pub bytes_concerned: u64,
    /// Bytes saved by following it: what OMMX reports once the change is
    /// made (for `not-in-ommx`, what the other layout would take less).
    pub saving_bytes: u64,
    /// `saving_bytes` as a percentage of the total (logical or file bytes,
    /// by `measure`), two decimals.
    pub saving_percent: f64,
    /// Profile paths (folded frames) where the concerned bytes are.
    pub paths: Vec<String>,
    pub sample: Vec<Sample>,
    pub suggestion: String,
    /// Rule-specific figures.
    pub details: serde_json::Map<String, serde_json::Value>,
}

/// What a rule reports before the totals are known.
pub(super) struct Finding {
    pub(super) rule: &'static str,
    pub(super) change: Change,
    pub(super) measure: Measure,
    pub(super) title: String,
    pub(super) bytes_concerned: u64,
    pub(super) saving_bytes: u64,
    pub(super) paths: Vec<String>,
    pub(super) sample: Vec<Sample>,
    pub(super) suggestion: String,
    pub(super) details: serde_json::Map<String, serde_json::Value>,
}

impl Finding {
    pub(super) fn into_recommendation(self, total_bytes: u64, wire_bytes: u64) -> Recommendation {
        let whole = match self.measure {
            Measure::Logical => total_bytes,
            Measure::File => wire_bytes,
        };
        let percent = (share_percent(self.saving_bytes, whole) * 100.0).round() / 100.0;
        let severity = match self.change {
            Change::Ommx => Severity::from_share(self.saving_bytes, whole),
            Change::Ommx30 | Change::NotInOmmx => Severity::Info,
        };
        Recommendation {
            rule: self.rule,
            change: self.change,
            severity,
            measure: self.measure,
            title: self.title,
            bytes_concerned: self.bytes_concerned,
            saving_bytes: self.saving_bytes,
            saving_percent: percent,
            paths: self.paths,
            sample: self.sample,
            suggestion: self.suggestion,
            details: self.details,
        }
    }
}

/// Builds a details map from `(key, value)` pairs, in order.
pub(super) fn details<const N: usize>(
    pairs: [(&str, serde_json::Value); N],
) -> serde_json::Map<String, serde_json::Value> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// A rule that does not apply to an instance, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotComputed {
    pub rule: &'static str,
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kept as a search of the weakest at every offer keeps them.
    #[test]
    fn top_samples_keep_the_most_content_earliest_first() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for round in 0..200 {
            let mut top = TopSamples::default();
            let mut all = Vec::new();
            for arrival in 0..(round % 40) as u64 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let content = state % [3, 10, 1_000][round % 3];
                let text = format!("{arrival}");
                top.offer(content, || {
                    sample(Owner::Instance, Some(arrival), None, text.clone())
                });
                if content > 0 {
                    all.push((content, arrival));
                }
            }
            // Most content first, then earliest.
            all.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            let kept: Vec<String> = top.sorted().into_iter().map(|s| s.detail).collect();
            let expected: Vec<String> = all.iter().take(SAMPLES).map(|a| a.1.to_string()).collect();
            assert_eq!(kept, expected, "round {round}");
        }
    }

    #[test]
    fn severity_thresholds() {
        assert_eq!(Severity::from_share(20, 100), Severity::High);
        assert_eq!(Severity::from_share(19, 100), Severity::Medium);
        assert_eq!(Severity::from_share(5, 100), Severity::Medium);
        assert_eq!(Severity::from_share(1, 100), Severity::Low);
        assert_eq!(Severity::from_share(9, 1000), Severity::Info);
        assert_eq!(Severity::from_share(1, 0), Severity::Info);
        assert!(Severity::High > Severity::Low);
    }

    #[test]
    fn changes_the_user_makes_come_first() {
        assert!(Change::Ommx < Change::Ommx30 && Change::Ommx30 < Change::NotInOmmx);
    }

    #[test]
    fn quotes_are_cut() {
        assert_eq!(quote("abc"), "abc");
        let long = "é".repeat(60);
        assert_eq!(quote(&long).chars().count(), QUOTE_CHARS + 1);
    }
}

//! The analyses a page shows, riding together on the one pass that
//! profiles its input: the largest entities, the distributions per kind
//! and family, and the advice. A surface runs the pass with
//! [`PageAnalyses::observer`] and hands [`Found::analyses`] to
//! [`super::Page::build`].

use crate::advise::{Advisors, LayerAdvice};
use crate::drill::stats::{Stats, StatsCollector};
use crate::drill::top::{Top, TopEntity};
use crate::drill::KindFilter;
use crate::pass::Observers;
use crate::report::Report;

use super::page::{Analyses, TopFound};

/// The observers of a page's pass.
pub struct PageAnalyses {
    n: usize,
    top: Top,
    stats: StatsCollector,
    advisors: Advisors,
}

/// What they found.
pub struct Found {
    n: usize,
    entities: Vec<TopEntity>,
    kinds: Vec<Stats>,
    families: Vec<Stats>,
    advice: Vec<LayerAdvice>,
}

impl PageAnalyses {
    /// `n`: rows of the largest-entities table.
    pub fn new(n: usize) -> Self {
        Self {
            n,
            top: Top::new(n, KindFilter::All),
            stats: StatsCollector::new(KindFilter::All),
            advisors: Advisors::default(),
        }
    }

    /// The one observer to give the pass.
    pub fn observer(&mut self) -> Observers<'_> {
        Observers(vec![&mut self.top, &mut self.stats, &mut self.advisors])
    }

    /// The results, once the pass produced `report`.
    pub fn finish(self, report: &Report) -> Found {
        let (kinds, families) = self.stats.report();
        Found {
            n: self.n,
            entities: self.top.into_sorted(),
            kinds,
            families,
            advice: self.advisors.advise(report),
        }
    }
}

impl Found {
    pub fn analyses(&self) -> Analyses<'_> {
        Analyses {
            top: Some(TopFound {
                kind: KindFilter::All.name(),
                n: self.n,
                entities: &self.entities,
            }),
            stats: Some((&self.kinds, &self.families)),
            advice: Some(&self.advice),
        }
    }
}

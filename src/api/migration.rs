//! The migration view (`memprof diff FILE --accounting 2.9,3.0`): one input
//! under OMMX 2.9.3's accounting and under 3.0's, from the one reading that
//! compares the two (`pass::Reading::compare`), so that a stream is read
//! once. 3.0's profile of each v1 instance is the comparison's, grouped as
//! asked; a v2 instance (and a saved baseline) is the same on both sides.
//! Where 3.0 does not read what 2.9.3 does, the view is refused as
//! `--accounting 3.0` refuses the input: the first refusal in the order the
//! instances were read, named by the layer read.

use anyhow::{Context, Result};

use super::load::read_with_pass;
use super::{Input, Options};
use crate::input::sniff::{Accept, Content};
use crate::pass::{EntityObserver, PassError, V2PassError};
use crate::profiled::{Accounting, Compared, Loaded, ProfiledInput, ProfiledInstance, Schema};

/// One input under OMMX 2.9.3's accounting (old) and under OMMX 3.0's
/// (new): what moving to 3.0 changes.
pub fn migration(input: &Input, options: &Options) -> Result<(Loaded, Loaded)> {
    let accept = Accept {
        baselines: true,
        ..Accept::default()
    };
    let mut order = ReadOrder::default();
    let mut pass = options.pass(&mut order, options.threads);
    pass.reading.accounting = Some(Accounting::Ommx29);
    pass.reading.compare = Some(options.group_by);
    let account = options.account();
    let old = match read_with_pass(input, options, accept, pass, !options.progress)? {
        Content::Instance(profiled) => profiled,
        Content::Baseline(profiled, info) => {
            let old = Loaded {
                profiled,
                account,
                baseline: Some(info),
            };
            return Ok((old.clone(), old));
        }
        Content::Folded(_) => unreachable!("folded stacks were not accepted"),
    };
    let mut new =
        ommx30_side(&old, &order.0, options.wire).with_context(|| input.display_name())?;
    crate::real_memory::estimate_each(&mut new.instances, options.real_memory);
    let loaded = |profiled| Loaded {
        profiled,
        account,
        baseline: None,
    };
    Ok((loaded(old), loaded(new)))
}

/// The positions the pass read instances at, in its order
/// (`EntityObserver::begin`): an archive's blobs are read in storage order.
#[derive(Debug, Default)]
struct ReadOrder(Vec<Option<usize>>);

impl EntityObserver for ReadOrder {
    fn begin(&mut self, layer: Option<usize>) {
        self.0.push(layer);
    }
    fn abandon(&mut self) {
        self.0.pop();
    }
    fn counts_only(&self) -> bool {
        true
    }
    fn sees_entities(&self) -> bool {
        false
    }
}

/// The input as OMMX 3.0 holds it: each v1 instance the comparison's
/// profile (its layer, title and position 2.9.3's), the others as they
/// are; or the refusal `--accounting 3.0` gives, that of the first
/// instance read (in `order`) that 3.0 refuses, or whose wire view
/// (`wire`) it cannot show.
fn ommx30_side(
    old: &ProfiledInput,
    order: &[Option<usize>],
    wire: bool,
) -> Result<ProfiledInput, PassError> {
    for &layer in order {
        let read = old.instances.iter().find(|i| i.observed_as == layer);
        let refusal = match read.and_then(compared) {
            Some(Compared::Refused(why)) => V2PassError::Compared(why.clone()),
            Some(Compared::Measured(_)) if wire => V2PassError::WireView,
            _ => continue,
        };
        return Err(PassError::V2 {
            layer,
            source: refusal,
        });
    }
    let instances = old.instances.iter().map(|i| match compared(i) {
        None => i.clone(),
        Some(Compared::Measured(ommx30)) => ProfiledInstance {
            instance_index: i.instance_index,
            observed_as: i.observed_as,
            title: i.title.clone(),
            ..(**ommx30).clone()
        },
        Some(Compared::Refused(_)) => unreachable!("a refusal was returned above"),
    });
    Ok(ProfiledInput {
        input: old.input.clone(),
        instances: instances.collect(),
    })
}

/// 3.0's comparison of a v1 instance (a comparing pass compares each of its
/// layers once); `None` for v2, which both accountings count alike.
fn compared(instance: &ProfiledInstance) -> Option<&Compared> {
    let first = || {
        instance
            .compared
            .first()
            .expect("a comparing pass compares ommx.v1")
    };
    (instance.schema == Schema::V1).then(first)
}

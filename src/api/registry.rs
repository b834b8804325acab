//! `memprof ls` without an input: OMMX's local registry, listed
//! ([`registry`]). (A name read as an input is found in it by
//! `api/resolve.rs`.)

use std::sync::Arc;

use anyhow::Result;

use super::load::read_one;
use super::resolve::root;
use super::{Input, Options};
use crate::input::registry;
use crate::input::sniff::{Accept, Content};
use crate::input::DecodeError;
use crate::profiled::registry::Listing;
use crate::real_memory::Effort;

/// The local registry's images (`memprof ls` without an input): names,
/// tags and layers from the manifests alone, or, with `logical`, each
/// instance layer profiled too (its blob read and checked).
pub fn registry(options: &Options, logical: bool) -> Result<Listing> {
    let root = root(options)?;
    let mut nothing = ();
    let mut pass = options.pass(&mut nothing, None);
    let registry::Contents {
        layouts,
        images: found,
    } = registry::list(&root, &mut pass)?;
    let profiling = Options {
        layer: None,
        real_memory: Effort::ClosedForm,
        ..options.clone()
    };
    let mut images = Vec::with_capacity(found.len());
    for (image, mut listed) in found {
        if logical {
            let name = image.given.clone();
            let input = Input::Image(Arc::new(image));
            let content = read_one(&input, &profiling, Accept::default(), &mut (), None, true)?;
            let Content::Instance(profiled) = content else {
                unreachable!("only instances were accepted");
            };
            for instance in &profiled.instances {
                let bytes = instance.aggregate.total_bytes();
                let layer = instance
                    .instance_index
                    .and_then(|i| listed.instances.get_mut(i))
                    .ok_or_else(|| DecodeError::NoInstanceLayer(name.clone()))?;
                layer.logical_bytes = Some(bytes);
            }
            listed.logical_bytes =
                Some(listed.instances.iter().flat_map(|l| l.logical_bytes).sum());
        }
        images.push(listed);
    }
    Ok(Listing {
        root: root.display().to_string(),
        layouts,
        logical,
        images,
    })
}

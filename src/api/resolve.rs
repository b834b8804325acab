//! A name that is no file, read as an image of OMMX's local registry:
//! every surface's inputs pass through [`resolve`] before they are read.

use std::borrow::Cow;
use std::sync::Arc;

use anyhow::{Context, Result};

use super::{Input, Options};
use crate::input::registry::{self, RegistryError};

/// `input` as it is read: a path that is not there but is an image
/// reference with a tag or digest (`ghcr.io/org/name:tag`,
/// `name@sha256:…`) is that image of the local registry. A path that
/// exists always wins over a name.
pub(super) fn resolve<'i>(input: &'i Input, options: &Options) -> Result<Cow<'i, Input>> {
    let Input::Path(path) = input else {
        return Ok(Cow::Borrowed(input));
    };
    let (Err(_), Some(text)) = (std::fs::symlink_metadata(path), path.to_str()) else {
        return Ok(Cow::Borrowed(input));
    };
    if registry::Reference::parse(text).is_none() {
        return Ok(Cow::Borrowed(input));
    }
    let root = root(options)?;
    match registry::find(text, &root) {
        Ok(Some(image)) => Ok(Cow::Owned(Input::Image(Arc::new(image)))),
        Ok(None) => Ok(Cow::Borrowed(input)),
        // The message names the reference already.
        Err(e @ RegistryError::NotFound { .. }) => Err(e.into()),
        Err(e) => Err(e).context(text.to_string()),
    }
}

/// The root the options name, or OMMX's.
pub(super) fn root(options: &Options) -> Result<std::path::PathBuf> {
    registry::root(options.registry.as_deref()).with_context(|| {
        format!(
            "no home directory to find OMMX's local registry in: set {} or --registry",
            registry::ROOT_VARIABLE
        )
    })
}

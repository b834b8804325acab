//! The OMMX 3.0 side of the pass: an `ommx.v2` payload, or an `ommx.v1` one
//! counted as 3.0 holds it after `from_v1_bytes`, read whole and profiled
//! with [`crate::model::v2`]'s accounting into the same [`Accounts`] the v1
//! pass fills, so everything after the pass (renderers, diff, check) is
//! shared.
//!
//! The entity observers (`top`, `stats`, `explain`, `advise`) and the wire
//! view are built on v1's entities and encoding; they are refused here rather
//! than shown numbers that do not follow 3.0's layout.

use std::io::Read;

use crate::model::v2;
use crate::model::ModelError;
use crate::ommx_v1::{function::Function as Arm, Function};
use crate::profile::family::GroupBy;
use crate::profile::{LogicalMemoryProfile, Path};

use super::{profile_instance, Accounts, Pass};
use crate::decode::{DecodeError, InstanceError, V2PassError};
use crate::report::InstanceSummary;
use crate::report::ProfiledInstance;
use crate::report::{Accounting, Schema};

/// Profiles one payload of `schema` with OMMX 3.0's accounting.
pub(crate) fn profile<R: Read>(
    reader: R,
    total: Option<u64>,
    max_element: Option<u64>,
    instance_index: Option<usize>,
    title: Option<String>,
    schema: Schema,
    pass: &mut Pass<'_>,
) -> Result<ProfiledInstance, DecodeError> {
    let fail = |source| DecodeError::V2 {
        layer: instance_index,
        source,
    };
    let mut bytes = Vec::with_capacity(total.unwrap_or(0).min(1 << 26) as usize);
    // A payload of unknown length is one element under `--max-element`.
    let cap = max_element.map_or(u64::MAX, |m| m.saturating_add(1));
    reader.take(cap).read_to_end(&mut bytes)?;
    if let Some(limit) = max_element.filter(|&m| bytes.len() as u64 > m) {
        return Err(fail(V2PassError::TooLarge(limit)));
    }
    let model = match schema {
        Schema::V2 => v2::decode(&bytes).map_err(|e| fail(e.into()))?,
        Schema::V1 => from_v1(&bytes, instance_index)?,
    };
    // Refused only once the payload reads as one: raw input that is neither
    // v1 nor v2 keeps v1's error.
    if let Some(name) = pass.observer.v1_analysis() {
        return Err(fail(V2PassError::V1Analysis(name)));
    }
    if pass.options.wire {
        return Err(fail(V2PassError::WireView));
    }
    if pass.options.group_by != GroupBy::None {
        return Err(fail(V2PassError::GroupBy));
    }
    let mut accounts = Accounts::new(Default::default());
    model.visit_logical_memory(&mut Path::new(), &mut accounts.memory);
    accounts.memory.release_cache();
    let summary = InstanceSummary {
        variables: model.variable_count() as u64,
        constraints: model.constraint_count() as u64,
        removed_constraints: model.removed_count() as u64,
        named_functions: model.named_functions.len() as u64,
        terms: model.stored_terms() as u64,
        wire_bytes: bytes.len() as u64,
    };
    Ok(ProfiledInstance {
        instance_index,
        title,
        summary,
        aggregate: accounts.memory,
        wire: None,
        schema,
        accounting: Accounting::Ommx30,
    })
}

/// An `ommx.v1` payload as OMMX 3.0 loads it: first accepted by the v1 pass
/// (2.9.3's validation, which 3.0's reader applies too), then converted.
/// 3.0 also reads expression functions, which 2.9.3 refuses: those are
/// validated by the conversion, the rest by the v1 pass on a copy without them.
fn from_v1(bytes: &[u8], layer: Option<usize>) -> Result<v2::Instance, DecodeError> {
    use prost::Message;
    let v1_pass = |bytes: &[u8]| {
        let mut scratch = Accounts::new(Default::default());
        profile_instance(bytes, Some(bytes.len() as u64), &mut scratch, &mut ())
            .map(|_| ())
            .map_err(|source| DecodeError::Instance { layer, source })
    };
    let first = v1_pass(bytes);
    let decode = || {
        crate::ommx_v1::Instance::decode(bytes).map_err(|e| DecodeError::Instance {
            layer,
            source: InstanceError::Decode {
                field: "Instance",
                offset: bytes.len() as u64,
                source: e,
            },
        })
    };
    let message = match first {
        Ok(()) => decode()?,
        Err(DecodeError::Instance {
            source: InstanceError::Rejected(ModelError::ExpressionFunction),
            ..
        }) => {
            let message = decode()?;
            let mut without = message.clone();
            for_each_function(&mut without, &mut |f| {
                if let Some(Arm::Expression(_)) = f.function {
                    f.function = Some(Arm::Constant(0.0));
                }
            });
            v1_pass(&without.encode_to_vec())?;
            message
        }
        Err(e) => return Err(e),
    };
    v2::from_v1(message).map_err(|e| DecodeError::V2 {
        layer,
        source: V2PassError::Conversion(e.to_string()),
    })
}

/// Every function of a v1 instance.
fn for_each_function(i: &mut crate::ommx_v1::Instance, f: &mut dyn FnMut(&mut Function)) {
    i.objective.iter_mut().for_each(&mut *f);
    for c in &mut i.constraints {
        c.function.iter_mut().for_each(&mut *f);
    }
    for r in &mut i.removed_constraints {
        for c in r.constraint.iter_mut() {
            c.function.iter_mut().for_each(&mut *f);
        }
    }
    for n in &mut i.named_functions {
        n.function.iter_mut().for_each(&mut *f);
    }
    i.decision_variable_dependency.values_mut().for_each(f);
}

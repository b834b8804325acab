//! memprof: see where the memory of an OMMX optimization problem goes.
//!
//! The pipeline, one module per stage, data flowing one way:
//! [`decode`] (bytes → streamed entities) → [`model`] (OMMX's in-memory types
//! and normalization) → [`profile`] (leaf-only traversal into one
//! [`profile::Aggregate`]) → [`render`] (every output format is a view of
//! that aggregate). [`cli`] turns arguments into plain options and [`run`]
//! wires the stages together.

pub mod advise;
pub mod api;
pub mod check;
pub mod cli;
pub mod commands;
pub mod diff;
pub mod drill;
pub mod errors;
pub mod ids;
pub mod input;
pub mod model;
pub mod names;
pub mod output;
pub mod pass;
pub mod profile;
pub mod progress;
pub mod render;
pub mod report;
pub mod trace;
pub mod units;
pub mod wire;

/// Types generated from proto/ by build.rs.
pub mod ommx_v1 {
    #![allow(clippy::all, clippy::pedantic, missing_docs)]
    include!(concat!(env!("OUT_DIR"), "/ommx.v1.rs"));
}

/// `ommx.v2` types (OMMX 3.0's schema) generated from proto/ommx/v2 by build.rs.
pub mod ommx_v2 {
    #![allow(clippy::all, clippy::pedantic, missing_docs)]
    include!(concat!(env!("OUT_DIR"), "/ommx.v2.rs"));
}

pub use commands::run;

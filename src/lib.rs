//! memprof: see where the memory of an OMMX optimization problem goes,
//! counted exactly as OMMX counts it.
//!
//! [`api`] is the door: every surface (the `memprof` binary through
//! [`cli`] and [`commands`], the Python wheel, the HTML report) turns what
//! its user gave into [`api::Options`] and [`api::Input`]s, calls one of its
//! functions and renders the document it returns with [`render`].
//!
//! Below it, data flows one way through floors that import only downward
//! (ARCHITECTURE.md is the map, and a test holds the code to it):
//! [`input`] (files, archives, gzip, stdin; what an input is) →
//! [`pass`] (the streaming pass: frame, count or build, check in OMMX's
//! order) → [`model`] (OMMX's in-memory types and every layout constant)
//! → [`profile`] (leaf-only visitors into one [`profile::Aggregate`]) and
//! [`report`] (what a run found) → the analyses ([`advise`], [`drill`],
//! [`diff`], [`check`]). [`wire`] reads protobuf for all of them.

pub mod advise;
pub mod api;
pub mod check;
pub mod cli;
pub mod commands;
pub mod diff;
pub mod drill;
pub mod errors;
#[cfg(test)]
mod fixtures;
pub mod ids;
pub mod input;
pub mod model;
pub mod names;
pub mod output;
pub mod pages;
pub mod pass;
pub mod profile;
pub mod profiled;
pub mod progress;
pub mod real_memory;
pub mod render;
pub mod trace;
pub mod units;
pub mod wire;

/// Types generated from proto/ by build.rs.
pub mod ommx_v1 {
    #![allow(clippy::all, clippy::pedantic, missing_docs)]
    include!(concat!(env!("OUT_DIR"), "/ommx.v1.rs"));

    /// A `Function`'s oneof arm: which variant it is on the wire (named
    /// apart from the model's normalized `Function`).
    pub type FunctionArm = function::Function;
}

/// `ommx.v2` types (OMMX 3.0's schema) generated from proto/ommx/v2 by build.rs.
pub mod ommx_v2 {
    #![allow(clippy::all, clippy::pedantic, missing_docs)]
    include!(concat!(env!("OUT_DIR"), "/ommx.v2.rs"));
}

pub use commands::run;

//! Layouts OMMX does not offer, which `advise` compares OMMX's with: the
//! constraint functions as one sparse matrix in compressed-sparse-row form,
//! a function stored once and shared by the constraints that repeat it, a
//! string stored once and shared. No OMMX version holds an instance so;
//! what they would take is arithmetic on these sizes, not a measurement.

/// CSR: per row, its offset (8 bytes); per stored term, 8 bytes per
/// variable id and 8 for the coefficient.
pub const CSR_ROW: u64 = 8;
pub const CSR_ID: u64 = 8;
pub const CSR_COEFFICIENT: u64 = 8;

/// What each further user of a shared function keeps: a reference (8
/// bytes) and its scale factor (8 bytes).
pub const SHARE_HANDLE: u64 = 16;

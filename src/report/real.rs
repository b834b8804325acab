//! The real-memory estimate of one instance: what loading it in a runtime
//! would make the process hold, and the most it would hold while loading.
//! An estimate (`model::real` says how it is made), kept apart from the
//! byte-exact logical profile.

use std::fmt;

/// The runtime whose memory is estimated: a Python process loading the
/// instance from bytes with one version of the `ommx` package.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Runtime {
    /// `ommx.v1.Instance.from_bytes(b)` with ommx 2.9.3.
    #[serde(rename = "ommx 2.9.3 (Python)")]
    Ommx29Python,
    /// `ommx.Instance.from_v1_bytes(b)` (or `from_v2_bytes`) with ommx 3.0.0b7.
    #[serde(rename = "ommx 3.0.0b7 (Python)")]
    Ommx30Python,
}

impl fmt::Display for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Runtime::Ommx29Python => "OMMX 2.9.3 (Python)",
            Runtime::Ommx30Python => "OMMX 3.0.0b7 (Python)",
        })
    }
}

/// Bytes beyond the interpreter: `resident_bytes` held once the instance is
/// loaded and the input bytes freed, `load_peak_bytes` the most held while
/// loading, the input bytes included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RealMemory {
    pub runtime: Runtime,
    pub resident_bytes: u64,
    pub load_peak_bytes: u64,
}

impl RealMemory {
    /// Several instances loaded one after another in one process (the layers
    /// of an archive, several files): all of them held, and the largest
    /// load's transient on top of the others held; `None` when any has no
    /// estimate or their runtimes differ.
    pub fn combined(each: &[Option<RealMemory>]) -> Option<RealMemory> {
        let first = (*each.first()?)?;
        let mut resident = 0u64;
        let mut transient = 0u64;
        for real in each {
            let real = (*real)?;
            if real.runtime != first.runtime {
                return None;
            }
            resident += real.resident_bytes;
            transient = transient.max(real.load_peak_bytes.saturating_sub(real.resident_bytes));
        }
        Some(RealMemory {
            runtime: first.runtime,
            resident_bytes: resident,
            load_peak_bytes: resident + transient,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn real(resident_bytes: u64, load_peak_bytes: u64) -> Option<RealMemory> {
        Some(RealMemory {
            runtime: Runtime::Ommx29Python,
            resident_bytes,
            load_peak_bytes,
        })
    }

    #[test]
    fn instances_loaded_together_hold_all_and_peak_on_the_largest_load() {
        let both = RealMemory::combined(&[real(100, 150), real(10, 90)]).unwrap();
        assert_eq!((both.resident_bytes, both.load_peak_bytes), (110, 190));
        assert_eq!(RealMemory::combined(&[real(1, 2), None]), None);
        assert_eq!(RealMemory::combined(&[]), None);
    }
}

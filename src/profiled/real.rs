//! The real-memory estimate of one instance: what loading it in a runtime
//! would make the process hold, and the most it would hold while loading.
//! An estimate (`real_memory` says how it is made), kept apart from the
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
/// loading, the input bytes included; `held_bytes` the part of the resident
/// that the instance's own allocations take, by the kind of entity that owns
/// them (the rest of the resident is heap the allocator kept). Both figures
/// are a load's in a process that has loaded an instance before;
/// `first_load_extra_bytes` is what a fresh process's first load holds
/// beyond that, once (the runtime's own set-up), as measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RealMemory {
    pub runtime: Runtime,
    pub resident_bytes: u64,
    pub load_peak_bytes: u64,
    /// Absent from a baseline saved before it was estimated.
    #[serde(default)]
    pub held_bytes: Held,
    /// What a fresh process's first load holds beyond `resident_bytes`
    /// (`bench/real_memory.py first-loads`); absent from a baseline saved
    /// before it was measured.
    #[serde(default)]
    pub first_load_extra_bytes: u64,
}

/// The instance's own allocations once loaded, glibc's chunks and mappings
/// included, by owner: each entity kind's map nodes, its functions' tables
/// and its labels (names, subscripts, parameters, descriptions).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Held {
    pub decision_variables: u64,
    pub objective: u64,
    pub constraints: u64,
    pub removed_constraints: u64,
    /// The instance's own description and anything owned by no entity.
    pub instance: u64,
}

impl Held {
    /// Each part with its name as JSON writes it, in JSON's order.
    pub fn parts(&self) -> [(&'static str, u64); 5] {
        [
            ("decision_variables", self.decision_variables),
            ("objective", self.objective),
            ("constraints", self.constraints),
            ("removed_constraints", self.removed_constraints),
            ("instance", self.instance),
        ]
    }

    pub fn total(&self) -> u64 {
        self.parts().iter().map(|(_, bytes)| bytes).sum()
    }

    /// The parts scaled down, in proportion, to at most `resident` in all:
    /// an instance whose chunks partly fill pages the process already had
    /// (a small one, in the interpreter's free chunks) holds only part of
    /// what they take in new pages.
    pub fn within(self, resident: u64) -> Held {
        let total = self.total();
        if total <= resident {
            return self;
        }
        let part =
            |bytes: u64| (u128::from(bytes) * u128::from(resident) / u128::from(total)) as u64;
        Held {
            decision_variables: part(self.decision_variables),
            objective: part(self.objective),
            constraints: part(self.constraints),
            removed_constraints: part(self.removed_constraints),
            instance: part(self.instance),
        }
    }

    /// The heap the allocator keeps beyond the instance's allocations: the
    /// resident's other part.
    pub fn kept_by_allocator(&self, resident: u64) -> u64 {
        resident.saturating_sub(self.total())
    }
}

impl std::ops::Add for Held {
    type Output = Held;
    fn add(self, o: Held) -> Held {
        Held {
            decision_variables: self.decision_variables + o.decision_variables,
            objective: self.objective + o.objective,
            constraints: self.constraints + o.constraints,
            removed_constraints: self.removed_constraints + o.removed_constraints,
            instance: self.instance + o.instance,
        }
    }
}

impl RealMemory {
    /// Several instances loaded one after another in one process (the layers
    /// of an archive, several files): all of them held, and the largest
    /// load's transient on top of the others held, and a first load's extra
    /// once; `None` when any has no estimate or their runtimes differ.
    pub fn combined(each: &[Option<RealMemory>]) -> Option<RealMemory> {
        let first = (*each.first()?)?;
        let mut resident = 0u64;
        let mut transient = 0u64;
        let mut held = Held::default();
        for real in each {
            let real = (*real)?;
            if real.runtime != first.runtime {
                return None;
            }
            resident += real.resident_bytes;
            transient = transient.max(real.load_peak_bytes.saturating_sub(real.resident_bytes));
            held = held + real.held_bytes;
        }
        Some(RealMemory {
            runtime: first.runtime,
            resident_bytes: resident,
            load_peak_bytes: resident + transient,
            held_bytes: held,
            first_load_extra_bytes: first.first_load_extra_bytes,
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
            held_bytes: Held {
                constraints: resident_bytes / 2,
                ..Held::default()
            },
            first_load_extra_bytes: 7,
        })
    }

    /// A baseline saved before the held part was estimated still reads.
    #[test]
    fn a_baseline_without_the_held_part_reads_as_none_held() {
        let old = r#"{"runtime":"ommx 2.9.3 (Python)","resident_bytes":9,"load_peak_bytes":12}"#;
        let real: RealMemory = serde_json::from_str(old).unwrap();
        assert_eq!(real.resident_bytes, 9);
        assert_eq!(real.held_bytes, Held::default());
        assert_eq!(real.first_load_extra_bytes, 0);
    }

    /// `parts` names the fields as serde writes them.
    #[test]
    fn the_parts_are_named_as_json_names_them() {
        let held = Held {
            decision_variables: 1,
            objective: 2,
            constraints: 3,
            removed_constraints: 4,
            instance: 5,
        };
        let json = serde_json::to_value(held).unwrap();
        for (name, bytes) in held.parts() {
            assert_eq!(json[name], bytes, "{name}");
        }
        assert_eq!(held.total(), 15);
    }

    #[test]
    fn instances_loaded_together_hold_all_and_peak_on_the_largest_load() {
        let both = RealMemory::combined(&[real(100, 150), real(10, 90)]).unwrap();
        assert_eq!((both.resident_bytes, both.load_peak_bytes), (110, 190));
        assert_eq!(both.held_bytes.constraints, 55);
        assert_eq!(both.held_bytes.kept_by_allocator(both.resident_bytes), 55);
        // One process: its first load's extra is paid once.
        assert_eq!(both.first_load_extra_bytes, 7);
        assert_eq!(RealMemory::combined(&[real(1, 2), None]), None);
        assert_eq!(RealMemory::combined(&[]), None);
    }
}

//! Which OMMX schema a payload was read with and whose accounting counts it.

use serde::Serialize;

/// The schema of one instance payload.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub enum Schema {
    #[serde(rename = "ommx.v1")]
    #[default]
    V1,
    #[serde(rename = "ommx.v2")]
    V2,
}

pub const V1_MEDIA_TYPE: &str = "application/org.ommx.v1.instance";
pub const V2_MEDIA_TYPE: &str = "application/org.ommx.v2.instance";

impl Schema {
    /// The schema of an instance layer's media type; `None` for other layers.
    pub fn of_media_type(media_type: &str) -> Option<Self> {
        match media_type {
            V1_MEDIA_TYPE => Some(Schema::V1),
            V2_MEDIA_TYPE => Some(Schema::V2),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Schema::V1 => "ommx.v1",
            Schema::V2 => "ommx.v2",
        }
    }

    /// The accounting a payload of this schema gets unless asked otherwise.
    pub fn default_accounting(self) -> Accounting {
        match self {
            Schema::V1 => Accounting::Ommx29,
            Schema::V2 => Accounting::Ommx30,
        }
    }
}

/// Whose `logical_memory_profile()` a profile reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Accounting {
    /// `ommx` 2.9.3, reading `ommx.v1`.
    #[serde(rename = "2.9")]
    Ommx29,
    /// `ommx` 3.0.0b7, reading `ommx.v2` (or `ommx.v1` through `from_v1_bytes`).
    #[serde(rename = "3.0")]
    Ommx30,
}

impl Accounting {
    /// The package version whose numbers these are.
    pub fn version(self) -> &'static str {
        match self {
            Accounting::Ommx29 => "2.9.3",
            Accounting::Ommx30 => "3.0.0b7",
        }
    }

    /// The JSON `accounting` field of a profile counted this way.
    pub fn describe(self) -> &'static str {
        match self {
            Accounting::Ommx29 => "ommx 2.9.3 logical_memory_profile",
            Accounting::Ommx30 => "ommx 3.0.0b7 logical_memory_profile",
        }
    }
}

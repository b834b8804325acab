//! Choices users name in words (a format, a grouping, an entity kind, a
//! severity): each type names its values once, here read back from text by
//! every surface alike (the command line's value parsers, the Python
//! wheel's keyword arguments).

/// A value with a name users type.
pub trait Named: Copy + PartialEq + 'static {
    /// Every value, in the order lists of them are shown.
    const ALL: &'static [Self];
    /// The name users type and documents repeat.
    fn name(self) -> &'static str;
}

/// The value of `T` named `text`; the error names `what` was asked for and
/// every name it takes.
pub fn from_name<T: Named>(what: &str, text: &str) -> Result<T, String> {
    T::ALL
        .iter()
        .copied()
        .find(|value| value.name() == text)
        .ok_or_else(|| {
            let allowed: Vec<String> = T::ALL.iter().map(|v| format!("{:?}", v.name())).collect();
            format!("{what} must be one of {}, not {text:?}", allowed.join(", "))
        })
}

/// A value offered to users, with what it means (none: listed bare, by
/// name only).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Choice<T> {
    pub value: T,
    pub help: Option<&'static str>,
}

/// `value`, with what it means.
pub const fn choice<T>(value: T, help: &'static str) -> Choice<T> {
    Choice {
        value,
        help: Some(help),
    }
}

/// `value`, by its name only.
pub const fn bare<T>(value: T) -> Choice<T> {
    Choice { value, help: None }
}

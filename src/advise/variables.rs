//! The variables shown, kept until the end of the instance tells which are
//! used (`unused-variables`, under either accounting).
//!
//! A million variables held each a 40-byte record (id, bytes, label
//! content, where its name lies), the largest part of `advise`'s and
//! `report`'s peak on the 198 MB LP, grown by doubling. Variables with
//! consecutive ids and the same costs and name length, as instances write
//! them, share one run here; the names lie one after another in one string.
//! A run is never larger than a record was, so no instance costs more.
//! Both grow with the instance, in huge pages once large ([`HugeTables`]).

use crate::pages::{HugeTables, HugeVec};

/// The variables shown, in the order shown.
#[derive(Debug, Clone)]
pub struct Variables {
    runs: HugeVec<Run>,
    /// The names, one after another (each pushed whole from a `str`).
    names: HugeVec<u8>,
    /// The lengths of the names [`LONG`] stands for, in order.
    long: Vec<u64>,
    /// How many variables the runs hold.
    count: u64,
}

/// Variables with ids `first`, `first + 1`, … (`count` of them), each with
/// these costs and a name of `name_len` bytes.
#[derive(Debug, Clone, Copy)]
struct Run {
    first: u64,
    count: u32,
    /// [`NO_NAME`], [`LONG`] or the length.
    name_len: u32,
    bytes: u64,
    content: u64,
}

/// The `name_len` of a variable without a name.
const NO_NAME: u32 = u32::MAX;
/// The `name_len` of a name too long for the field: its length is in
/// [`Variables::long`], and its run holds it alone.
const LONG: u32 = u32::MAX - 1;

/// One variable, as it was shown.
#[derive(Debug, Clone, Copy)]
pub struct Variable<'a> {
    pub id: u64,
    /// Its logical bytes.
    pub bytes: u64,
    /// Its label content (inside `bytes`).
    pub content: u64,
    /// Where its name lies in `names`, if it has one.
    name: Option<(usize, usize)>,
    names: &'a [u8],
}

impl<'a> Variable<'a> {
    /// Its name, as it was given (looked up only when asked: most
    /// variables' names are never shown).
    pub fn name(&self) -> Option<&'a str> {
        self.name.map(|(start, end)| {
            std::str::from_utf8(&self.names[start..end]).expect("a name pushed whole from a str")
        })
    }
}

impl Default for Variables {
    fn default() -> Self {
        Self {
            runs: HugeVec::new_in(HugeTables),
            names: HugeVec::new_in(HugeTables),
            long: Vec::new(),
            count: 0,
        }
    }
}

impl Variables {
    /// Keeps variable `id`, which costs `bytes`, `content` of them labels.
    #[inline]
    pub fn push(&mut self, id: u64, bytes: u64, content: u64, name: Option<&str>) {
        self.count += 1;
        let name_len = match name {
            None => NO_NAME,
            Some(name) => {
                self.names.extend_from_slice(name.as_bytes());
                match u32::try_from(name.len()) {
                    Ok(len) if len < LONG => len,
                    _ => {
                        self.long.push(name.len() as u64);
                        LONG
                    }
                }
            }
        };
        if let Some(last) = self.runs.last_mut() {
            let follows = last.first.checked_add(u64::from(last.count)) == Some(id);
            if follows
                && last.count < u32::MAX
                && name_len != LONG
                && last.name_len == name_len
                && last.bytes == bytes
                && last.content == content
            {
                last.count += 1;
                return;
            }
        }
        self.runs.push(Run {
            first: id,
            count: 1,
            name_len,
            bytes,
            content,
        });
    }

    /// How many variables were shown.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// Each variable, in the order shown.
    pub fn for_each(&self, mut f: impl FnMut(Variable<'_>)) {
        let mut at = 0;
        let mut long = self.long.iter();
        for run in &self.runs {
            for i in 0..u64::from(run.count) {
                let len = match run.name_len {
                    NO_NAME => None,
                    LONG => Some(*long.next().expect("a length per long name") as usize),
                    len => Some(len as usize),
                };
                let name = len.map(|len| {
                    at += len;
                    (at - len, at)
                });
                f(Variable {
                    id: run.first + i,
                    bytes: run.bytes,
                    content: run.content,
                    name,
                    names: &self.names,
                });
            }
        }
    }

    /// Each variable's id, in the order shown.
    pub fn for_each_id(&self, mut f: impl FnMut(u64)) {
        for run in &self.runs {
            (0..u64::from(run.count)).for_each(|i| f(run.first + i));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(vars: &Variables) -> Vec<(u64, u64, u64, Option<String>)> {
        let mut out = Vec::new();
        vars.for_each(|v| out.push((v.id, v.bytes, v.content, v.name().map(String::from))));
        out
    }

    #[test]
    fn gives_back_every_variable_in_order() {
        let shown: Vec<(u64, u64, u64, Option<String>)> = vec![
            (0, 10, 0, Some("x".into())),
            (1, 10, 0, Some("y".into())),
            (2, 10, 0, Some("zz".into())),
            (3, 12, 2, None),
            (4, 12, 2, None),
            (9, 12, 2, None),
            (8, 12, 2, Some(String::new())),
            (u64::MAX, 1, 1, Some("m".into())),
            (0, 1, 1, Some("m".into())),
            (1, 1, 1, Some("é".into())),
        ];
        let mut vars = Variables::default();
        for (id, bytes, content, name) in &shown {
            vars.push(*id, *bytes, *content, name.as_deref());
        }
        assert_eq!(vars.len(), shown.len() as u64);
        assert_eq!(all(&vars), shown);
        let mut ids = Vec::new();
        vars.for_each_id(|id| ids.push(id));
        assert_eq!(ids, shown.iter().map(|s| s.0).collect::<Vec<_>>());
    }

    #[test]
    fn consecutive_alike_variables_share_a_run() {
        let mut vars = Variables::default();
        for id in 0..1000 {
            vars.push(id, 40, 3, Some("x"));
        }
        assert_eq!(vars.runs.len(), 1);
        vars.push(1000, 41, 3, Some("x"));
        vars.push(1001, 41, 3, Some("xy"));
        assert_eq!(vars.runs.len(), 3);
        assert_eq!(vars.len(), 1002);
    }
}

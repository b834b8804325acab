//! The one contract of every renderer: a document writes itself (twiggy's
//! `Emit`). Each document says once which formats it is written in and
//! what each looks like ([`Document::FORMATS`]); the command line offers
//! exactly those (`cli/choices.rs` reads them), and [`write`] refuses any
//! other with the one "has no ... format" error. [`write`] is the one
//! exhaustive `match` on [`Format`]: a new format is a new variant, a new
//! method here (not written, by default) and a new arm, which the compiler
//! asks for.

use std::io::Write;

use anyhow::Result;

use super::format::Format;
use crate::names::Choice;

/// What a renderer writes: an API result, with the options of its view
/// where it has any.
pub trait Document {
    /// The command that shows it, as errors name it (`inspect`, `diff`).
    const NAME: &'static str;
    /// The formats it is written in, in the order they are offered, each
    /// with what it looks like there.
    const FORMATS: &'static [Choice<Format>];

    /// `path bytes` lines, as inferno and OMMX read them.
    fn folded(&self, _out: &mut dyn Write) -> Result<()> {
        not_written(Self::NAME, Format::Folded)
    }
    /// An indented tree.
    fn tree(&self, _out: &mut dyn Write) -> Result<()> {
        not_written(Self::NAME, Format::Tree)
    }
    /// Tables for people.
    fn table(&self, _out: &mut dyn Write) -> Result<()> {
        not_written(Self::NAME, Format::Table)
    }
    /// The document as data: JSON, or (`yaml`) the same as YAML.
    fn data(&self, _yaml: bool, _out: &mut dyn Write) -> Result<()> {
        not_written(Self::NAME, Format::Json)
    }
    /// A pull-request comment.
    fn markdown(&self, _out: &mut dyn Write) -> Result<()> {
        not_written(Self::NAME, Format::Markdown)
    }
    /// JUnit XML.
    fn junit(&self, _out: &mut dyn Write) -> Result<()> {
        not_written(Self::NAME, Format::Junit)
    }
    /// speedscope's file.
    fn speedscope(&self, _out: &mut dyn Write) -> Result<()> {
        not_written(Self::NAME, Format::Speedscope)
    }
    /// A flamegraph.
    fn svg(&self, _out: &mut dyn Write) -> Result<()> {
        not_written(Self::NAME, Format::Svg)
    }
    /// A page.
    fn html(&self, _out: &mut dyn Write) -> Result<()> {
        not_written(Self::NAME, Format::Html)
    }
}

/// Whether `D` is written in `format`.
pub fn offers<D: Document>(format: Format) -> bool {
    D::FORMATS.iter().any(|offer| offer.value == format)
}

/// `document` in `format`, one of those it offers.
pub fn write<D: Document>(document: &D, format: Format, out: &mut dyn Write) -> Result<()> {
    if !offers::<D>(format) {
        return Err(unsupported(format, D::NAME));
    }
    match format {
        Format::Folded => document.folded(out),
        Format::Tree => document.tree(out),
        Format::Table => document.table(out),
        Format::Json => document.data(false, out),
        Format::Yaml => document.data(true, out),
        Format::Markdown => document.markdown(out),
        Format::Junit => document.junit(out),
        Format::Speedscope => document.speedscope(out),
        Format::Svg => document.svg(out),
        Format::Html => document.html(out),
    }
}

/// The error of a document asked for a format it does not offer (the
/// command line keeps that from happening; the Python package does not).
fn unsupported(format: Format, what: &str) -> anyhow::Error {
    anyhow::anyhow!("{what} has no {} format", format.name())
}

/// A format a document offers but does not write: a bug, which its tests
/// find.
fn not_written(what: &str, format: Format) -> Result<()> {
    Err(anyhow::anyhow!(
        "{what} offers the {} format but does not write it (a bug in memprof)",
        format.name()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::bare;

    /// A document offering a table and its data, writing only the table.
    struct Toy;

    impl Document for Toy {
        const NAME: &'static str = "toy";
        const FORMATS: &'static [Choice<Format>] = &[bare(Format::Table), bare(Format::Json)];

        fn table(&self, out: &mut dyn Write) -> Result<()> {
            Ok(out.write_all(b"a table\n")?)
        }
    }

    fn written(format: Format) -> Result<String> {
        let mut out = Vec::new();
        write(&Toy, format, &mut out)?;
        Ok(String::from_utf8(out)?)
    }

    #[test]
    fn a_document_is_written_in_the_formats_it_offers_only() {
        assert_eq!(written(Format::Table).unwrap(), "a table\n");
        assert!(offers::<Toy>(Format::Json) && !offers::<Toy>(Format::Yaml));
        let refused = written(Format::Yaml).unwrap_err().to_string();
        assert_eq!(refused, "toy has no yaml format");
        // Offered but not written: a bug, said as one.
        let missing = written(Format::Json).unwrap_err().to_string();
        assert!(missing.contains("(a bug in memprof)"), "{missing}");
    }
}

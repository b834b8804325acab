//! `ommx_memprof._native`: the memprof library seen from Python.
//!
//! Deliberately thin. Every number and every text comes from the memprof
//! library, through the same functions the CLI calls: this file only turns
//! Python arguments into library options, runs the work with the GIL
//! released, and turns errors into Python exceptions (`ValueError` with the
//! line `memprof: error:` would print; a panic, which would be a bug, into
//! `RuntimeError` instead of a crashed interpreter). The Python package
//! (`python/ommx_memprof/`) builds the friendly API on top.

use std::io::Write;
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;

use anyhow::{Context, Result};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use memprof::advise::Advisors;
use memprof::check::{self, budget::Budget, CheckReport};
use memprof::cli::choices::{self, Choices};
use memprof::decode::{self, Input, Selection};
use memprof::drill::{explain::Explainer, stats::StatsCollector, top::Top};
use memprof::pass::{self, EntityObserver};
use memprof::profile::family::GroupBy;
use memprof::render::advice::AdviceView;
use memprof::render::diff::{self as diff_render, DiffView, DiffViewOptions};
use memprof::render::{self, svg::SvgOptions, Format, Profile, ViewOptions};
use memprof::report::Report;
use memprof::source::{self, LoadOptions, Source};

// As in the binary: decoding allocates and frees many small values, which
// mimalloc does markedly faster. Only Rust's allocations use it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Runs `work`, mapping an error to `ValueError` (its one-line reason) and a
/// panic to `RuntimeError`.
fn guarded<T>(work: impl FnOnce() -> Result<T>) -> PyResult<T> {
    match panic::catch_unwind(AssertUnwindSafe(work)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(PyValueError::new_err(memprof::cli::one_line(&err))),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(PyRuntimeError::new_err(format!(
                "memprof panicked (a bug in memprof): {what}"
            )))
        }
    }
}

/// A clap value name (`name`, `constraint`, `table`, ...) as the CLI spells it.
fn value<T: Copy>(choices: Choices<T>, what: &str, text: &str) -> Result<T> {
    choices
        .0
        .iter()
        .find(|c| c.name == text)
        .map(|c| c.value)
        .ok_or_else(|| {
            let allowed: Vec<String> = choices.0.iter().map(|c| format!("{:?}", c.name)).collect();
            anyhow::anyhow!("{what} must be one of {}, not {text:?}", allowed.join(", "))
        })
}

fn utf8(bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes).context("the output is not UTF-8 (a bug in memprof)")
}

/// Renders into a string.
fn text(render: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<String> {
    let mut out = Vec::new();
    render(&mut out)?;
    utf8(out)
}

/// Where a profile's instance is, for the analyses that read it again
/// (top, stats, advise need their own pass over the entities).
enum Origin {
    /// A file or directory, as given.
    Path(String),
    /// Bytes handed over from Python, spooled to a private temporary file
    /// that lives as long as the profile.
    Spooled {
        file: tempfile::NamedTempFile,
        name: String,
    },
}

impl Origin {
    fn path(&self) -> PathBuf {
        match self {
            Origin::Path(p) => PathBuf::from(p),
            Origin::Spooled { file, .. } => file.path().to_path_buf(),
        }
    }

    fn name(&self) -> &str {
        match self {
            Origin::Path(p) => p,
            Origin::Spooled { name, .. } => name,
        }
    }

    /// Errors name the input as the user knows it, not the spool file.
    fn named(&self, err: anyhow::Error) -> anyhow::Error {
        match self {
            Origin::Path(_) => err,
            Origin::Spooled { file, name } => {
                let spool = file.path().display().to_string();
                anyhow::anyhow!(memprof::cli::one_line(&err).replace(&spool, name))
            }
        }
    }

    /// Loads the profile (an instance, or a baseline JSON), named as the
    /// user knows it.
    fn load(&self, options: &LoadOptions) -> Result<Source> {
        let mut source = source::load(&self.path(), options).map_err(|e| self.named(e))?;
        source.report.document.name = self.name().to_string();
        Ok(source)
    }

    /// One more pass over the instance, showing every entity to `observer`.
    fn observe(
        &self,
        layer: Option<usize>,
        options: pass::ProfileOptions,
        observer: &mut dyn EntityObserver,
    ) -> Result<Report> {
        let selection = layer.map_or(Selection::All, Selection::Layer);
        let mut pass = pass::Pass {
            options,
            ..pass::Pass::new(observer)
        };
        let bar = memprof::progress::bar(true);
        let input = Input::Path(self.path());
        let mut report = pass::read(
            &input,
            selection,
            &decode::Limits::default(),
            &mut pass,
            &bar,
        )
        .with_context(|| input.display_name())
        .map_err(|e| self.named(e))?;
        report.document.name = self.name().to_string();
        Ok(report)
    }
}

/// One loaded profile. Immutable: every method renders a view of it.
#[pyclass(frozen, name = "Profile", module = "ommx_memprof._native")]
struct NativeProfile {
    source: Source,
    origin: Origin,
    layer: Option<usize>,
    group_by: GroupBy,
}

fn options(layer: Option<usize>, view: &str, group_by: Option<&str>) -> Result<LoadOptions> {
    let wire = match view {
        "memory" => false,
        "wire" => true,
        other => anyhow::bail!("view must be \"memory\" or \"wire\", not {other:?}"),
    };
    let group_by = match group_by {
        None => GroupBy::None,
        Some(g) => value(choices::GROUP_BY, "group_by", g)?,
    };
    Ok(LoadOptions {
        profile: pass::ProfileOptions { group_by, wire },
        layer,
        quiet: true,
        limits: decode::Limits::default(),
        reading: pass::Reading::default(),
        threads: None,
    })
}

/// Profiles the file or directory at `path` (an instance, an archive, or a
/// baseline JSON).
#[pyfunction]
#[pyo3(signature = (path, layer=None, view="memory", group_by=None))]
fn profile_path(
    py: Python<'_>,
    path: String,
    layer: Option<usize>,
    view: &str,
    group_by: Option<&str>,
) -> PyResult<NativeProfile> {
    py.detach(|| {
        guarded(|| {
            let options = options(layer, view, group_by)?;
            let origin = Origin::Path(path);
            let source = origin.load(&options)?;
            Ok(NativeProfile {
                source,
                origin,
                layer,
                group_by: options.profile.group_by,
            })
        })
    })
}

/// Profiles `data` (raw instance bytes, an archive, gzip ...), naming it
/// `name` in reports and errors.
#[pyfunction]
#[pyo3(signature = (data, name, layer=None, view="memory", group_by=None))]
fn profile_bytes(
    py: Python<'_>,
    data: &[u8],
    name: String,
    layer: Option<usize>,
    view: &str,
    group_by: Option<&str>,
) -> PyResult<NativeProfile> {
    py.detach(|| {
        guarded(|| {
            let options = options(layer, view, group_by)?;
            let mut file = tempfile::NamedTempFile::new()
                .with_context(|| format!("{name}: cannot create a temporary file"))?;
            file.write_all(data)
                .and_then(|()| file.flush())
                .with_context(|| format!("{name}: cannot write a temporary file"))?;
            let origin = Origin::Spooled { file, name };
            let source = origin.load(&options)?;
            Ok(NativeProfile {
                source,
                origin,
                layer,
                group_by: options.profile.group_by,
            })
        })
    })
}

#[pymethods]
impl NativeProfile {
    /// The input as named in reports.
    #[getter]
    fn name(&self) -> String {
        self.source.name().to_string()
    }

    /// Total bytes.
    #[getter]
    fn total(&self) -> u64 {
        self.source.profile().total_bytes()
    }

    /// Whether the profile was read from a saved baseline JSON.
    #[getter]
    fn is_baseline(&self) -> bool {
        self.source.baseline.is_some()
    }

    /// `memprof inspect --format FORMAT`.
    #[pyo3(signature = (format, depth=None, min_percent=0.0, top=25))]
    fn render(
        &self,
        py: Python<'_>,
        format: &str,
        depth: Option<usize>,
        min_percent: f64,
        top: usize,
    ) -> PyResult<String> {
        py.detach(|| {
            guarded(|| {
                let format = value(choices::INSPECT_FORMATS, "format", format)?;
                let profile = self.source.profile();
                let view = ViewOptions {
                    depth,
                    min_percent,
                    top,
                };
                text(|out| render::profile(&profile, None, &view, format, out))
            })
        })
    }

    /// `memprof flamegraph -o -`: the SVG.
    #[pyo3(signature = (title=None, inverted=false, min_width=None))]
    fn flamegraph(
        &self,
        py: Python<'_>,
        title: Option<String>,
        inverted: bool,
        min_width: Option<f64>,
    ) -> PyResult<String> {
        py.detach(|| {
            guarded(|| {
                let options = SvgOptions {
                    title,
                    inverted,
                    min_width,
                };
                text(|out| render::svg::render(&self.source.profile(), &options, out))
            })
        })
    }

    /// `memprof top`: (table, JSON).
    #[pyo3(signature = (n=10, kind="all"))]
    fn top(&self, py: Python<'_>, n: usize, kind: &str) -> PyResult<(String, String)> {
        py.detach(|| {
            guarded(|| {
                let kind = value(choices::KINDS, "kind", kind)?;
                let mut top = Top::new(n, kind);
                let report = self
                    .origin
                    .observe(self.layer, Default::default(), &mut top)?;
                let profile = Profile::new(&report);
                let entities = top.into_sorted();
                let top_report = render::top::TopReport {
                    profile: &profile,
                    kind: kind.name(),
                    n,
                    entities: &entities,
                };
                both(|format, out| render::top::render(&top_report, format, out))
            })
        })
    }

    /// `memprof stats`: (table, JSON).
    #[pyo3(signature = (kind="all", top=25))]
    fn stats(&self, py: Python<'_>, kind: &str, top: usize) -> PyResult<(String, String)> {
        py.detach(|| {
            guarded(|| {
                let kind = value(choices::KINDS, "kind", kind)?;
                let mut stats = StatsCollector::new(kind);
                let report = self
                    .origin
                    .observe(self.layer, Default::default(), &mut stats)?;
                let profile = Profile::new(&report);
                let (kinds, families) = stats.report();
                both(|format, out| {
                    render::stats::render(&profile, &kinds, &families, top, format, out)
                })
            })
        })
    }

    /// `memprof advise`: (table, JSON).
    #[pyo3(signature = (min_severity="info"))]
    fn advise(&self, py: Python<'_>, min_severity: &str) -> PyResult<(String, String)> {
        py.detach(|| {
            guarded(|| {
                let min_severity = value(choices::SEVERITIES, "min_severity", min_severity)?;
                let mut advisors = Advisors::default();
                let report = self
                    .origin
                    .observe(self.layer, Default::default(), &mut advisors)?;
                let layers = advisors.advise(&report);
                let profile = Profile::new(&report);
                let view = AdviceView {
                    profile: &profile,
                    layers: &layers,
                    min_severity,
                };
                Ok((
                    text(|out| render::advice::render(&view, Format::Table, out))?,
                    text(|out| render::advice::render(&view, Format::Json, out))?,
                ))
            })
        })
    }

    /// `memprof explain PATH...` (with the profile's `--group-by`): (table, JSON).
    fn explain(&self, py: Python<'_>, paths: Vec<String>) -> PyResult<(String, String)> {
        py.detach(|| {
            guarded(|| {
                if paths.is_empty() {
                    anyhow::bail!("explain needs at least one path");
                }
                let paths: Vec<String> = paths.iter().map(|p| p.trim().to_string()).collect();
                let mut explainer = Explainer::new(&paths, self.group_by);
                let options = pass::ProfileOptions {
                    group_by: self.group_by,
                    wire: false,
                };
                let report = self.origin.observe(self.layer, options, &mut explainer)?;
                let profile = Profile::new(&report);
                let explanations = explainer
                    .checked_explanations(&profile, self.origin.name())
                    .map_err(|e| self.origin.named(e))?;
                both(|format, out| render::explain::render(&profile, &explanations, format, out))
            })
        })
    }

    /// `memprof diff SELF NEW --format FORMAT`: `self` is the old side.
    #[pyo3(signature = (new, format="table", top=None, depth=None))]
    fn diff(
        &self,
        py: Python<'_>,
        new: &NativeProfile,
        format: &str,
        top: Option<usize>,
        depth: Option<usize>,
    ) -> PyResult<String> {
        py.detach(|| {
            guarded(|| {
                let format = value(choices::DIFF_FORMATS, "format", format)?;
                let view = DiffView::new(&self.source, &new.source);
                let options = DiffViewOptions { top, depth };
                text(|out| diff_render::render(&view, &options, format, out))
            })
        })
    }

    /// `memprof diff SELF NEW --flamegraph`: the graph with the `widths`
    /// ("new" or "old") side's frame widths; `companion` names the other.
    #[pyo3(signature = (new, widths="new", companion="the other graph"))]
    fn diff_flamegraph(
        &self,
        py: Python<'_>,
        new: &NativeProfile,
        widths: &str,
        companion: &str,
    ) -> PyResult<String> {
        py.detach(|| {
            guarded(|| {
                let widths = match widths {
                    "new" => diff_render::svg::Widths::New,
                    "old" => diff_render::svg::Widths::Old,
                    other => anyhow::bail!("widths must be \"new\" or \"old\", not {other:?}"),
                };
                let view = DiffView::new(&self.source, &new.source);
                text(|out| diff_render::svg::render(&view, widths, companion, out))
            })
        })
    }

    /// `memprof report`: the HTML page of this profile, compared with `old`
    /// when given. An instance is read again with the page's analyses; a
    /// baseline, which holds no entities, gets the page without its tables.
    #[pyo3(signature = (old=None, top=100))]
    fn report_html(
        &self,
        py: Python<'_>,
        old: Option<&NativeProfile>,
        top: usize,
    ) -> PyResult<String> {
        py.detach(|| {
            guarded(|| {
                use memprof::render::html::{Analyses, Page, PageAnalyses};
                let old = old.map(|o| &o.source);
                if self.source.baseline.is_some() {
                    let page = Page::build(&self.source, old, &Analyses::default());
                    return text(|out| render::html::render(&page, out));
                }
                let mut analyses = PageAnalyses::new(top);
                let options = pass::ProfileOptions {
                    group_by: self.group_by,
                    wire: true,
                };
                let report = self
                    .origin
                    .observe(self.layer, options, &mut analyses.observer())?;
                let found = analyses.finish(&report);
                let subject = Source {
                    report,
                    account: memprof::report::Account::Memory,
                    baseline: None,
                };
                let page = Page::build(&subject, old, &found.analyses());
                text(|out| render::html::render(&page, out))
            })
        })
    }

    /// `memprof check SELF [--baseline B] [--budget FILE]`, the budget given
    /// as a file or as text in the budget file's schema (YAML, or JSON,
    /// which is YAML too). Returns (pass, table, JSON, warnings).
    #[pyo3(signature = (budget=None, budget_file=None, baseline=None))]
    fn check(
        &self,
        py: Python<'_>,
        budget: Option<&str>,
        budget_file: Option<String>,
        baseline: Option<&NativeProfile>,
    ) -> PyResult<(bool, String, String, Vec<String>)> {
        py.detach(|| {
            guarded(|| {
                let label = budget_file.clone().unwrap_or_else(|| "budget".to_string());
                let budget = match (budget, &budget_file) {
                    (Some(_), Some(_)) => anyhow::bail!("give a budget or a budget file, not both"),
                    (Some(text), None) => Some(Budget::parse(text).context("budget")?),
                    (None, Some(path)) => Some(
                        Budget::load(std::path::Path::new(path)).with_context(|| path.clone())?,
                    ),
                    (None, None) => None,
                };
                let rules: Vec<(usize, check::budget::BudgetRule)> = match budget {
                    Some(budget) => budget
                        .rules
                        .into_iter()
                        .enumerate()
                        .map(|(i, r)| (i + 1, r))
                        .collect(),
                    None if baseline.is_some() => {
                        vec![(0, check::budget::BudgetRule::default_growth())]
                    }
                    None => anyhow::bail!("check needs a budget, a baseline or both"),
                };
                if baseline.is_none() {
                    check::require_baseline(&rules, &label)?;
                }
                let file = self.source.name().to_string();
                let (report, unmatched) =
                    check::check_file(&file, &self.source, baseline.map(|b| &b.source), &rules)?;
                let warnings = unmatched
                    .into_iter()
                    .map(|position| {
                        let (n, rule) = &rules[position];
                        format!(
                            "{file}: rule {n} (path {:?}) matches no path",
                            rule.path.text
                        )
                    })
                    .collect();
                let report = CheckReport::new(budget_file, vec![report]);
                Ok((
                    report.pass,
                    text(|out| Ok(render::check::table::render(&report, out)?))?,
                    text(|out| render::check::json::render(&report, false, out))?,
                    warnings,
                ))
            })
        })
    }
}

/// A drill-down report as a table and as JSON.
fn both(render: impl Fn(Format, &mut dyn Write) -> Result<()>) -> Result<(String, String)> {
    Ok((
        text(|out| render(Format::Table, out))?,
        text(|out| render(Format::Json, out))?,
    ))
}

/// The `memprof` command, in this process: `argv` as `sys.argv` (its first
/// item is replaced by `memprof`). Returns the exit status.
#[pyfunction]
fn run_cli(py: Python<'_>, argv: Vec<std::ffi::OsString>) -> u8 {
    let args: Vec<std::ffi::OsString> = std::iter::once("memprof".into())
        .chain(argv.into_iter().skip(1))
        .collect();
    py.detach(|| {
        // The panic message is already on stderr (the default hook); 101 is
        // the status a panicking Rust binary exits with.
        panic::catch_unwind(|| memprof::cli::main(args)).unwrap_or(101)
    })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Strings returned to Python keep the tables' natural width, whatever
    // terminal the interpreter runs in (`memprof` commands decide their own).
    memprof::render::width::set_fit(false);
    m.add_class::<NativeProfile>()?;
    m.add_function(wrap_pyfunction!(profile_path, m)?)?;
    m.add_function(wrap_pyfunction!(profile_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

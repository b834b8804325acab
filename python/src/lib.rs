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

use anyhow::{Context, Result};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use memprof::api::{self, from_name, GroupBy, Input, KindFilter, Loaded, Options, Severity};
use memprof::render::advice;
use memprof::render::diff::{self as diff_render, DiffView, DiffViewOptions};
use memprof::render::{self, svg::SvgOptions, Format, ViewOptions};

// As in the binary: decoding allocates and frees many small values, which
// mimalloc does markedly faster. Only Rust's allocations use it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Runs `work`, mapping an error to `ValueError` (its one-line reason) and a
/// panic to `RuntimeError`.
fn guarded<T>(work: impl FnOnce() -> Result<T>) -> PyResult<T> {
    match panic::catch_unwind(AssertUnwindSafe(work)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(PyValueError::new_err(api::one_line(&err))),
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

/// A value named as the command line names it (`name`, `constraint`,
/// `table`, ...), for the keyword argument `what`.
fn value<T: api::Named>(what: &str, text: &str) -> Result<T> {
    from_name(what, text).map_err(anyhow::Error::msg)
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

/// One loaded profile. Immutable: every method renders a view of it, or
/// reads its input again for an analysis of the entities.
#[pyclass(frozen, name = "Profile", module = "ommx_memprof._native")]
struct NativeProfile {
    loaded: Loaded,
    input: Input,
    options: Options,
}

fn options(layer: Option<usize>, view: &str, group_by: Option<&str>) -> Result<Options> {
    let wire = match view {
        "memory" => false,
        "wire" => true,
        other => anyhow::bail!("view must be \"memory\" or \"wire\", not {other:?}"),
    };
    let group_by = match group_by {
        None => GroupBy::None,
        Some(g) => value("group_by", g)?,
    };
    Ok(Options {
        group_by,
        wire,
        layer,
        ..Options::default()
    })
}

fn load(input: Input, options: Options) -> Result<NativeProfile> {
    let loaded = api::load(&input, &options)?;
    Ok(NativeProfile {
        loaded,
        input,
        options,
    })
}

/// Profiles the file or directory at `path` (an instance, an archive, or a
/// baseline JSON), or, where no file has that name, the image of OMMX's
/// local registry it names (under `registry`, else OMMX's root).
#[pyfunction]
#[pyo3(signature = (path, layer=None, view="memory", group_by=None, registry=None))]
fn profile_path(
    py: Python<'_>,
    path: String,
    layer: Option<usize>,
    view: &str,
    group_by: Option<&str>,
    registry: Option<std::path::PathBuf>,
) -> PyResult<NativeProfile> {
    py.detach(|| {
        guarded(|| {
            let options = Options {
                registry,
                ..options(layer, view, group_by)?
            };
            load(Input::from_arg(&path), options)
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
            let input = Input::from_bytes(&name, data)
                .with_context(|| format!("{name}: cannot write a temporary file"))?;
            load(input, options)
        })
    })
}

/// One layer of an artifact as Python hands it over: media type, digest,
/// size, annotations, and the blob of an instance layer.
type PyLayer<'py> = (
    String,
    String,
    u64,
    std::collections::BTreeMap<String, String>,
    Option<Bound<'py, pyo3::types::PyBytes>>,
);

/// Profiles an artifact handed over as its layers (`ommx.artifact.Artifact`'s
/// descriptors and instance blobs), naming it `name`.
#[pyfunction]
#[pyo3(signature = (layers, name, layer=None, view="memory", group_by=None))]
fn profile_layers(
    py: Python<'_>,
    layers: Vec<PyLayer<'_>>,
    name: String,
    layer: Option<usize>,
    view: &str,
    group_by: Option<&str>,
) -> PyResult<NativeProfile> {
    // The blobs are copied out while Python's objects can be read.
    let layers = layers
        .into_iter()
        .map(
            |(media_type, digest, size, annotations, blob)| api::HandedLayer {
                media_type,
                digest,
                size,
                annotations,
                bytes: blob.map(|b| b.as_bytes().to_vec()),
            },
        )
        .collect();
    py.detach(|| {
        guarded(|| {
            let options = options(layer, view, group_by)?;
            let input = Input::from_artifact(&name, layers)
                .with_context(|| format!("{name}: cannot write a temporary file"))?;
            load(input, options)
        })
    })
}

#[pymethods]
impl NativeProfile {
    /// The input as named in reports.
    #[getter]
    fn name(&self) -> String {
        self.loaded.name().to_string()
    }

    /// Total bytes.
    #[getter]
    fn total(&self) -> u64 {
        self.loaded.profile().total_bytes()
    }

    /// The real-memory estimate of the instances: (runtime, resident bytes,
    /// load-peak bytes, the instance's own part by owner as (owner, bytes)
    /// pairs in JSON's order, a fresh process's first load's extra bytes),
    /// or `None` (a baseline saved without one).
    #[getter]
    #[allow(clippy::type_complexity)]
    fn real_memory(&self) -> Option<(String, u64, u64, Vec<(&'static str, u64)>, u64)> {
        self.loaded.profile().real_memory().map(|r| {
            (
                r.runtime.to_string(),
                r.resident_bytes,
                r.load_peak_bytes,
                r.held_bytes.parts().to_vec(),
                r.first_load_extra_bytes,
            )
        })
    }

    /// Whether the profile was read from a saved baseline JSON.
    #[getter]
    fn is_baseline(&self) -> bool {
        self.loaded.baseline.is_some()
    }

    /// `memprof inspect --format FORMAT`, the tree cut as `inspect` cuts it
    /// (a screenful unless `all`).
    #[pyo3(signature = (format, depth=None, min_percent=None, all=false, top=25))]
    fn render(
        &self,
        py: Python<'_>,
        format: &str,
        depth: Option<usize>,
        min_percent: Option<f64>,
        all: bool,
        top: usize,
    ) -> PyResult<String> {
        py.detach(|| {
            guarded(|| {
                let format = value::<Format>("format", format)?;
                let profile = self.loaded.profile();
                let view = ViewOptions::asked(depth, min_percent, all, top);
                text(|out| render::profile(&profile, None, &view, format, out))
            })
        })
    }

    /// `memprof flamegraph -o -`: the SVG.
    #[pyo3(signature = (title=None, inverted=false, reverse=false, min_width=None))]
    fn flamegraph(
        &self,
        py: Python<'_>,
        title: Option<String>,
        inverted: bool,
        reverse: bool,
        min_width: Option<f64>,
    ) -> PyResult<String> {
        py.detach(|| {
            guarded(|| {
                let options = SvgOptions {
                    title,
                    inverted,
                    reverse,
                    min_width,
                };
                text(|out| render::svg::render(&self.loaded.profile(), &options, out))
            })
        })
    }

    /// `memprof top`: (table, JSON).
    #[pyo3(signature = (n=10, kind="all"))]
    fn top(&self, py: Python<'_>, n: usize, kind: &str) -> PyResult<(String, String)> {
        py.detach(|| {
            guarded(|| {
                let kind: KindFilter = value("kind", kind)?;
                let top = api::top(&self.input, &self.options, n, kind)?;
                both(|format, out| render::top::render(&top, format, out))
            })
        })
    }

    /// `memprof stats`: (table, JSON).
    #[pyo3(signature = (kind="all", top=25))]
    fn stats(&self, py: Python<'_>, kind: &str, top: usize) -> PyResult<(String, String)> {
        py.detach(|| {
            guarded(|| {
                let kind: KindFilter = value("kind", kind)?;
                let stats = api::stats(&self.input, &self.options, kind)?;
                both(|format, out| render::stats::render(&stats, top, format, out))
            })
        })
    }

    /// `memprof advise`: (table, JSON).
    #[pyo3(signature = (min_severity="info"))]
    fn advise(&self, py: Python<'_>, min_severity: &str) -> PyResult<(String, String)> {
        py.detach(|| {
            guarded(|| {
                let min_severity: Severity = value("min_severity", min_severity)?;
                let advice = api::advise(std::slice::from_ref(&self.input), &self.options)?;
                both(|format, out| advice::render_many(&advice, min_severity, format, out))
            })
        })
    }

    /// `memprof explain PATH...` (with the profile's `--group-by`): (table, JSON).
    fn explain(&self, py: Python<'_>, paths: Vec<String>) -> PyResult<(String, String)> {
        py.detach(|| {
            guarded(|| {
                let explained = api::explain(&self.input, &self.options, &paths)?;
                both(|format, out| render::explain::render(&explained, format, out))
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
                let format = value::<Format>("format", format)?;
                let view = DiffView::new(&self.loaded, &new.loaded);
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
                let view = DiffView::new(&self.loaded, &new.loaded);
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
                use memprof::render::html::{Analyses, Page};
                let old = old.map(|o| &o.loaded);
                let page = if self.loaded.baseline.is_some() {
                    Page::build(&self.loaded, old, &Analyses::default())
                } else {
                    let reported = api::report(&self.input, None, &self.options, top)?;
                    Page::build(&reported.loaded, old, &Analyses::of(&reported))
                };
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
                let budget = match (budget, &budget_file) {
                    (Some(_), Some(_)) => anyhow::bail!("give a budget or a budget file, not both"),
                    (Some(text), None) => Some(api::Budget::parse(text).context("budget")?),
                    (None, Some(path)) => Some(
                        api::Budget::load(std::path::Path::new(path))
                            .with_context(|| path.clone())?,
                    ),
                    (None, None) => None,
                };
                let outcome = api::check_one(
                    &self.loaded,
                    budget.as_ref(),
                    budget_file.as_deref(),
                    baseline.map(|b| &b.loaded),
                )?;
                let report = outcome.report;
                let warnings = outcome.warnings;
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
    m.add_function(wrap_pyfunction!(profile_layers, m)?)?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

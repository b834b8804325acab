//! `ommx_memprof._native`: the memprof library seen from Python.
//!
//! Deliberately thin. Every number and every text comes from the memprof
//! library, through the same functions the CLI calls: this file only turns
//! Python arguments into library options (a budget's Python values into
//! `BudgetValue`s, which memprof reads), runs the work with the GIL
//! released, hands results back as typed classes (`Rendered`,
//! `CheckOutcome`, `RealMemory`; the rows of their tables are
//! `render::records`'), and turns errors into Python exceptions
//! (`ValueError` with the line `memprof: error:` would print; a panic,
//! which would be a bug, into `RuntimeError` instead of a crashed
//! interpreter). The Python package (`python/ommx_memprof/`) builds the
//! friendly API on top; `ommx_memprof/_native.pyi` holds the types.

use std::io::Write;
use std::panic::{self, AssertUnwindSafe};

use anyhow::{Context, Result};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple};

use memprof::api::{
    self, from_name, BudgetValue, GroupBy, Input, KindFilter, Loaded, Options, Severity,
};
use memprof::render::advice::AdviceView;
use memprof::render::diff::svg::{DiffGraph, Widths};
use memprof::render::diff::{DiffView, DiffViewOptions};
use memprof::render::html::Page;
use memprof::render::records::{self, Table, TableAt, Value};
use memprof::render::stats::StatsView;
use memprof::render::svg::{Flamegraph, Stacks, SvgOptions};
use memprof::render::{self, Document, Format, ProfileView, ViewOptions};

// As in the binary: decoding allocates and frees many small values, which
// mimalloc does markedly faster. Only Rust's allocations use it.
#[global_allocator]
static GLOBAL: memprof::api::Allocator = memprof::api::Allocator;

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

/// Whether a layer of this media type holds an instance (of either schema),
/// whose blob `profile_layers` needs.
#[pyfunction]
fn is_instance_layer(media_type: &str) -> bool {
    api::Schema::of_media_type(media_type).is_some()
}

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

    /// The real-memory estimate of the instances, or `None` (a baseline
    /// saved without one).
    #[getter]
    fn real_memory(&self) -> Option<RealMemory> {
        self.loaded.profile().real_memory().map(|r| RealMemory {
            runtime: r.runtime.to_string(),
            resident_bytes: r.resident_bytes,
            load_peak_bytes: r.load_peak_bytes,
            held_bytes: r.held_bytes.parts().to_vec(),
            first_load_extra_bytes: r.first_load_extra_bytes,
        })
    }

    /// One record per path holding bytes (`path`, `bytes`: its own), as
    /// the folded format lists them.
    fn records<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let table = py.detach(|| records::profile(&self.loaded.profile()));
        rows_to_py(py, &table)
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
                text(|out| render::write(&ProfileView::new(&profile, view), format, out))
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
                let profile = self.loaded.profile();
                let graph = Flamegraph {
                    stacks: Stacks::Profile(&profile),
                    options,
                };
                text(|out| render::write(&graph, Format::Svg, out))
            })
        })
    }

    /// `memprof top`.
    #[pyo3(signature = (n=10, kind="all"))]
    fn top(&self, py: Python<'_>, n: usize, kind: &str) -> PyResult<Rendered> {
        py.detach(|| {
            guarded(|| {
                let kind: KindFilter = value("kind", kind)?;
                let top = api::top(&self.input, &self.options, n, kind)?;
                Rendered::of(records::TOP, &top)
            })
        })
    }

    /// `memprof stats`.
    #[pyo3(signature = (kind="all", top=25))]
    fn stats(&self, py: Python<'_>, kind: &str, top: usize) -> PyResult<Rendered> {
        py.detach(|| {
            guarded(|| {
                let kind: KindFilter = value("kind", kind)?;
                let stats = api::stats(&self.input, &self.options, kind)?;
                Rendered::of(records::STATS, &StatsView { stats: &stats, top })
            })
        })
    }

    /// `memprof advise`.
    #[pyo3(signature = (min_severity="info"))]
    fn advise(&self, py: Python<'_>, min_severity: &str) -> PyResult<Rendered> {
        py.detach(|| {
            guarded(|| {
                let min_severity: Severity = value("min_severity", min_severity)?;
                let advice = api::advise(std::slice::from_ref(&self.input), &self.options)?;
                let view = AdviceView {
                    advice: &advice,
                    min_severity,
                };
                Rendered::of(records::ADVICE, &view)
            })
        })
    }

    /// `memprof explain PATH...` (with the profile's `--group-by`).
    fn explain(&self, py: Python<'_>, paths: Vec<String>) -> PyResult<Rendered> {
        py.detach(|| {
            guarded(|| {
                let explained = api::explain(&self.input, &self.options, &paths)?;
                Rendered::of(records::EXPLAIN, &explained)
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
                let options = DiffViewOptions { top, depth };
                let view = DiffView::new(&self.loaded, &new.loaded, options);
                text(|out| render::write(&view, format, out))
            })
        })
    }

    /// The rows of `memprof diff SELF NEW --format json`: every path,
    /// largest change first.
    fn diff_records<'py>(
        &self,
        py: Python<'py>,
        new: &NativeProfile,
    ) -> PyResult<Bound<'py, PyList>> {
        let tables = py.detach(|| {
            guarded(|| {
                let view = DiffView::new(&self.loaded, &new.loaded, DiffViewOptions::default());
                let json = text(|out| render::write(&view, Format::Json, out))?;
                records::tables(&json, records::DIFF)
            })
        })?;
        rows_to_py(py, &tables[0])
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
                    "new" => Widths::New,
                    "old" => Widths::Old,
                    other => anyhow::bail!("widths must be \"new\" or \"old\", not {other:?}"),
                };
                let view = DiffView::new(&self.loaded, &new.loaded, DiffViewOptions::default());
                let graph = DiffGraph {
                    view: &view,
                    widths,
                    companion,
                };
                text(|out| render::write(&graph, Format::Svg, out))
            })
        })
    }

    /// `memprof report`: the HTML page of this profile, compared with `old`
    /// when given. An instance is read again with the page's analyses; a
    /// baseline, which holds no entities, gets the page without its tables.
    /// `notebook`: the page as a notebook cell's output (a static summary,
    /// then the page compressed in a frame: `html::notebook`).
    #[pyo3(signature = (old=None, top=100, notebook=false))]
    fn report_html(
        &self,
        py: Python<'_>,
        old: Option<&NativeProfile>,
        top: usize,
        notebook: bool,
    ) -> PyResult<String> {
        py.detach(|| {
            guarded(|| {
                let old = old.map(|o| &o.loaded);
                let reported =
                    api::report_loaded(&self.loaded, &self.input, old, &self.options, top)?;
                let page = Page::of(&reported);
                match notebook {
                    false => text(|out| render::write(&page, Format::Html, out)),
                    true => text(|out| render::html::notebook::render(&page, out)),
                }
            })
        })
    }

    /// `memprof check SELF [--baseline B] [--budget FILE]`, the budget given
    /// as values (a size for the total, or a mapping from path to a size or
    /// to a rule's limits: `BudgetValue`) or as a budget file.
    #[pyo3(signature = (budget=None, budget_file=None, baseline=None))]
    fn check(
        &self,
        py: Python<'_>,
        budget: Option<&Bound<'_, PyAny>>,
        budget_file: Option<String>,
        baseline: Option<&NativeProfile>,
    ) -> PyResult<CheckOutcome> {
        let budget = budget.map(budget_value).transpose()?;
        let (outcome, document) = py.detach(|| {
            guarded(|| {
                let budget = match (&budget, &budget_file) {
                    (Some(_), Some(_)) => anyhow::bail!("give a budget or a budget file, not both"),
                    (Some(given), None) => Some(api::Budget::given(given).context("budget")?),
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
                let document = Rendered::of(records::CHECK, &outcome.verdicts)?;
                Ok((outcome, document))
            })
        })?;
        Ok(CheckOutcome {
            passed: outcome.verdicts.pass,
            warnings: outcome.warnings,
            document: Py::new(py, document)?,
        })
    }
}

/// A report of `top`, `stats`, `advise`, `explain` or `check`: the table
/// the command prints, its JSON document, and the tables of rows it holds
/// (`records::TOP`, ...), made without the GIL.
#[pyclass(frozen, name = "Rendered", module = "ommx_memprof._native")]
struct Rendered {
    text: String,
    json: String,
    tables: Vec<Table>,
}

impl Rendered {
    fn of(at: &[TableAt], document: &impl Document) -> Result<Self> {
        let json = text(|out| render::write(document, Format::Json, out))?;
        Ok(Self {
            text: text(|out| render::write(document, Format::Table, out))?,
            tables: records::tables(&json, at)?,
            json,
        })
    }
}

#[pymethods]
impl Rendered {
    #[getter]
    fn text(&self) -> &str {
        &self.text
    }

    #[getter]
    fn json(&self) -> &str {
        &self.json
    }

    /// The names of its tables, the main one first.
    #[getter]
    fn table_names(&self) -> Vec<&'static str> {
        self.tables.iter().map(|t| t.name).collect()
    }

    /// The rows of the table `name`, each a dict whose nested fields are
    /// named by their path (`bytes.p50`); new objects at every call.
    fn records<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyList>> {
        match self.tables.iter().find(|t| t.name == name) {
            Some(table) => rows_to_py(py, table),
            None => Err(PyValueError::new_err(format!("no table {name:?}"))),
        }
    }
}

/// What `check` found: the verdict, the warnings (rules that matched no
/// path), and the document (its table `results`).
#[pyclass(frozen, name = "CheckOutcome", module = "ommx_memprof._native")]
struct CheckOutcome {
    #[pyo3(get)]
    passed: bool,
    #[pyo3(get)]
    warnings: Vec<String>,
    #[pyo3(get)]
    document: Py<Rendered>,
}

/// The real-memory estimate of a profile's instances.
#[pyclass(frozen, name = "RealMemory", module = "ommx_memprof._native")]
struct RealMemory {
    runtime: String,
    resident_bytes: u64,
    load_peak_bytes: u64,
    held_bytes: Vec<(&'static str, u64)>,
    first_load_extra_bytes: u64,
}

#[pymethods]
impl RealMemory {
    /// The runtime estimated, e.g. `OMMX 2.9.3 (Python)`.
    #[getter]
    fn runtime(&self) -> &str {
        &self.runtime
    }

    #[getter]
    fn resident_bytes(&self) -> u64 {
        self.resident_bytes
    }

    #[getter]
    fn load_peak_bytes(&self) -> u64 {
        self.load_peak_bytes
    }

    /// What a fresh process's first load holds beyond the resident, once
    /// (measured: `bench/real_memory.py first-loads`).
    #[getter]
    fn first_load_extra_bytes(&self) -> u64 {
        self.first_load_extra_bytes
    }

    /// The instance's own part of the resident by owner, in JSON's order.
    #[getter]
    fn held_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let held = PyDict::new(py);
        for (owner, bytes) in &self.held_bytes {
            held.set_item(owner, bytes)?;
        }
        Ok(held)
    }
}

/// A table's rows as a list of dicts.
fn rows_to_py<'py>(py: Python<'py>, table: &Table) -> PyResult<Bound<'py, PyList>> {
    let rows = table
        .rows
        .iter()
        .map(|row| {
            let dict = PyDict::new(py);
            for (key, value) in row {
                dict.set_item(key, json_to_py(py, value)?)?;
            }
            Ok(dict)
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, rows)
}

/// A JSON value as Python's `json.loads` gives it.
fn json_to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into_pyobject(py)?.into_any(),
            (None, Some(i)) => i.into_pyobject(py)?.into_any(),
            (None, None) => PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let items = items
                .iter()
                .map(|v| json_to_py(py, v))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Value::Object(fields) => {
            let dict = PyDict::new(py);
            for (key, value) in fields {
                dict.set_item(key, json_to_py(py, value)?)?;
            }
            dict.into_any()
        }
    })
}

/// A budget given in Python, as memprof reads it: `str`, `int`, `float`,
/// `bool`, `None`, lists, tuples and mappings, the values `json.dumps`
/// takes; a number keeps Python's spelling (`5.0`).
fn budget_value(value: &Bound<'_, PyAny>) -> PyResult<BudgetValue> {
    let py = value.py();
    Ok(if value.is_none() {
        BudgetValue::Null
    } else if let Ok(b) = value.cast::<PyBool>() {
        BudgetValue::Bool(b.is_true())
    } else if value.cast::<PyInt>().is_ok() {
        // As json.dumps writes a subclass of int: int(x).
        let whole = py.get_type::<PyInt>().call1((value,))?;
        BudgetValue::Integer(whole.str()?.to_string())
    } else if value.cast::<PyFloat>().is_ok() {
        let number: f64 = value.extract()?;
        BudgetValue::Float {
            value: number,
            text: PyFloat::new(py, number).repr()?.to_string(),
        }
    } else if value.cast::<PyString>().is_ok() {
        BudgetValue::Text(value.extract()?)
    } else if value.cast::<PyList>().is_ok() || value.cast::<PyTuple>().is_ok() {
        BudgetValue::List(
            value
                .try_iter()?
                .map(|item| budget_value(&item?))
                .collect::<PyResult<_>>()?,
        )
    } else if let Ok(mapping) = value.cast::<PyMapping>() {
        let mut entries = Vec::new();
        for item in mapping.items()?.iter() {
            let (key, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            entries.push((budget_value(&key)?, budget_value(&value)?));
        }
        BudgetValue::Map(entries)
    } else {
        return Err(PyTypeError::new_err(format!(
            "Object of type {} is not JSON serializable",
            value.get_type().name()?
        )));
    })
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
    m.add_class::<Rendered>()?;
    m.add_class::<CheckOutcome>()?;
    m.add_class::<RealMemory>()?;
    m.add_function(wrap_pyfunction!(profile_path, m)?)?;
    m.add_function(wrap_pyfunction!(profile_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(profile_layers, m)?)?;
    m.add_function(wrap_pyfunction!(is_instance_layer, m)?)?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

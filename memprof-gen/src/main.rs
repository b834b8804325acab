//! `memprof-gen`: writes large, deterministic raw `ommx.v1.Instance` files
//! (the bytes OMMX's `Instance.to_bytes()` writes) for benchmarks and
//! stress tests.
//!
//! - `lp`: named continuous variables, a linear objective over all of them and
//!   `<= 0` constraints of K distinct variables each plus a constant -1. The
//!   default shape is the "1,000,000-term LP" of shared/OMMX.md (20,000
//!   constraints × 50 terms over 100,000 variables, about 20 MB).
//! - `qubo`: N binaries and a dense quadratic objective over every pair
//!   i < j plus a linear part (`--variables 2000` ≈ 2,000,000 terms).
//! - `archive`: an `.ommx` archive (OCI image layout in a tar) with N small
//!   LP instance layers, each from its own seed.
//!
//! The instance is streamed field by field instead of being built in memory:
//! each decision variable and constraint is encoded on its own, and the one
//! message that grows with the whole problem (the objective) is written by
//! running its encoder twice, once to learn its length and once for real.
//! Memory stays bounded by the largest constraint whatever the output size.
//!
//! Fields go out in field-number order, as prost (which OMMX's Rust core uses)
//! encodes a whole `Instance`, so the output equals `encode_to_vec()` of the
//! same instance built in memory; the unit tests check exactly that. Every
//! number comes from a seeded SplitMix64, so the same arguments give the same
//! bytes on every machine.

use std::collections::{BTreeMap, HashSet};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{ensure, Context, Result};
use clap::{Args, Parser, Subcommand};
use prost::encoding::{encode_key, encode_varint, WireType};
use prost::Message;

use memprof::ommx_v1::{
    decision_variable::Kind, function, instance::Sense, Bound, Constraint, DecisionVariable,
    Equality, Function, Linear, LinearTerm,
};
use memprof::units::thousands;
use memprof::wire::fields;

/// Independent random streams, so that e.g. changing the number of
/// constraints does not change the objective's coefficients.
mod stream {
    pub const OBJECTIVE: u64 = 1;
    pub const CONSTRAINTS: u64 = 2;
    pub const QUADRATIC: u64 = 3;
}

#[derive(Debug, Parser)]
#[command(
    name = "memprof-gen",
    version,
    about = "Write large, deterministic raw ommx.v1.Instance files for benchmarks",
    long_about = "Write large, deterministic raw ommx.v1.Instance files (the bytes OMMX's \
        Instance.to_bytes() writes) for benchmarks and stress tests. The same arguments \
        always give the same bytes. The file is streamed, so memory stays small \
        whatever its size."
)]
struct Cli {
    #[command(subcommand)]
    shape: Shape,
}

#[derive(Debug, Subcommand)]
enum Shape {
    /// A sparse LP: continuous x[i] in [0, 10], a linear objective over all of
    /// them, and constraints c[j]: (K random terms) - 1 <= 0.
    Lp(LpArgs),
    /// A dense QUBO: binaries x[i], objective sum over i<j of Q_ij x_i x_j plus
    /// a linear term for every variable.
    Qubo(QuboArgs),
    /// An .ommx archive of many small LP instances, one layer each.
    Archive(ArchiveArgs),
}

#[derive(Debug, Args)]
struct ArchiveArgs {
    /// Number of instance layers.
    #[arg(long, value_name = "N", default_value_t = 1_000)]
    instances: u64,
    /// Constraints per instance.
    #[arg(long, value_name = "C", default_value_t = 20)]
    constraints: u64,
    /// Distinct variables per constraint.
    #[arg(long, value_name = "K", default_value_t = 5)]
    terms: u64,
    /// Decision variables per instance.
    #[arg(long, value_name = "V", default_value_t = 50)]
    variables: u64,
    #[command(flatten)]
    output: Output,
}

#[derive(Debug, Args)]
struct Output {
    /// Where to write the raw instance bytes.
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// Seed of the pseudo-random coefficients and variable choices.
    #[arg(long, value_name = "S", default_value_t = 0)]
    seed: u64,
}

#[derive(Debug, Args)]
struct LpArgs {
    /// Number of constraints.
    #[arg(long, value_name = "C", default_value_t = 20_000)]
    constraints: u64,
    /// Distinct variables per constraint.
    #[arg(long, value_name = "K", default_value_t = 50)]
    terms: u64,
    /// Number of decision variables.
    #[arg(long, value_name = "V", default_value_t = 100_000)]
    variables: u64,
    #[command(flatten)]
    output: Output,
}

#[derive(Debug, Args)]
struct QuboArgs {
    /// Number of binary variables (the objective has N*(N-1)/2 quadratic terms).
    #[arg(long, value_name = "N", default_value_t = 2_000)]
    variables: u64,
    #[command(flatten)]
    output: Output,
}

/// SplitMix64 (Steele, Lea & Flood, 2014): tiny, fast, and fully determined
/// by its seed, which is all a generator of test data needs.
struct SplitMix64(u64);

impl SplitMix64 {
    /// The generator of one named stream under a user seed.
    fn new(seed: u64, stream: u64) -> Self {
        let base = SplitMix64(seed).next_u64();
        SplitMix64(base ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03))
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` by multiply-shift (Lemire); the bias, below
    /// n / 2^64, does not matter for test data.
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// ±1.00 ..= ±10.99 in steps of 0.01. Never 0: OMMX drops zero
    /// coefficients, which would make the term count differ from the shape
    /// asked for.
    fn coefficient(&mut self) -> f64 {
        let r = self.next_u64();
        let magnitude = 1.0 + (r % 1000) as f64 / 100.0;
        if r >> 63 == 1 {
            -magnitude
        } else {
            magnitude
        }
    }
}

/// `k` distinct ids from `0..n` with Floyd's algorithm: exactly `k` draws,
/// no rejection loop, however close `k` is to `n`.
fn distinct_ids(rng: &mut SplitMix64, k: u64, n: u64) -> Vec<u64> {
    let mut seen = HashSet::with_capacity(k as usize);
    let mut ids = Vec::with_capacity(k as usize);
    for j in n - k..n {
        let t = rng.below(j + 1);
        let id = if seen.contains(&t) { j } else { t };
        seen.insert(id);
        ids.push(id);
    }
    ids
}

fn variable(id: u64, kind: Kind, lower: f64, upper: f64) -> DecisionVariable {
    DecisionVariable {
        id,
        kind: kind as i32,
        bound: Some(Bound { lower, upper }),
        name: Some("x".to_owned()),
        subscripts: vec![id as i64],
        parameters: BTreeMap::new(),
        description: None,
        substituted_value: None,
    }
}

/// Every variable once, with a coefficient from `rng`.
fn dense_terms(variables: u64, mut rng: SplitMix64) -> impl Iterator<Item = LinearTerm> {
    (0..variables).map(move |id| LinearTerm {
        id,
        coefficient: rng.coefficient(),
    })
}

/// The pieces of an LP, as iterators so that the streaming writer and the
/// in-memory reference (tests) are built from the same code.
struct Lp {
    constraints: u64,
    terms: u64,
    variables: u64,
    seed: u64,
}

impl Lp {
    fn from_args(args: &LpArgs) -> Result<Self> {
        ensure!(
            args.terms <= args.variables,
            "--terms ({}) cannot exceed --variables ({}): a constraint's variables are distinct",
            args.terms,
            args.variables
        );
        Ok(Lp {
            constraints: args.constraints,
            terms: args.terms,
            variables: args.variables,
            seed: args.output.seed,
        })
    }

    fn variables(&self) -> impl Iterator<Item = DecisionVariable> {
        (0..self.variables).map(|id| variable(id, Kind::Continuous, 0.0, 10.0))
    }

    fn objective_terms(&self) -> impl Iterator<Item = LinearTerm> {
        dense_terms(
            self.variables,
            SplitMix64::new(self.seed, stream::OBJECTIVE),
        )
    }

    fn constraints(&self) -> impl Iterator<Item = Constraint> {
        let (k, n) = (self.terms, self.variables);
        let mut rng = SplitMix64::new(self.seed, stream::CONSTRAINTS);
        (0..self.constraints).map(move |id| {
            let terms = distinct_ids(&mut rng, k, n)
                .into_iter()
                .map(|var| LinearTerm {
                    id: var,
                    coefficient: rng.coefficient(),
                })
                .collect();
            Constraint {
                id,
                equality: Equality::LessThanOrEqualToZero as i32,
                function: Some(Function {
                    function: Some(function::Function::Linear(Linear {
                        terms,
                        constant: -1.0,
                    })),
                }),
                parameters: BTreeMap::new(),
                name: Some("c".to_owned()),
                description: None,
                subscripts: vec![id as i64],
            }
        })
    }

    fn write(&self, out: &mut Out<'_>) -> io::Result<()> {
        for v in self.variables() {
            out.message(fields::instance::DECISION_VARIABLES, &v)?;
        }
        out.nested(fields::instance::OBJECTIVE, &|function| {
            function.nested(fields::function::LINEAR, &|linear| {
                for term in self.objective_terms() {
                    linear.message(fields::linear::TERMS, &term)?;
                }
                Ok(())
            })
        })?;
        for c in self.constraints() {
            out.message(fields::instance::CONSTRAINTS, &c)?;
        }
        out.enumeration(fields::instance::SENSE, Sense::Minimize as i32)
    }
}

/// The pieces of a QUBO, like [`Lp`].
struct Qubo {
    variables: u64,
    seed: u64,
}

impl Qubo {
    fn from_args(args: &QuboArgs) -> Self {
        Qubo {
            variables: args.variables,
            seed: args.output.seed,
        }
    }

    fn variables(&self) -> impl Iterator<Item = DecisionVariable> {
        (0..self.variables).map(|id| variable(id, Kind::Binary, 0.0, 1.0))
    }

    /// Every pair (i, j) with i < j, row by row.
    fn pairs(&self) -> impl Iterator<Item = (u64, u64)> {
        let n = self.variables;
        (0..n).flat_map(move |i| (i + 1..n).map(move |j| (i, j)))
    }

    fn values(&self) -> impl Iterator<Item = f64> {
        let mut rng = SplitMix64::new(self.seed, stream::QUADRATIC);
        self.pairs().map(move |_| rng.coefficient())
    }

    fn linear_terms(&self) -> impl Iterator<Item = LinearTerm> {
        dense_terms(
            self.variables,
            SplitMix64::new(self.seed, stream::OBJECTIVE),
        )
    }

    fn write(&self, out: &mut Out<'_>) -> io::Result<()> {
        for v in self.variables() {
            out.message(fields::instance::DECISION_VARIABLES, &v)?;
        }
        let has_pairs = self.variables >= 2;
        out.nested(fields::instance::OBJECTIVE, &|function| {
            function.nested(fields::function::QUADRATIC, &|quadratic| {
                // prost leaves out empty packed fields; so must we.
                if has_pairs {
                    quadratic.nested(fields::quadratic::ROWS, &|rows| {
                        self.pairs().try_for_each(|(i, _)| rows.varint(i))
                    })?;
                    quadratic.nested(fields::quadratic::COLUMNS, &|columns| {
                        self.pairs().try_for_each(|(_, j)| columns.varint(j))
                    })?;
                    quadratic.nested(fields::quadratic::VALUES, &|values| {
                        self.values()
                            .try_for_each(|value| values.put(&value.to_le_bytes()))
                    })?;
                }
                quadratic.nested(fields::quadratic::LINEAR, &|linear| {
                    for term in self.linear_terms() {
                        linear.message(fields::linear::TERMS, &term)?;
                    }
                    Ok(())
                })
            })
        })?;
        out.enumeration(fields::instance::SENSE, Sense::Minimize as i32)
    }
}

/// An OCI image layout in a tar, as `ommx` writes an artifact: one manifest
/// whose layers are raw instances, an empty config, index.json and
/// oci-layout. Entries carry no timestamps, so the bytes are reproducible.
fn write_archive(args: &ArchiveArgs, out: &mut Out<'_>) -> Result<()> {
    use sha2::{Digest, Sha256};
    let digest = |b: &[u8]| format!("sha256:{}", hex::encode(Sha256::digest(b)));
    let mut tar = tar::Builder::new(Vec::new());
    let mut add = |tar: &mut tar::Builder<Vec<u8>>, name: &str, data: &[u8]| -> Result<()> {
        let mut header = tar::Header::new_ustar();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_cksum();
        tar.append_data(&mut header, name, data)?;
        // Flush each entry as it is added, so memory holds one layer at a time.
        out.put(tar.get_ref())?;
        tar.get_mut().clear();
        Ok(())
    };
    add(&mut tar, "oci-layout", br#"{"imageLayoutVersion":"1.0.0"}"#)?;
    let config = b"{}";
    add(
        &mut tar,
        &format!("blobs/sha256/{}", &digest(config)[7..]),
        config,
    )?;
    let mut layers = Vec::new();
    for i in 0..args.instances {
        let lp = Lp::from_args(&LpArgs {
            constraints: args.constraints,
            terms: args.terms,
            variables: args.variables,
            output: Output {
                output: PathBuf::new(),
                seed: args.output.seed.wrapping_add(i),
            },
        })?;
        let mut blob = Vec::new();
        lp.write(&mut Out::writing(&mut blob))?;
        let d = digest(&blob);
        add(&mut tar, &format!("blobs/sha256/{}", &d[7..]), &blob)?;
        layers.push(serde_json::json!({
            "mediaType": "application/org.ommx.v1.instance",
            "digest": d,
            "size": blob.len(),
            "annotations": {"org.ommx.v1.instance.title": format!("lp-{i}")},
        }));
    }
    let manifest = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "artifactType": "application/org.ommx.v1.artifact",
        "config": {"mediaType": "application/org.ommx.v1.config+json",
                   "digest": digest(config), "size": config.len()},
        "layers": layers,
    }))?;
    add(
        &mut tar,
        &format!("blobs/sha256/{}", &digest(&manifest)[7..]),
        &manifest,
    )?;
    let index = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2,
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                       "digest": digest(&manifest), "size": manifest.len()}],
    }))?;
    add(&mut tar, "index.json", &index)?;
    tar.finish()?;
    out.put(tar.get_ref())?;
    Ok(())
}

/// Where encoded bytes go: through to a writer, or only counted, to learn a
/// nested message's length before its header is written.
struct Out<'w> {
    writer: Option<&'w mut dyn Write>,
    len: u64,
}

impl<'w> Out<'w> {
    fn writing(writer: &'w mut dyn Write) -> Self {
        Out {
            writer: Some(writer),
            len: 0,
        }
    }

    fn counting() -> Out<'static> {
        Out {
            writer: None,
            len: 0,
        }
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.len += bytes.len() as u64;
        match &mut self.writer {
            Some(writer) => writer.write_all(bytes),
            None => Ok(()),
        }
    }

    fn varint(&mut self, value: u64) -> io::Result<()> {
        let mut buf = [0u8; 10];
        let mut rest = &mut buf[..];
        encode_varint(value, &mut rest);
        let used = 10 - rest.len();
        self.put(&buf[..used])
    }

    fn enumeration(&mut self, tag: u32, value: i32) -> io::Result<()> {
        let mut head = Vec::with_capacity(16);
        encode_key(tag, WireType::Varint, &mut head);
        // proto3 sign-extends negative enum values to 64 bits.
        encode_varint(i64::from(value) as u64, &mut head);
        self.put(&head)
    }

    /// One length-delimited field holding `message`: the tag by hand, then
    /// prost's `encode_length_delimited`.
    fn message(&mut self, tag: u32, message: &impl Message) -> io::Result<()> {
        let mut buf = Vec::with_capacity(message.encoded_len() + 16);
        encode_key(tag, WireType::LengthDelimited, &mut buf);
        message
            .encode_length_delimited(&mut buf)
            .expect("a Vec grows as needed");
        self.put(&buf)
    }

    /// One length-delimited field whose content `body` writes. The length
    /// comes first on the wire, so when writing, `body` runs twice, counting
    /// then writing, and must produce the same bytes both times (it re-seeds
    /// its random streams). When only counting, it runs once, so nesting
    /// costs one extra pass per level, not a doubling.
    fn nested(
        &mut self,
        tag: u32,
        body: &dyn Fn(&mut Out<'_>) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut counter = Out::counting();
        body(&mut counter)?;
        let mut head = Vec::with_capacity(16);
        encode_key(tag, WireType::LengthDelimited, &mut head);
        encode_varint(counter.len, &mut head);
        self.put(&head)?;
        if self.writer.is_some() {
            body(self)
        } else {
            self.len += counter.len;
            Ok(())
        }
    }
}

/// Writes through a temporary file in the same folder and renames it into
/// place, so an interrupted run never leaves a truncated file that a later
/// run (or the benchmark's "already generated" check) would take as done.
fn write_file(path: &Path, write: impl FnOnce(&mut Out<'_>) -> Result<()>) -> Result<u64> {
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".memprof-gen-");
    // A temporary file is private (0600) by default; the result is an
    // ordinary output file, so ask for what `File::create` would give.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let temp = builder
        .tempfile_in(folder)
        .with_context(|| format!("creating a temporary file in {}", folder.display()))?;
    let mut writer = BufWriter::with_capacity(1 << 20, temp);
    let len = {
        let mut out = Out::writing(&mut writer);
        write(&mut out).with_context(|| format!("writing {}", path.display()))?;
        out.len
    };
    let temp = writer
        .into_inner()
        .map_err(|e| e.into_error())
        .with_context(|| format!("writing {}", path.display()))?;
    temp.persist(path)
        .with_context(|| format!("renaming the output into place at {}", path.display()))?;
    Ok(len)
}

fn run(cli: Cli) -> Result<()> {
    let (path, len, summary) = match cli.shape {
        Shape::Lp(args) => {
            let lp = Lp::from_args(&args)?;
            let len = write_file(&args.output.output, |out| Ok(lp.write(out)?))?;
            let summary = format!(
                "LP: {} variables, {} constraints × {} terms",
                thousands(lp.variables),
                thousands(lp.constraints),
                thousands(lp.terms)
            );
            (args.output.output, len, summary)
        }
        Shape::Qubo(args) => {
            let qubo = Qubo::from_args(&args);
            let len = write_file(&args.output.output, |out| Ok(qubo.write(out)?))?;
            let n = qubo.variables;
            let summary = format!(
                "QUBO: {} variables, {} quadratic terms",
                thousands(n),
                thousands(n * n.saturating_sub(1) / 2)
            );
            (args.output.output, len, summary)
        }
        Shape::Archive(args) => {
            let len = write_file(&args.output.output, |out| write_archive(&args, out))?;
            let summary = format!(
                "archive: {} LP instances of {} variables, {} constraints × {} terms",
                thousands(args.instances),
                thousands(args.variables),
                thousands(args.constraints),
                thousands(args.terms)
            );
            (args.output.output, len, summary)
        }
    };
    eprintln!(
        "memprof-gen: wrote {}: {}; {summary}",
        path.display(),
        memprof::units::human_exact(len)
    );
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("memprof-gen: error: {err:#}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memprof::ommx_v1::{Instance, Quadratic};

    fn streamed(write: impl Fn(&mut Out<'_>) -> io::Result<()>) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut out = Out::writing(&mut bytes);
        write(&mut out).unwrap();
        let len = out.len;
        assert_eq!(len, bytes.len() as u64);
        bytes
    }

    fn lp(constraints: u64, terms: u64, variables: u64, seed: u64) -> Lp {
        Lp {
            constraints,
            terms,
            variables,
            seed,
        }
    }

    fn lp_in_memory(lp: &Lp) -> Instance {
        Instance {
            decision_variables: lp.variables().collect(),
            objective: Some(Function {
                function: Some(function::Function::Linear(Linear {
                    terms: lp.objective_terms().collect(),
                    constant: 0.0,
                })),
            }),
            constraints: lp.constraints().collect(),
            sense: Sense::Minimize as i32,
            ..Instance::default()
        }
    }

    fn qubo_in_memory(qubo: &Qubo) -> Instance {
        Instance {
            decision_variables: qubo.variables().collect(),
            objective: Some(Function {
                function: Some(function::Function::Quadratic(Quadratic {
                    rows: qubo.pairs().map(|(i, _)| i).collect(),
                    columns: qubo.pairs().map(|(_, j)| j).collect(),
                    values: qubo.values().collect(),
                    linear: Some(Linear {
                        terms: qubo.linear_terms().collect(),
                        constant: 0.0,
                    }),
                })),
            }),
            sense: Sense::Minimize as i32,
            ..Instance::default()
        }
    }

    #[test]
    fn streamed_lp_equals_prost_encoding_of_the_whole_instance() {
        for shape in [
            lp(0, 0, 0, 0),
            lp(3, 2, 5, 7),
            lp(200, 50, 300, 1),
            lp(10, 40, 40, 9),
        ] {
            let bytes = streamed(|out| shape.write(out));
            assert_eq!(bytes, lp_in_memory(&shape).encode_to_vec());
        }
    }

    #[test]
    fn streamed_qubo_equals_prost_encoding_of_the_whole_instance() {
        for (variables, seed) in [(0, 0), (1, 0), (2, 3), (150, 5)] {
            let shape = Qubo { variables, seed };
            let bytes = streamed(|out| shape.write(out));
            assert_eq!(bytes, qubo_in_memory(&shape).encode_to_vec());
        }
    }

    #[test]
    fn lp_shape_and_determinism() {
        let shape = lp(100, 30, 60, 42);
        let bytes = streamed(|out| shape.write(out));
        assert_eq!(bytes, streamed(|out| shape.write(out)));
        let other_seed = streamed(|out| lp(100, 30, 60, 43).write(out));
        assert_ne!(bytes, other_seed);

        let instance = Instance::decode(bytes.as_slice()).unwrap();
        assert_eq!(instance.decision_variables.len(), 60);
        assert_eq!(instance.constraints.len(), 100);
        for c in &instance.constraints {
            let Some(function::Function::Linear(linear)) =
                c.function.as_ref().and_then(|f| f.function.as_ref())
            else {
                panic!("constraint {} is not linear", c.id);
            };
            let ids: HashSet<u64> = linear.terms.iter().map(|t| t.id).collect();
            assert_eq!(ids.len(), 30, "constraint {} has repeated variables", c.id);
            assert!(ids.iter().all(|&id| id < 60));
            assert!(linear.terms.iter().all(|t| t.coefficient != 0.0));
            assert_eq!(linear.constant, -1.0);
        }
    }

    #[test]
    fn distinct_ids_covers_the_whole_range_when_k_equals_n() {
        let mut rng = SplitMix64::new(0, 0);
        let mut ids = distinct_ids(&mut rng, 25, 25);
        ids.sort_unstable();
        assert_eq!(ids, (0..25).collect::<Vec<_>>());
    }
}

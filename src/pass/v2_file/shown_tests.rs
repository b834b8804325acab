//! The table-entry reading with the entities shown (analyses, family
//! frames, the wire view) against the whole reading: random `ommx.v2`
//! instances, their maps' entries in random order, and the v2 fixtures
//! must give the same profile, wire view, summary and verdict, and show
//! the analyses the same entities, costs and leaves in the same order.

use std::io::Write;

use prost::Message;

use crate::ids::SplitMix64;
use crate::model::ommx30::Func;
use crate::ommx_v1 as pb1;
use crate::ommx_v2 as pb;
use crate::pass::{Cost, EntityObserver, EntityView, InFile, Pass, Payload, Singular30};
use crate::profile::family::GroupBy;
use crate::profile::{Aggregate, LogicalMemoryVisitor};
use crate::profiled::Schema;
use crate::wire::fields::v2::instance;

/// Notes every call the pass makes, as text, and the leaves it shows.
#[derive(Default)]
struct Notes {
    calls: Vec<String>,
    leaves: Aggregate,
}

impl EntityObserver for Notes {
    fn begin(&mut self, layer: Option<usize>) {
        self.calls.push(format!("begin {layer:?}"));
    }
    fn entity(&mut self, e: &EntityView<'_>, cost: Cost) {
        let EntityView {
            kind,
            id,
            name,
            subscripts,
            terms,
            used,
            ommx30,
        } = e;
        let function = ommx30.and_then(|e| e.function()).map(Func::stored_terms);
        let entity = (kind, id, name, subscripts, terms, used, function);
        self.calls.push(format!("entity {entity:?} {cost:?}"));
    }
    fn objective(&mut self, o: &EntityView<'_>, cost: Cost) {
        self.calls.push(format!("objective {:?} {cost:?}", o.terms));
    }
    fn ommx30_singular(&mut self, s: &Singular30<'_>) {
        let objective = s.objective.map(|f| format!("{f:?}"));
        let output = s.output_objective.map(|f| format!("{f:?}"));
        let assigned: Vec<_> = s.assignments.keys().collect();
        let rest = (s.description, s.annotations, s.framing_waste);
        let singular = (objective, output, assigned, rest);
        self.calls.push(format!("singular {singular:?}"));
    }
    fn leaves(&mut self) -> Option<&mut dyn LogicalMemoryVisitor> {
        Some(&mut self.leaves)
    }
    fn abandon(&mut self) {
        self.calls.clear();
        self.leaves = Aggregate::new();
    }
}

/// What a reading gave: the profile's, wire view's and leaves' lines, the
/// summary and the calls, or the error.
type Outcome = Result<(String, String, String, Vec<String>), String>;

fn lines(a: &Aggregate) -> String {
    let lines: Vec<String> = a
        .folded_lines()
        .into_iter()
        .map(|(path, bytes)| format!("{path} {bytes}"))
        .collect();
    lines.join("\n")
}

/// Reads `bytes` as v2 with `options`: where they lie in a file (on
/// `threads` threads) when `in_file`, else as a stream (read whole).
fn read(bytes: &[u8], group_by: GroupBy, wire: bool, threads: usize, in_file: bool) -> Outcome {
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(b"ab").unwrap();
    file.write_all(bytes).unwrap();
    let mut notes = Notes::default();
    let mut pass = Pass::new(&mut notes);
    pass.options.group_by = group_by;
    pass.options.wire = wire;
    pass.settings.threads = Some(threads);
    let progress = |_| {};
    let mut reader = bytes;
    let payload = Payload {
        reader: &mut reader,
        total: Some(bytes.len() as u64),
        in_file: in_file.then_some(InFile {
            file: &file,
            start: 2,
            progress: &progress,
        }),
        max_element: None,
        instance_index: None,
        title: None,
        schema: Schema::V2,
        layer_annotations: None,
    };
    let done = pass.profile(payload).map_err(|e| e.to_string())?;
    let wire = done.wire.as_ref().map(lines).unwrap_or_default();
    let summary = format!("{:?}", done.summary);
    let profile = format!("{}\n{summary}", lines(&done.aggregate));
    let mut calls = notes.calls;
    calls.push(lines(&notes.leaves));
    Ok((profile, wire, summary, calls))
}

/// Whether the table-entry reading takes `bytes` with the entities shown
/// (rather than leaving them to the whole reading).
fn streamed(bytes: &[u8]) -> bool {
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(bytes).unwrap();
    let mut notes = Notes::default();
    let mut pass = Pass::new(&mut notes);
    let progress = |_| {};
    let mut reader = bytes;
    let payload = Payload {
        reader: &mut reader,
        total: Some(bytes.len() as u64),
        in_file: Some(InFile {
            file: &file,
            start: 0,
            progress: &progress,
        }),
        max_element: None,
        instance_index: None,
        title: None,
        schema: Schema::V2,
        layer_annotations: None,
    };
    matches!(
        crate::pass::ommx30::in_file(&payload, &mut pass, false),
        Some(Ok(_))
    )
}

/// Holds the streamed readings of `bytes` to the whole one; whether the
/// table-entry reading took them.
fn check(bytes: &[u8], what: &str) -> bool {
    for (group_by, wire) in [
        (GroupBy::None, false),
        (GroupBy::Name, false),
        (GroupBy::None, true),
        (GroupBy::Name, true),
    ] {
        let whole = read(bytes, group_by, wire, 1, false);
        for threads in [1, 3] {
            let in_file = read(bytes, group_by, wire, threads, true);
            assert_eq!(
                in_file, whole,
                "{what}: {group_by:?} wire {wire}, {threads} threads"
            );
        }
    }
    streamed(bytes)
}

/// Random draws, and whether the instance being made should pass 3.0's
/// checks (tame: variables defined and binary, none fixed or dependent
/// used, every removed row with its reason, known equalities).
struct Rng(SplitMix64, bool);

/// Variables a tame instance fixes or assigns and uses nowhere else.
const FIXED: u64 = 13;
const DEPENDENT: u64 = 21;

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0.below(n)
    }
    fn chance(&mut self, one_in: u64) -> bool {
        self.0.chance(one_in)
    }
    /// An id of a variable (a few undefined ones, unless tame).
    fn var(&mut self) -> u64 {
        match self.1 {
            true => [0, 1, 2, 3, 5, 8][self.below(6) as usize],
            false => [0, 1, 2, 3, 5, 8, 13, 21, 200, 1 << 40][self.below(10) as usize],
        }
    }
    /// A refusal now and then, unless tame.
    fn wild(&mut self, one_in: u64) -> bool {
        !self.1 && self.chance(one_in)
    }
    fn label(&mut self) -> pb::ModelingLabel {
        let names = ["x", "y", "constraints", "é"];
        pb::ModelingLabel {
            name: self
                .chance(2)
                .then(|| names[self.below(4) as usize].to_string()),
            subscripts: (0..self.below(3)).map(|i| i as i64 - 1).collect(),
            parameters: match self.chance(4) {
                true => [("k".to_string(), "v".to_string())].into(),
                false => Default::default(),
            },
            description: self.chance(3).then(|| "d".repeat(self.below(200) as usize)),
        }
    }
    fn linear(&mut self) -> pb1::Linear {
        let terms = (0..self.below(6))
            .map(|_| pb1::LinearTerm {
                id: self.var(),
                coefficient: [0.0, 1.5, -2.0, 1.0][self.below(4) as usize],
            })
            .collect();
        pb1::Linear {
            terms,
            constant: [0.0, 3.0][self.below(2) as usize],
        }
    }
    /// A function over the variables, with zero and repeated terms now and
    /// then (which 3.0 drops or merges).
    fn function(&mut self) -> pb1::Function {
        use pb1::function::Function as F;
        let function = match self.below(5) {
            0 => F::Constant(2.5),
            1 => {
                let n = self.below(5) as usize;
                let ids: Vec<u64> = (0..2 * n).map(|_| self.var()).collect();
                F::Quadratic(pb1::Quadratic {
                    rows: ids[..n].to_vec(),
                    columns: ids[n..].to_vec(),
                    values: (0..n).map(|i| [1.0, 0.0, 2.0][i % 3]).collect(),
                    linear: self.chance(2).then(|| self.linear()),
                })
            }
            _ => F::Linear(self.linear()),
        };
        pb1::Function {
            function: Some(function),
        }
    }
    fn context(&mut self) -> pb::ConstraintContext {
        pb::ConstraintContext {
            label: self.chance(2).then(|| self.label()),
            provenance: match self.chance(4) {
                true => vec![pb::Provenance::default(); self.below(3) as usize],
                false => Vec::new(),
            },
        }
    }
    fn reason(&mut self) -> pb::RemovedReason {
        pb::RemovedReason {
            reason: "r".repeat(self.below(3) as usize),
            parameters: match self.chance(3) {
                true => [("a".to_string(), "b".to_string())].into(),
                false => Default::default(),
            },
        }
    }
}

/// One field of a message: `number`, length-delimited, holding `body`.
fn field(number: u32, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    prost::encoding::encode_key(number, prost::encoding::WireType::LengthDelimited, &mut out);
    prost::encoding::encode_varint(body.len() as u64, &mut out);
    out.extend_from_slice(body);
    out
}

/// A table message's fields (one encoded message per entry) in a random
/// order, as 3.0 writes some maps in hash order.
fn shuffled(rng: &mut Rng, mut entries: Vec<Vec<u8>>) -> Vec<u8> {
    for i in (1..entries.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        entries.swap(i, j);
    }
    entries.concat()
}

/// A random collection's table: rows over the variables, some removed
/// with a reason, contexts; `row` makes one row.
fn collection<R: Message + Default>(rng: &mut Rng, mut row: impl FnMut(&mut Rng) -> R) -> Vec<u8> {
    let mut entries = Vec::new();
    let one = |number: u32, id: u64, body: Vec<u8>| {
        let mut entry = Vec::new();
        if id != 0 {
            prost::encoding::uint64::encode(1, &id, &mut entry);
        }
        entry.extend(field(2, &body));
        field(number, &entry)
    };
    for id in 0..rng.below(6) {
        let removed = rng.chance(4);
        entries.push(one(1 + u32::from(removed), id, row(rng).encode_to_vec()));
        if removed && !rng.wild(5) {
            entries.push(one(3, id, rng.reason().encode_to_vec()));
        }
        if rng.chance(2) {
            entries.push(one(4, id, rng.context().encode_to_vec()));
        }
    }
    shuffled(rng, entries)
}

/// A random `ommx.v2.Instance`, mostly one OMMX 3.0 accepts, its tables'
/// entries in random order.
fn instance(rng: &mut Rng) -> Vec<u8> {
    let mut variables = Vec::new();
    let mut defined = Vec::new();
    rng.1 = !rng.chance(3);
    for id in [0, 1, 2, 3, 5, 8, 13, 21] {
        if rng.wild(8) {
            continue;
        }
        defined.push(id);
        let v = pb::DecisionVariable {
            kind: match (rng.wild(10), rng.1) {
                (true, _) => 9,
                (false, true) => 1,
                (false, false) => 1 + rng.below(3) as i32,
            },
            bound: (!rng.wild(10)).then_some(pb1::Bound {
                lower: 0.0,
                upper: 1.0,
            }),
        };
        let table = |t: pb::DecisionVariableTable| t.encode_to_vec();
        variables.push(table(pb::DecisionVariableTable {
            entries: [(id, v)].into(),
            ..Default::default()
        }));
        if rng.chance(2) {
            variables.push(table(pb::DecisionVariableTable {
                labels: [(id, rng.label())].into(),
                ..Default::default()
            }));
        }
        if (id == FIXED || !rng.1) && rng.chance(3) {
            variables.push(table(pb::DecisionVariableTable {
                fixed_values: [(id, [0.0, 1.0][rng.below(2) as usize])].into(),
                ..Default::default()
            }));
        }
    }
    let mut named = Vec::new();
    for id in 0..rng.below(4) {
        let table = |t: pb::NamedFunctionTable| t.encode_to_vec();
        let function = Some(rng.function());
        named.push(table(pb::NamedFunctionTable {
            entries: [(id, pb::NamedFunction { function })].into(),
            ..Default::default()
        }));
        if rng.chance(2) {
            named.push(table(pb::NamedFunctionTable {
                labels: [(id, rng.label())].into(),
                ..Default::default()
            }));
        }
    }
    let equality = |rng: &mut Rng| if rng.wild(10) { 7 } else { 1 };
    let regular = collection(rng, |rng| pb::RegularConstraint {
        equality: equality(rng),
        function: Some(rng.function()),
    });
    let indicator = collection(rng, |rng| pb::IndicatorConstraint {
        indicator_variable: rng.var(),
        equality: equality(rng),
        function: Some(rng.function()),
    });
    let set = |rng: &mut Rng| {
        let mut vars: Vec<u64> = (0..1 + rng.below(3)).map(|_| rng.var()).collect();
        if rng.1 {
            vars.sort_unstable();
            vars.dedup();
        }
        vars
    };
    let one_hot = collection(rng, |rng| pb::OneHotConstraint {
        variables: set(rng),
    });
    let sos1 = collection(rng, |rng| pb::Sos1Constraint {
        variables: set(rng),
    });
    let rest = pb::Instance {
        required_features: (0..rng.below(3)).map(|i| 1 + i as i32).collect(),
        sense: 1,
        description: rng.chance(3).then(|| pb1::instance::Description {
            name: Some("n".into()),
            ..Default::default()
        }),
        annotations: match rng.chance(3) {
            true => [("a".to_string(), "b".to_string())].into(),
            false => Default::default(),
        },
        decision_variable_dependency: match (rng.chance(4), rng.1) {
            (true, true) => [(DEPENDENT, rng.function())].into(),
            (true, false) => [(defined.first().copied().unwrap_or(0), rng.function())].into(),
            (false, _) => Default::default(),
        },
        output_objective: rng.chance(6).then(|| pb::OutputObjective {
            sense: 1,
            function: Some(rng.function()),
            preserves_optimality: rng.chance(2),
        }),
        ..Default::default()
    };
    let mut fields = vec![
        rest.encode_to_vec(),
        field(instance::DECISION_VARIABLES, &shuffled(rng, variables)),
        field(instance::OBJECTIVE, &rng.function().encode_to_vec()),
    ];
    let tables = [
        (instance::REGULAR_CONSTRAINTS, regular),
        (instance::INDICATOR_CONSTRAINTS, indicator),
        (instance::ONE_HOT_CONSTRAINTS, one_hot),
        (instance::SOS1_CONSTRAINTS, sos1),
        (instance::NAMED_FUNCTIONS, shuffled(rng, named)),
    ];
    for (number, body) in tables {
        if !body.is_empty() || rng.chance(2) {
            fields.push(field(number, &body));
        }
    }
    let n = fields.len();
    let mut order: Vec<usize> = (0..n).collect();
    if rng.chance(3) {
        for i in (1..n).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
    }
    order.into_iter().flat_map(|i| fields[i].clone()).collect()
}

#[test]
fn entities_shown_from_the_file_are_those_of_the_whole_reading() {
    let mut rng = Rng(SplitMix64(0x5eed_0043_0002), true);
    let (mut streamed, mut accepted, mut cases) = (0, 0, 0);
    for case in 0..600 {
        let mut bytes = instance(&mut rng);
        if rng.wild(4) && !bytes.is_empty() {
            let at = rng.below(bytes.len() as u64) as usize;
            bytes[at] = rng.0.next() as u8;
        }
        cases += 1;
        accepted += u64::from(read(&bytes, GroupBy::None, false, 1, false).is_ok());
        streamed += u64::from(check(&bytes, &format!("case {case}: {bytes:02x?}")));
    }
    // Most accepted instances are read from the file; some are refused.
    assert!(
        streamed > 300 && accepted >= streamed && cases - accepted > 100,
        "{cases} cases, {accepted} accepted, {streamed} read from the file"
    );
}

#[test]
fn v2_fixtures_shown_from_the_file_are_those_of_the_whole_reading() {
    let mut streamed = 0;
    for path in crate::fixtures::raw_v2() {
        let bytes = std::fs::read(&path).unwrap();
        streamed += u32::from(check(&bytes, &path.display().to_string()));
    }
    assert!(streamed >= 40, "{streamed} read from the file");
}

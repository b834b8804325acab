//! A function too large to hold, read from the temporary file its encoding
//! was copied to as the stream went by.
//!
//! Its layout is found by walking field headers in the file; its arrays are
//! then checked and counted a window at a time, so memory holds a window
//! and the duplicate check (for a polynomial, its merged keys), not the
//! function's bytes. This reader vouches for the layout every writer emits
//! (one arm, each array of a quadratic part one packed field); anything
//! else is [`Unsupported`] and the caller reads the file back and takes the
//! path for held bytes.

use std::fs::File;
use std::io::{self, Write};
use std::ops::Range;

use super::count::{
    count_constant, count_linear_arm, count_polynomial_arm, count_quadratic_arm, quadratic_growths,
    scan_window, scan_windows_on, ChunkScan, PairWindows, Seen, GROWTHS_UP_TO,
};
use super::split;
use super::windows::FieldWindows;
use super::{linear, walk_polynomial, LinearCount, Monomials, QuadraticWire};
use crate::model::function::CountedFunction;
use crate::wire::packed::count_varints;
use crate::wire::slice::varint;
use crate::wire::term::TERM_KEY;
use crate::wire::{Fields, Unsupported, Wire};

use crate::profiled::Growth;
use crate::wire::fields::{constraint, function, quadratic};
use crate::wire::file::{append_at, read_range, read_window, FileFields, FileValue, Window, CHUNK};
use crate::wire::index::VarintIndex;

/// Elements of a quadratic part counted per window: 512 KiB of values,
/// read and counted by one thread (each reads its own windows, into
/// buffers it uses again: 1 MiB a thread, whatever the function's size).
const PAIRS_PER_WINDOW: usize = if cfg!(test) { 3 } else { 1 << 16 };

/// An encoded message (an `ommx.v1.Function`, or for
/// [`SpooledFunction::constraint`] an `ommx.v1.Constraint`) in a file, `len`
/// bytes from `start`.
pub struct SpooledFunction {
    file: File,
    start: u64,
    len: u64,
}

/// A constraint read from the file as [`entities::constraint`] reads held
/// bytes: its fields, and its function's final arm, checked.
pub struct SpooledConstraint {
    pub id: u64,
    pub equality: i32,
    pub name: Option<String>,
    pub description: Option<String>,
    /// Number of subscripts.
    pub subscripts: usize,
    /// `None`: no function field.
    pub function: Option<SpooledArm>,
}

/// A spooled function, and where its final arm lies, checked.
pub struct SpooledArm {
    function: SpooledFunction,
    arm: FileArm,
}

enum FileArm {
    Empty,
    Constant(f64),
    Linear(Vec<Range<u64>>),
    Polynomial(Vec<Range<u64>>),
    Quadratic {
        rows: VarintIndex,
        columns: VarintIndex,
        values: Range<u64>,
        linear: Option<Vec<Range<u64>>>,
    },
}

impl SpooledFunction {
    /// The function encoded in the first `len` bytes of `file`.
    pub fn new(file: File, len: u64) -> Self {
        Self {
            file,
            start: 0,
            len,
        }
    }

    /// The message encoded in `range` of `file`: a copy spooled there, or
    /// an element of the input file itself, read in place.
    pub fn within(file: File, range: Range<u64>) -> Self {
        let len = range.end - range.start;
        Self {
            file,
            start: range.start,
            len,
        }
    }

    fn range(&self) -> Range<u64> {
        self.start..self.start + self.len
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    /// The file it lies in, and its range there.
    pub fn location(&self) -> (&File, Range<u64>) {
        (&self.file, self.range())
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A second handle on the same file.
    pub fn try_clone(&self) -> io::Result<Self> {
        Ok(Self::within(self.file.try_clone()?, self.range()))
    }

    /// The encoding, read back whole.
    pub fn load(&self) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        self.append_to(&mut bytes)?;
        Ok(bytes)
    }

    /// Appends the encoding to `out`.
    pub fn append_to(&self, out: &mut Vec<u8>) -> io::Result<()> {
        let len = usize::try_from(self.len).map_err(io::Error::other)?;
        append_at(&self.file, out, self.start, len)
    }

    /// Copies the encoding to `out`, a window at a time.
    pub fn copy_to(&self, out: &mut impl Write) -> io::Result<()> {
        let mut buf = Vec::new();
        let mut pos = self.start;
        while pos < self.start + self.len {
            let n = (self.start + self.len - pos).min(CHUNK as u64) as usize;
            buf.clear();
            append_at(&self.file, &mut buf, pos, n)?;
            out.write_all(&buf)?;
            pos += n as u64;
        }
        Ok(())
    }

    /// Finds the final arm and checks its encoding in full, as [`scan`] and
    /// [`check`] do for held pieces (a large linear arm on up to `threads`
    /// threads). A function whose arm changes on the way, or whose
    /// quadratic arrays come in several fields, is [`Unsupported`] here.
    pub fn scan(self, threads: usize) -> Wire<SpooledArm> {
        let file = &self.file;
        let mut arm = FileArm::Empty;
        let mut fields = FileFields::new(file, self.range());
        let mut pieces = Vec::new();
        let mut kind = None;
        while let Some((number, value)) = fields.next_field()? {
            match (number, value) {
                (function::CONSTANT, FileValue::Fixed64(bits)) => {
                    arm = FileArm::Constant(f64::from_bits(bits));
                    same_arm(&mut kind, function::CONSTANT)?;
                }
                (function::LINEAR..=function::POLYNOMIAL, FileValue::Len(body)) => {
                    same_arm(&mut kind, number)?;
                    pieces.push(body);
                }
                (function::CONSTANT..=function::EXPRESSION, _) => return Err(Unsupported),
                _ => {}
            }
        }
        match kind {
            Some(2) => {
                let mut ranges = FileRanges::cut(file, &pieces, threads);
                let split = ranges
                    .as_mut()
                    .and_then(|r| split::check_linear(&mut r.windows(file)));
                if split.is_none() {
                    each_linear_window(file, &pieces, &mut |w| linear(w, |_, _| {}).map(|_| ()))?;
                }
                arm = FileArm::Linear(pieces);
            }
            Some(3) => arm = quadratic_layout(file, &pieces, threads)?,
            Some(4) => {
                each_linear_window(file, &pieces, &mut |w| {
                    walk_polynomial(w, &mut ()).map(|_| ())
                })?;
                arm = FileArm::Polynomial(pieces);
            }
            _ => {}
        }
        Ok(SpooledArm {
            function: self,
            arm,
        })
    }
}

impl SpooledFunction {
    /// Reads the `ommx.v1.Constraint` encoded here, with the rules of
    /// [`entities::constraint`]; a function given in several fields is
    /// [`Unsupported`] here, as anything that reader leaves to prost.
    pub fn constraint(&self) -> Wire<SpooledConstraint> {
        let file = &self.file;
        let mut c = SpooledConstraint {
            id: 0,
            equality: 0,
            name: None,
            description: None,
            subscripts: 0,
            function: None,
        };
        let text = |range| String::from_utf8(read_range(file, range)?).map_err(|_| Unsupported);
        let mut function = Vec::new();
        let mut fields = FileFields::new(file, self.range());
        while let Some((number, value)) = fields.next_field()? {
            match (number, value) {
                (constraint::ID, FileValue::Varint(x)) => c.id = x,
                (constraint::EQUALITY, FileValue::Varint(x)) => c.equality = x as i32,
                (constraint::FUNCTION, FileValue::Len(piece)) => function.push(piece),
                (constraint::NAME, FileValue::Len(s)) => c.name = Some(text(s)?),
                (constraint::DESCRIPTION, FileValue::Len(s)) => c.description = Some(text(s)?),
                (constraint::SUBSCRIPTS, FileValue::Len(packed)) => {
                    c.subscripts += count_file_varints(file, packed)?
                }
                (constraint::SUBSCRIPTS, FileValue::Varint(_)) => c.subscripts += 1,
                // Parameters, wrong wire types.
                (constraint::ID..=constraint::FUNCTION, _)
                | (constraint::PARAMETERS..=constraint::SUBSCRIPTS, _) => return Err(Unsupported),
                _ => {}
            }
        }
        c.function = match function.as_slice() {
            [] => None,
            [piece] => {
                let file = file.try_clone().map_err(|_| Unsupported)?;
                Some(SpooledFunction::within(file, piece.clone()).scan(1)?)
            }
            _ => return Err(Unsupported),
        };
        Ok(c)
    }
}

/// Notes an arm field; a second arm other than the first is unsupported.
fn same_arm(kind: &mut Option<u32>, number: u32) -> Wire<()> {
    match *kind.get_or_insert(number) == number {
        true => Ok(()),
        false => Err(Unsupported),
    }
}

/// The arrays of a quadratic part given as `pieces`, checked (rows and
/// columns on up to `threads` threads).
fn quadratic_layout(file: &File, pieces: &[Range<u64>], threads: usize) -> Wire<FileArm> {
    let mut arrays: [Option<Range<u64>>; 3] = Default::default();
    let mut linear_pieces: Option<Vec<Range<u64>>> = None;
    for piece in pieces {
        let mut fields = FileFields::new(file, piece.clone());
        while let Some((number, value)) = fields.next_field()? {
            match (number, value) {
                (quadratic::ROWS..=quadratic::VALUES, FileValue::Len(body)) => {
                    let slot = &mut arrays[(number - quadratic::ROWS) as usize];
                    let values = number == quadratic::VALUES;
                    if slot.is_some() || (values && (body.end - body.start) % 8 != 0) {
                        return Err(Unsupported);
                    }
                    *slot = Some(body);
                }
                (quadratic::LINEAR, FileValue::Len(body)) => {
                    linear_pieces.get_or_insert_with(Vec::new).push(body)
                }
                (quadratic::ROWS..=quadratic::LINEAR, _) => return Err(Unsupported),
                _ => {}
            }
        }
    }
    let [rows, columns, values] = arrays.map(Option::unwrap_or_default);
    let [rows, columns] = VarintIndex::new(file, [rows, columns], threads)?;
    for index in [&rows, &columns] {
        if !index.checked() {
            // A ten-byte varint, or a malformed array: read one by one.
            count_file_varints(file, index.range())?;
        }
    }
    if let Some(l) = &linear_pieces {
        each_linear_window(file, l, &mut |w| linear(w, |_, _| {}).map(|_| ()))?;
    }
    Ok(FileArm::Quadratic {
        rows,
        columns,
        values,
        linear: linear_pieces,
    })
}

impl SpooledArm {
    /// The encoding, read back whole.
    pub fn load(&self) -> io::Result<Vec<u8>> {
        self.function.load()
    }

    /// [`count`] for the spooled function.
    pub fn count<D: Fn(u64) -> bool + Sync>(
        &self,
        defined: &D,
        threads: usize,
    ) -> Wire<Option<CountedFunction>> {
        self.count_bounded(defined, threads, None)
    }

    /// [`count_bounded`](super::count::count_bounded) for the spooled
    /// function.
    pub fn count_bounded<D: Fn(u64) -> bool + Sync>(
        &self,
        defined: &D,
        threads: usize,
        max_id: Option<u64>,
    ) -> Wire<Option<CountedFunction>> {
        let file = &self.function.file;
        match &self.arm {
            FileArm::Empty => Ok(None),
            FileArm::Constant(c) => Ok(count_constant(*c)),
            FileArm::Linear(pieces) => {
                if let Some(ranges) = FileRanges::cut(file, pieces, threads) {
                    if let Some(n) = split::count_linear(&mut ranges.windows(file), defined) {
                        return Ok(n.map(LinearCount::function));
                    }
                }
                count_linear_arm(&mut FileFieldWindows { file, pieces }, defined)
            }
            FileArm::Polynomial(pieces) => {
                count_polynomial_arm(&mut FileFieldWindows { file, pieces }, defined)
            }
            FileArm::Quadratic {
                rows,
                columns,
                values,
                linear,
            } => {
                let n = ((values.end - values.start) / 8) as usize;
                if rows.len() != n || columns.len() != n {
                    return Ok(None);
                }
                let mut pairs = FilePairs {
                    file,
                    rows,
                    columns,
                    values: values.start,
                    n,
                };
                let linear = linear
                    .as_deref()
                    .map(|pieces| FileFieldWindows { file, pieces });
                count_quadratic_arm(&mut pairs, linear, defined, threads, max_id)
            }
        }
    }
}

impl SpooledArm {
    /// [`growths`](super::count::growths) for the spooled function.
    pub fn growths(&self, stored: usize) -> Wire<Option<Vec<Growth>>> {
        let file = &self.function.file;
        match &self.arm {
            FileArm::Quadratic {
                rows,
                columns,
                values,
                linear,
            } if stored <= GROWTHS_UP_TO => {
                let mut pairs = FilePairs {
                    file,
                    rows,
                    columns,
                    values: values.start,
                    n: ((values.end - values.start) / 8) as usize,
                };
                let linear = linear
                    .as_deref()
                    .map(|pieces| FileFieldWindows { file, pieces });
                quadratic_growths(&mut pairs, linear, stored)
            }
            _ => Ok(None),
        }
    }

    /// Whether every variable the function names, whatever its
    /// coefficient, is `defined`: one walk, with no duplicate check (the
    /// function was [counted](SpooledArm::count) before).
    pub fn all_defined(&self, defined: &impl Fn(u64) -> bool) -> Wire<bool> {
        let file = &self.function.file;
        let mut all = true;
        let mut linear_part = |pieces: &[Range<u64>]| {
            each_linear_window(file, pieces, &mut |w| {
                linear(w, |id, _| all &= defined(id)).map(|_| ())
            })
        };
        match &self.arm {
            FileArm::Empty | FileArm::Constant(_) => {}
            FileArm::Linear(pieces) => linear_part(pieces)?,
            FileArm::Polynomial(pieces) => {
                struct Defined<'d, D>(&'d D, bool);
                impl<D: Fn(u64) -> bool> Monomials for Defined<'_, D> {
                    fn id(&mut self, id: u64) {
                        self.1 &= (self.0)(id);
                    }
                    fn end(&mut self, _: f64) {}
                }
                let mut names = Defined(defined, true);
                each_linear_window(file, pieces, &mut |w| {
                    walk_polynomial(w, &mut names).map(|_| ())
                })?;
                all = names.1;
            }
            FileArm::Quadratic {
                rows,
                columns,
                linear,
                ..
            } => {
                if let Some(pieces) = linear {
                    linear_part(pieces)?;
                }
                for array in [rows, columns] {
                    each_varint_window(file, array.range(), |w| {
                        let mut pos = 0;
                        while pos < w.len() {
                            all &= defined(varint(w, &mut pos)?);
                        }
                        Ok(())
                    })?;
                }
            }
        }
        Ok(all)
    }
}

/// A linear part in the file cut for several threads: each range a piece
/// of its own.
struct FileRanges(Vec<[Range<u64>; 1]>);

impl FileRanges {
    /// `None`: too short to cut, or one thread.
    fn cut(file: &File, pieces: &[Range<u64>], threads: usize) -> Option<Self> {
        let long = |p: &Range<u64>| p.end - p.start >= split::SPLIT_BYTES;
        if threads < 2 || !pieces.iter().any(long) {
            return None;
        }
        let mut ranges = Vec::new();
        for piece in pieces {
            let parts = if long(piece) { threads } else { 1 };
            let near = |r: Range<u64>| read_range(file, r);
            ranges.extend(
                split::cut(piece.clone(), parts, near)
                    .ok()?
                    .into_iter()
                    .map(|r| [r]),
            );
        }
        Some(Self(ranges))
    }

    fn windows<'f>(&'f self, file: &'f File) -> Vec<FileFieldWindows<'f>> {
        self.0
            .iter()
            .map(|pieces| FileFieldWindows { file, pieces })
            .collect()
    }
}

/// A linear part's pieces in the file.
struct FileFieldWindows<'f> {
    file: &'f File,
    pieces: &'f [Range<u64>],
}

impl FieldWindows for FileFieldWindows<'_> {
    fn each(&mut self, window: &mut dyn FnMut(&[&[u8]]) -> Wire<()>) -> Wire<()> {
        each_linear_window(self.file, self.pieces, window)
    }
}

/// Calls `window` on the pieces of a message in turn, each cut into
/// windows of whole fields.
fn each_linear_window(
    file: &File,
    pieces: &[Range<u64>],
    window: &mut dyn FnMut(&[&[u8]]) -> Wire<()>,
) -> Wire<()> {
    for piece in pieces {
        let whole = |held: &[u8]| Ok(whole_fields(held));
        Window::new(file, piece.clone()).each(whole, |w| window(&[w]))?;
    }
    Ok(())
}

/// The length of the longest run of whole fields at the start of `buf`.
fn whole_fields(buf: &[u8]) -> usize {
    let mut fields = Fields::new(buf);
    loop {
        // Term records as every writer emits them (a one-byte key and
        // length; what is inside is read later), then any field.
        let mut at = fields.pos;
        while let [TERM_KEY, len @ 0..=0x7f, ..] = buf[at..] {
            let next = at + 2 + usize::from(len);
            if next > buf.len() {
                return at;
            }
            at = next;
        }
        fields.pos = at;
        if !matches!(fields.next_field(), Ok(Some(_))) {
            return at;
        }
    }
}

/// Counts (and checks) the varints of a packed array in the file.
fn count_file_varints(file: &File, range: Range<u64>) -> Wire<usize> {
    let mut n = 0;
    each_varint_window(file, range, |w| {
        n += count_varints(w)?;
        Ok(())
    })?;
    Ok(n)
}

/// Calls `window` on a packed varint array in the file, a window of whole
/// varints at a time.
fn each_varint_window(
    file: &File,
    range: Range<u64>,
    window: impl FnMut(&[u8]) -> Wire<()>,
) -> Wire<()> {
    // Windows end after a byte that ends a varint; with none in a window
    // longer than ten bytes, a varint is too long.
    let whole = |held: &[u8]| match held.iter().rposition(|&b| b < 0x80) {
        Some(i) => Ok(i + 1),
        None if held.len() > 10 => Err(Unsupported),
        None => Ok(0),
    };
    Window::new(file, range).each(whole, window)
}

/// A quadratic part's three checked arrays (packed, `n` elements each) in
/// the file, the values' starting at `values`.
struct FilePairs<'f> {
    file: &'f File,
    rows: &'f VarintIndex,
    columns: &'f VarintIndex,
    values: u64,
    n: usize,
}

/// One thread's buffers for the windows of [`FilePairs`].
#[derive(Default)]
struct PairBuffers([Vec<u8>; 3]);

impl FilePairs<'_> {
    /// Reads window `i` ([`PAIRS_PER_WINDOW`] elements) into `buffers`.
    fn window<'b>(&self, i: usize, buffers: &'b mut PairBuffers) -> Wire<QuadraticWire<'b>> {
        let k = i * PAIRS_PER_WINDOW;
        let n = PAIRS_PER_WINDOW.min(self.n - k);
        let [rows, columns, values] = &mut buffers.0;
        let at = self.values + 8 * k as u64;
        Ok(QuadraticWire {
            rows: vec![self.rows.read(self.file, rows, (k, n))?],
            columns: vec![self.columns.read(self.file, columns, (k, n))?],
            values: vec![read_window(self.file, values, at..at + 8 * n as u64)?],
            n_rows: n,
            n_columns: n,
            n_values: n,
            linear: None,
        })
    }

    fn windows(&self) -> usize {
        self.n.div_ceil(PAIRS_PER_WINDOW)
    }
}

impl PairWindows for FilePairs<'_> {
    fn each(&mut self, window: &mut dyn FnMut(&QuadraticWire<'_>) -> bool) -> Wire<()> {
        let mut buffers = PairBuffers::default();
        for i in 0..self.windows() {
            if !window(&self.window(i, &mut buffers)?) {
                break;
            }
        }
        Ok(())
    }

    fn scan<D: Fn(u64) -> bool + Sync>(
        &mut self,
        defined: &D,
        seen: &mut [Seen<'_>],
    ) -> Wire<Vec<ChunkScan>> {
        let pairs = &*self;
        scan_windows_on(self.windows(), seen, |i, buffers, seen| {
            let q = pairs.window(i, buffers)?;
            let mut scans = scan_window(&q, defined, std::slice::from_mut(seen));
            Ok(scans.pop().unwrap_or_default())
        })
    }
}

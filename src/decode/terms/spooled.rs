//! A function too large to hold, read from the temporary file its encoding
//! was copied to as the stream went by.
//!
//! Its layout is found by walking field headers in the file; its arrays are
//! then checked and counted a window at a time, so memory holds a window
//! and the duplicate check, not the function's bytes. This reader vouches
//! for the layout every writer emits (one arm, each array of a quadratic
//! part one packed field); anything else is [`Unsupported`] and the caller
//! reads the file back and takes the path for held bytes.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::ops::Range;

use super::count::{
    count_constant, count_linear_arm, count_quadratic_arm, LinearWindows, PairWindows,
};
use super::*;

/// Bytes read from the file at a time (in tests, few: windows then cut
/// every function the tests make).
const CHUNK: usize = if cfg!(test) { 16 } else { 1 << 20 };
/// Elements of a quadratic part counted per window: 4 MiB of values.
const PAIRS_PER_WINDOW: usize = if cfg!(test) { 3 } else { 1 << 19 };

/// An encoded `ommx.v1.Function` in a file.
pub struct SpooledFunction {
    file: File,
    len: u64,
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
    Quadratic {
        rows: Range<u64>,
        columns: Range<u64>,
        values: Range<u64>,
        /// Elements of each array.
        lengths: [usize; 3],
        linear: Option<Vec<Range<u64>>>,
    },
}

impl SpooledFunction {
    /// The function encoded in the first `len` bytes of `file`.
    pub fn new(file: File, len: u64) -> Self {
        Self { file, len }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A second handle on the same file.
    pub fn try_clone(&self) -> io::Result<Self> {
        Ok(Self::new(self.file.try_clone()?, self.len))
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
        out.try_reserve_exact(len).map_err(io::Error::other)?;
        let mut file = &self.file;
        file.seek(SeekFrom::Start(0))?;
        if file.take(self.len).read_to_end(out)? != len {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        Ok(())
    }

    /// Copies the encoding to `out`.
    pub fn copy_to(&self, out: &mut impl Write) -> io::Result<()> {
        let mut file = &self.file;
        file.seek(SeekFrom::Start(0))?;
        if io::copy(&mut file.take(self.len), out)? != self.len {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        Ok(())
    }

    /// Finds the final arm and checks its encoding in full, as [`scan`] and
    /// [`check`] do for held pieces. A function whose arm changes on the
    /// way, or whose quadratic arrays come in several fields, is
    /// [`Unsupported`] here.
    pub fn scan(self) -> Wire<SpooledArm> {
        let file = &self.file;
        let mut arm = FileArm::Empty;
        let mut fields = FileFields::new(file, 0..self.len);
        let mut pieces = Vec::new();
        let mut kind = None;
        while let Some((number, value)) = fields.next()? {
            match (number, value) {
                (1, FileValue::Fixed64(bits)) => {
                    arm = FileArm::Constant(f64::from_bits(bits));
                    same_arm(&mut kind, 1)?;
                }
                (2..=4, FileValue::Len(body)) => {
                    same_arm(&mut kind, number)?;
                    pieces.push(body);
                }
                (1..=5, _) => return Err(Unsupported),
                _ => {}
            }
        }
        match kind {
            Some(2) => {
                each_linear_window(file, &pieces, &mut |w| linear(w, |_, _| {}).map(|_| ()))?;
                arm = FileArm::Linear(pieces);
            }
            Some(3) => arm = quadratic_layout(file, &pieces)?,
            Some(4) => return Err(Unsupported),
            _ => {}
        }
        Ok(SpooledArm {
            function: self,
            arm,
        })
    }
}

/// Notes an arm field; a second arm other than the first is unsupported.
fn same_arm(kind: &mut Option<u32>, number: u32) -> Wire<()> {
    match *kind.get_or_insert(number) == number {
        true => Ok(()),
        false => Err(Unsupported),
    }
}

/// The arrays of a quadratic part given as `pieces`, checked.
fn quadratic_layout(file: &File, pieces: &[Range<u64>]) -> Wire<FileArm> {
    let mut arrays: [Option<Range<u64>>; 3] = Default::default();
    let mut linear_pieces: Option<Vec<Range<u64>>> = None;
    for piece in pieces {
        let mut fields = FileFields::new(file, piece.clone());
        while let Some((number, value)) = fields.next()? {
            match (number, value) {
                (1..=3, FileValue::Len(body)) => {
                    let slot = &mut arrays[number as usize - 1];
                    if slot.is_some() || (number == 3 && (body.end - body.start) % 8 != 0) {
                        return Err(Unsupported);
                    }
                    *slot = Some(body);
                }
                (4, FileValue::Len(body)) => linear_pieces.get_or_insert_with(Vec::new).push(body),
                (1..=4, _) => return Err(Unsupported),
                _ => {}
            }
        }
    }
    let [rows, columns, values] = arrays.map(Option::unwrap_or_default);
    let lengths = [
        count_file_varints(file, rows.clone())?,
        count_file_varints(file, columns.clone())?,
        ((values.end - values.start) / 8) as usize,
    ];
    if let Some(l) = &linear_pieces {
        each_linear_window(file, l, &mut |w| linear(w, |_, _| {}).map(|_| ()))?;
    }
    Ok(FileArm::Quadratic {
        rows,
        columns,
        values,
        lengths,
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
    ) -> Wire<Option<Shape>> {
        let file = &self.function.file;
        match &self.arm {
            FileArm::Empty => Ok(None),
            FileArm::Constant(c) => Ok(count_constant(*c)),
            FileArm::Linear(pieces) => count_linear_arm(&mut FileLinear { file, pieces }, defined),
            FileArm::Quadratic {
                rows,
                columns,
                values,
                lengths,
                linear,
            } => {
                if lengths[0] != lengths[1] || lengths[0] != lengths[2] {
                    return Ok(None);
                }
                let mut pairs = FilePairs {
                    file,
                    rows: rows.clone(),
                    columns: columns.clone(),
                    values: values.clone(),
                    n: lengths[0],
                };
                let linear = linear.as_deref().map(|pieces| FileLinear { file, pieces });
                count_quadratic_arm(&mut pairs, linear, defined, threads)
            }
        }
    }
}

/// A linear part's pieces in the file.
struct FileLinear<'f> {
    file: &'f File,
    pieces: &'f [Range<u64>],
}

impl LinearWindows for FileLinear<'_> {
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
        // Term records as every writer emits them, then any field.
        while let Some((_, _, next)) = common_term(buf, fields.pos) {
            fields.pos = next;
        }
        let at = fields.pos;
        if !matches!(fields.next(), Ok(Some(_))) {
            return at;
        }
    }
}

/// Counts (and checks) the varints of a packed array in the file.
fn count_file_varints(file: &File, range: Range<u64>) -> Wire<usize> {
    // Windows end after a byte that ends a varint; with none in a window
    // longer than ten bytes, a varint is too long.
    let whole = |held: &[u8]| match held.iter().rposition(|&b| b < 0x80) {
        Some(i) => Ok(i + 1),
        None if held.len() > 10 => Err(Unsupported),
        None => Ok(0),
    };
    let mut n = 0;
    Window::new(file, range).each(whole, |w| {
        n += count_varints(w)?;
        Ok(())
    })?;
    Ok(n)
}

/// A quadratic part's three checked arrays (packed, `n` elements each) in
/// the file.
struct FilePairs<'f> {
    file: &'f File,
    rows: Range<u64>,
    columns: Range<u64>,
    values: Range<u64>,
    n: usize,
}

impl PairWindows for FilePairs<'_> {
    fn each(&mut self, window: &mut dyn FnMut(&QuadraticWire<'_>) -> bool) -> Wire<()> {
        let mut rows = Window::new(self.file, self.rows.clone());
        let mut columns = Window::new(self.file, self.columns.clone());
        let mut values = Window::new(self.file, self.values.clone());
        let mut done = 0;
        while done < self.n {
            let k = PAIRS_PER_WINDOW.min(self.n - done);
            let q = QuadraticWire {
                rows: vec![rows.take_varints(k)?],
                columns: vec![columns.take_varints(k)?],
                values: vec![values.take_exact(8 * k)?],
                n_rows: k,
                n_columns: k,
                n_values: k,
                linear: None,
            };
            if !window(&q) {
                break;
            }
            done += k;
        }
        Ok(())
    }
}

/// A range of the file read forwards through a buffer: bytes are made
/// available with [`Window::fill`] and consumed with [`Window::take`].
struct Window<'f> {
    file: &'f File,
    /// The next byte of the file to read, and the end of the range.
    pos: u64,
    end: u64,
    buf: Vec<u8>,
    /// `buf[start..]` is not consumed yet.
    start: usize,
}

impl<'f> Window<'f> {
    fn new(file: &'f File, range: Range<u64>) -> Self {
        Self {
            file,
            pos: range.start,
            end: range.end,
            buf: Vec::new(),
            start: 0,
        }
    }

    /// True when all of the range has been read into the buffer.
    fn at_end(&self) -> bool {
        self.pos == self.end
    }

    /// Reads ahead until at least `want` bytes are held, unless the range
    /// ends first.
    fn fill(&mut self, want: usize) -> Wire<()> {
        let held = self.buf.len() - self.start;
        if held < want && !self.at_end() {
            self.buf.drain(..self.start);
            self.start = 0;
            let more = ((want - held).max(CHUNK) as u64).min(self.end - self.pos);
            let mut file = self.file;
            let read = file
                .seek(SeekFrom::Start(self.pos))
                .and_then(|_| file.take(more).read_to_end(&mut self.buf))
                .map_err(|_| Unsupported)?;
            if read as u64 != more {
                return Err(Unsupported);
            }
            self.pos += more;
        }
        Ok(())
    }

    /// The bytes read and not consumed yet.
    fn held(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    /// Calls `window` on the whole range, a window at a time: each the
    /// prefix `whole` finds whole in what is held (a longer window is read
    /// when it finds none), the last whatever is left, whole or not, so
    /// that its reader finds what is wrong with it.
    fn each(
        mut self,
        whole: impl Fn(&[u8]) -> Wire<usize>,
        mut window: impl FnMut(&[u8]) -> Wire<()>,
    ) -> Wire<()> {
        let mut want = CHUNK;
        loop {
            self.fill(want)?;
            let held = self.held();
            if held.is_empty() {
                return Ok(());
            }
            let cut = if self.at_end() {
                held.len()
            } else {
                whole(held)?
            };
            if cut == 0 {
                want = held.len().saturating_mul(2);
                continue;
            }
            window(self.take(cut))?;
            want = CHUNK;
        }
    }

    /// Consumes `n` bytes (held already).
    fn take(&mut self, n: usize) -> &[u8] {
        let at = self.start;
        self.start += n;
        &self.buf[at..at + n]
    }

    /// Consumes exactly `n` bytes.
    fn take_exact(&mut self, n: usize) -> Wire<&[u8]> {
        self.fill(n)?;
        if self.held().len() < n {
            return Err(Unsupported);
        }
        Ok(self.take(n))
    }

    /// Consumes the next `k` elements of a checked packed varint array.
    fn take_varints(&mut self, k: usize) -> Wire<&[u8]> {
        let mut want = 2 * k;
        loop {
            self.fill(want)?;
            let held = self.held();
            if let Some(cut) = count::nth_end(held, k) {
                return Ok(self.take(cut));
            }
            if self.at_end() {
                return Err(Unsupported);
            }
            want = held.len() + CHUNK;
        }
    }
}

/// One field's value in the file.
enum FileValue {
    Varint,
    Fixed64(u64),
    Fixed32,
    Len(Range<u64>),
}

/// The fields of a message body in the file, read as [`Fields`] reads
/// them in memory, without reading length-delimited bodies.
struct FileFields<'f> {
    file: &'f File,
    pos: u64,
    end: u64,
}

impl<'f> FileFields<'f> {
    fn new(file: &'f File, range: Range<u64>) -> Self {
        Self {
            file,
            pos: range.start,
            end: range.end,
        }
    }

    fn next(&mut self) -> Wire<Option<(u32, FileValue)>> {
        if self.pos == self.end {
            return Ok(None);
        }
        // A key (at most five bytes) and a varint, a length or eight bytes.
        let mut head = [0u8; 20];
        let n = (self.end - self.pos).min(20) as usize;
        let mut file = self.file;
        file.seek(SeekFrom::Start(self.pos))
            .and_then(|_| file.read_exact(&mut head[..n]))
            .map_err(|_| Unsupported)?;
        let head = &head[..n];
        let mut at = 0;
        let key = varint(head, &mut at)?;
        if key > u64::from(u32::MAX) || key >> 3 == 0 {
            return Err(Unsupported);
        }
        let (value, after) = match key & 7 {
            0 => {
                varint(head, &mut at)?;
                (FileValue::Varint, at as u64)
            }
            1 => {
                let bytes = head.get(at..at + 8).ok_or(Unsupported)?;
                let bits = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
                (FileValue::Fixed64(bits), at as u64 + 8)
            }
            2 => {
                let len = varint(head, &mut at)?;
                let body = self.pos + at as u64;
                let end = body.checked_add(len).ok_or(Unsupported)?;
                (FileValue::Len(body..end), end - self.pos)
            }
            5 => (FileValue::Fixed32, at as u64 + 4),
            // Groups (3, 4) and invalid wire types.
            _ => return Err(Unsupported),
        };
        if after > self.end - self.pos {
            return Err(Unsupported);
        }
        self.pos += after;
        Ok(Some(((key >> 3) as u32, value)))
    }
}

//! The field reader over a message copied to a file (a function or a
//! constraint too large to hold, see `pass::spooled`), read forwards: a
//! range through a buffer ([`Window`]) and a message's fields by their
//! headers ([`FileFields`]), length-delimited bodies left in the file as
//! ranges. It vouches for what [`super::Fields`] vouches for.

use std::fs::File;
use std::io;
use std::ops::Range;

use super::slice::{varint, Unsupported, Wire};
use super::WireType;

/// Bytes read from the file at a time (in tests, few: windows then cut
/// every function the tests make).
pub const CHUNK: usize = if cfg!(test) { 16 } else { 1 << 20 };

/// Fills `buf` from `file` at `pos` without moving the file's offset, which
/// handles on the same file share (an input read on several threads, or
/// read again from its start after a first try).
#[cfg(unix)]
pub fn read_exact_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, pos)
}

/// Fills `buf` from `file` at `pos`, each read at its own position (on
/// Windows the offset moves, so an input read this way is not also read
/// through its offset).
#[cfg(windows)]
pub fn read_exact_at(file: &File, mut buf: &mut [u8], mut pos: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, pos) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                pos += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Fills `buf` from `file` at `pos`, through the file's offset.
#[cfg(not(any(unix, windows)))]
pub fn read_exact_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = file;
    file.seek(SeekFrom::Start(pos))?;
    file.read_exact(buf)
}

/// Reads what it can of `buf` from `file` at `pos` (as [`read_exact_at`],
/// one read): how many bytes, 0 at the end of the file.
#[cfg(unix)]
pub fn read_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, pos)
}

#[cfg(windows)]
pub fn read_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, pos)
}

#[cfg(not(any(unix, windows)))]
pub fn read_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = file;
    file.seek(SeekFrom::Start(pos))?;
    file.read(buf)
}

/// Appends `len` bytes of `file` at `pos` to `out`.
pub fn append_at(file: &File, out: &mut Vec<u8>, pos: u64, len: usize) -> io::Result<()> {
    let old = out.len();
    out.try_reserve_exact(len).map_err(io::Error::other)?;
    out.resize(old + len, 0);
    let read = read_exact_at(file, &mut out[old..], pos);
    if read.is_err() {
        out.truncate(old);
    }
    read
}

/// Reads `range` of `file` into `buf`, a buffer used again and again: it
/// is zeroed only where it grows, not before every read that overwrites it.
pub fn read_window<'b>(file: &File, buf: &'b mut Vec<u8>, range: Range<u64>) -> Wire<&'b [u8]> {
    let len = usize::try_from(range.end - range.start).map_err(|_| Unsupported)?;
    if buf.len() < len {
        buf.try_reserve_exact(len - buf.len())
            .map_err(|_| Unsupported)?;
        buf.resize(len, 0);
    }
    read_exact_at(file, &mut buf[..len], range.start).map_err(|_| Unsupported)?;
    Ok(&buf[..len])
}

/// The bytes of `range` of `file`.
pub fn read_range(file: &File, range: Range<u64>) -> Wire<Vec<u8>> {
    let len = usize::try_from(range.end - range.start).map_err(|_| Unsupported)?;
    let mut bytes = Vec::new();
    append_at(file, &mut bytes, range.start, len).map_err(|_| Unsupported)?;
    Ok(bytes)
}

/// A range of the file read forwards through a buffer: bytes are made
/// available with [`Window::fill`] and consumed with [`Window::take`].
pub struct Window<'f> {
    file: &'f File,
    /// The next byte of the file to read, and the end of the range.
    pos: u64,
    end: u64,
    /// `buf[start..filled]` is not consumed yet; past `filled` are bytes
    /// read before, kept so that the buffer is not zeroed again.
    buf: Vec<u8>,
    start: usize,
    filled: usize,
}

impl<'f> Window<'f> {
    pub fn new(file: &'f File, range: Range<u64>) -> Self {
        Self {
            file,
            pos: range.start,
            end: range.end,
            buf: Vec::new(),
            start: 0,
            filled: 0,
        }
    }

    /// True when all of the range has been read into the buffer.
    pub fn at_end(&self) -> bool {
        self.pos == self.end
    }

    /// Reads ahead until at least `want` bytes are held, unless the range
    /// ends first.
    pub fn fill(&mut self, want: usize) -> Wire<()> {
        let held = self.filled - self.start;
        if held < want && !self.at_end() {
            self.buf.copy_within(self.start..self.filled, 0);
            self.start = 0;
            let more = ((want - held).max(CHUNK) as u64).min(self.end - self.pos);
            let filled = usize::try_from(more)
                .ok()
                .and_then(|more| held.checked_add(more))
                .ok_or(Unsupported)?;
            if self.buf.len() < filled {
                let grow = filled - self.buf.len();
                self.buf.try_reserve_exact(grow).map_err(|_| Unsupported)?;
                self.buf.resize(filled, 0);
            }
            let read = read_exact_at(self.file, &mut self.buf[held..filled], self.pos);
            read.map_err(|_| Unsupported)?;
            self.filled = filled;
            self.pos += more;
        }
        Ok(())
    }

    /// The bytes read and not consumed yet.
    pub fn held(&self) -> &[u8] {
        &self.buf[self.start..self.filled]
    }

    /// Calls `window` on the whole range, a window at a time: each the
    /// prefix `whole` finds whole in what is held (a longer window is read
    /// when it finds none), the last whatever is left, whole or not, so
    /// that its reader finds what is wrong with it.
    pub fn each(
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
    pub fn take(&mut self, n: usize) -> &[u8] {
        let at = self.start;
        self.start += n;
        &self.buf[at..at + n]
    }
}

/// One field's value in the file.
pub enum FileValue {
    Varint(u64),
    Fixed64(u64),
    Fixed32,
    Len(Range<u64>),
}

/// The fields of a message body in the file, read as [`super::Fields`] reads
/// them in memory, without reading length-delimited bodies.
pub struct FileFields<'f> {
    file: &'f File,
    pos: u64,
    end: u64,
}

impl<'f> FileFields<'f> {
    pub fn new(file: &'f File, range: Range<u64>) -> Self {
        Self {
            file,
            pos: range.start,
            end: range.end,
        }
    }

    pub fn next_field(&mut self) -> Wire<Option<(u32, FileValue)>> {
        if self.pos == self.end {
            return Ok(None);
        }
        // A key (at most five bytes) and a varint, a length or eight bytes.
        let mut head = [0u8; 20];
        let n = (self.end - self.pos).min(20) as usize;
        read_exact_at(self.file, &mut head[..n], self.pos).map_err(|_| Unsupported)?;
        let head = &head[..n];
        let mut at = 0;
        let (number, wire_type) = super::key(varint(head, &mut at)?).map_err(|_| Unsupported)?;
        let (value, after) = match wire_type {
            WireType::Varint => {
                let value = varint(head, &mut at)?;
                (FileValue::Varint(value), at as u64)
            }
            WireType::Fixed64 => {
                let bytes = head.get(at..at + 8).ok_or(Unsupported)?;
                let bits = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
                (FileValue::Fixed64(bits), at as u64 + 8)
            }
            WireType::Len => {
                let len = varint(head, &mut at)?;
                let body = self.pos + at as u64;
                let end = body.checked_add(len).ok_or(Unsupported)?;
                (FileValue::Len(body..end), end - self.pos)
            }
            WireType::Fixed32 => (FileValue::Fixed32, at as u64 + 4),
            WireType::StartGroup | WireType::EndGroup => return Err(Unsupported),
        };
        if after > self.end - self.pos {
            return Err(Unsupported);
        }
        self.pos += after;
        Ok(Some((number, value)))
    }
}

//! Raw instance bytes from a stream (stdin, a pipe), read more than once:
//! their first top-level fields walked to tell whether ommx.v1 certainly
//! refuses them, then read as one schema and, if that fails, as the other.
//! The stream is copied to an unlinked temporary file as it is first read,
//! so each reading streams as before: a reading reads the copy as far as it
//! goes, then the rest of the stream, as far as it gets (copying that too,
//! for the readings after it). An endless stream that neither schema reads
//! is refused as soon as a reading fails, not once it is all copied.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex, MutexGuard};

struct State<R> {
    source: R,
    /// The copy so far; `None` once writing it failed (no reading again).
    copy: Option<File>,
    /// Bytes taken from the source (all in the copy while there is one).
    taken: u64,
}

/// A stream and its copy, shared by every reading of it.
pub(super) struct Recording<R> {
    state: Arc<Mutex<State<R>>>,
}

fn lock<R>(state: &Mutex<State<R>>) -> MutexGuard<'_, State<R>> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

impl<R: Read + Send> Recording<R> {
    pub(super) fn new(source: R) -> io::Result<Self> {
        let copy = Some(tempfile::tempfile()?);
        Ok(Self {
            state: Arc::new(Mutex::new(State {
                source,
                copy,
                taken: 0,
            })),
        })
    }

    /// The first reading: the stream, copied as it is read.
    pub(super) fn reader(&self) -> Playback<R> {
        Playback {
            state: self.state.clone(),
            pos: 0,
        }
    }

    /// The whole stream again, from its start: the copy, then what no
    /// reading has taken yet, read as it is needed. Any number of times,
    /// while the copy could be kept.
    pub(super) fn rewind<'r>(&self) -> io::Result<Box<dyn Read + Send + 'r>>
    where
        R: 'r,
    {
        if lock(&self.state).copy.is_none() {
            return Err(lost());
        }
        Ok(Box::new(self.reader()))
    }
}

fn lost() -> io::Error {
    io::Error::other("could not keep a copy of the stream to read it again")
}

/// One reading of a [`Recording`], at `pos`.
pub(super) struct Playback<R> {
    state: Arc<Mutex<State<R>>>,
    pos: u64,
}

impl<R: Read> Read for Playback<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut state = lock(&self.state);
        let State {
            source,
            copy,
            taken,
        } = &mut *state;
        if self.pos < *taken {
            // Taken already: from the copy.
            let Some(file) = copy else {
                return Err(lost());
            };
            let want = usize::try_from(*taken - self.pos).map_or(buf.len(), |n| n.min(buf.len()));
            file.seek(SeekFrom::Start(self.pos))?;
            let n = file.read(&mut buf[..want])?;
            self.pos += n as u64;
            return Ok(n);
        }
        let n = source.read(buf)?;
        if let Some(file) = copy {
            let written = file
                .seek(SeekFrom::Start(*taken))
                .and_then(|_| file.write_all(&buf[..n]));
            if written.is_err() {
                *copy = None;
            }
        }
        *taken += n as u64;
        self.pos += n as u64;
        Ok(n)
    }
}

/// Whether reading an input again gives the same bytes: a regular file or
/// a directory, bytes, an artifact handed over or an image of the local
/// registry (a name that is no file reads as one); not standard input, a
/// pipe or a FIFO, which the first reading used up.
impl super::Input {
    pub fn rereadable(&self) -> bool {
        match self {
            super::Input::Stdin => false,
            super::Input::Path(p) => match std::fs::metadata(p) {
                Ok(m) => m.is_file() || m.is_dir(),
                Err(_) => p
                    .to_str()
                    .is_some_and(|t| super::registry::Reference::parse(t).is_some()),
            },
            super::Input::Bytes { .. } | super::Input::Artifact { .. } | super::Input::Image(_) => {
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recording of `len` bytes whose first reading took `head` of them.
    fn recorded(len: u32, head: usize) -> (Vec<u8>, Recording<io::Cursor<Vec<u8>>>) {
        let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let recording = Recording::new(io::Cursor::new(data.clone())).unwrap();
        let mut first = vec![0; head];
        recording.reader().read_exact(&mut first).unwrap();
        assert_eq!(first, data[..head]);
        (data, recording)
    }

    #[test]
    fn the_second_reading_sees_the_whole_stream() {
        let (data, recording) = recorded(100_000, 1000);
        let mut again = Vec::new();
        recording.rewind().unwrap().read_to_end(&mut again).unwrap();
        assert_eq!(again, data);
        // Any number of readings, each from the start, interleaved.
        let (mut a, mut b) = (recording.rewind().unwrap(), recording.rewind().unwrap());
        let (mut got_a, mut got_b) = (vec![0; 70_000], Vec::new());
        a.read_exact(&mut got_a).unwrap();
        b.read_to_end(&mut got_b).unwrap();
        assert_eq!((&got_a[..], &got_b[..]), (&data[..70_000], &data[..]));
    }

    #[test]
    fn a_later_reading_sees_what_an_earlier_one_took_past_the_first() {
        let (data, recording) = recorded(50_000, 10);
        // The second reading takes the stream further than the first did.
        let mut part = vec![0; 30_000];
        recording.rewind().unwrap().read_exact(&mut part).unwrap();
        let mut all = Vec::new();
        recording.rewind().unwrap().read_to_end(&mut all).unwrap();
        assert_eq!((&part[..], &all[..]), (&data[..30_000], &data[..]));
    }

    #[test]
    fn the_second_reading_reads_no_further_than_it_needs() {
        // An endless stream: the second reading takes what it asks for.
        let recording = Recording::new(io::repeat(7)).unwrap();
        let mut head = vec![0; 100];
        recording.reader().read_exact(&mut head).unwrap();
        let mut again = vec![0; 1000];
        recording.rewind().unwrap().read_exact(&mut again).unwrap();
        assert_eq!(again, vec![7; 1000]);
    }
}

//! Raw instance bytes from a stream (stdin, a pipe), read once as ommx.v1
//! and, if that fails, again as ommx.v2: the stream is copied to an unlinked
//! temporary file as the v1 pass reads it, so the pass streams as before and
//! the second reading starts over from the copy (the rest of the stream is
//! copied first).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex, MutexGuard};

struct State<R> {
    source: R,
    /// The copy so far; `None` once writing it failed (no second reading).
    copy: Option<File>,
}

/// A stream and its copy, shared by the reader of the first reading and
/// the [`Recording::rewind`] of the second.
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
            state: Arc::new(Mutex::new(State { source, copy })),
        })
    }

    /// Reads the stream, copying what it reads.
    pub(super) fn reader(&self) -> Tee<R> {
        Tee {
            state: self.state.clone(),
        }
    }

    /// The whole stream again, from its copy: what the first reading left
    /// unread is copied first.
    pub(super) fn rewind(&self) -> io::Result<Box<dyn Read + Send>> {
        let mut state = lock(&self.state);
        let State { source, copy } = &mut *state;
        let Some(mut file) = copy.take() else {
            return Err(io::Error::other(
                "could not keep a copy of the stream to read it again",
            ));
        };
        io::copy(source, &mut file)?;
        file.seek(SeekFrom::Start(0))?;
        Ok(Box::new(file))
    }
}

/// The first reading of a [`Recording`].
pub(super) struct Tee<R> {
    state: Arc<Mutex<State<R>>>,
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut state = lock(&self.state);
        let n = state.source.read(buf)?;
        if let Some(file) = &mut state.copy {
            if file.write_all(&buf[..n]).is_err() {
                state.copy = None;
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_second_reading_sees_the_whole_stream() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let recording = Recording::new(io::Cursor::new(data.clone())).unwrap();
        let mut head = vec![0; 1000];
        recording.reader().read_exact(&mut head).unwrap();
        assert_eq!(head, data[..1000]);
        let mut again = Vec::new();
        recording.rewind().unwrap().read_to_end(&mut again).unwrap();
        assert_eq!(again, data);
        assert!(recording.rewind().is_err(), "one second reading");
    }
}

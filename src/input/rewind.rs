//! Raw instance bytes from a stream (stdin, a pipe), read once as ommx.v1
//! and, if that fails, again as ommx.v2: the stream is copied to an unlinked
//! temporary file as the v1 pass reads it, so the pass streams as before, and
//! the second reading reads the copy and then the rest of the stream, as far
//! as it gets (an endless stream that neither schema reads is refused as soon
//! as the second reading fails, not once it is all copied).

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

    /// The whole stream again: its copy, then what the first reading left
    /// unread, read as it is needed.
    pub(super) fn rewind<'r>(&self) -> io::Result<Box<dyn Read + Send + 'r>>
    where
        R: 'r,
    {
        let Some(mut file) = lock(&self.state).copy.take() else {
            return Err(io::Error::other(
                "could not keep a copy of the stream to read it again",
            ));
        };
        file.seek(SeekFrom::Start(0))?;
        let rest = Rest {
            state: self.state.clone(),
        };
        Ok(Box::new(file.chain(rest)))
    }
}

/// The stream after what the first reading took from it.
struct Rest<R> {
    state: Arc<Mutex<State<R>>>,
}

impl<R: Read> Read for Rest<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        lock(&self.state).source.read(buf)
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

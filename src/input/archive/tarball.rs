//! A tar archive as OMMX's reader sees it: one scan of the headers (first
//! entry of a name wins, a damaged header ends the archive), then each file
//! opened by its offset.

use super::{
    read_layout, ArchiveError, Opened, Store, KEEP_ENTRY, KEEP_TOTAL, MAX_ENTRIES, MAX_NAME,
};
use crate::input::limits::Capped;
use crate::input::Container;
use crate::input::DecodeError;
use crate::input::InputInfo;
use crate::input::ProfiledInput;
use crate::input::Selection;
use crate::input::BUF_SIZE;
use crate::pass::Pass;
use crate::trace::Phase;
use crate::trace::TimedRead;
use indicatif::ProgressBar;
use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::io::BufReader;
use std::io::Read;
use std::io::{Seek, SeekFrom};
use std::path::Component;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// A tar archive on disk, plain or gzip-compressed.
pub(crate) struct TarSource {
    file: File,
    /// For gzip archives: the decompressed-size limit and the flag its
    /// reader raises when the limit stops it.
    gzip: Option<(u64, Arc<AtomicBool>)>,
}

impl TarSource {
    pub(crate) fn plain(mut file: File) -> io::Result<Self> {
        file.seek(SeekFrom::Start(0))?;
        Ok(Self { file, gzip: None })
    }

    pub(crate) fn gzip(mut file: File, limit: u64, tripped: Arc<AtomicBool>) -> io::Result<Self> {
        file.seek(SeekFrom::Start(0))?;
        Ok(Self {
            file,
            gzip: Some((limit, tripped)),
        })
    }
}

type GzStream = BufReader<Capped<TimedRead<flate2::bufread::MultiGzDecoder<BufReader<File>>>>>;

/// The tar's regular files by name: data offset and size, and the content
/// of small ones; and the names of entries that are not regular files.
struct TarStore {
    source: TarSource,
    table: EntryTable,
    /// The open decompressor and its position, for gzip archives.
    gz: Option<(GzStream, u64)>,
}

/// The entry's name inside the layout, or `None` for names memprof ignores:
/// absolute, climbing with `..`, starting with `./`, not UTF-8, or
/// implausibly long. OMMX 2.9.3 compares names a path component at a time,
/// where `blobs//x`, `blobs/./x` and `blobs/x/` are `blobs/x` but a leading
/// `./` is a component of its own: `./index.json` is not `index.json` (its
/// reader then finds no index.json, or a blob missing).
fn entry_name(path: &Path) -> Option<String> {
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(p) => parts.push(p.to_str()?),
            _ => return None,
        }
    }
    let name = parts.join("/");
    (!name.is_empty() && name.len() <= MAX_NAME).then_some(name)
}

impl TarStore {
    fn gz_stream(file: &File, limit: u64, tripped: &Arc<AtomicBool>) -> io::Result<GzStream> {
        let mut file = file.try_clone()?;
        file.seek(SeekFrom::Start(0))?;
        Ok(BufReader::with_capacity(
            BUF_SIZE,
            Capped::new(
                TimedRead {
                    inner: flate2::bufread::MultiGzDecoder::new(BufReader::with_capacity(
                        BUF_SIZE, file,
                    )),
                    phase: Phase::Decompress,
                },
                limit,
                tripped.clone(),
            ),
        ))
    }

    fn scan(source: TarSource) -> Result<Self, DecodeError> {
        let mut table = EntryTable::default();
        if let Some((limit, tripped)) = &source.gzip {
            let mut archive = tar::Archive::new(Self::gz_stream(&source.file, *limit, tripped)?);
            // Entries are read through, so each one's data is known to be there.
            // Raw: long names and pax headers are read here, within caps.
            for entry in archive.entries().map_err(ArchiveError::Tar)?.raw(true) {
                table.record(&mut entry.map_err(ArchiveError::Tar)?, None)?;
            }
        } else {
            let file_len = source.file.metadata()?.len();
            let mut archive = tar::Archive::new(BufReader::with_capacity(BUF_SIZE, &source.file));
            // Entries are seeked past. The archive ends at the first header
            // that cannot be read (damaged, or cut short), keeping what came
            // before: OMMX 2.9.3's reader does the same, so an archive whose
            // layout files precede the damage is read by both. Raw: long
            // names and pax headers are read here, within caps.
            for entry in archive
                .entries_with_seek()
                .map_err(ArchiveError::Tar)?
                .raw(true)
            {
                let Ok(mut entry) = entry else { break };
                table.record(&mut entry, Some(file_len))?;
            }
        }
        Ok(Self {
            source,
            table,
            gz: None,
        })
    }
}

/// What the first pass learns about a tar's entries.
#[derive(Default)]
struct EntryTable {
    /// Regular files: data offset and size.
    files: HashMap<String, (u64, u64)>,
    /// The content of small regular files.
    kept: HashMap<String, Vec<u8>>,
    kept_total: u64,
    /// Entries that are not regular files (links, devices, ...), by kind.
    special: HashMap<String, &'static str>,
    count: u64,
    /// What GNU long-name and pax headers said about the next entry.
    extension: Extension,
    /// Whether an entry named with a leading `./` was passed over.
    dotted: bool,
}

/// The metadata headers before an entry, read within [`MAX_EXTENSION`].
/// (The tar crate would read them whole, however large they claim to be.)
#[derive(Default)]
struct Extension {
    /// A GNU long name: `Some(None)` when it is one memprof ignores.
    long_name: Option<Option<String>>,
    /// A pax `path` record.
    pax_path: Option<Option<String>>,
    /// A pax `size` record.
    pax_size: Option<u64>,
}

/// Largest pax header read; a long name longer than [`MAX_NAME`] is skipped
/// unread (its entry is then ignored, as any name that long is).
const MAX_EXTENSION: u64 = 64 << 10;

/// A name from a long-name or pax record, as memprof would use it.
fn extension_name(bytes: &[u8]) -> Option<String> {
    let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
    entry_name(Path::new(std::str::from_utf8(bytes).ok()?))
}

/// What a tar entry that is not a regular file is, for entries that could
/// stand where a file is expected; `None` for those memprof simply skips
/// (directories, metadata headers).
fn special_kind(entry_type: tar::EntryType) -> Option<&'static str> {
    use tar::EntryType as T;
    Some(match entry_type {
        T::Symlink => "a symbolic link",
        T::Link => "a hard link",
        T::Char => "a character device",
        T::Block => "a block device",
        T::Fifo => "a FIFO",
        T::GNUSparse => "a sparse file",
        T::Continuous => "a contiguous file",
        _ => return None,
    })
}

impl EntryTable {
    /// Records one entry. `file_len` is the archive's size when entries are
    /// seeked past rather than read through.
    fn record<R: Read>(
        &mut self,
        entry: &mut tar::Entry<'_, R>,
        file_len: Option<u64>,
    ) -> Result<(), DecodeError> {
        self.count += 1;
        if self.count > MAX_ENTRIES {
            return Err(ArchiveError::TooMany {
                what: "entries",
                cap: MAX_ENTRIES,
            }
            .into());
        }
        let entry_type = entry.header().entry_type();
        if entry_type.is_gnu_longname() {
            let name = if entry.size() > MAX_NAME as u64 + 1 {
                None
            } else {
                let mut bytes = Vec::new();
                entry
                    .take(MAX_NAME as u64 + 1)
                    .read_to_end(&mut bytes)
                    .map_err(ArchiveError::Tar)?;
                extension_name(&bytes)
            };
            self.extension.long_name = Some(name);
            return Ok(());
        }
        if entry_type.is_pax_local_extensions() {
            if entry.size() > MAX_EXTENSION {
                return Err(ArchiveError::TooLarge {
                    what: "a pax header".into(),
                    size: entry.size(),
                    cap: MAX_EXTENSION,
                }
                .into());
            }
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).map_err(ArchiveError::Tar)?;
            for record in tar::PaxExtensions::new(&bytes) {
                let record = record.map_err(ArchiveError::Tar)?;
                match record.key_bytes() {
                    b"path" => self.extension.pax_path = Some(extension_name(record.value_bytes())),
                    b"size" => {
                        let size = record.value().ok().and_then(|v| v.parse().ok());
                        self.extension.pax_size = Some(size.ok_or_else(|| {
                            ArchiveError::Tar(io::Error::other("a pax size record is not a number"))
                        })?);
                    }
                    _ => {}
                }
            }
            return Ok(());
        }
        if entry_type.is_gnu_longlink() || entry_type.is_pax_global_extensions() {
            return Ok(());
        }
        let extension = std::mem::take(&mut self.extension);
        if let Some(size) = extension.pax_size.filter(|&size| size != entry.size()) {
            return Err(ArchiveError::Tar(io::Error::other(format!(
                "a pax header gives an entry {size} bytes where its tar header says {}; \
                 memprof does not read such entries",
                entry.size()
            )))
            .into());
        }
        let special = special_kind(entry_type);
        if entry_type != tar::EntryType::Regular && special.is_none() {
            return Ok(());
        }
        let name = match (extension.long_name, extension.pax_path) {
            (Some(name), _) | (None, Some(name)) => name,
            (None, None) => {
                let path = entry.path().ok();
                let dotted = path.as_ref().map(|p| p.components().next());
                self.dotted |= dotted == Some(Some(Component::CurDir));
                path.and_then(|p| entry_name(&p))
            }
        };
        let Some(name) = name else {
            return Ok(());
        };
        if self.files.contains_key(&name) || self.special.contains_key(&name) {
            // OMMX 2.9.3 reads the first entry of a name and never looks at
            // the others, whatever they hold; ArtifactBuilder itself writes
            // a blob twice when the same layer is added twice.
            return Ok(());
        }
        if let Some(kind) = special {
            self.special.insert(name, kind);
            return Ok(());
        }
        let (offset, declared) = (entry.raw_file_position(), entry.size());
        // An entry whose data runs past the end of the file holds what is
        // there, as OMMX reads it (and nothing can follow it).
        let mut size = file_len.map_or(declared, |len| declared.min(len.saturating_sub(offset)));
        if size <= KEEP_ENTRY && self.kept_total + size <= KEEP_TOTAL {
            let mut bytes = Vec::with_capacity(size as usize);
            entry
                .take(size)
                .read_to_end(&mut bytes)
                .map_err(ArchiveError::Tar)?;
            if bytes.len() as u64 != size && file_len.is_none() {
                return Err(ArchiveError::Tar(io::ErrorKind::UnexpectedEof.into()).into());
            }
            size = bytes.len() as u64;
            self.kept_total += size;
            self.kept.insert(name.clone(), bytes);
        }
        self.files.insert(name, (offset, size));
        Ok(())
    }
}

impl Store for TarStore {
    fn open(&mut self, name: &str) -> Result<Opened<'_>, DecodeError> {
        if let Some(kind) = self.table.special.get(name) {
            return Err(ArchiveError::NotAFile {
                name: name.to_string(),
                kind,
            }
            .into());
        }
        let Some(&(offset, size)) = self.table.files.get(name) else {
            return Ok(None);
        };
        if let Some(bytes) = self.table.kept.get(name) {
            return Ok(Some((Box::new(&bytes[..]), size)));
        }
        let Some((limit, tripped)) = &self.source.gzip else {
            let mut file = &self.source.file;
            file.seek(SeekFrom::Start(offset))?;
            return Ok(Some((Box::new(file.take(size)), size)));
        };
        // Gzip: reuse the decompressor when the blob lies ahead, else restart.
        if self.gz.as_ref().is_none_or(|(_, pos)| *pos > offset) {
            self.gz = Some((Self::gz_stream(&self.source.file, *limit, tripped)?, 0));
        }
        let (stream, pos) = self.gz.as_mut().expect("just set");
        let skip = offset - *pos;
        if io::copy(&mut stream.take(skip), &mut io::sink())? < skip {
            return Err(ArchiveError::Tar(io::ErrorKind::UnexpectedEof.into()).into());
        }
        // Callers read blobs to the end (the digest check does), so the
        // stream is at offset + size afterwards.
        *pos = offset + size;
        Ok(Some((Box::new(stream.take(size)), size)))
    }

    fn position(&self, name: &str) -> Option<u64> {
        self.table.files.get(name).map(|&(offset, _)| offset)
    }

    fn dotted(&self) -> bool {
        self.table.dotted
    }

    fn sizes_claimed(&self) -> bool {
        self.source.gzip.is_some()
    }

    fn where_stored(&self, name: &str) -> Option<(File, u64)> {
        if self.source.gzip.is_some() {
            return None;
        }
        let &(offset, size) = self.table.files.get(name)?;
        let end = offset.checked_add(size)?;
        let length = self.source.file.metadata().ok()?.len();
        (end <= length).then_some(())?;
        Some((self.source.file.try_clone().ok()?, offset))
    }
}

pub(crate) fn read_tar(
    source: TarSource,
    name: String,
    file_bytes: u64,
    selection: Selection,
    pass: &mut Pass<'_>,
    progress: &ProgressBar,
) -> Result<ProfiledInput, DecodeError> {
    let gzip = source.gzip.is_some();
    let mut store = TarStore::scan(source)?;
    let document = InputInfo {
        name,
        file_bytes: Some(file_bytes),
        container: Container::Archive,
        gzip,
        layers: Vec::new(),
        raw_schema: None,
        registry: None,
    };
    read_layout(&mut store, document, selection, pass, progress)
}

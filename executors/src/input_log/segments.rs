//! A learner input log on disk: an append-only folder of numbered segments
//! (`segment-000000.rlog`, ...), each a magic number and then framed records (length, CRC-32C,
//! bytes), and `index.json`, which counts the segments made (so a segment missing from the
//! end is told too). Every learner process starts a segment of its own with a `started`
//! record, made with the process's first record (a process that fails before it has done
//! anything leaves nothing), and a segment rolls over to the next once it passes its size. A
//! process that dies mid-write leaves at most its last record unfinished, and a machine that
//! crashes may leave zeros past it: the reader drops those where a new process began after
//! them (or at the log's end), and refuses every other damage by segment and byte offset.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use super::record::{LogHeader, LogRecord};
use crate::distributed::DistributedError;

/// The first bytes of every segment.
const MAGIC: &[u8; 8] = b"RLGLOG01";
/// A record's frame, little-endian `u32`s: its length, the CRC-32C of those four bytes (so a
/// damaged length is told from a torn end) and the CRC-32C of its bytes.
const FRAME: usize = 12;
/// The file that counts the segments made.
const INDEX: &str = "index.json";
/// Segments roll over past this many bytes unless told otherwise.
pub const DEFAULT_SEGMENT_BYTES: u64 = 64 << 20;

/// Where and how a learner records its input, and what it was built from.
#[derive(Clone, Debug)]
pub struct Recording {
    /// The log's folder.
    pub dir: PathBuf,
    /// Segments roll over past this many bytes.
    pub segment_bytes: u64,
    /// The agent config the learner is built from (RLgraph's JSON).
    pub config: serde_json::Value,
    /// The program's version, as [`LogHeader::code_version`] holds it.
    pub code_version: String,
}

impl Recording {
    /// Opens the log for a learner of `layout` (`distributed`, `ga3c`) on backend `backend`,
    /// seeded `seed`, learning from these spaces.
    pub fn open(
        &self,
        state_space: &rlgraph_core::spaces::Space,
        action_space: &rlgraph_core::spaces::Space,
        seed: u64,
        backend: &str,
        layout: &str,
    ) -> Result<LogWriter, DistributedError> {
        let header = LogHeader {
            format: super::record::LOG_FORMAT,
            code_version: self.code_version.clone(),
            config: self.config.clone(),
            state_space: state_space.to_json(),
            action_space: action_space.to_json(),
            seed,
            backend: backend.to_string(),
            layout: layout.to_string(),
        };
        LogWriter::open(&self.dir, header, self.segment_bytes)
    }
}

fn segment_name(n: u64) -> String {
    format!("segment-{n:06}.rlog")
}

/// The log's segments in order (none in a new log), or the first one missing: from the
/// middle, or from the end where `index.json` counts more than there are.
pub fn segments(dir: &Path) -> Result<Vec<PathBuf>, DistributedError> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| DistributedError::Setup(format!("cannot read {}: {e}", dir.display())))?;
    let mut numbers = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(n) = name
            .strip_prefix("segment-")
            .and_then(|s| s.strip_suffix(".rlog"))
            .and_then(|s| s.parse::<u64>().ok())
        {
            numbers.push(n);
        }
    }
    numbers.sort_unstable();
    for (expected, n) in (0u64..).zip(&numbers) {
        if *n != expected {
            return Err(log_error(
                &dir.join(segment_name(expected)),
                0,
                format!("this segment is missing (the log goes on with {})", segment_name(*n)),
            ));
        }
    }
    let index = dir.join(INDEX);
    if index.exists() {
        let counted = std::fs::read_to_string(&index)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|j| j["segments"].as_u64())
            .ok_or_else(|| DistributedError::Setup(format!("{}: not the log's index", index.display())))?;
        if counted > numbers.len() as u64 {
            return Err(log_error(
                &dir.join(segment_name(numbers.len() as u64)),
                0,
                format!(
                    "this segment is missing: {INDEX} counts {counted} segments, {} are here",
                    numbers.len()
                ),
            ));
        }
    }
    Ok(numbers.into_iter().map(|n| dir.join(segment_name(n))).collect())
}

/// The segments of the log a reader was pointed at: at least one.
fn log_segments(dir: &Path) -> Result<Vec<PathBuf>, DistributedError> {
    let paths = segments(dir)?;
    if paths.is_empty() {
        return Err(DistributedError::Setup(format!(
            "{}: no learner log here (no segment-NNNNNN.rlog files)",
            dir.display()
        )));
    }
    Ok(paths)
}

/// An error at the log's first record (its `started` record, in segment 0).
pub(crate) fn at_first_record(dir: &Path, reason: impl Into<String>) -> DistributedError {
    log_error(&dir.join(segment_name(0)), MAGIC.len() as u64, reason)
}

/// An error at byte `offset` of `segment`.
pub(crate) fn log_error(segment: &Path, offset: u64, reason: impl Into<String>) -> DistributedError {
    DistributedError::Setup(format!(
        "learner log {} at byte {offset}: {}",
        segment.display(),
        reason.into()
    ))
}

/// Appends records to a log, one process's segments after those already there.
pub struct LogWriter {
    dir: PathBuf,
    segment: u64,
    /// The open segment; `None` until the process's first record.
    file: Option<BufWriter<File>>,
    /// The framed `started` record the process's first segment begins with.
    started: Vec<u8>,
    written: u64,
    segment_bytes: u64,
    /// Bytes appended by this writer, frames included.
    pub total_bytes: u64,
}

impl LogWriter {
    /// Opens the log in `dir` (made if missing) for a learner process described by `header`,
    /// refusing a log of another run (its first record's config, spaces, seed, backend or
    /// layout differ). The process's segment is made with its first record.
    pub fn open(dir: &Path, header: LogHeader, segment_bytes: u64) -> Result<Self, DistributedError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| DistributedError::Setup(format!("cannot create the log folder {}: {e}", dir.display())))?;
        let existing = segments(dir)?;
        if !existing.is_empty() {
            if let Some(what) = differs(&first_header(dir)?, &header) {
                return Err(DistributedError::Setup(format!(
                    "{}: this learner log is of another run ({what}); record into another folder",
                    dir.display()
                )));
            }
        }
        let body = LogRecord::Started(header).encode();
        Ok(LogWriter {
            dir: dir.to_path_buf(),
            segment: existing.len() as u64,
            file: None,
            started: [&frame(&body)?[..], &body].concat(),
            written: 0,
            segment_bytes: segment_bytes.max(1),
            total_bytes: 0,
        })
    }

    /// Appends `record`, first rolling over to a new segment if this one is full.
    pub fn append(&mut self, record: &LogRecord) -> Result<(), DistributedError> {
        self.append_encoded(&record.encode())
    }

    /// Appends a record's bytes ([`LogRecord::encode`], [`LogRecord::encode_learned`]).
    pub fn append_encoded(&mut self, body: &[u8]) -> Result<(), DistributedError> {
        let file = match self.file.take() {
            None => {
                let started = std::mem::take(&mut self.started);
                self.written = (MAGIC.len() + started.len()) as u64;
                self.total_bytes += started.len() as u64;
                new_segment(&self.dir, self.segment, &started)?
            }
            // The full segment reaches the disk before the next one exists, so a crash never
            // leaves a segment that rolled over cut short.
            Some(mut full) if self.written >= self.segment_bytes => {
                full.flush().map_err(|e| self.io_error(e))?;
                full.get_ref().sync_data().map_err(|e| self.io_error(e))?;
                self.segment += 1;
                self.written = MAGIC.len() as u64;
                new_segment(&self.dir, self.segment, &[])?
            }
            Some(file) => file,
        };
        let file = self.file.insert(file);
        let frame = frame(body)?;
        let written = file.write_all(&frame).and_then(|()| file.write_all(body));
        written.map_err(|e| self.io_error(e))?;
        let n = (frame.len() + body.len()) as u64;
        self.written += n;
        self.total_bytes += n;
        Ok(())
    }

    /// Logs that a checkpoint of `updates` updates (with the run's counts `run`, where the
    /// replay cannot count them) is about to be saved, through to the disk, so the log reaches
    /// every checkpoint a learner can resume from.
    pub fn checkpointed(&mut self, updates: u64, run: serde_json::Value) -> Result<(), DistributedError> {
        self.append(&LogRecord::Checkpointed { updates, run })?;
        self.sync()
    }

    /// Writes what is buffered through to the disk (before a checkpoint is saved, so the log
    /// always reaches every checkpoint a learner can resume from).
    pub fn sync(&mut self) -> Result<(), DistributedError> {
        let Some(file) = self.file.as_mut() else {
            return Ok(());
        };
        let synced = file.flush().and_then(|()| file.get_ref().sync_data());
        synced.map_err(|e| self.io_error(e))
    }

    fn io_error(&self, e: std::io::Error) -> DistributedError {
        DistributedError::Setup(format!(
            "cannot write the learner log {}: {e}",
            self.dir.join(segment_name(self.segment)).display()
        ))
    }
}

impl Drop for LogWriter {
    fn drop(&mut self) {
        let _ = self.sync();
    }
}

/// The frame of a record's bytes `body`: their length, its checksum and theirs.
fn frame(body: &[u8]) -> Result<[u8; FRAME], DistributedError> {
    let len = u32::try_from(body.len())
        .map_err(|_| DistributedError::Setup(format!("a record of {} bytes is too large to log", body.len())))?;
    let mut out = [0u8; FRAME];
    out[..4].copy_from_slice(&len.to_le_bytes());
    out[4..8].copy_from_slice(&crc32c::crc32c(&len.to_le_bytes()).to_le_bytes());
    out[8..].copy_from_slice(&crc32c::crc32c(body).to_le_bytes());
    Ok(out)
}

/// Segment `n`, made atomically with the magic number and `first` (framed records) in it, so
/// a process killed while making it leaves the segment whole or none; opened for appending.
fn new_segment(dir: &Path, n: u64, first: &[u8]) -> Result<BufWriter<File>, DistributedError> {
    let path = dir.join(segment_name(n));
    let cannot = |e: std::io::Error| DistributedError::Setup(format!("cannot create {}: {e}", path.display()));
    if path.exists() {
        return Err(DistributedError::Setup(format!(
            "{} is already there: is another learner recording into this log?",
            path.display()
        )));
    }
    rlgraph_core::write_atomically(&path, &[&MAGIC[..], first].concat()).map_err(cannot)?;
    let index = serde_json::json!({ "segments": n + 1 }).to_string();
    rlgraph_core::write_atomically(dir.join(INDEX), index.as_bytes())
        .map_err(|e| DistributedError::Setup(format!("cannot write {}: {e}", dir.join(INDEX).display())))?;
    let file = File::options().append(true).open(&path).map_err(cannot)?;
    Ok(BufWriter::with_capacity(1 << 20, file))
}

/// What in `b` differs from the run `a` describes, if anything (the code's version is
/// checked by the replay, which may be told to allow another).
fn differs(a: &LogHeader, b: &LogHeader) -> Option<&'static str> {
    if a.config != b.config {
        Some("another config")
    } else if a.state_space != b.state_space || a.action_space != b.action_space {
        Some("other spaces")
    } else if a.seed != b.seed {
        Some("another seed")
    } else if a.backend != b.backend {
        Some("another backend")
    } else if a.layout != b.layout {
        Some("another layout")
    } else {
        None
    }
}

/// The header of a later process that does not continue the run `first` began, named.
pub(crate) fn check_same_run(first: &LogHeader, later: &LogHeader) -> Option<String> {
    differs(first, later).map(|what| format!("a learner restarted with {what} than the log's first"))
}

/// A segment's records with their byte offsets, and the torn record at its end if there is
/// one (its offset and why). `tail_may_tear`: whether a torn last record is allowed here (the
/// log's last segment, or one after which a new process began); elsewhere it is refused.
pub(crate) type SegmentRecords = (Vec<(u64, LogRecord)>, Option<(u64, String)>);

/// Reads one segment (see [`SegmentRecords`]).
pub(crate) fn read_segment(path: &Path, tail_may_tear: bool) -> Result<SegmentRecords, DistributedError> {
    let bytes = std::fs::read(path).map_err(|e| log_error(path, 0, format!("cannot read it: {e}")))?;
    parse_records(path, &bytes, tail_may_tear)
}

/// The records in `bytes`, a segment's (or its start), as [`read_segment`] reads them.
fn parse_records(path: &Path, bytes: &[u8], tail_may_tear: bool) -> Result<SegmentRecords, DistributedError> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(log_error(
            path,
            0,
            "not a learner log segment (its first bytes are not RLGLOG01)",
        ));
    }
    let mut at = MAGIC.len();
    let mut records = Vec::new();
    while at < bytes.len() {
        let torn = |reason: String| -> Result<Option<(u64, String)>, DistributedError> {
            match tail_may_tear {
                true => Ok(Some((at as u64, reason))),
                false => Err(log_error(path, at as u64, reason)),
            }
        };
        let left = bytes.len() - at;
        // What a machine that crashed mid-write leaves: the file longer than what reached it.
        if bytes[at..].iter().all(|&b| b == 0) {
            let tail = torn(format!("{left} bytes of zeros to the end"))?;
            return Ok((records, tail));
        }
        if left < FRAME {
            let tail = torn(format!("a record's frame is cut off after {left} of {FRAME} bytes"))?;
            return Ok((records, tail));
        }
        let word = |i: usize| u32::from_le_bytes(bytes[at + i..at + i + 4].try_into().unwrap_or_default());
        if crc32c::crc32c(&bytes[at..at + 4]) != word(4) {
            return Err(log_error(
                path,
                at as u64,
                "the record's length is damaged (its checksum does not match)",
            ));
        }
        let (len, crc) = (word(0) as usize, word(8));
        let end = at + FRAME + len;
        if end > bytes.len() {
            let tail = torn(format!("a record of {len} bytes is cut off after {}", left - FRAME))?;
            return Ok((records, tail));
        }
        let body = &bytes[at + FRAME..end];
        // A process dies between writes, never inside a record's bytes already written: a
        // record whose bytes are all there and do not match is damage, wherever it is.
        if crc32c::crc32c(body) != crc {
            return Err(log_error(
                path,
                at as u64,
                "the record's checksum does not match its bytes",
            ));
        }
        let record = LogRecord::decode(body).map_err(|reason| log_error(path, at as u64, reason))?;
        records.push((at as u64, record));
        at = end;
    }
    Ok((records, None))
}

/// The first record of the segment at `path`, read alone (`None` for a segment with none).
fn first_record(path: &Path) -> Result<Option<LogRecord>, DistributedError> {
    use std::io::Read;
    let mut file = File::open(path).map_err(|e| log_error(path, 0, format!("cannot read it: {e}")))?;
    let mut head = [0u8; MAGIC.len() + FRAME];
    let mut got = 0;
    while got < head.len() {
        match file.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) => return Err(log_error(path, got as u64, format!("cannot read it: {e}"))),
        }
    }
    if got < head.len() {
        // Too short for a record: read whole, which says why.
        return Ok(read_segment(path, true)?.0.into_iter().next().map(|(_, r)| r));
    }
    let len = u32::from_le_bytes(head[MAGIC.len()..MAGIC.len() + 4].try_into().unwrap_or_default()) as u64;
    let mut body = Vec::new();
    file.take(len)
        .read_to_end(&mut body)
        .map_err(|e| log_error(path, MAGIC.len() as u64, format!("cannot read it: {e}")))?;
    let bytes = [&head[..], &body].concat();
    // The first record alone, checked as the whole segment's reading checks it.
    Ok(parse_records(path, &bytes, true)?.0.into_iter().next().map(|(_, r)| r))
}

/// The header of the log's first learner process (what a replay builds its learner from).
pub fn first_header(dir: &Path) -> Result<LogHeader, DistributedError> {
    let paths = log_segments(dir)?;
    match first_record(&paths[0])? {
        Some(LogRecord::Started(header)) => Ok(header),
        _ => Err(log_error(
            &paths[0],
            MAGIC.len() as u64,
            "the log does not start with a started record",
        )),
    }
}

/// A record read from a log, with where it was.
#[derive(Clone, Debug)]
pub struct Logged {
    /// The segment it is in.
    pub segment: PathBuf,
    /// Its byte offset there.
    pub offset: u64,
    /// The record.
    pub record: LogRecord,
}

/// Reads the log in `dir` in order, one segment in memory at a time, handing each record to
/// `visit` until it breaks; returns a note per torn record dropped.
pub fn visit_log(
    dir: &Path,
    mut visit: impl FnMut(Logged) -> Result<ControlFlow<()>, DistributedError>,
) -> Result<Vec<String>, DistributedError> {
    let paths = log_segments(dir)?;
    let mut notes = Vec::new();
    for (i, path) in paths.iter().enumerate() {
        // A torn record can end a segment only where its process ended: the log's last
        // segment, or one after which another process started.
        let next_starts = match paths.get(i + 1) {
            None => true,
            Some(next) => matches!(first_record(next)?, Some(LogRecord::Started(_))),
        };
        let (records, torn) = read_segment(path, next_starts)?;
        if i == 0 && !matches!(records.first(), Some((_, LogRecord::Started(_)))) {
            return Err(log_error(
                path,
                MAGIC.len() as u64,
                "the log does not start with a started record",
            ));
        }
        if let Some((offset, reason)) = torn {
            notes.push(format!(
                "{} at byte {offset}: dropped a torn end ({reason}); its process ended there",
                path.display()
            ));
        }
        for (offset, record) in records {
            let logged = Logged {
                segment: path.clone(),
                offset,
                record,
            };
            if visit(logged)?.is_break() {
                return Ok(notes);
            }
        }
    }
    Ok(notes)
}

/// Every record of the log in `dir`, in order, and a note per torn record dropped.
pub fn read_log(dir: &Path) -> Result<(Vec<Logged>, Vec<String>), DistributedError> {
    let mut records = Vec::new();
    let notes = visit_log(dir, |logged| {
        records.push(logged);
        Ok(ControlFlow::Continue(()))
    })?;
    Ok((records, notes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn header(seed: u64) -> LogHeader {
        LogHeader {
            format: super::super::record::LOG_FORMAT,
            code_version: "test".into(),
            config: json!({"type": "apex"}),
            state_space: json!({"type": "float"}),
            action_space: json!({"type": "int"}),
            seed,
            backend: "candle".into(),
            layout: "distributed".into(),
        }
    }

    fn report(frames: u64) -> LogRecord {
        LogRecord::Reported {
            frames,
            episode_returns: vec![frames as f64],
        }
    }

    fn frames_of(records: &[Logged]) -> Vec<u64> {
        records
            .iter()
            .filter_map(|l| match &l.record {
                LogRecord::Reported { frames, .. } => Some(*frames),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn segments_roll_by_size_and_a_second_process_appends_its_own() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut w = LogWriter::open(dir.path(), header(1), 200).unwrap();
            for f in 1..=10 {
                w.append(&report(f)).unwrap();
            }
        }
        let first = segments(dir.path()).unwrap().len();
        assert!(first > 2, "200-byte segments should roll over ({first} segments)");
        {
            let mut w = LogWriter::open(dir.path(), header(1), 200).unwrap();
            w.append(&report(11)).unwrap();
        }
        let (records, notes) = read_log(dir.path()).unwrap();
        assert!(notes.is_empty());
        assert_eq!(frames_of(&records), (1..=11).collect::<Vec<_>>());
        let starts: Vec<_> = records
            .iter()
            .filter(|l| matches!(l.record, LogRecord::Started(_)))
            .map(|l| (l.segment.file_name().unwrap().to_string_lossy().into_owned(), l.offset))
            .collect();
        assert_eq!(
            starts,
            vec![("segment-000000.rlog".into(), 8), (segment_name(first as u64), 8)]
        );
        // A process that logs nothing (a learner that failed at its start) leaves nothing.
        drop(LogWriter::open(dir.path(), header(1), 200).unwrap());
        assert_eq!(read_log(dir.path()).unwrap().0.len(), records.len());
        // Another run's learner may not append here.
        let e = LogWriter::open(dir.path(), header(2), 200).err().unwrap().to_string();
        assert!(e.contains("another run (another seed)"), "{e}");
    }

    #[test]
    fn a_torn_tail_is_dropped_where_a_process_ended_and_refused_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut w = LogWriter::open(dir.path(), header(1), 1 << 20).unwrap();
            for f in 1..=3 {
                w.append(&report(f)).unwrap();
            }
        }
        let seg0 = dir.path().join(segment_name(0));
        let full = std::fs::read(&seg0).unwrap();
        // Cut into the last record: it is dropped, with a note naming segment and offset.
        std::fs::write(&seg0, &full[..full.len() - 3]).unwrap();
        let (records, notes) = read_log(dir.path()).unwrap();
        assert_eq!(frames_of(&records), vec![1, 2]);
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].contains("segment-000000.rlog at byte") && notes[0].contains("torn"),
            "{}",
            notes[0]
        );
        // A new process after the crash: the torn record stays dropped, the rest reads on.
        {
            let mut w = LogWriter::open(dir.path(), header(1), 1 << 20).unwrap();
            w.append(&report(4)).unwrap();
        }
        assert_eq!(frames_of(&read_log(dir.path()).unwrap().0), vec![1, 2, 4]);
        // Zeros past the last record (a machine that crashed mid-write) are dropped too.
        let seg1 = dir.path().join(segment_name(1));
        let mut zeros = std::fs::read(&seg1).unwrap();
        zeros.extend_from_slice(&[0; 100]);
        std::fs::write(&seg1, &zeros).unwrap();
        let (records, notes) = read_log(dir.path()).unwrap();
        assert_eq!(frames_of(&records), vec![1, 2, 4]);
        assert!(notes.iter().any(|n| n.contains("100 bytes of zeros")), "{notes:?}");
        // A last record whose bytes are all there and do not match is damage, not a torn end.
        let mut last = zeros[..zeros.len() - 100].to_vec();
        let n = last.len();
        last[n - 1] ^= 1;
        std::fs::write(&seg1, &last).unwrap();
        let e = read_log(dir.path()).err().unwrap().to_string();
        assert!(
            e.contains("segment-000001.rlog at byte") && e.contains("checksum"),
            "{e}"
        );
        // A flipped bit in a record that is not the last is refused by segment and offset.
        let mut flipped = full.clone();
        let last_start = full.len() - (FRAME + report(3).encode().len());
        flipped[last_start - 2] ^= 1;
        std::fs::write(&seg0, &flipped).unwrap();
        let e = read_log(dir.path()).err().unwrap().to_string();
        assert!(
            e.contains("segment-000000.rlog at byte") && e.contains("checksum"),
            "{e}"
        );
    }

    #[test]
    fn a_missing_segment_a_foreign_file_and_a_torn_rollover_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut w = LogWriter::open(dir.path(), header(1), 100).unwrap();
            for f in 1..=10 {
                w.append(&report(f)).unwrap();
            }
        }
        let n = segments(dir.path()).unwrap().len();
        assert!(n >= 4);
        // A segment that rolled over (the next one does not begin a process) may not be torn.
        let seg1 = dir.path().join(segment_name(1));
        let bytes = std::fs::read(&seg1).unwrap();
        std::fs::write(&seg1, &bytes[..bytes.len() - 1]).unwrap();
        let e = read_log(dir.path()).err().unwrap().to_string();
        assert!(
            e.contains("segment-000001.rlog at byte") && e.contains("cut off"),
            "{e}"
        );
        std::fs::write(&seg1, b"not a log").unwrap();
        let e = read_log(dir.path()).err().unwrap().to_string();
        assert!(
            e.contains("segment-000001.rlog at byte 0: not a learner log segment"),
            "{e}"
        );
        std::fs::remove_file(&seg1).unwrap();
        let e = read_log(dir.path()).err().unwrap().to_string();
        assert!(e.contains("segment-000001.rlog") && e.contains("missing"), "{e}");
        // Segments missing from the end: the index counts them.
        for k in 1..n {
            let _ = std::fs::remove_file(dir.path().join(segment_name(k as u64)));
        }
        let e = read_log(dir.path()).err().unwrap().to_string();
        assert!(
            e.contains("segment-000001.rlog") && e.contains(&format!("index.json counts {n} segments")),
            "{e}"
        );
        // So does a learner asked to record there: it names the damage, not another learner.
        let e = LogWriter::open(dir.path(), header(1), 100).err().unwrap().to_string();
        assert!(e.contains("missing"), "{e}");
        let empty = tempfile::tempdir().unwrap();
        assert!(read_log(empty.path())
            .err()
            .unwrap()
            .to_string()
            .contains("no learner log here"));
    }
}

//! A learner input log on disk: an append-only folder of numbered segments
//! (`segment-000000.rlog`, ...), each a magic number and then framed records (length, CRC-32C,
//! bytes). Every learner process starts a segment of its own with a `started` record, and a
//! segment rolls over to the next once it passes its size. A process that dies mid-write
//! leaves at most its last record unfinished: the reader drops that torn record where a new
//! process began after it (or at the log's end), and refuses every other damage by segment
//! and byte offset.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::record::{LogHeader, LogRecord};
use crate::distributed::DistributedError;

/// The first bytes of every segment.
const MAGIC: &[u8; 8] = b"RLGLOG01";
/// A record's frame, little-endian `u32`s: its length, the CRC-32C of those four bytes (so a
/// damaged length is told from a torn end) and the CRC-32C of its bytes.
const FRAME: usize = 12;
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

fn segment_name(n: u64) -> String {
    format!("segment-{n:06}.rlog")
}

/// The log's segments in order, or the first one missing from the middle.
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
    if numbers.is_empty() {
        return Err(DistributedError::Setup(format!(
            "{}: no learner log here (no segment-NNNNNN.rlog files)",
            dir.display()
        )));
    }
    for (expected, n) in (0u64..).zip(&numbers) {
        if *n != expected {
            return Err(log_error(
                &dir.join(segment_name(expected)),
                0,
                format!("this segment is missing (the log goes on with {})", segment_name(*n)),
            ));
        }
    }
    Ok(numbers.into_iter().map(|n| dir.join(segment_name(n))).collect())
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
    file: BufWriter<File>,
    written: u64,
    segment_bytes: u64,
    /// Bytes appended by this writer, frames included.
    pub total_bytes: u64,
}

impl LogWriter {
    /// Opens the log in `dir` (made if missing) for a learner process described by `header`:
    /// refuses a log of another run (its first record's config, spaces or seed differ), then
    /// starts the next segment with a `started` record.
    pub fn open(dir: &Path, header: LogHeader, segment_bytes: u64) -> Result<Self, DistributedError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| DistributedError::Setup(format!("cannot create the log folder {}: {e}", dir.display())))?;
        let next = match segments(dir) {
            Ok(existing) => {
                if let Some(what) = differs(&first_header(dir)?, &header) {
                    return Err(DistributedError::Setup(format!(
                        "{}: this learner log is of another run ({what}); record into another folder",
                        dir.display()
                    )));
                }
                existing.len() as u64
            }
            Err(_) => 0,
        };
        let body = LogRecord::Started(header).encode();
        let started = [&frame(&body)?[..], &body].concat();
        Ok(LogWriter {
            dir: dir.to_path_buf(),
            segment: next,
            file: new_segment(dir, next, &started)?,
            written: (MAGIC.len() + started.len()) as u64,
            segment_bytes: segment_bytes.max(1),
            total_bytes: started.len() as u64,
        })
    }

    /// Appends `record`, first rolling over to a new segment if this one is full.
    pub fn append(&mut self, record: &LogRecord) -> Result<(), DistributedError> {
        self.append_encoded(&record.encode())
    }

    /// Appends a record's bytes ([`LogRecord::encode`], [`LogRecord::encode_learned`]).
    pub fn append_encoded(&mut self, body: &[u8]) -> Result<(), DistributedError> {
        if self.written >= self.segment_bytes {
            self.file.flush().map_err(|e| self.io_error(e))?;
            self.segment += 1;
            self.file = new_segment(&self.dir, self.segment, &[])?;
            self.written = MAGIC.len() as u64;
        }
        let frame = frame(body)?;
        self.file.write_all(&frame).map_err(|e| self.io_error(e))?;
        self.file.write_all(body).map_err(|e| self.io_error(e))?;
        let n = (frame.len() + body.len()) as u64;
        self.written += n;
        self.total_bytes += n;
        Ok(())
    }

    /// Writes what is buffered through to the disk (before a checkpoint is saved, so the log
    /// always reaches every checkpoint a learner can resume from).
    pub fn sync(&mut self) -> Result<(), DistributedError> {
        self.file.flush().map_err(|e| self.io_error(e))?;
        self.file.get_ref().sync_data().map_err(|e| self.io_error(e))
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
        let refuse =
            |reason: String| -> Result<SegmentRecords, DistributedError> { Err(log_error(path, at as u64, reason)) };
        let left = bytes.len() - at;
        if left < FRAME {
            let reason = format!("a record's frame is cut off after {left} of {FRAME} bytes");
            return match tail_may_tear {
                true => Ok((records, Some((at as u64, reason)))),
                false => refuse(reason),
            };
        }
        let word = |i: usize| u32::from_le_bytes(bytes[at + i..at + i + 4].try_into().unwrap_or_default());
        if crc32c::crc32c(&bytes[at..at + 4]) != word(4) {
            return refuse("the record's length is damaged (its checksum does not match)".into());
        }
        let (len, crc) = (word(0) as usize, word(8));
        let end = at + FRAME + len;
        if end > bytes.len() {
            let reason = format!("a record of {len} bytes is cut off after {}", left - FRAME);
            return match tail_may_tear {
                true => Ok((records, Some((at as u64, reason)))),
                false => refuse(reason),
            };
        }
        let body = &bytes[at + FRAME..end];
        if crc32c::crc32c(body) != crc {
            let reason = "the record's checksum does not match its bytes".to_string();
            // Only the very last record may be torn: one whose bytes reached the disk only in part.
            return match tail_may_tear && end == bytes.len() {
                true => Ok((records, Some((at as u64, reason)))),
                false => refuse(reason),
            };
        }
        let record = LogRecord::decode(body).map_err(|reason| log_error(path, at as u64, reason))?;
        records.push((at as u64, record));
        at = end;
    }
    Ok((records, None))
}

/// The header of the log's first learner process (what a replay builds its learner from).
pub fn first_header(dir: &Path) -> Result<LogHeader, DistributedError> {
    let paths = segments(dir)?;
    match read_segment(&paths[0], true)?.0.into_iter().next() {
        Some((_, LogRecord::Started(header))) => Ok(header),
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

/// Every record of the log in `dir`, in order, and a note per torn record dropped.
pub fn read_log(dir: &Path) -> Result<(Vec<Logged>, Vec<String>), DistributedError> {
    let paths = segments(dir)?;
    let mut out = Vec::new();
    let mut notes = Vec::new();
    for (i, path) in paths.iter().enumerate() {
        // A torn record can end a segment only where its process ended: the log's last
        // segment, or one after which another process started.
        let next_starts = match paths.get(i + 1) {
            None => true,
            Some(next) => matches!(read_segment(next, true)?.0.first(), Some((_, LogRecord::Started(_)))),
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
                "{} at byte {offset}: dropped a torn last record ({reason}); its process ended there",
                path.display()
            ));
        }
        out.extend(records.into_iter().map(|(offset, record)| Logged {
            segment: path.clone(),
            offset,
            record,
        }));
    }
    Ok((out, notes))
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
        let empty = tempfile::tempdir().unwrap();
        assert!(read_log(empty.path())
            .err()
            .unwrap()
            .to_string()
            .contains("no learner log here"));
    }
}

//! `EventWriter`: TensorBoard event files (`events.out.tfevents.*`) with scalar summaries, so
//! `tensorboard --logdir OUT` plots a training run, from the command line or a library user's
//! own loop.
//!
//! The format is TensorFlow's: a sequence of TFRecords (length, masked CRC-32C of the length,
//! the `Event` protocol buffer, masked CRC-32C of the data), the first event naming the file
//! version.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use prost::Message;

/// `tensorflow.Summary.Value`, the fields a scalar uses.
#[derive(Clone, PartialEq, Message)]
struct SummaryValue {
    #[prost(string, tag = "1")]
    tag: String,
    #[prost(float, tag = "2")]
    simple_value: f32,
}

/// `tensorflow.Summary`.
#[derive(Clone, PartialEq, Message)]
struct Summary {
    #[prost(message, repeated, tag = "1")]
    value: Vec<SummaryValue>,
}

/// `tensorflow.Event`, the fields used here.
#[derive(Clone, PartialEq, Message)]
struct Event {
    #[prost(double, tag = "1")]
    wall_time: f64,
    #[prost(int64, tag = "2")]
    step: i64,
    #[prost(string, optional, tag = "3")]
    file_version: Option<String>,
    #[prost(message, optional, tag = "5")]
    summary: Option<Summary>,
}

/// TFRecord's checksum: CRC-32C, rotated and offset so that checksums of checksums differ.
pub fn masked_crc(data: &[u8]) -> u32 {
    let crc = crc32c::crc32c(data);
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// One TFRecord around `data`.
pub fn tf_record(data: &[u8]) -> Vec<u8> {
    let len = (data.len() as u64).to_le_bytes();
    let mut out = Vec::with_capacity(data.len() + 16);
    out.extend_from_slice(&len);
    out.extend_from_slice(&masked_crc(&len).to_le_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(&masked_crc(data).to_le_bytes());
    out
}

/// The encoded `Event` of one scalar.
pub fn scalar_event(tag: &str, step: i64, value: f32, wall_time: f64) -> Vec<u8> {
    Event {
        wall_time,
        step,
        file_version: None,
        summary: Some(Summary {
            value: vec![SummaryValue {
                tag: tag.into(),
                simple_value: value,
            }],
        }),
    }
    .encode_to_vec()
}

/// Writes scalar summaries to one event file.
pub struct EventWriter {
    file: BufWriter<File>,
    path: PathBuf,
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

impl EventWriter {
    /// A new event file in `dir` (created if missing).
    pub fn create(dir: &Path) -> Result<Self, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let wall = now();
        let path = dir.join(format!(
            "events.out.tfevents.{}.rlgraph.{}",
            wall as u64,
            std::process::id()
        ));
        let file = File::create(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let mut w = EventWriter {
            file: BufWriter::new(file),
            path,
        };
        let version = Event {
            wall_time: wall,
            step: 0,
            file_version: Some("brain.Event:2".into()),
            summary: None,
        };
        w.write(&version.encode_to_vec())?;
        Ok(w)
    }

    fn write(&mut self, event: &[u8]) -> Result<(), String> {
        self.file
            .write_all(&tf_record(event))
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))
    }

    /// Appends scalar `tag` at `step`.
    pub fn scalar(&mut self, tag: &str, step: u64, value: f64) -> Result<(), String> {
        self.write(&scalar_event(tag, step as i64, value as f32, now()))
    }

    /// Writes buffered events to disk.
    pub fn flush(&mut self) -> Result<(), String> {
        self.file
            .flush()
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))
    }
}

/// Every value of scalar `tag` in the event file at `path`, with its step, in file order;
/// a record whose checksum does not match, or that is cut off, is an error naming its offset.
pub fn read_scalars(path: &Path, tag: &str) -> Result<Vec<(i64, f32)>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let bad = |at: usize, what: &str| format!("{} at byte {at}: {what}", path.display());
    let word = |at: usize, n: usize| bytes.get(at..at + n).ok_or_else(|| bad(at, "cut off"));
    let (mut at, mut out) = (0, Vec::new());
    while at < bytes.len() {
        let len = word(at, 8)?;
        let crc = u32::from_le_bytes(word(at + 8, 4)?.try_into().unwrap_or_default());
        if masked_crc(len) != crc {
            return Err(bad(at, "the length's checksum does not match"));
        }
        let n =
            usize::try_from(u64::from_le_bytes(len.try_into().unwrap_or_default())).map_err(|_| bad(at, "too long"))?;
        let data = word(at + 12, n)?;
        let crc = u32::from_le_bytes(word(at + 12 + n, 4)?.try_into().unwrap_or_default());
        if masked_crc(data) != crc {
            return Err(bad(at, "the event's checksum does not match"));
        }
        let event = Event::decode(data).map_err(|e| bad(at, &format!("not an event: {e}")))?;
        for v in event.summary.iter().flat_map(|s| &s.value) {
            if v.tag == tag {
                out.push((event.step, v.simple_value));
            }
        }
        at += 16 + n;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_read_back_by_tag_and_a_flipped_bit_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = EventWriter::create(dir.path()).unwrap();
        for (step, x) in [(1, 0.5), (2, -1.25)] {
            w.scalar("train/loss", step, x).unwrap();
            w.scalar("other", step, 9.0).unwrap();
        }
        w.flush().unwrap();
        let path = std::fs::read_dir(dir.path()).unwrap().next().unwrap().unwrap().path();
        assert_eq!(read_scalars(&path, "train/loss").unwrap(), vec![(1, 0.5), (2, -1.25)]);
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 6;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(read_scalars(&path, "train/loss").unwrap_err().contains("checksum"));
    }

    #[test]
    fn crc32c_matches_the_standard_check_value() {
        // The CRC-32C check value of "123456789" is 0xE3069283 (RFC 3720, B.4).
        assert_eq!(crc32c::crc32c(b"123456789"), 0xE306_9283);
        // Masked by hand: 0xE3069283 rotated right by 15 bits is 0x2507C60D; plus 0xA282EAD8
        // (mod 2^32) is 0xC78AB0E5.
        assert_eq!(masked_crc(b"123456789"), 0xC78A_B0E5);
    }

    #[test]
    fn a_scalar_event_is_the_protocol_buffer_assembled_by_hand() {
        // Event { wall_time: 2.0 (field 1, fixed64), step: 3 (field 2, varint),
        //   summary (field 5, length-delimited) { value (field 1) { tag "r" (field 1),
        //   simple_value 1.5 (field 2, fixed32) } } }
        let mut want = vec![0x09];
        want.extend_from_slice(&2.0f64.to_le_bytes());
        want.extend_from_slice(&[0x10, 0x03]);
        let mut value = vec![0x0a, 0x01, b'r', 0x15];
        value.extend_from_slice(&1.5f32.to_le_bytes());
        let mut summary = vec![0x0a, value.len() as u8];
        summary.extend_from_slice(&value);
        want.extend_from_slice(&[0x2a, summary.len() as u8]);
        want.extend_from_slice(&summary);
        assert_eq!(scalar_event("r", 3, 1.5, 2.0), want);
    }

    #[test]
    fn records_frame_their_data() {
        let r = tf_record(b"abc");
        assert_eq!(&r[..8], &3u64.to_le_bytes());
        assert_eq!(&r[8..12], &masked_crc(&3u64.to_le_bytes()).to_le_bytes());
        assert_eq!(&r[12..15], b"abc");
        assert_eq!(&r[15..], &masked_crc(b"abc").to_le_bytes());
    }
}

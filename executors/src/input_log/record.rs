//! The records of a learner input log and their bytes: what decides a distributed learner's
//! next state, in the order it happened. A record's bytes are a kind byte, a JSON header and,
//! for a learned batch, the batch as a self-describing binary nest (flat key, dtype, shape,
//! little-endian elements), so a reader needs no space to decode it.

use agents::WeightSnapshot;
use rlgraph_core::spaces::{Array, Value};
use serde_json::{json, Value as Json};

/// The log format this code writes and reads.
pub const LOG_FORMAT: u64 = 1;

/// What a learner process logs when it starts: enough to build the same learner again.
#[derive(Clone, Debug, PartialEq)]
pub struct LogHeader {
    /// The log format ([`LOG_FORMAT`]).
    pub format: u64,
    /// The program that wrote the log: its version and the commit it was built from.
    pub code_version: String,
    /// The agent config the learner was built from (RLgraph's JSON).
    pub config: Json,
    /// The states the learner learns from.
    pub state_space: Json,
    /// The actions.
    pub action_space: Json,
    /// The learner's seed.
    pub seed: u64,
    /// The backend's name (`candle`, `tch`).
    pub backend: String,
    /// Where the learner ran: `distributed` (Ape-X's or IMPALA's learner) or `ga3c`.
    pub layout: String,
}

/// One entry of the log.
#[derive(Clone, Debug, PartialEq)]
pub enum LogRecord {
    /// A learner process started with a fresh learner.
    Started(LogHeader),
    /// The learner restored its checkpoint of `updates` updates.
    Resumed {
        /// The updates the restored learner had done.
        updates: u64,
    },
    /// One update on `batch` at `time_percentage`, which gave `loss`; `updates` counts it.
    Learned {
        /// The run's share done, as the learner's schedules saw it.
        time_percentage: f64,
        /// The loss the update gave.
        loss: f64,
        /// The learner's updates after this one.
        updates: u64,
        /// The batch, as the learner took it.
        batch: Value,
    },
    /// A publication of the policy's weights.
    Published {
        /// Its version.
        version: u64,
        /// The CRC-32C of its weights ([`weights_crc`]).
        weights_crc: u32,
    },
    /// Frames and finished episodes the actors reported.
    Reported {
        /// Frames stepped since the last report.
        frames: u64,
        /// Returns of the episodes finished since, in order.
        episode_returns: Vec<f64>,
    },
    /// The run's greedy evaluation rounds so far (replaces the last such record's).
    Evaluated {
        /// The rounds, as the learner's checkpoint holds them.
        rounds: Json,
    },
    /// The weight versions the next learned batch's rollouts were acted with, in its order
    /// (IMPALA: what V-trace corrects for; a replay needs them not, a person reading the log
    /// may).
    ActedWith {
        /// One version per rollout.
        versions: Vec<u64>,
    },
    /// The learner is about to save a checkpoint of `updates` updates.
    Checkpointed {
        /// The learner's updates.
        updates: u64,
        /// The run's counts as the checkpoint holds them, where the replay cannot count them
        /// from the records (GA3C's, which its threads count); `null` otherwise.
        run: Json,
    },
}

impl LogRecord {
    /// The record of a publication: its version and its weights' CRC.
    pub fn published(snapshot: &WeightSnapshot) -> LogRecord {
        LogRecord::Published {
            version: snapshot.version,
            weights_crc: weights_crc(snapshot),
        }
    }

    /// The record's name, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            LogRecord::Started(_) => "started",
            LogRecord::Resumed { .. } => "resumed",
            LogRecord::Learned { .. } => "learned",
            LogRecord::Published { .. } => "published",
            LogRecord::Reported { .. } => "reported",
            LogRecord::Evaluated { .. } => "evaluated",
            LogRecord::Checkpointed { .. } => "checkpointed",
            LogRecord::ActedWith { .. } => "acted_with",
        }
    }

    /// The record's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let (kind, head, batch) = match self {
            LogRecord::Started(h) => (
                0u8,
                json!({
                    "format": h.format, "code_version": h.code_version, "config": h.config,
                    "state_space": h.state_space, "action_space": h.action_space, "seed": h.seed,
                    "backend": h.backend, "layout": h.layout,
                }),
                None,
            ),
            LogRecord::Resumed { updates } => (1, json!({ "updates": updates }), None),
            // Floats as their bits: a replay compares them exactly, NaN included.
            LogRecord::Learned {
                time_percentage,
                loss,
                updates,
                batch,
            } => return Self::encode_learned(*time_percentage, *loss, *updates, batch),
            LogRecord::Published { version, weights_crc } => {
                (3, json!({ "version": version, "weights_crc": weights_crc }), None)
            }
            LogRecord::Reported {
                frames,
                episode_returns,
            } => (
                4,
                json!({ "frames": frames, "returns": episode_returns.iter().map(|r| r.to_bits()).collect::<Vec<_>>() }),
                None,
            ),
            LogRecord::Evaluated { rounds } => (5, json!({ "rounds": rounds }), None),
            LogRecord::Checkpointed { updates, run } => (6, json!({ "updates": updates, "run": run }), None),
            LogRecord::ActedWith { versions } => (7, json!({ "versions": versions }), None),
        };
        body(kind, &head, batch)
    }

    /// The bytes of a `learned` record, from a batch the caller keeps (the learner's, which
    /// need not be copied to be logged).
    pub fn encode_learned(time_percentage: f64, loss: f64, updates: u64, batch: &Value) -> Vec<u8> {
        body(
            2,
            &json!({ "t": time_percentage.to_bits(), "loss": loss.to_bits(), "updates": updates }),
            Some(batch),
        )
    }

    /// A record from its bytes, or what is wrong with them.
    pub fn decode(bytes: &[u8]) -> Result<LogRecord, String> {
        let mut r = Reader { bytes, at: 0 };
        let kind = r.u8()?;
        let head_len = r.u32()? as usize;
        let head: Json =
            serde_json::from_slice(r.take(head_len)?).map_err(|e| format!("the record's header is not JSON: {e}"))?;
        let u = |key: &str| {
            head[key]
                .as_u64()
                .ok_or_else(|| format!("the record's '{key}' is {}, expected a count", head[key]))
        };
        let record = match kind {
            0 => LogRecord::Started(LogHeader {
                format: u("format")?,
                code_version: head["code_version"].as_str().unwrap_or_default().to_string(),
                config: head["config"].clone(),
                state_space: head["state_space"].clone(),
                action_space: head["action_space"].clone(),
                seed: u("seed")?,
                backend: head["backend"].as_str().unwrap_or_default().to_string(),
                layout: head["layout"].as_str().unwrap_or_default().to_string(),
            }),
            1 => LogRecord::Resumed { updates: u("updates")? },
            2 => LogRecord::Learned {
                time_percentage: f64::from_bits(u("t")?),
                loss: f64::from_bits(u("loss")?),
                updates: u("updates")?,
                batch: decode_value(&mut r)?,
            },
            3 => LogRecord::Published {
                version: u("version")?,
                weights_crc: u32::try_from(u("weights_crc")?).map_err(|_| "the weights' CRC is not 32 bits")?,
            },
            4 => LogRecord::Reported {
                frames: u("frames")?,
                episode_returns: head["returns"]
                    .as_array()
                    .ok_or("the record's 'returns' is not a list")?
                    .iter()
                    .map(|b| b.as_u64().map(f64::from_bits).ok_or("a return is not a float's bits"))
                    .collect::<Result<_, _>>()?,
            },
            5 => LogRecord::Evaluated {
                rounds: head["rounds"].clone(),
            },
            6 => LogRecord::Checkpointed {
                updates: u("updates")?,
                run: head["run"].clone(),
            },
            7 => LogRecord::ActedWith {
                versions: head["versions"]
                    .as_array()
                    .ok_or("the record's 'versions' is not a list")?
                    .iter()
                    .map(|v| v.as_u64().ok_or("a version is not a count"))
                    .collect::<Result<_, _>>()?,
            },
            k => return Err(format!("unknown record kind {k}")),
        };
        if r.at != bytes.len() {
            return Err(format!(
                "{} bytes after the {} record's end",
                bytes.len() - r.at,
                record.name()
            ));
        }
        Ok(record)
    }
}

/// A record's bytes: its kind, its JSON header's length and text, and its batch, if any.
fn body(kind: u8, head: &Json, batch: Option<&Value>) -> Vec<u8> {
    let head = head.to_string();
    let mut out = Vec::with_capacity(5 + head.len());
    out.push(kind);
    out.extend_from_slice(&(head.len() as u32).to_le_bytes());
    out.extend_from_slice(head.as_bytes());
    if let Some(batch) = batch {
        encode_value(batch, &mut out);
    }
    out
}

/// The CRC-32C of a publication's weights (names, shapes and bytes, in name order): what a
/// replay checks a publication against.
pub fn weights_crc(snapshot: &WeightSnapshot) -> u32 {
    let mut crc = 0;
    for (name, tensor) in &snapshot.weights {
        crc = crc32c::crc32c_append(crc, name.as_bytes());
        for d in &tensor.shape {
            crc = crc32c::crc32c_append(crc, &(*d as u64).to_le_bytes());
        }
        crc = crc32c::crc32c_append(crc, &tensor.data.to_le_bytes());
    }
    crc
}

fn put_shape(shape: &[usize], out: &mut Vec<u8>) {
    out.extend_from_slice(&(shape.len() as u32).to_le_bytes());
    for d in shape {
        out.extend_from_slice(&(*d as u64).to_le_bytes());
    }
}

/// Appends `value` as its leaves: a count, then per leaf its flat key, dtype tag, shape and
/// elements.
fn encode_value(value: &Value, out: &mut Vec<u8>) {
    let leaves = value.flatten();
    out.extend_from_slice(&(leaves.len() as u32).to_le_bytes());
    for (key, leaf) in leaves {
        out.extend_from_slice(&(key.len() as u32).to_le_bytes());
        out.extend_from_slice(key.as_bytes());
        macro_rules! leaf {
            ($tag:expr, $a:expr, $bytes:expr) => {{
                out.push($tag);
                put_shape($a.shape(), out);
                for x in $a.data() {
                    out.extend_from_slice(&$bytes(x));
                }
            }};
        }
        match leaf {
            Value::Bool(a) => leaf!(0, a, |x: &bool| [u8::from(*x)]),
            Value::Int32(a) => leaf!(1, a, |x: &i32| x.to_le_bytes()),
            Value::Int64(a) => leaf!(2, a, |x: &i64| x.to_le_bytes()),
            Value::Uint8(a) => {
                out.push(3);
                put_shape(a.shape(), out);
                out.extend_from_slice(a.data());
            }
            Value::Float32(a) => leaf!(4, a, |x: &f32| x.to_le_bytes()),
            Value::Float64(a) => leaf!(5, a, |x: &f64| x.to_le_bytes()),
            Value::Text(a) => {
                out.push(6);
                put_shape(a.shape(), out);
                for s in a.data() {
                    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
                    out.extend_from_slice(s.as_bytes());
                }
            }
            // `flatten` yields leaves only.
            Value::Dict(_) | Value::Tuple(_) => out.push(u8::MAX),
        }
    }
}

/// Reads what [`encode_value`] wrote, every length checked against the bytes left.
fn decode_value(r: &mut Reader<'_>) -> Result<Value, String> {
    let n = r.u32()? as usize;
    let mut pairs = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        let key_len = r.u32()? as usize;
        let key = String::from_utf8(r.take(key_len)?.to_vec()).map_err(|_| "a leaf's key is not UTF-8")?;
        let tag = r.u8()?;
        let rank = r.u32()? as usize;
        let mut shape = Vec::with_capacity(rank.min(16));
        for _ in 0..rank {
            shape.push(usize::try_from(r.u64()?).map_err(|_| format!("'{key}': a dimension is too large"))?);
        }
        let count = shape
            .iter()
            .try_fold(1usize, |n, d| n.checked_mul(*d))
            .ok_or_else(|| format!("'{key}': the shape {shape:?} is too large"))?;
        fn fixed<const N: usize, T>(r: &mut Reader<'_>, count: usize, f: fn([u8; N]) -> T) -> Result<Vec<T>, String> {
            let bytes = r.take(count.checked_mul(N).ok_or("a leaf is too large")?)?;
            Ok(bytes
                .chunks_exact(N)
                .map(|c| f(c.try_into().unwrap_or([0; N])))
                .collect())
        }
        let leaf = match tag {
            0 => Value::Bool(
                Array::new(shape, fixed(r, count, |[b]: [u8; 1]| b != 0)?).map_err(|e| format!("'{key}': {e}"))?,
            ),
            1 => Value::Int32(
                Array::new(shape, fixed(r, count, i32::from_le_bytes)?).map_err(|e| format!("'{key}': {e}"))?,
            ),
            2 => Value::Int64(
                Array::new(shape, fixed(r, count, i64::from_le_bytes)?).map_err(|e| format!("'{key}': {e}"))?,
            ),
            3 => Value::Uint8(Array::new(shape, r.take(count)?.to_vec()).map_err(|e| format!("'{key}': {e}"))?),
            4 => Value::Float32(
                Array::new(shape, fixed(r, count, f32::from_le_bytes)?).map_err(|e| format!("'{key}': {e}"))?,
            ),
            5 => Value::Float64(
                Array::new(shape, fixed(r, count, f64::from_le_bytes)?).map_err(|e| format!("'{key}': {e}"))?,
            ),
            6 => {
                let mut texts = Vec::with_capacity(count.min(1024));
                for _ in 0..count {
                    let len = r.u32()? as usize;
                    texts.push(String::from_utf8(r.take(len)?.to_vec()).map_err(|_| format!("'{key}': not UTF-8"))?);
                }
                Value::Text(Array::new(shape, texts).map_err(|e| format!("'{key}': {e}"))?)
            }
            t => return Err(format!("'{key}': unknown dtype tag {t}")),
        };
        pairs.push((key, leaf));
    }
    Value::unflatten(pairs).map_err(|e| format!("the batch's leaves do not nest: {e}"))
}

/// Bytes read front to back, never past their end.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                format!(
                    "the record ends {} bytes early",
                    n.saturating_sub(self.bytes.len() - self.at)
                )
            })?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap_or_default()))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap_or_default()))
    }
}

/// The rounds of a run's counters as a record holds them.
#[cfg(feature = "distributed")]
pub(crate) fn rounds_record(rounds: &[crate::evaluation::Evaluated]) -> LogRecord {
    LogRecord::Evaluated {
        rounds: crate::evaluation::rounds_to_json(rounds),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rlgraph_core::HostData;

    use super::*;

    fn batch() -> Value {
        let mut d = BTreeMap::new();
        d.insert(
            "states".into(),
            Value::Float32(Array::new([2, 2], vec![1.5, -0.0, f32::MIN_POSITIVE, 3.25]).unwrap()),
        );
        d.insert(
            "actions".into(),
            Value::Int64(Array::new([2], vec![0, i64::MAX]).unwrap()),
        );
        d.insert(
            "terminals".into(),
            Value::Bool(Array::new([2], vec![true, false]).unwrap()),
        );
        d.insert(
            "nested".into(),
            Value::Tuple(vec![
                Value::Uint8(Array::new([3], vec![0, 7, 255]).unwrap()),
                Value::Float64(Array::scalar(f64::NAN)),
            ]),
        );
        Value::Dict(d)
    }

    #[test]
    fn every_record_reads_back_as_written_bit_for_bit() {
        let records = vec![
            LogRecord::Started(LogHeader {
                format: LOG_FORMAT,
                code_version: "v".into(),
                config: json!({"type": "apex"}),
                state_space: json!({"type": "float"}),
                action_space: json!({"type": "int"}),
                seed: 9,
                backend: "candle".into(),
                layout: "distributed".into(),
            }),
            LogRecord::Resumed { updates: 3 },
            LogRecord::Learned {
                time_percentage: 0.1 + 0.2,
                loss: f64::NAN,
                updates: 4,
                batch: batch(),
            },
            LogRecord::Published {
                version: 2,
                weights_crc: u32::MAX,
            },
            LogRecord::Reported {
                frames: 17,
                episode_returns: vec![1.0 / 3.0, -0.0],
            },
            LogRecord::Evaluated { rounds: json!([]) },
            LogRecord::ActedWith {
                versions: vec![3, u64::MAX],
            },
            LogRecord::Checkpointed {
                updates: 4,
                run: json!({"frames": 3}),
            },
        ];
        for record in records {
            let back = LogRecord::decode(&record.encode()).unwrap();
            // NaN is not equal to itself: compare the bytes of both encodings.
            assert_eq!(back.encode(), record.encode(), "{}", record.name());
            assert_eq!(back.name(), record.name());
        }
        let LogRecord::Learned {
            time_percentage,
            batch: b,
            ..
        } = LogRecord::decode(
            &LogRecord::Learned {
                time_percentage: 0.1 + 0.2,
                loss: 1.0,
                updates: 1,
                batch: batch(),
            }
            .encode(),
        )
        .unwrap()
        else {
            panic!("not a learned record")
        };
        assert_eq!(time_percentage.to_bits(), (0.1f64 + 0.2).to_bits());
        let Value::Dict(d) = b else { panic!("not a dict") };
        assert_eq!(d["actions"], Value::Int64(Array::new([2], vec![0, i64::MAX]).unwrap()));
        assert_eq!(
            d["states"],
            Value::Float32(Array::new([2, 2], vec![1.5, -0.0, f32::MIN_POSITIVE, 3.25]).unwrap())
        );
    }

    #[test]
    fn damaged_bytes_are_refused_by_name_never_a_panic() {
        let bytes = LogRecord::Learned {
            time_percentage: 0.5,
            loss: 1.0,
            updates: 1,
            batch: batch(),
        }
        .encode();
        // Every cut of the record fails, with a reason.
        for cut in 0..bytes.len() {
            assert!(
                LogRecord::decode(&bytes[..cut]).is_err(),
                "a record cut at {cut} was read"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(LogRecord::decode(&longer)
            .unwrap_err()
            .contains("after the learned record"));
        let mut kind = bytes.clone();
        kind[0] = 42;
        assert!(LogRecord::decode(&kind).unwrap_err().contains("unknown record kind 42"));
        // A shape that claims more elements than the bytes hold.
        let huge = {
            let mut out = vec![2u8];
            let head = json!({"t": 0, "loss": 0, "updates": 1}).to_string();
            out.extend_from_slice(&(head.len() as u32).to_le_bytes());
            out.extend_from_slice(head.as_bytes());
            out.extend_from_slice(&1u32.to_le_bytes());
            out.extend_from_slice(&1u32.to_le_bytes());
            out.push(b'x');
            out.push(4);
            out.extend_from_slice(&2u32.to_le_bytes());
            out.extend_from_slice(&u64::MAX.to_le_bytes());
            out.extend_from_slice(&u64::MAX.to_le_bytes());
            out
        };
        assert!(LogRecord::decode(&huge).unwrap_err().contains("too large"));
    }

    #[test]
    fn the_weights_crc_is_the_standard_crc32c_of_names_shapes_and_bytes() {
        let mut weights = BTreeMap::new();
        weights.insert(
            "w".to_string(),
            rlgraph_core::HostTensor {
                shape: vec![1],
                data: HostData::U8(b"123456789".to_vec()),
            },
        );
        let one = WeightSnapshot { version: 1, weights };
        // By hand: crc32c("w" ++ 1u64 LE ++ "123456789"), computed in one call.
        let mut bytes = b"w".to_vec();
        bytes.extend_from_slice(&1u64.to_le_bytes());
        bytes.extend_from_slice(b"123456789");
        assert_eq!(weights_crc(&one), crc32c::crc32c(&bytes));
        let mut two = one.clone();
        if let Some(t) = two.weights.get_mut("w") {
            t.data = HostData::U8(b"123456780".to_vec());
        }
        assert_ne!(weights_crc(&one), weights_crc(&two));
    }
}

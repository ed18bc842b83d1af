//! Segments as one `Value` and back, losslessly (rewards as 64-bit floats), so a GA3C
//! trainer's batch goes into the learner input log and a replay hands the learner the same
//! segments.

use std::collections::BTreeMap;

use agents::{Segment, StepMemory, Transition};
use rlgraph_core::spaces::{Array, Value};
use rlgraph_core::{CoreError, Result};

fn scalar_f64(x: f64) -> Value {
    Value::Float64(Array::scalar(x))
}

/// `segments` as a Tuple of Dicts, one per segment: its steps (a Tuple of Dicts), the
/// behaviour log-likelihoods, the acting versions and, for a recurrent policy, the memories.
pub(crate) fn segments_to_value(segments: &[Segment]) -> Result<Value> {
    let one = |s: &Segment| -> Result<Value> {
        let steps = s
            .transitions
            .iter()
            .map(|t| {
                Value::Dict(BTreeMap::from([
                    ("state".to_string(), t.state.clone()),
                    ("action".to_string(), t.action.clone()),
                    ("next_state".to_string(), t.next_state.clone()),
                    ("reward".to_string(), scalar_f64(t.reward)),
                    ("terminated".to_string(), Value::bool(t.terminated)),
                    ("truncated".to_string(), Value::bool(t.truncated)),
                ]))
            })
            .collect();
        let mut d = BTreeMap::from([
            ("steps".to_string(), Value::Tuple(steps)),
            (
                "log_probs".to_string(),
                Value::Float64(Array::new([s.log_probs.len()], s.log_probs.clone())?),
            ),
            (
                "versions".to_string(),
                Value::Int64(Array::new(
                    [s.versions.len()],
                    s.versions.iter().map(|&v| v as i64).collect(),
                )?),
            ),
        ]);
        if !s.memories.is_empty() {
            let width = s.memories[0].memory.len();
            let flat = s.memories.iter().flat_map(|m| m.memory.iter().copied()).collect();
            d.insert(
                "memories".into(),
                Value::Float32(Array::new([s.memories.len(), width], flat)?),
            );
            d.insert(
                "starts".into(),
                Value::Bool(Array::new(
                    [s.memories.len()],
                    s.memories.iter().map(|m| m.start).collect(),
                )?),
            );
        }
        Ok(Value::Dict(d))
    };
    Ok(Value::Tuple(segments.iter().map(one).collect::<Result<_>>()?))
}

fn bad(reason: String) -> CoreError {
    CoreError::Config {
        at: "ga3c segments".into(),
        reason,
    }
}

fn key<'a>(d: &'a BTreeMap<String, Value>, k: &str) -> Result<&'a Value> {
    d.get(k).ok_or_else(|| bad(format!("no '{k}'")))
}

/// The segments [`segments_to_value`] made.
pub(crate) fn segments_from_value(value: &Value) -> Result<Vec<Segment>> {
    let Value::Tuple(list) = value else {
        return Err(bad(format!("expected a Tuple of segments, got {}", value.kind_name())));
    };
    list.iter()
        .map(|s| {
            let Value::Dict(d) = s else {
                return Err(bad(format!("expected a segment Dict, got {}", s.kind_name())));
            };
            let Value::Tuple(steps) = key(d, "steps")? else {
                return Err(bad("'steps' is not a Tuple".into()));
            };
            let transitions = steps
                .iter()
                .map(|t| {
                    let Value::Dict(t) = t else {
                        return Err(bad("a step is not a Dict".into()));
                    };
                    let (Value::Float64(reward), Value::Bool(terminated), Value::Bool(truncated)) =
                        (key(t, "reward")?, key(t, "terminated")?, key(t, "truncated")?)
                    else {
                        return Err(bad("a step's reward or flags have the wrong type".into()));
                    };
                    let first = |data: &[bool]| data.first().copied().unwrap_or(false);
                    Ok(Transition {
                        state: key(t, "state")?.clone(),
                        action: key(t, "action")?.clone(),
                        next_state: key(t, "next_state")?.clone(),
                        reward: reward.data().first().copied().unwrap_or(0.0),
                        terminated: first(terminated.data()),
                        truncated: first(truncated.data()),
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let (Value::Float64(log_probs), Value::Int64(versions)) = (key(d, "log_probs")?, key(d, "versions")?)
            else {
                return Err(bad("'log_probs' or 'versions' have the wrong type".into()));
            };
            let memories = match (d.get("memories"), d.get("starts")) {
                (Some(Value::Float32(m)), Some(Value::Bool(starts))) => {
                    let width = m.shape().get(1).copied().unwrap_or(0).max(1);
                    m.data()
                        .chunks(width)
                        .zip(starts.data())
                        .map(|(memory, &start)| StepMemory {
                            memory: memory.to_vec(),
                            start,
                        })
                        .collect()
                }
                (None, None) => vec![],
                _ => return Err(bad("'memories' and 'starts' come together, as floats and bools".into())),
            };
            Ok(Segment {
                transitions,
                log_probs: log_probs.data().to_vec(),
                versions: versions.data().iter().map(|&v| v as u64).collect(),
                memories,
            })
        })
        .collect()
}

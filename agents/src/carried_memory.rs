//! The LSTM memory a recurrent agent carries for each environment copy from one acting step to
//! the next, kept apart for the exploring copies (training) and the greedy ones (evaluation),
//! and the per-step record of it that rollouts keep for the learner.

use std::collections::BTreeMap;

use rlgraph_core::spaces::{Array, Value};
use rlgraph_core::{CoreError, HostState, Result, SavedState};
use serde_json::{json, Value as Json};

use rlgraph_core::Backend;

use crate::actor::{Acted, GraphActor};
use crate::agent::Transition;
use crate::batch::flag_column;

/// What the actor acted from at one step: its memory `(c, h)` (c's units, then h's) and
/// whether an episode started there (the memory is zeroed before such a step).
#[derive(Clone, Debug, PartialEq)]
pub struct StepMemory {
    /// `c` then `h`.
    pub memory: Vec<f32>,
    /// An episode starts at this step.
    pub start: bool,
}

/// One set of copies: their memories and which of them start an episode at their next step.
#[derive(Clone, Debug, Default, PartialEq)]
struct Copies {
    /// Per copy: `c` then `h`.
    memory: Vec<Vec<f32>>,
    starting: Vec<bool>,
    /// What each copy acted from at its latest step.
    acted: Vec<Option<StepMemory>>,
}

/// The memories of the exploring and of the greedy copies.
#[derive(Clone, Debug, PartialEq)]
pub struct CarriedMemory {
    units: usize,
    /// `[exploring, greedy]`.
    sets: [Copies; 2],
}

fn set(explore: bool) -> usize {
    usize::from(!explore)
}

impl CarriedMemory {
    /// No copies yet, for an LSTM of `units`.
    pub fn new(units: usize) -> Self {
        CarriedMemory {
            units,
            sets: Default::default(),
        }
    }

    /// The inputs `memory` (the Tuple `(c, h)`, `[copies, units]` each) and `starts` for an
    /// acting step of `copies` copies; copies not seen before start an episode.
    pub fn inputs(&mut self, explore: bool, copies: usize) -> Result<[Value; 2]> {
        let units = self.units;
        let s = &mut self.sets[set(explore)];
        if s.memory.len() != copies {
            s.memory.resize(copies, vec![0.0; 2 * units]);
            s.starting.resize(copies, true);
            s.acted.resize(copies, None);
        }
        let value = memory_value(s.memory.iter().map(Vec::as_slice), units)?;
        let starts = flag_column(&s.starting)?;
        Ok([value, starts])
    }

    /// Keeps the memory after an acting step of `explore`'s copies (the graph's last output),
    /// and what each copy acted from. Nothing changes until the step has succeeded, so a
    /// failed step leaves every memory and episode start as it was.
    pub fn update(&mut self, explore: bool, memory: &Value) -> Result<()> {
        let s = &mut self.sets[set(explore)];
        let rows = memory_rows(memory, self.units)?;
        if rows.len() != s.memory.len() {
            return Err(CoreError::Config {
                at: "recurrent actor/memory".into(),
                reason: format!("expected the memories of {} copies, got {}", s.memory.len(), rows.len()),
            });
        }
        for (i, (m, after)) in s.memory.iter_mut().zip(rows).enumerate() {
            s.acted[i] = Some(StepMemory {
                memory: std::mem::replace(m, after),
                start: std::mem::replace(&mut s.starting[i], false),
            });
        }
        Ok(())
    }

    /// An acting step of `actor` for `states` (one per copy) from `explore`'s memories, which
    /// then hold the memories after it.
    pub fn act<B: Backend>(&mut self, actor: &mut GraphActor<B>, states: &[Value], explore: bool) -> Result<Acted> {
        let inputs = self.inputs(explore, states.len())?;
        let (acted, after) = actor.act_with_memory(states, inputs, explore)?;
        self.update(explore, &after)?;
        Ok(acted)
    }

    /// What exploring copy `copy` acted from at the step `transition` observes; a step that
    /// ends an episode starts the copy's next one from a zero memory.
    pub fn observed(&mut self, copy: usize, transition: &Transition) -> Result<StepMemory> {
        let acted = self.acted(copy)?;
        if transition.terminated || transition.truncated {
            self.begin(true, &[copy]);
        }
        Ok(acted)
    }

    /// Copies `copies` of `explore`'s set start new episodes at their next step.
    pub fn begin(&mut self, explore: bool, copies: &[usize]) {
        let s = &mut self.sets[set(explore)];
        for &i in copies {
            if let Some(f) = s.starting.get_mut(i) {
                *f = true;
            }
        }
    }

    /// What exploring copy `copy` acted from at its latest step.
    pub fn acted(&self, copy: usize) -> Result<StepMemory> {
        self.sets[0]
            .acted
            .get(copy)
            .cloned()
            .flatten()
            .ok_or_else(|| CoreError::Config {
                at: format!("observe(env_id {copy})"),
                reason: "a recurrent agent observes only steps it acted in; call get_actions first".into(),
            })
    }

    /// Forgets every copy: the next steps start episodes.
    pub fn clear(&mut self) {
        self.sets = Default::default();
    }
}

/// The rows (`c`'s units, then `h`'s) of a memory, the Tuple `(c, h)` of `[rows, units]` each.
pub fn memory_rows(memory: &Value, units: usize) -> Result<Vec<Vec<f32>>> {
    let bad = |reason: String| CoreError::Config {
        at: "recurrent actor/memory".into(),
        reason,
    };
    let Value::Tuple(parts) = memory else {
        return Err(bad(format!("expected the Tuple (c, h), got {}", memory.kind_name())));
    };
    let [Value::Float32(c), Value::Float32(h)] = parts.as_slice() else {
        return Err(bad("expected two float arrays (c, h)".into()));
    };
    let rows = c.shape().first().copied().unwrap_or(0);
    if units == 0 || c.shape() != [rows, units] || h.shape() != [rows, units] {
        return Err(bad(format!(
            "expected [rows, {units}] each, got {:?} and {:?}",
            c.shape(),
            h.shape()
        )));
    }
    Ok((0..rows)
        .map(|i| {
            [
                &c.data()[i * units..(i + 1) * units],
                &h.data()[i * units..(i + 1) * units],
            ]
            .concat()
        })
        .collect())
}

/// The Tuple `(c, h)` of `[rows, units]` each from rows of `c` then `h`.
pub fn memory_value<'a>(rows: impl Iterator<Item = &'a [f32]>, units: usize) -> Result<Value> {
    let (mut c, mut h) = (vec![], vec![]);
    let mut n = 0;
    for row in rows {
        if row.len() != 2 * units {
            return Err(CoreError::Config {
                at: "memory".into(),
                reason: format!(
                    "a memory holds {} floats (c and h of {units}), got {}",
                    2 * units,
                    row.len()
                ),
            });
        }
        c.extend_from_slice(&row[..units]);
        h.extend_from_slice(&row[units..]);
        n += 1;
    }
    Ok(Value::Tuple(vec![
        Value::Float32(Array::new([n, units], c)?),
        Value::Float32(Array::new([n, units], h)?),
    ]))
}

/// The memories ride in checkpoints (as JSON: f32 survives the trip exactly), so a resumed run
/// acts on from the same memories.
impl HostState for CarriedMemory {
    fn save_state(&self) -> Result<SavedState> {
        let sets: Vec<Json> = self
            .sets
            .iter()
            .map(|s| {
                let acted: Vec<Json> = s
                    .acted
                    .iter()
                    .map(|a| {
                        a.as_ref()
                            .map_or(Json::Null, |a| json!({"memory": a.memory, "start": a.start}))
                    })
                    .collect();
                json!({"memory": s.memory, "starting": s.starting, "acted": acted})
            })
            .collect();
        Ok(SavedState {
            tensors: BTreeMap::new(),
            meta: json!({"units": self.units, "sets": sets}),
        })
    }

    fn check_state(&self, state: &SavedState) -> Result<()> {
        self.parse(state).map(|_| ())
    }

    fn load_state(&mut self, state: SavedState) -> Result<()> {
        self.sets = self.parse(&state)?;
        Ok(())
    }
}

impl CarriedMemory {
    fn parse(&self, state: &SavedState) -> Result<[Copies; 2]> {
        let bad = |reason: String| CoreError::Checkpoint {
            path: "(memory)".into(),
            reason,
        };
        if state.meta["units"].as_u64() != Some(self.units as u64) {
            return Err(bad(format!(
                "the checkpoint's LSTM has {} units, this agent's {}",
                state.meta["units"], self.units
            )));
        }
        let mut sets: [Copies; 2] = Default::default();
        for (k, s) in sets.iter_mut().enumerate() {
            let j = &state.meta["sets"][k];
            let memory: Vec<Vec<f32>> =
                serde_json::from_value(j["memory"].clone()).map_err(|e| bad(format!("sets[{k}].memory: {e}")))?;
            let starting: Vec<bool> =
                serde_json::from_value(j["starting"].clone()).map_err(|e| bad(format!("sets[{k}].starting: {e}")))?;
            if starting.len() != memory.len() || memory.iter().any(|m| m.len() != 2 * self.units) {
                return Err(bad(format!("sets[{k}]: memories and flags do not match")));
            }
            // What each copy's latest step acted from, so a restore between acting and
            // observing observes as the uninterrupted run would.
            s.acted = match j.get("acted").and_then(Json::as_array) {
                None => vec![None; memory.len()],
                Some(acted) if acted.len() == memory.len() => acted
                    .iter()
                    .map(|a| match a {
                        Json::Null => Ok(None),
                        a => Ok(Some(StepMemory {
                            memory: serde_json::from_value(a["memory"].clone())
                                .ok()
                                .filter(|m: &Vec<f32>| m.len() == 2 * self.units)
                                .ok_or_else(|| {
                                    bad(format!("sets[{k}].acted: a memory of {} floats", 2 * self.units))
                                })?,
                            start: a["start"]
                                .as_bool()
                                .ok_or_else(|| bad(format!("sets[{k}].acted: start is not a flag")))?,
                        })),
                    })
                    .collect::<Result<_>>()?,
                Some(_) => return Err(bad(format!("sets[{k}].acted: one entry per copy"))),
            };
            s.memory = memory;
            s.starting = starting;
        }
        Ok(sets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tuple(c: &[f32], h: &[f32], n: usize) -> Value {
        let u = c.len() / n;
        Value::Tuple(vec![
            Value::Float32(Array::new([n, u], c.to_vec()).unwrap()),
            Value::Float32(Array::new([n, u], h.to_vec()).unwrap()),
        ])
    }

    #[test]
    fn copies_carry_their_memory_and_start_episodes_when_told() {
        let mut m = CarriedMemory::new(1);
        let [memory, starts] = m.inputs(true, 2).unwrap();
        assert_eq!(memory, tuple(&[0.0, 0.0], &[0.0, 0.0], 2));
        assert_eq!(starts, flag_column(&[true, true]).unwrap());
        m.update(true, &tuple(&[1.0, 2.0], &[3.0, 4.0], 2)).unwrap();
        m.begin(true, &[1]);
        let [memory, starts] = m.inputs(true, 2).unwrap();
        assert_eq!(memory, tuple(&[1.0, 2.0], &[3.0, 4.0], 2));
        assert_eq!(starts, flag_column(&[false, true]).unwrap());
        // A step that failed (no update) changed nothing: the start is still pending.
        let [_, starts] = m.inputs(true, 2).unwrap();
        assert_eq!(starts, flag_column(&[false, true]).unwrap());
        m.update(true, &tuple(&[5.0, 6.0], &[7.0, 8.0], 2)).unwrap();
        assert_eq!(m.inputs(true, 2).unwrap()[1], flag_column(&[false, false]).unwrap());
        assert_eq!(
            m.acted(1).unwrap(),
            StepMemory {
                memory: vec![2.0, 4.0],
                start: true
            }
        );
        // The greedy copies are apart.
        let [memory, _] = m.inputs(false, 1).unwrap();
        assert_eq!(memory, tuple(&[0.0], &[0.0], 1));
    }

    #[test]
    fn memories_survive_a_checkpoint_and_bad_ones_change_nothing() {
        let mut m = CarriedMemory::new(1);
        m.inputs(true, 2).unwrap();
        m.update(true, &tuple(&[0.1, 0.2], &[0.3, 0.4], 2)).unwrap();
        let saved = m.save_state().unwrap();
        let mut back = CarriedMemory::new(1);
        back.load_state(saved.clone()).unwrap();
        assert_eq!(back.inputs(true, 2).unwrap(), m.clone().inputs(true, 2).unwrap());
        // What the latest step acted from survives too: a restore between acting and
        // observing observes the same step.
        assert_eq!(back.acted(1).unwrap(), m.acted(1).unwrap());
        let mut broken = saved;
        broken.meta["sets"][0]["memory"][0] = json!([1.0]);
        let before = back.clone();
        assert!(back.load_state(broken).is_err());
        assert_eq!(back, before);
        let err = CarriedMemory::new(2).check_state(&m.save_state().unwrap()).unwrap_err();
        assert!(err.to_string().contains("units"), "{err}");
    }

    #[test]
    fn a_memory_of_the_wrong_shape_is_refused() {
        let mut m = CarriedMemory::new(2);
        m.inputs(true, 1).unwrap();
        let err = m.update(true, &tuple(&[1.0], &[1.0], 1)).unwrap_err().to_string();
        assert!(err.contains("[rows, 2]") && err.contains("[1, 1]"), "{err}");
    }
}

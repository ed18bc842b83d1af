//! `Rollout`: the recent experience of policy-gradient agents (RLgraph's ring-buffer memory),
//! kept per environment copy and handed out as one flat batch of sequences with RLgraph's
//! `sequence_indices`.

use std::collections::{BTreeMap, VecDeque};

use rlgraph_core::spaces::{Array, Space, Value};
use rlgraph_core::{CoreError, HostState, Result, SavedState};
use serde_json::{json, Value as Json};

use crate::agent::Transition;
use crate::batch::{field, flag_column, float_column, host_floats, stack, unstack};
use crate::carried_memory::StepMemory;
use crate::transition_json::{insert_step_memory, steps_to_json, Reader};

/// One flat batch: the sequences of every environment copy, one after another.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RolloutBatch {
    /// States.
    pub states: Vec<Value>,
    /// Actions.
    pub actions: Vec<Value>,
    /// Rewards.
    pub rewards: Vec<f64>,
    /// The step reached a terminal state (no bootstrap past it).
    pub terminals: Vec<bool>,
    /// The step ends its sequence: a terminal, a truncation, or the last step taken of its
    /// copy (a cut, bootstrapped from the step's own value).
    pub sequence_indices: Vec<bool>,
    /// A recurrent policy's memory `(c, h)` the actor acted from, per step (c's units, then
    /// h's); empty for a memoryless policy.
    pub memory: Vec<Vec<f32>>,
    /// Per step with a memory: an episode starts there (the memory is zeroed before it).
    pub starts: Vec<bool>,
    /// The lengths of the sequences pushed, in order: each copy's stretch of steps (or each
    /// episode), which a recurrent learner unrolls from its first memory.
    pub segments: Vec<usize>,
}

impl RolloutBatch {
    /// Steps held.
    pub fn len(&self) -> usize {
        self.rewards.len()
    }

    /// Whether no steps are held.
    pub fn is_empty(&self) -> bool {
        self.rewards.is_empty()
    }

    /// The batch as a Dict of columns (`states`, `actions`, `rewards`, `terminals`,
    /// `sequence_indices`), as it crosses a thread or process boundary to a learner.
    /// A recurrent policy's batch also carries `memory` (`[steps, 2 * units]` floats), `starts`
    /// and `segment_lengths`.
    pub fn to_value(&self) -> Result<Value> {
        let mut dict = BTreeMap::from([
            ("states".to_string(), stack(&self.states)?),
            ("actions".to_string(), stack(&self.actions)?),
            ("rewards".to_string(), float_column(&self.rewards)?),
            ("terminals".to_string(), flag_column(&self.terminals)?),
            ("sequence_indices".to_string(), flag_column(&self.sequence_indices)?),
        ]);
        if !self.memory.is_empty() {
            let width = self.memory[0].len();
            let flat: Vec<f32> = self.memory.iter().flatten().copied().collect();
            dict.insert(
                "memory".into(),
                Value::Float32(Array::new([self.memory.len(), width], flat)?),
            );
            dict.insert("starts".into(), flag_column(&self.starts)?);
            let lengths = self.segments.iter().map(|&l| l as i64).collect();
            dict.insert(
                "segment_lengths".into(),
                Value::Int64(Array::new([self.segments.len()], lengths)?),
            );
        }
        Ok(Value::Dict(dict))
    }

    /// A batch from a Dict of `states`, `actions`, `rewards`, `terminals` and optional
    /// `sequence_indices` (true at each sequence's last step; by default only the batch's
    /// last step ends a sequence besides the terminals). Every column needs one entry per
    /// reward. `at` names the batch in errors.
    pub fn from_value(batch: &Value, at: &str) -> Result<Self> {
        let flags = |key: &str| -> Result<Vec<bool>> {
            match field(batch, key)? {
                Value::Bool(a) => Ok(a.data().to_vec()),
                other => Err(CoreError::Config {
                    at: format!("{at}.{key}"),
                    reason: format!("expected bools, got {}", other.kind_name()),
                }),
            }
        };
        let rewards = host_floats(Some(&field(batch, "rewards")?), &format!("{at}.rewards"))?;
        let terminals = flags("terminals")?;
        let n = rewards.len();
        let sequence_indices = match field(batch, "sequence_indices") {
            Ok(_) => flags("sequence_indices")?,
            Err(_) => (0..n)
                .map(|i| terminals.get(i).copied().unwrap_or(false) || i + 1 == n)
                .collect(),
        };
        let (memory, starts, segments) = match field(batch, "memory") {
            Ok(Value::Float32(m)) => {
                let width = m.shape().get(1).copied().unwrap_or(0);
                let rows = m.data().chunks(width.max(1)).map(<[f32]>::to_vec).collect();
                let lengths = match field(batch, "segment_lengths")? {
                    Value::Int64(a) => a.data().iter().map(|&l| usize::try_from(l).unwrap_or(0)).collect(),
                    Value::Int32(a) => a.data().iter().map(|&l| usize::try_from(l).unwrap_or(0)).collect(),
                    other => {
                        return Err(CoreError::Config {
                            at: format!("{at}.segment_lengths"),
                            reason: format!("expected ints, got {}", other.kind_name()),
                        })
                    }
                };
                (rows, flags("starts")?, lengths)
            }
            Ok(other) => {
                return Err(CoreError::Config {
                    at: format!("{at}.memory"),
                    reason: format!("expected float32 [steps, 2 * units], got {}", other.kind_name()),
                })
            }
            Err(_) => (vec![], vec![], vec![n]),
        };
        let rollout = RolloutBatch {
            states: unstack(&field(batch, "states")?)?,
            actions: unstack(&field(batch, "actions")?)?,
            rewards,
            terminals,
            sequence_indices,
            memory,
            starts,
            segments,
        };
        let lengths = [
            rollout.states.len(),
            rollout.actions.len(),
            rollout.terminals.len(),
            rollout.sequence_indices.len(),
        ];
        if lengths.iter().any(|&l| l != n) || n == 0 {
            return Err(CoreError::Config {
                at: at.into(),
                reason: format!(
                    "states, actions, terminals and sequence_indices must have one entry per reward ({n}), got {lengths:?}"
                ),
            });
        }
        Ok(rollout)
    }

    /// Appends one sequence of consecutive steps: it ends at its last step, and a terminal
    /// or truncated step ends it sooner.
    pub fn push_sequence<'a>(&mut self, steps: impl ExactSizeIterator<Item = &'a Transition>) {
        let n = steps.len();
        self.segments.push(n);
        for (i, t) in steps.enumerate() {
            self.sequence_indices.push(t.terminated || t.truncated || i + 1 == n);
            self.terminals.push(t.terminated);
            self.rewards.push(t.reward);
            self.states.push(t.state.clone());
            self.actions.push(t.action.clone());
        }
    }
}

/// The last `capacity` steps observed, per environment copy, in order.
#[derive(Clone, Debug)]
pub struct Rollout {
    capacity: usize,
    /// Per copy: (global step number, transition).
    per_env: Vec<VecDeque<(u64, Transition)>>,
    /// Per copy, beside `per_env` step for step: what a recurrent actor acted from (empty for
    /// a memoryless one).
    memory: Vec<VecDeque<StepMemory>>,
    next_step: u64,
    state_space: Space,
    action_space: Space,
}

fn ends_episode(t: &Transition) -> bool {
    t.terminated || t.truncated
}

impl Rollout {
    /// An empty rollout of states and actions of the given spaces, holding at most
    /// `capacity` steps over all copies.
    pub fn new(capacity: usize, state_space: &Space, action_space: &Space) -> Self {
        Rollout {
            capacity: capacity.max(1),
            per_env: vec![],
            memory: vec![],
            next_step: 0,
            state_space: state_space.with_batch_rank(false),
            action_space: action_space.with_batch_rank(false),
        }
    }

    /// Adds a step of copy `env_id`, dropping the copy's oldest step beyond its share of
    /// the capacity.
    pub fn push(&mut self, env_id: usize, t: Transition) {
        self.push_with(env_id, t, None);
    }

    /// [`Rollout::push`] for a recurrent actor: the step with the memory it acted from.
    pub fn push_with_memory(&mut self, env_id: usize, t: Transition, memory: StepMemory) {
        self.push_with(env_id, t, Some(memory));
    }

    /// Copy `env_id`'s environment restarted without a terminal step (a resumed run whose
    /// environments could not be restored): its latest held step counts as truncated, so no
    /// return or advantage reaches across the restart.
    pub fn cut(&mut self, env_id: usize) {
        if let Some((_, last)) = self.per_env.get_mut(env_id).and_then(VecDeque::back_mut) {
            last.truncated |= !last.terminated;
        }
    }

    fn push_with(&mut self, env_id: usize, t: Transition, memory: Option<StepMemory>) {
        if self.per_env.len() <= env_id {
            self.per_env.resize_with(env_id + 1, VecDeque::new);
            self.memory.resize_with(env_id + 1, VecDeque::new);
        }
        let share = self.capacity.div_ceil(self.per_env.len());
        let steps = &mut self.per_env[env_id];
        let memories = &mut self.memory[env_id];
        steps.push_back((self.next_step, t));
        memories.extend(memory);
        self.next_step += 1;
        while steps.len() > share {
            steps.pop_front();
        }
        while memories.len() > share {
            memories.pop_front();
        }
    }

    /// Adds the memories of `copy`'s steps from index `start` to `end` to `batch`, where the
    /// actor was recurrent.
    fn push_memory(&self, batch: &mut RolloutBatch, copy: usize, start: usize, end: usize) {
        if let Some(m) = self.memory.get(copy).filter(|m| m.len() == self.per_env[copy].len()) {
            for s in m.range(start..end) {
                batch.memory.push(s.memory.clone());
                batch.starts.push(s.start);
            }
        }
    }

    /// Steps held.
    pub fn steps(&self) -> usize {
        self.per_env.iter().map(VecDeque::len).sum()
    }

    /// Finished episodes held (whole or with their start dropped).
    pub fn episodes(&self) -> usize {
        self.per_env.iter().flatten().filter(|(_, t)| ends_episode(t)).count()
    }

    /// The latest `n` steps: each copy's latest `n / copies` (rounded up), oldest first.
    pub fn recent_steps(&self, n: usize) -> RolloutBatch {
        let share = n.div_ceil(self.per_env.len().max(1));
        let mut batch = RolloutBatch::default();
        for (copy, steps) in self.per_env.iter().enumerate() {
            let skip = steps.len().saturating_sub(share);
            batch.push_sequence(steps.iter().skip(skip).map(|(_, t)| t));
            self.push_memory(&mut batch, copy, skip, steps.len());
        }
        batch
    }

    /// The latest `n` finished episodes over all copies (by when they finished), each
    /// copy's oldest first. An episode whose start was dropped counts with what is left.
    pub fn recent_episodes(&self, n: usize) -> RolloutBatch {
        // (finishing step, copy, first index, end index) of every finished episode.
        let mut episodes = vec![];
        for (env, steps) in self.per_env.iter().enumerate() {
            let mut start = 0;
            for (i, (step, t)) in steps.iter().enumerate() {
                if ends_episode(t) {
                    episodes.push((*step, env, start, i + 1));
                    start = i + 1;
                }
            }
        }
        episodes.sort_unstable();
        let chosen = &episodes[episodes.len().saturating_sub(n)..];
        let mut batch = RolloutBatch::default();
        for env in 0..self.per_env.len() {
            for &(_, _, start, end) in chosen.iter().filter(|e| e.1 == env) {
                batch.push_sequence(self.per_env[env].range(start..end).map(|(_, t)| t));
                self.push_memory(&mut batch, env, start, end);
            }
        }
        batch
    }

    /// Drops every held step.
    pub fn clear(&mut self) {
        self.per_env.clear();
        self.memory.clear();
    }

    /// The held steps (and their memories, where a recurrent actor acted) of a saved state.
    #[allow(clippy::type_complexity)]
    fn parse_state(&self, state: &SavedState) -> Result<(Vec<VecDeque<(u64, Transition)>>, Vec<VecDeque<StepMemory>>)> {
        let r = Reader {
            label: "(rollout)",
            state_space: &self.state_space,
            action_space: &self.action_space,
            tensors: &state.tensors,
        };
        let per_env = r.per_env(&state.meta, "per_env", |j, at| {
            let step = j["step"]
                .as_u64()
                .ok_or_else(|| r.error(format!("{at}.step is not a count")))?;
            let memory = r.step_memory(j, at)?;
            Ok((step, r.transition(j, at)?, memory))
        })?;
        let mut steps = vec![];
        let mut memories = vec![];
        for copy in per_env {
            let mut m = VecDeque::new();
            let mut s = VecDeque::new();
            for (n, t, memory) in copy {
                s.push_back((n, t));
                m.extend(memory);
            }
            if !m.is_empty() && m.len() != s.len() {
                return Err(r.error("some steps have a memory and others none".into()));
            }
            steps.push(s);
            memories.push(m);
        }
        Ok((steps, memories))
    }
}

/// The held steps ride in agent checkpoints (their states as tensors, the rest as JSON; f32
/// values survive the trip exactly), so a resumed run updates on the same batches as the
/// uninterrupted one.
impl HostState for Rollout {
    fn save_state(&self) -> Result<SavedState> {
        let mut tensors = BTreeMap::new();
        let mut per_env = Vec::with_capacity(self.per_env.len());
        for (copy, steps) in self.per_env.iter().enumerate() {
            let memories = self.memory.get(copy).filter(|m| m.len() == steps.len());
            let mut held = Vec::with_capacity(steps.len());
            let saved = steps_to_json(steps.iter().map(|(_, t)| t), &format!("per_env[{copy}]"), &mut tensors);
            for (i, (mut j, (n, _))) in saved.into_iter().zip(steps).enumerate() {
                j.insert("step".into(), (*n).into());
                if let Some(m) = memories.and_then(|m| m.get(i)) {
                    insert_step_memory(&mut j, m);
                }
                held.push(Json::Object(j));
            }
            per_env.push(Json::Array(held));
        }
        Ok(SavedState {
            tensors,
            meta: json!({ "next_step": self.next_step, "per_env": per_env }),
        })
    }

    fn check_state(&self, state: &SavedState) -> Result<()> {
        self.parse_state(state).map(|_| ())
    }

    fn load_state(&mut self, state: SavedState) -> Result<()> {
        let (per_env, memory) = self.parse_state(&state)?;
        self.next_step = state.meta["next_step"].as_u64().ok_or_else(|| CoreError::Checkpoint {
            path: "(rollout)".into(),
            reason: "next_step is missing".into(),
        })?;
        self.per_env = per_env;
        self.memory = memory;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(reward: f64, terminated: bool, truncated: bool) -> Transition {
        Transition {
            state: Value::f32(reward as f32),
            action: Value::i32(0),
            reward,
            terminated,
            truncated,
            next_state: Value::f32(0.0),
        }
    }

    fn rollout(capacity: usize) -> Rollout {
        let floats = Space::from(rlgraph_core::spaces::FloatBox::new(Vec::<usize>::new()));
        let ints = Space::from(rlgraph_core::spaces::IntBox::new(2).unwrap());
        Rollout::new(capacity, &floats, &ints)
    }

    #[test]
    fn a_cut_ends_the_held_steps_without_a_terminal() {
        let mut r = rollout(100);
        r.push(0, step(0.1, false, false));
        r.push(0, step(0.2, false, false));
        r.push(1, step(0.3, true, false));
        r.cut(0);
        r.cut(1);
        r.cut(2);
        r.push(0, step(0.4, false, false));
        let b = r.recent_steps(6);
        // Copy 0's second step ends a sequence (no advantage reaches past it) and is no
        // terminal (its value still bootstraps); copy 1's terminal stays a terminal only.
        assert_eq!(b.sequence_indices, [false, true, true, true]);
        assert_eq!(b.terminals, [false, false, false, true]);
        assert_eq!(b.rewards, [0.1, 0.2, 0.4, 0.3]);
    }

    #[test]
    fn saved_steps_restore_exactly_and_bad_states_change_nothing() {
        let mut r = rollout(100);
        r.push(0, step(0.1, false, false));
        r.push(1, step(0.7, true, false));
        r.push(0, step(0.2, false, true));
        let saved = r.save_state().unwrap();
        let mut back = rollout(100);
        back.load_state(saved.clone()).unwrap();
        assert_eq!(back.recent_steps(10), r.recent_steps(10));
        assert_eq!(back.next_step, 3);
        let mut broken = saved;
        broken.meta["per_env"][0][1]["reward"] = json!("high");
        let err = back.load_state(broken).unwrap_err().to_string();
        assert!(err.contains("per_env[0][1].reward"), "{err}");
        assert_eq!(back.recent_steps(10), r.recent_steps(10));
    }

    #[test]
    fn held_frame_stacks_ride_as_tensors_and_restore_exactly() {
        // 300 held Atari stacks: as JSON numbers they were some 180 MB, past the 100 MB a
        // checkpoint's header may hold; as tensors the JSON keeps only their names.
        let shape = [84usize, 84, 4];
        let frames = Space::from(rlgraph_core::spaces::FloatBox::new(shape.to_vec()));
        let ints = Space::from(rlgraph_core::spaces::IntBox::new(2).unwrap());
        let mut r = Rollout::new(1000, &frames, &ints);
        let stack = |k: usize| {
            let data = (0..84 * 84 * 4).map(|i| ((i + k) % 256) as f32 / 255.0).collect();
            Value::Float32(rlgraph_core::spaces::Array::new(shape.to_vec(), data).unwrap())
        };
        for k in 0..300 {
            let t = Transition {
                state: stack(k),
                action: Value::i32((k % 2) as i32),
                reward: k as f64,
                terminated: false,
                truncated: false,
                next_state: stack(k + 1),
            };
            r.push(k % 2, t);
        }
        let saved = r.save_state().unwrap();
        assert_eq!(saved.tensors.len(), 600);
        assert!(
            saved.meta.to_string().len() < 100_000,
            "{} bytes of JSON",
            saved.meta.to_string().len()
        );
        let mut back = Rollout::new(1000, &frames, &ints);
        back.load_state(saved.clone()).unwrap();
        assert_eq!(back.per_env, r.per_env);
        // A stack of the wrong shape, or none, is refused by its place; nothing changes.
        let mut wrong = saved.clone();
        let name = "per_env[1][4].state";
        let short = rlgraph_core::HostTensor::new(vec![84, 84, 3], rlgraph_core::HostData::F32(vec![0.0; 84 * 84 * 3]))
            .unwrap();
        wrong.tensors.insert(name.into(), short);
        let err = back.load_state(wrong).unwrap_err().to_string();
        assert!(err.contains(name) && err.contains("shape"), "{err}");
        let mut missing = saved;
        missing.tensors.remove(name);
        let err = back.load_state(missing).unwrap_err().to_string();
        assert!(err.contains(&format!("no tensor {name}")), "{err}");
        assert_eq!(back.per_env, r.per_env);
    }

    #[test]
    fn a_next_state_that_is_the_following_state_is_stored_once() {
        // One copy of 300 steps, each next state the following step's state but at the
        // episode's end (step 100, whose next state is the terminal one, not the restart)
        // and the last step: 300 states and 2 next states are stored, not 600.
        let shape = [84usize, 84, 4];
        let frames = Space::from(rlgraph_core::spaces::FloatBox::new(shape.to_vec()));
        let ints = Space::from(rlgraph_core::spaces::IntBox::new(2).unwrap());
        let stack = |k: usize| {
            let data = (0..84 * 84 * 4).map(|i| ((i * 7 + k) % 251) as f32).collect();
            Value::Float32(rlgraph_core::spaces::Array::new(shape.to_vec(), data).unwrap())
        };
        let mut r = Rollout::new(1000, &frames, &ints);
        for k in 0..300 {
            r.push(
                0,
                Transition {
                    state: stack(k),
                    action: Value::i32(0),
                    reward: 1.0,
                    terminated: k == 100,
                    truncated: false,
                    next_state: if k == 100 { stack(5000) } else { stack(k + 1) },
                },
            );
        }
        let saved = r.save_state().unwrap();
        assert_eq!(saved.tensors.len(), 302);
        assert!(saved.tensors.contains_key("per_env[0][100].next_state"));
        assert!(saved.tensors.contains_key("per_env[0][299].next_state"));
        let mut back = Rollout::new(1000, &frames, &ints);
        back.load_state(saved.clone()).unwrap();
        assert_eq!(back.per_env, r.per_env);
        // A missing state is missed by both steps that read it, and changes nothing.
        let mut missing = saved;
        missing.tensors.remove("per_env[0][7].state");
        let err = back.load_state(missing).unwrap_err().to_string();
        assert!(
            err.contains("per_env[0][6].next_state: no tensor per_env[0][7].state"),
            "{err}"
        );
        assert_eq!(back.per_env, r.per_env);
    }

    #[test]
    fn sequences_end_at_terminals_truncations_and_cuts() {
        let mut r = rollout(100);
        r.push(0, step(1.0, false, false));
        r.push(1, step(10.0, false, true));
        r.push(0, step(2.0, true, false));
        r.push(1, step(11.0, false, false));
        r.push(0, step(3.0, false, false));
        assert_eq!((r.steps(), r.episodes()), (5, 2));
        let b = r.recent_steps(6);
        assert_eq!(b.rewards, vec![1.0, 2.0, 3.0, 10.0, 11.0]);
        assert_eq!(b.terminals, vec![false, true, false, false, false]);
        assert_eq!(b.sequence_indices, vec![false, true, true, true, true]);
        // Two steps: the latest of each copy.
        assert_eq!(r.recent_steps(2).rewards, vec![3.0, 11.0]);
    }

    #[test]
    fn capacity_keeps_the_latest_steps() {
        let mut r = rollout(3);
        for i in 0..5 {
            r.push(0, step(i as f64, false, false));
        }
        assert_eq!(r.steps(), 3);
        assert_eq!(r.recent_steps(10).rewards, vec![2.0, 3.0, 4.0]);
    }

    #[test]
    fn recent_episodes_are_the_latest_finished_ones() {
        let mut r = rollout(100);
        // Copy 0 finishes episodes at steps 1 and 4; copy 1 at step 3; copy 0 has a tail.
        r.push(0, step(1.0, false, false));
        r.push(0, step(2.0, true, false));
        r.push(1, step(7.0, false, false));
        r.push(1, step(8.0, false, true));
        r.push(0, step(3.0, true, false));
        r.push(0, step(4.0, false, false));
        assert_eq!(r.episodes(), 3);
        let b = r.recent_episodes(2);
        assert_eq!(b.rewards, vec![3.0, 7.0, 8.0]);
        assert_eq!(b.sequence_indices, vec![true, false, true]);
        assert_eq!(r.recent_episodes(5).rewards, vec![1.0, 2.0, 3.0, 7.0, 8.0]);
    }
}

//! `Evaluation`: greedy episodes played during training on environment copies of their own,
//! so that a run is judged by its policy rather than by its exploring training episodes (the
//! SB3 zoo's `EvalCallback`, and how Gymnasium states CartPole's threshold: a mean of 475
//! over 100 consecutive episodes of one policy).

use agents::Agent;
use rlgraph_core::spaces::Value;
use rlgraph_core::{CoreError, Result};
use rlgraph_envs::VectorEnv;
use serde_json::{json, Value as Json};

use crate::env_error::env_error;

/// Keeps evaluation episodes' starting states apart from the training copies' (which are
/// seeded `seed`, `seed + 1`, ...): evaluation round `k`, copy `i` starts from
/// `seed + EVAL_SEED_OFFSET + k * copies + i`, so no two rounds replay the same starts.
pub const EVAL_SEED_OFFSET: u64 = 1 << 32;

/// A bound on one evaluation round, in vector steps, for environments whose episodes may not
/// end under a greedy policy: unfinished episodes count with their return so far.
pub const MAX_EVAL_STEPS: u64 = 1_000_000;

/// One greedy episode on each of its environment copies every `every` training steps.
pub struct Evaluation {
    every: u64,
    envs: VectorEnv,
}

/// One evaluation round's result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Evaluated {
    /// The run's training steps when the round was played.
    pub timestep: u64,
    /// The mean return of the round's episodes (one per copy).
    pub mean_return: f64,
}

/// Rounds as checkpoints keep them: `[[step, mean return], ...]`.
pub(crate) fn rounds_to_json(rounds: &[Evaluated]) -> Json {
    rounds.iter().map(|e| json!([e.timestep, e.mean_return])).collect()
}

/// The rounds [`rounds_to_json`] wrote; `bad` makes the error for an entry that is not a
/// `[step, finite mean return]` pair.
pub(crate) fn rounds_from_json(list: &[Json], bad: impl Fn(String) -> CoreError) -> Result<Vec<Evaluated>> {
    list.iter()
        .enumerate()
        .map(
            |(i, j)| match (j[0].as_u64(), j[1].as_f64().filter(|x| x.is_finite())) {
                (Some(timestep), Some(mean_return)) => Ok(Evaluated { timestep, mean_return }),
                _ => Err(bad(format!(
                    "evaluations[{i}] is not a [step, finite mean return] pair"
                ))),
            },
        )
        .collect()
}

impl Evaluation {
    /// Evaluates every `every` training steps (at least 1) with one episode on each of
    /// `envs`' copies: 100 copies give Gymnasium's 100-episode mean.
    pub fn new(every: u64, envs: VectorEnv) -> Self {
        Evaluation {
            every: every.max(1),
            envs,
        }
    }

    /// Training steps between rounds.
    pub fn every(&self) -> u64 {
        self.every
    }

    /// Episodes per round.
    pub fn episodes(&self) -> usize {
        self.envs.len()
    }

    /// Whether a round is due after the run's steps went from `before` to `after`.
    pub(crate) fn due(&self, before: u64, after: u64) -> bool {
        after / self.every > before / self.every
    }

    /// Plays round `round`: every copy reset from its own seed (see [`EVAL_SEED_OFFSET`]),
    /// then the agent's deterministic actions (`explore = false`, which changes nothing the
    /// training run depends on) until each copy has finished one episode. Returns the mean
    /// of the episodes' returns.
    pub fn play<A: Agent + ?Sized>(
        &mut self,
        agent: &mut A,
        seed: u64,
        round: u64,
        time_percentage: f64,
    ) -> Result<f64> {
        agent.begin_episodes(false, &(0..self.envs.len()).collect::<Vec<_>>())?;
        self.play_with(seed, round, |states| agent.get_actions(states, false, time_percentage))
    }

    /// [`Evaluation::play`] with any greedy policy: `act` maps a batch of states (one per
    /// copy) to their actions. A policy with memory starts each round from a fresh one.
    pub fn play_with(
        &mut self,
        seed: u64,
        round: u64,
        mut act: impl FnMut(&[Value]) -> Result<Vec<Value>>,
    ) -> Result<f64> {
        let copies = self.envs.len() as u64;
        let start = seed
            .wrapping_add(EVAL_SEED_OFFSET)
            .wrapping_add(round.wrapping_mul(copies));
        let mut states = self.envs.reset_all(Some(start)).map_err(env_error)?;
        let mut returns = vec![0.0; states.len()];
        let mut finished = vec![false; states.len()];
        let mut open = states.len();
        let mut steps = 0u64;
        while open > 0 && steps < MAX_EVAL_STEPS {
            let actions = act(&states)?;
            let results = self.envs.step(&actions).map_err(env_error)?;
            // Copies that finished restart by themselves; their later steps are not counted.
            for (i, r) in results.into_iter().enumerate() {
                if !finished[i] {
                    returns[i] += r.step.reward;
                    if r.step.terminated || r.step.truncated {
                        finished[i] = true;
                        open -= 1;
                    }
                }
                states[i] = r.next_observation().clone();
            }
            steps += 1;
        }
        Ok(returns.iter().sum::<f64>() / returns.len().max(1) as f64)
    }
}

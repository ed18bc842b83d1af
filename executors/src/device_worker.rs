//! `DeviceWorker`: PPO against device-resident environments, with observations that never
//! leave the device.

use std::time::Instant;

use agents::{Agent, PgAgent, TensorRollout};
use rlgraph_core::{Backend, DType, Result};
use rlgraph_tensor_envs::TensorEnv;

use crate::divergence::{DivergenceGuard, OnDivergence};
use crate::evaluation::{Evaluated, Evaluation};
use crate::single_threaded_worker::{solved, Progress, WorkerStats};

/// Drives a PPO agent against N device-resident environment copies: the actor graph reads
/// the environments' observation tensor, the rollout is kept as device tensors, and the
/// learner computes GAE and its minibatches on the device ([`PgAgent::update_from_tensors`]).
///
/// Each update learns from a fresh rollout of `update_spec.batch_size` frames: every copy
/// takes `ceil(batch_size / N)` steps. What crosses to the host per rollout is the episode
/// statistics (each finished copy's return, read once per rollout) and the mean loss;
/// what goes up is the minibatch indices and the acting's random draws.
pub struct DeviceWorker<B: Backend> {
    agent: PgAgent<B>,
    envs: Box<dyn TensorEnv<B>>,
    target_return: Option<f64>,
    on_divergence: OnDivergence,
    /// Greedy rounds on host environments, and the seed their starts are drawn from.
    evaluation: Option<(Evaluation, u64)>,
    evaluations: Vec<Evaluated>,
}

impl<B: Backend> DeviceWorker<B> {
    /// A worker for `agent` on `envs`.
    pub fn new(agent: PgAgent<B>, envs: Box<dyn TensorEnv<B>>) -> Self {
        DeviceWorker {
            agent,
            envs,
            target_return: None,
            on_divergence: OnDivergence::Stop,
            evaluation: None,
            evaluations: vec![],
        }
    }

    /// What a non-finite loss or weight does: stop the run with an error (the default), or
    /// be recorded in [`WorkerStats::diverged_at_timestep`] while training goes on.
    pub fn with_divergence(mut self, on_divergence: OnDivergence) -> Self {
        self.on_divergence = on_divergence;
        self
    }

    /// Plays greedy evaluation rounds (on the host environments `evaluation` holds, through
    /// the agent's `get_actions`) as the run passes every `evaluation.every()` frames, their
    /// starts drawn from `seed`; `with_target_return` then applies to a round's mean.
    pub fn with_evaluation(mut self, evaluation: Evaluation, seed: u64) -> Self {
        self.evaluation = Some((evaluation, seed));
        self
    }

    /// Stops once the mean return of the last 100 episodes reaches `target` (with
    /// [`DeviceWorker::with_evaluation`], once an evaluation round's mean does).
    pub fn with_target_return(mut self, target: f64) -> Self {
        self.target_return = Some(target);
        self
    }

    /// The agent.
    pub fn agent(&self) -> &PgAgent<B> {
        &self.agent
    }

    /// Steps per copy in one rollout.
    pub fn horizon(&self) -> usize {
        self.agent
            .update_spec()
            .batch_size
            .div_ceil(self.envs.num_envs())
            .max(1)
    }

    /// Trains for about `timesteps` frames (over all copies, in whole rollouts), or until
    /// solved; `progress` is called after every update.
    pub fn execute_timesteps(
        &mut self,
        timesteps: u64,
        mut progress: impl FnMut(&Progress<'_>),
    ) -> Result<WorkerStats> {
        let n = self.envs.num_envs();
        let horizon = self.horizon();
        let device = self.envs.device();
        let zero = B::scalar(0.0, DType::F32, device)?;
        let mut running = B::full(&[n], 0.0, DType::F32, device)?;
        let mut obs = self.envs.reset()?;
        let start = Instant::now();
        let (mut steps, mut updates) = (0u64, 0u64);
        let mut episode_rewards = vec![];
        let mut solved_at = None;
        let mut guard = DivergenceGuard::new(self.on_divergence);
        while steps < timesteps {
            let mut rollout = TensorRollout {
                states: Vec::with_capacity(horizon),
                actions: Vec::with_capacity(horizon),
                rewards: Vec::with_capacity(horizon),
                terminated: Vec::with_capacity(horizon),
                truncated: Vec::with_capacity(horizon),
                next_states: obs.clone(),
            };
            let (mut ended, mut returns) = (Vec::with_capacity(horizon), Vec::with_capacity(horizon));
            for _ in 0..horizon {
                let actions = self.agent.act_tensors(&obs, true)?;
                let step = self.envs.step(&actions)?;
                running = B::add(&running, &step.reward)?;
                let done = B::maximum(&step.terminated, &step.truncated)?;
                returns.push(running.clone());
                running = B::where_cond(&done, &zero, &running)?;
                ended.push(done);
                rollout.states.push(std::mem::replace(&mut obs, step.observation));
                rollout.actions.push(actions);
                rollout.rewards.push(step.reward);
                rollout.terminated.push(step.terminated);
                rollout.truncated.push(step.truncated);
            }
            rollout.next_states = obs.clone();
            let t = (steps as f64 / timesteps.max(1) as f64).min(1.0);
            let loss = self.agent.update_from_tensors(&rollout, t)?;
            updates += 1;
            let before = steps;
            steps += (horizon * n) as u64;
            guard.check_loss(steps, loss, || self.agent.get_weights())?;
            // After the loss is checked, so a round never plays diverged weights.
            if let Some((evaluation, seed)) = self.evaluation.as_mut().filter(|(e, _)| e.due(before, steps)) {
                let round = steps / evaluation.every();
                let mean_return = evaluation.play(&mut self.agent, *seed, round, t)?;
                self.evaluations.push(Evaluated {
                    timestep: steps,
                    mean_return,
                });
            }
            let loss = Some(loss);
            // Time-major, so the finished episodes come out in the order they ended.
            let ended = B::to_host(&B::concat(&ended, 0)?)?.data.to_f64();
            let returns = B::to_host(&B::concat(&returns, 0)?)?.data.to_f64();
            episode_rewards.extend(ended.iter().zip(&returns).filter(|(e, _)| **e != 0.0).map(|(_, r)| *r));
            progress(&Progress {
                timesteps: steps,
                episodes: episode_rewards.len() as u64,
                episode_rewards: &episode_rewards,
                loss,
                elapsed: start.elapsed().as_secs_f64(),
                evaluations: &self.evaluations,
            });
            let solved_now = match (&self.evaluation, self.target_return) {
                (Some(_), Some(target)) => self.evaluations.last().is_some_and(|e| e.mean_return >= target),
                _ => solved(&episode_rewards, self.target_return),
            };
            if solved_now {
                solved_at = Some(steps);
                break;
            }
        }
        guard.check_weights(steps, || self.agent.get_weights())?;
        let mut stats = WorkerStats::from_returns(
            steps,
            episode_rewards,
            updates,
            start.elapsed().as_secs_f64(),
            solved_at,
        );
        stats.diverged_at_timestep = guard.diverged_at;
        stats.evaluations = std::mem::take(&mut self.evaluations);
        Ok(stats)
    }
}

//! `DeviceWorker`: an agent trained against device-resident environments, with observations
//! that never leave the device.

use std::path::{Path, PathBuf};
use std::time::Instant;

use agents::TensorAgent;
use rlgraph_core::{Backend, DType, HostTensor, Result};
use rlgraph_tensor_envs::TensorEnv;

use crate::device_rollout::{Rolled, RolloutRecording};
use crate::device_run::DeviceRun;
use crate::divergence::{DivergenceGuard, OnDivergence};
use crate::evaluation::{Evaluated, Evaluation};
use crate::run_tally::RunTally;
use crate::worker_stats::{Progress, RunLength, WorkerStats};

/// The checkpoint part the worker's run is saved under.
const RUN_PART: &str = "device_worker";

/// Drives an agent that learns from device-resident rollouts (a [`TensorAgent`]: PPO's)
/// against N device-resident environment copies: the actor graph reads the environments'
/// observation tensor, the rollout is kept as device tensors, and the learner learns from it
/// on the device ([`TensorAgent::update_from_tensors`]; PPO computes GAE and its minibatches
/// there).
///
/// Each update learns from a fresh rollout of `update_spec.batch_size` frames: every copy
/// takes `ceil(batch_size / N)` steps. What crosses to the host per rollout is the episode
/// statistics (each finished copy's return, read once per rollout) and the mean loss;
/// what goes up is the minibatch indices and the acting's random draws.
///
/// Like the single-threaded worker, it checkpoints every so many frames, resumes exactly
/// from a checkpoint, plays greedy evaluation rounds and pauses at a given frame.
pub struct DeviceWorker<B: Backend> {
    agent: Box<dyn TensorAgent<B>>,
    envs: Box<dyn TensorEnv<B>>,
    target_return: Option<f64>,
    on_divergence: OnDivergence,
    /// Greedy rounds on host environments, and the seed their starts are drawn from.
    evaluation: Option<(Evaluation, u64)>,
    /// Save a checkpoint every this many frames, to this file.
    checkpoint: Option<(u64, PathBuf)>,
    /// The run's tally, and its position as last saved or restored.
    run: DeviceRun,
    /// The observations the next actions are taken from and each copy's partial return, on
    /// the device; none before the first step.
    live: Option<(B::Tensor, B::Tensor)>,
    /// The seed of the device's generator, until the first run seeds it.
    device_seed: Option<u64>,
    /// Where rollouts stand with recording.
    rollouts: RolloutRecording<B>,
}

impl<B: Backend> DeviceWorker<B> {
    /// A worker for `agent` on `envs`.
    pub fn new(agent: Box<dyn TensorAgent<B>>, envs: Box<dyn TensorEnv<B>>) -> Self {
        let run = DeviceRun::new(envs.id(), envs.num_envs());
        DeviceWorker {
            agent,
            envs,
            target_return: None,
            on_divergence: OnDivergence::Stop,
            evaluation: None,
            checkpoint: None,
            run,
            live: None,
            device_seed: None,
            rollouts: RolloutRecording::NotYet,
        }
    }

    /// Draws the run's random tensors on the device with the backend's own generator seeded
    /// `seed`, where the backend can (CUDA on tch; see `GraphCapture::draw_on_device`): the
    /// acting then waits for no upload per step, and the agent's updates can be recorded and
    /// replayed. Elsewhere the draws stay on the host, their numbers unchanged. The generator
    /// is seeded when the first run starts, on the thread that runs it; it is not saved in
    /// checkpoints, so a resumed GPU run draws other numbers.
    pub fn with_device_draws(mut self, seed: u64) -> Self {
        self.device_seed = Some(seed);
        self
    }

    /// Records a rollout and an update once and replays them (the default, where the backend
    /// records on the device and the draws are there: see [`Self::with_device_draws`]), or
    /// (`false`) runs every op on its own.
    pub fn with_recording(mut self, on: bool) -> Self {
        self.agent.set_recording(on);
        self.rollouts = match on {
            true => RolloutRecording::NotYet,
            false => RolloutRecording::Off("recording was turned off".into()),
        };
        self
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

    /// Saves a checkpoint (see [`Self::save_checkpoint`]) to `path` as the run passes every
    /// `every` frames.
    pub fn with_checkpoints(mut self, every: u64, path: impl Into<PathBuf>) -> Self {
        self.checkpoint = Some((every.max(1), path.into()));
        self
    }

    /// The agent.
    pub fn agent(&self) -> &dyn TensorAgent<B> {
        self.agent.as_ref()
    }

    /// Whether rollouts replay a recording (see [`Self::with_device_draws`]); otherwise why
    /// not. `None` before the second rollout, which records.
    pub fn rollout_recording(&self) -> Option<std::result::Result<(), String>> {
        self.rollouts.state()
    }

    /// Steps per copy in one rollout.
    pub fn horizon(&self) -> usize {
        self.agent
            .update_spec()
            .batch_size
            .div_ceil(self.envs.num_envs())
            .max(1)
    }

    /// Frames over the whole run (every call and every resumed leg).
    pub fn run_timesteps(&self) -> u64 {
        self.run.tally.timesteps
    }

    /// Saves the agent's checkpoint with the worker's run beside it (under `device_worker`):
    /// where every copy stands, their partial returns, and the run's counts, episodes and
    /// evaluation rounds. [`Self::resume`] continues from it exactly.
    pub fn save_checkpoint(&mut self, path: &Path) -> Result<()> {
        let live = self.live.take();
        let saved = self.save_with(path, live.as_ref().map(|(_, running)| running));
        self.live = live;
        saved
    }

    /// Saves the checkpoint, with where the copies stand and their partial `running` returns
    /// where they are mid-run (between legs, or during one, where they live in its locals).
    fn save_with(&mut self, path: &Path, running: Option<&B::Tensor>) -> Result<()> {
        if let Some(running) = running {
            self.run.position = Some(self.envs.snapshot()?);
            self.run.returns = B::to_host(running)?.data.to_f64();
        }
        self.agent.save_checkpoint_with(path, &[(RUN_PART, &self.run)])
    }

    /// Restores a checkpoint written by [`Self::save_checkpoint`] on copies made with the same
    /// environment, count and seed: the agent, the run and where every copy stood. Everything
    /// in the file is checked before the agent changes; after that only the copies refusing
    /// their saved position (a file edited by hand, whose checksum still matched) can fail,
    /// and the worker's run then stays as it was.
    pub fn resume(&mut self, path: &Path) -> Result<()> {
        let mut run = self.run.clone();
        self.agent.restore_checkpoint_with(path, &mut [(RUN_PART, &mut run)])?;
        if let Some(position) = &run.position {
            let obs = self.envs.restore(position)?;
            self.rollouts.forget();
            let returns = HostTensor::f32([run.copies], run.returns.iter().map(|&r| r as f32).collect())?;
            self.live = Some((obs, B::from_host(&returns, self.envs.device())?));
        }
        self.run = run;
        Ok(())
    }

    /// Trains until the run (earlier calls and resumed legs included) has taken about
    /// `timesteps` frames (over all copies, in whole rollouts), or until solved; `progress`
    /// is called after every update.
    pub fn execute_timesteps(&mut self, timesteps: u64, progress: impl FnMut(&Progress<'_>)) -> Result<WorkerStats> {
        let length = RunLength {
            timesteps,
            episodes: None,
            pause_at: None,
        };
        self.execute_run(length, progress)
    }

    /// Trains until the whole run reaches `length` (in whole rollouts), or until solved.
    /// Schedules see the share of `length.timesteps` the run has done, so a run paused and
    /// resumed from its checkpoint follows the same schedule as a straight one. `progress` is
    /// called after every update; it and the returned statistics cover this call.
    pub fn execute_run(&mut self, length: RunLength, mut progress: impl FnMut(&Progress<'_>)) -> Result<WorkerStats> {
        let n = self.envs.num_envs();
        let horizon = self.horizon();
        let device = self.envs.device();
        if let Some(seed) = self.device_seed.take() {
            B::draw_on_device(device, seed)?;
        }
        let (mut obs, mut running) = match self.live.take() {
            Some(live) => live,
            None => (self.envs.reset()?, B::full(&[n], 0.0, DType::F32, device)?),
        };
        let stop = length.stop_at();
        let tally = &self.run.tally;
        let (steps_at_start, updates_at_start, episodes_at_start) =
            (tally.timesteps, tally.updates, tally.episodes.len());
        let start = Instant::now();
        let mut solved_at = None;
        let mut guard = DivergenceGuard::new(self.on_divergence);
        let episodes_left = |tally: &RunTally| length.episodes.is_none_or(|e| (tally.episodes.len() as u64) < e);
        while self.run.tally.timesteps < stop && episodes_left(&self.run.tally) {
            let (rolled, next_obs, next_running) =
                self.rollouts
                    .next(self.agent.as_mut(), self.envs.as_mut(), obs, running, horizon)?;
            (obs, running) = (next_obs, next_running);
            let Rolled {
                rollout,
                ended,
                returns,
            } = rolled;
            let before = self.run.tally.timesteps;
            let t = (before as f64 / length.timesteps.max(1) as f64).min(1.0);
            let loss = self.agent.update_from_tensors(&rollout, t)?;
            let steps = before + (horizon * n) as u64;
            self.run.tally.updates += 1;
            self.run.tally.timesteps = steps;
            guard.check_loss(steps, loss, || self.agent.get_weights())?;
            // After the loss is checked, so a round never plays diverged weights.
            if let Some((evaluation, seed)) = self.evaluation.as_mut().filter(|(e, _)| e.due(before, steps)) {
                let round = steps / evaluation.every();
                let mean_return = evaluation.play(self.agent.as_mut(), *seed, round, t)?;
                self.run.tally.evaluations.push(Evaluated {
                    timestep: steps,
                    mean_return,
                });
            }
            // Time-major, so the finished episodes come out in the order they ended.
            let ended = B::to_host(&B::concat(&ended, 0)?)?.data.to_f64();
            let returns = B::to_host(&B::concat(&returns, 0)?)?.data.to_f64();
            for (k, (_, r)) in ended.iter().zip(&returns).enumerate().filter(|(_, (e, _))| **e != 0.0) {
                // Counted at the end of the vector step it ended in.
                let at = before + (k as u64 / n as u64 + 1) * n as u64;
                self.run.tally.episodes.push(*r, at);
            }
            if let Some((_, path)) = self
                .checkpoint
                .as_ref()
                .filter(|(every, _)| steps / every > before / every)
                .cloned()
            {
                // A diverged model is not written over the last good checkpoint.
                guard.check_weights(steps, || self.agent.get_weights())?;
                self.save_with(&path, Some(&running))?;
            }
            let tally = &self.run.tally;
            progress(&Progress {
                timesteps: steps - steps_at_start,
                episodes: (tally.episodes.len() - episodes_at_start) as u64,
                episode_rewards: &tally.episodes.returns()[episodes_at_start..],
                loss: Some(loss),
                elapsed: start.elapsed().as_secs_f64(),
                evaluations: &tally.evaluations,
                gauges: &[],
            });
            if tally.reached(self.target_return, self.evaluation.is_some()) {
                solved_at = Some(steps);
                break;
            }
        }
        self.live = Some((obs, running));
        let tally = &self.run.tally;
        guard.check_weights(tally.timesteps, || self.agent.get_weights())?;
        let mut stats = WorkerStats::from_returns(
            tally.timesteps - steps_at_start,
            tally.episodes.returns()[episodes_at_start..].to_vec(),
            tally.updates - updates_at_start,
            start.elapsed().as_secs_f64(),
            solved_at,
        );
        stats.diverged_at_timestep = guard.diverged_at;
        stats.evaluations = tally
            .evaluations
            .iter()
            .filter(|e| e.timestep > steps_at_start)
            .copied()
            .collect();
        Ok(stats)
    }
}

impl<B: Backend> crate::worker::Worker for DeviceWorker<B> {
    fn execute_run(&mut self, length: RunLength, progress: &mut dyn FnMut(&Progress<'_>)) -> Result<WorkerStats> {
        DeviceWorker::execute_run(self, length, progress)
    }
    fn save_checkpoint(&mut self, path: &Path) -> Result<()> {
        DeviceWorker::save_checkpoint(self, path)
    }
    fn resume(&mut self, path: &Path) -> Result<()> {
        DeviceWorker::resume(self, path)
    }
    fn tally(&self) -> &RunTally {
        &self.run.tally
    }
}

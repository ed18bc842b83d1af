//! `SingleThreadedWorker`: one thread, one agent, one vector of environments.

use std::time::Instant;

use agents::{Agent, Transition, UpdateMode};
use rlgraph_core::{profiler, Result};
use rlgraph_envs::VectorEnv;

use crate::divergence::{DivergenceGuard, OnDivergence};
use crate::env_error::env_error;
use crate::evaluation::{Evaluated, Evaluation};
use crate::run_state::RunState;
use crate::worker_stats::{Progress, RunLength, WorkerStats};

/// Something a run does with its agent every so many steps, between iterations (record a
/// greedy episode, log something of one's own): called with the agent and the run's steps.
pub type StepHook<A> = Box<dyn FnMut(&mut A, u64) -> Result<()> + Send>;

/// Drives an agent against a vector environment.
pub struct SingleThreadedWorker<A: Agent> {
    agent: A,
    envs: VectorEnv,
    run: RunState,
    seed: u64,
    target_return: Option<f64>,
    evaluation: Option<Evaluation>,
    checkpoint: Option<(u64, std::path::PathBuf)>,
    hooks: Vec<(u64, StepHook<A>)>,
    on_divergence: OnDivergence,
}

impl<A: Agent> SingleThreadedWorker<A> {
    /// A worker; environments are reset with `seed` (copy `i` with `seed + i`) on first use.
    pub fn new(agent: A, envs: VectorEnv, seed: u64) -> Self {
        let run = RunState::new(envs.id(), envs.state_space(), envs.len());
        SingleThreadedWorker {
            agent,
            envs,
            run,
            seed,
            target_return: None,
            evaluation: None,
            checkpoint: None,
            hooks: vec![],
            on_divergence: OnDivergence::Stop,
        }
    }

    /// What to do when a loss or weight becomes NaN or infinite: stop with an error (the
    /// default) or record the step and go on.
    pub fn with_divergence(mut self, on_divergence: OnDivergence) -> Self {
        self.on_divergence = on_divergence;
        self
    }

    /// Stops a run once the mean return of the last 100 episodes reaches `target` (CartPole
    /// counts as solved at 475); with [`Self::with_evaluation`], once an evaluation round's
    /// mean reaches it instead.
    pub fn with_target_return(mut self, target: f64) -> Self {
        self.target_return = Some(target);
        self
    }

    /// Plays greedy evaluation rounds during the run (see [`Evaluation`]); a target return
    /// then applies to their means. Rounds fall on multiples of the evaluation interval of
    /// the run's steps, so a resumed run evaluates where the straight one would.
    pub fn with_evaluation(mut self, evaluation: Evaluation) -> Self {
        self.evaluation = Some(evaluation);
        self
    }

    /// Sets or clears the target return between legs of a run (see [`Self::with_target_return`]).
    pub fn set_target_return(&mut self, target: Option<f64>) {
        self.target_return = target;
    }

    /// Sets or clears the evaluation rounds between legs of a run (see [`Self::with_evaluation`]).
    pub fn set_evaluation(&mut self, evaluation: Option<Evaluation>) {
        self.evaluation = evaluation;
    }

    /// Calls `hook` with the agent every `every` steps of the run (on multiples of `every`,
    /// after that iteration's update and evaluation), as `rlgraph train --video-every` records
    /// a greedy episode. An error from the hook stops the run.
    pub fn with_hook(mut self, every: u64, hook: impl FnMut(&mut A, u64) -> Result<()> + Send + 'static) -> Self {
        self.hooks.push((every.max(1), Box::new(hook)));
        self
    }

    /// Every evaluation round over the whole run (every call and resumed leg), in order.
    pub fn run_evaluations(&self) -> &[Evaluated] {
        &self.run.tally.evaluations
    }

    /// Whether the run has reached its target return, if it has one.
    fn reached_target(&self) -> bool {
        self.run.tally.reached(self.target_return, self.evaluation.is_some())
    }

    /// Saves a checkpoint (see [`Self::save_checkpoint`]) to `path` every `every`
    /// environment steps (overwriting the last one), so a run that dies can resume.
    pub fn with_checkpoints(mut self, every: u64, path: impl Into<std::path::PathBuf>) -> Self {
        self.checkpoint = Some((every.max(1), path.into()));
        self
    }

    /// The agent.
    pub fn agent(&self) -> &A {
        &self.agent
    }

    /// The agent, mutably (to checkpoint it between calls).
    pub fn agent_mut(&mut self) -> &mut A {
        &mut self.agent
    }

    /// Environment steps over the whole run (every call and resumed leg).
    pub fn run_timesteps(&self) -> u64 {
        self.run.tally.timesteps
    }

    /// Every finished episode's return over the whole run, in order.
    pub fn run_episode_returns(&self) -> &[f64] {
        self.run.tally.episodes.returns()
    }

    /// Updates over the whole run.
    pub fn run_updates(&self) -> u64 {
        self.run.tally.updates
    }

    /// Saves the agent's checkpoint with the worker's run beside it (under `worker`): the
    /// environments' exact positions, the observations and partial returns, the run's
    /// counters and episode returns. [`Self::resume`] continues from it exactly.
    ///
    /// Environments that cannot give their position (those in another process, such as the
    /// Gymnasium bridge's) are left out: the checkpoint keeps the agent, its memory and the
    /// run's counters, and a resumed run starts every copy on a new episode.
    pub fn save_checkpoint(&mut self, path: &std::path::Path) -> Result<()> {
        if !self.run.states.is_empty() {
            if !self.envs.can_snapshot() {
                let mut run = self.run.clone();
                run.states.clear();
                run.envs.clear();
                run.returns.iter_mut().for_each(|r| *r = 0.0);
                return self.agent.save_checkpoint_with(path, &[("worker", &run)]);
            }
            self.run.envs = self.envs.snapshots().map_err(env_error)?;
        }
        self.agent.save_checkpoint_with(path, &[("worker", &self.run)])
    }

    /// Restores a checkpoint written by [`Self::save_checkpoint`]: the agent, the run and
    /// the environments. Everything in the file is checked before the agent changes; after
    /// that only an environment refusing its saved position (a file edited by hand, whose
    /// checksum still matched) can fail, and the worker's run then stays as it was.
    pub fn resume(&mut self, path: &std::path::Path) -> Result<()> {
        let mut run = self.run.clone();
        self.agent.restore_checkpoint_with(path, &mut [("worker", &mut run)])?;
        if !run.envs.is_empty() {
            self.envs.restore_snapshots(&run.envs).map_err(env_error)?;
        }
        self.run = run;
        Ok(())
    }

    /// Runs `timesteps` environment steps in this call (rounded up to whole vector steps);
    /// schedules see the share of this call's steps done (RLgraph's worker).
    pub fn execute_timesteps(
        &mut self,
        timesteps: u64,
        mut progress: impl FnMut(&Progress<'_>),
    ) -> Result<WorkerStats> {
        self.run_for(Some(timesteps), None, (0, timesteps), &mut progress)
    }

    /// Runs until `episodes` episodes have finished in this call; `max_timesteps` bounds the
    /// call and sets the time percentage of schedules.
    pub fn execute_episodes(
        &mut self,
        episodes: u64,
        max_timesteps: u64,
        mut progress: impl FnMut(&Progress<'_>),
    ) -> Result<WorkerStats> {
        self.run_for(Some(max_timesteps), Some(episodes), (0, max_timesteps), &mut progress)
    }

    /// Runs until the whole run (earlier calls and resumed legs included) reaches `length`.
    /// Schedules see the share of `length.timesteps` the run has done, so a run paused or
    /// killed and resumed from its checkpoint follows the same schedule as a straight one.
    /// The returned statistics cover this call.
    pub fn execute_run(&mut self, length: RunLength, mut progress: impl FnMut(&Progress<'_>)) -> Result<WorkerStats> {
        let done = self.run.tally.timesteps;
        let stop = length.stop_at();
        let episodes = length
            .episodes
            .map(|e| e.saturating_sub(self.run.tally.episodes.len() as u64));
        self.run_for(
            Some(stop.saturating_sub(done)),
            episodes,
            (done, length.timesteps),
            &mut progress,
        )
    }

    /// Runs at most `max_steps` steps and `max_episodes` episodes in this call; the time
    /// percentage is `(offset + steps) / horizon` for `(offset, horizon)`.
    fn run_for(
        &mut self,
        max_steps: Option<u64>,
        max_episodes: Option<u64>,
        (offset, horizon): (u64, u64),
        progress: &mut dyn FnMut(&Progress<'_>),
    ) -> Result<WorkerStats> {
        if self.run.states.is_empty() {
            self.run.states = self.envs.reset_all(Some(self.seed)).map_err(env_error)?;
            let copies: Vec<usize> = (0..self.run.states.len()).collect();
            self.agent.begin_episodes(true, &copies)?;
        }
        let start = Instant::now();
        let spec = self.agent.update_spec().clone();
        let n = self.envs.len() as u64;
        let (mut steps, mut updates) = (0u64, 0u64);
        let mut episode_rewards: Vec<f64> = vec![];
        let mut loss = None;
        let mut solved_at = None;
        let evaluations_before = self.run.tally.evaluations.len();
        let mut evaluation_seconds = 0.0;
        let mut guard = DivergenceGuard::new(self.on_divergence);
        loop {
            if max_steps.is_some_and(|m| steps >= m) || max_episodes.is_some_and(|m| episode_rewards.len() as u64 >= m)
            {
                break;
            }
            if self.reached_target() {
                solved_at = Some(self.run.tally.timesteps);
                break;
            }
            let t = ((offset + steps) as f64 / horizon.max(1) as f64).min(1.0);
            let collecting = profiler::phase("data_collection");
            let actions = {
                let _op = profiler::operation("inference");
                self.agent.get_actions(&self.run.states, true, t)?
            };
            let results = {
                let _op = profiler::operation("simulation");
                let _env = profiler::capture(profiler::Category::Simulator, "env.step");
                self.envs.step(&actions).map_err(env_error)?
            };
            let storing = profiler::operation("storing");
            let episodes_before = episode_rewards.len() as u64;
            for (i, (r, action)) in results.into_iter().zip(actions).enumerate() {
                self.run.returns[i] += r.step.reward;
                let ended = r.step.terminated || r.step.truncated;
                let next = r.next_observation().clone();
                let state = std::mem::replace(&mut self.run.states[i], next);
                self.agent.observe(
                    i,
                    Transition {
                        state,
                        action,
                        reward: r.step.reward,
                        terminated: r.step.terminated,
                        truncated: r.step.truncated,
                        next_state: r.step.observation,
                    },
                )?;
                if ended {
                    episode_rewards.push(self.run.returns[i]);
                    // Counted at the end of this vector step, as progress reports count it.
                    let at = self.run.tally.timesteps + n;
                    self.run.tally.episodes.push(self.run.returns[i], at);
                    self.run.returns[i] = 0.0;
                }
            }
            drop(storing);
            drop(collecting);
            steps += n;
            let before = self.run.tally.timesteps;
            self.run.tally.timesteps += n;
            let finished = episode_rewards.len() as u64 - episodes_before;
            // RLgraph's update_mode: the intervals count steps or finished episodes.
            let (done_so_far, unit) = match spec.update_mode {
                UpdateMode::TimeSteps => (self.run.tally.timesteps, n),
                UpdateMode::Episodes => (self.run.tally.episodes.len() as u64, finished),
            };
            self.run.since_update += unit;
            if spec.do_updates
                && done_so_far >= spec.steps_before_update
                && self.run.since_update >= spec.update_interval
            {
                self.run.since_update = 0;
                let _phase = profiler::phase("training");
                let _op = profiler::operation("learning");
                for _ in 0..spec.update_steps {
                    if let Some(l) = self.agent.update(t)? {
                        guard.check_loss(self.run.tally.timesteps, l, || self.agent.get_weights())?;
                        loss = Some(l);
                        updates += 1;
                        self.run.tally.updates += 1;
                    }
                }
            }
            if let Some(evaluation) = self
                .evaluation
                .as_mut()
                .filter(|e| e.due(before, self.run.tally.timesteps))
            {
                let _op = profiler::operation("evaluation");
                let began = std::time::Instant::now();
                let round = self.run.tally.timesteps / evaluation.every();
                let mean_return = evaluation.play(&mut self.agent, self.seed, round, t)?;
                evaluation_seconds += began.elapsed().as_secs_f64();
                self.run.tally.evaluations.push(Evaluated {
                    timestep: self.run.tally.timesteps,
                    mean_return,
                });
            }
            for (every, hook) in &mut self.hooks {
                if self.run.tally.timesteps / *every > before / *every {
                    hook(&mut self.agent, self.run.tally.timesteps)?;
                }
            }
            // Saved between iterations, where a resumed run picks up exactly.
            let due = self
                .checkpoint
                .as_ref()
                .is_some_and(|(every, _)| self.run.tally.timesteps / every > before / every);
            // The path is cloned only when a checkpoint is due, not on every step.
            if let Some((_, path)) = self.checkpoint.as_ref().filter(|_| due).cloned() {
                let _op = profiler::operation("checkpoint");
                // A diverged model is not written over the last good checkpoint.
                guard.check_weights(self.run.tally.timesteps, || self.agent.get_weights())?;
                self.save_checkpoint(&path)?;
            }
            progress(&Progress {
                timesteps: steps,
                episodes: episode_rewards.len() as u64,
                episode_rewards: &episode_rewards,
                loss,
                elapsed: start.elapsed().as_secs_f64(),
                evaluations: &self.run.tally.evaluations,
                gauges: &[],
            });
        }
        guard.check_weights(self.run.tally.timesteps, || self.agent.get_weights())?;
        let mut stats = WorkerStats::from_returns(
            steps,
            episode_rewards,
            updates,
            start.elapsed().as_secs_f64(),
            solved_at,
        );
        stats.diverged_at_timestep = guard.diverged_at;
        stats.evaluation_seconds = evaluation_seconds;
        stats.evaluations = self.run.tally.evaluations[evaluations_before..].to_vec();
        Ok(stats)
    }
}

impl<A: Agent> crate::worker::Worker for SingleThreadedWorker<A> {
    fn execute_run(&mut self, length: RunLength, progress: &mut dyn FnMut(&Progress<'_>)) -> Result<WorkerStats> {
        SingleThreadedWorker::execute_run(self, length, progress)
    }
    fn save_checkpoint(&mut self, path: &std::path::Path) -> Result<()> {
        SingleThreadedWorker::save_checkpoint(self, path)
    }
    fn resume(&mut self, path: &std::path::Path) -> Result<()> {
        SingleThreadedWorker::resume(self, path)
    }
    fn tally(&self) -> &crate::RunTally {
        &self.run.tally
    }
}

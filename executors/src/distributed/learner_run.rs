//! What every distributed learner does around its updates: serve the hub on its cluster
//! address, resume from a checkpoint, count the actors' frames and episodes, show progress,
//! decide when the run is over, publish and checkpoint after updates, and end the run so
//! that every actor hears it.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use agents::GraphLearner;
use rlgraph_core::{Backend, CoreError, HostState, SavedState};
use serde_json::json;
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;

use super::access::Access;
use super::cluster::{ClusterSpec, Role};
use super::error::DistributedError;
use super::learner_hub::LearnerHub;
use super::peers::serve_learner;
use super::{LearnerOptions, LearnerProgress};
use crate::single_threaded_worker::{solved, WorkerStats};

/// The run's counters that ride in the learner's checkpoint.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RunCounters {
    /// Frames stepped by all actors.
    pub(crate) frames: u64,
    /// Every finished episode's return, in the order reported.
    pub(crate) episode_returns: Vec<f64>,
}

impl HostState for RunCounters {
    fn save_state(&self) -> rlgraph_core::Result<SavedState> {
        Ok(SavedState {
            tensors: BTreeMap::new(),
            meta: json!({"frames": self.frames, "episode_returns": self.episode_returns}),
        })
    }

    fn check_state(&self, state: &SavedState) -> rlgraph_core::Result<()> {
        parse_counters(state).map(|_| ())
    }

    fn load_state(&mut self, state: SavedState) -> rlgraph_core::Result<()> {
        *self = parse_counters(&state)?;
        Ok(())
    }
}

fn parse_counters(state: &SavedState) -> rlgraph_core::Result<RunCounters> {
    let bad = |reason: &str| CoreError::Checkpoint {
        path: "(distributed run counters)".into(),
        reason: reason.into(),
    };
    let frames = state.meta["frames"].as_u64().ok_or_else(|| bad("no frame count"))?;
    let episode_returns = state.meta["episode_returns"]
        .as_array()
        .ok_or_else(|| bad("no episode returns"))?
        .iter()
        .map(|r| {
            r.as_f64()
                .filter(|r| r.is_finite())
                .ok_or_else(|| bad("a return is not a finite number"))
        })
        .collect::<rlgraph_core::Result<_>>()?;
    Ok(RunCounters {
        frames,
        episode_returns,
    })
}

/// A learner's run in progress.
pub(crate) struct LearnerRun {
    pub(crate) runtime: Runtime,
    pub(crate) hub: LearnerHub,
    pub(crate) counters: RunCounters,
    server: JoinHandle<Result<(), DistributedError>>,
    stop_server: tokio::sync::oneshot::Sender<()>,
    start: Instant,
    lag_sum: f64,
    lag_n: u64,
    actors: BTreeSet<u32>,
    last_progress: Instant,
    last_checkpoint: u64,
    solved_at: Option<u64>,
    resumed_at_update: Option<u64>,
}

impl LearnerRun {
    /// Resumes `learner` from the options' checkpoint where asked, publishes its weights and
    /// serves `hub` on the cluster's learner address.
    pub(crate) fn start<B: Backend>(
        learner: &mut impl GraphLearner<B>,
        hub: LearnerHub,
        cluster: &ClusterSpec,
        access: &Access,
        options: &LearnerOptions,
    ) -> Result<Self, DistributedError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| DistributedError::Setup(format!("cannot start the learner's runtime: {e}")))?;
        let mut counters = RunCounters::default();
        let mut resumed_at_update = None;
        if let (true, Some(path)) = (options.resume, &options.checkpoint) {
            if path.exists() {
                learner.restore_checkpoint(path, vec![("distributed", &mut counters)], &mut [])?;
                resumed_at_update = Some(learner.updates());
                super::log(&format!(
                    "learner: resumed from {} at {} frames",
                    path.display(),
                    counters.frames
                ));
            }
        }
        hub.publish(&learner.publish()?);
        let addr = cluster.address(Role::Learner, 0)?;
        let (stop_server, server_stopped) = tokio::sync::oneshot::channel::<()>();
        let server = {
            let (hub, access) = (hub.clone(), access.clone());
            runtime.spawn(async move {
                serve_learner(hub, addr, &access, async {
                    let _ = server_stopped.await;
                })
                .await
            })
        };
        Ok(LearnerRun {
            runtime,
            hub,
            last_checkpoint: learner.updates(),
            counters,
            server,
            stop_server,
            start: Instant::now(),
            lag_sum: 0.0,
            lag_n: 0,
            actors: BTreeSet::new(),
            last_progress: Instant::now(),
            solved_at: None,
            resumed_at_update,
        })
    }

    /// Takes the actors' reports, tells them the run's progress, shows it every second, and
    /// says whether the run is over (its frames done, or its target return reached). The
    /// run's progress (0 to 1) while it goes on.
    pub(crate) fn tick(
        &mut self,
        options: &LearnerOptions,
        updates: u64,
        queue_depth: usize,
        progress: &mut impl FnMut(&LearnerProgress),
    ) -> Option<f64> {
        let reports = self.hub.drain();
        let run = &mut self.counters;
        run.frames = run.frames.saturating_add(reports.frames);
        run.episode_returns.extend(&reports.episode_returns);
        let version = self.hub.version();
        for (actor, v) in &reports.actor_versions {
            self.actors.insert(*actor);
            self.lag_sum += version.saturating_sub(*v) as f64;
            self.lag_n += 1;
        }
        let t = (run.frames as f64 / options.timesteps.max(1) as f64).min(1.0);
        self.hub.set_time_percentage(t);
        if self.last_progress.elapsed() >= Duration::from_secs(1) {
            self.last_progress = Instant::now();
            let weight_lag = weight_lag(self.lag_sum, self.lag_n);
            let last10 = &run.episode_returns[run.episode_returns.len().saturating_sub(10)..];
            progress(&LearnerProgress {
                frames: run.frames,
                updates,
                episodes: run.episode_returns.len() as u64,
                mean_last_10: last10.iter().sum::<f64>() / last10.len().max(1) as f64,
                elapsed: self.start.elapsed().as_secs_f64(),
                weight_lag,
                queue_depth,
            });
        }
        if solved(&run.episode_returns, options.target_return) {
            self.solved_at = Some(run.frames);
            return None;
        }
        (run.frames < options.timesteps).then_some(t)
    }

    /// After an update with this `loss`: stops on divergence, publishes the new weights and
    /// saves the periodic checkpoint.
    pub(crate) fn updated<B: Backend>(
        &mut self,
        learner: &mut impl GraphLearner<B>,
        loss: f64,
        options: &LearnerOptions,
    ) -> Result<(), DistributedError> {
        if !loss.is_finite() {
            return Err(CoreError::Diverged {
                step: self.counters.frames,
                what: format!("the loss is {loss} at update {}", learner.updates()),
            }
            .into());
        }
        self.hub.publish(&learner.publish()?);
        if let Some(path) = &options.checkpoint {
            if options.checkpoint_every > 0 && learner.updates() >= self.last_checkpoint + options.checkpoint_every {
                self.last_checkpoint = learner.updates();
                learner.save_checkpoint(path, vec![("distributed", &self.counters)], &[])?;
            }
        }
        Ok(())
    }

    /// Ends the run: tells the actors, runs `wind_down` (the shards' last calls) while the
    /// hub still answers, stops serving, saves the final checkpoint and returns the run's
    /// statistics with its seconds, the weight lag, the actors heard from and the update it
    /// resumed at. `result` is the learning loop's outcome, returned if it failed.
    pub(crate) fn finish<B: Backend>(
        self,
        learner: &mut impl GraphLearner<B>,
        options: &LearnerOptions,
        result: Result<(), DistributedError>,
        wind_down: impl FnOnce(&Runtime),
    ) -> Result<Finished, DistributedError> {
        self.hub.stop();
        let runtime_s = self.start.elapsed().as_secs_f64();
        wind_down(&self.runtime);
        // Keep answering a moment so every actor hears the run is over.
        std::thread::sleep(options.stop_grace);
        let _ = self.stop_server.send(());
        match self.runtime.block_on(self.server) {
            Ok(Err(e)) => return Err(e),
            Err(e) => return Err(DistributedError::Setup(format!("the learner's server failed: {e}"))),
            Ok(Ok(())) => {}
        }
        result?;
        if let Some(path) = &options.checkpoint {
            learner.save_checkpoint(path, vec![("distributed", &self.counters)], &[])?;
        }
        let weight_lag = weight_lag(self.lag_sum, self.lag_n);
        let updates = learner.updates();
        Ok(Finished {
            worker: WorkerStats::from_returns(
                self.counters.frames,
                self.counters.episode_returns,
                updates,
                runtime_s,
                self.solved_at,
            ),
            updates_per_second: updates as f64 / runtime_s.max(1e-9),
            weight_lag,
            actors: self.actors.len(),
            resumed_at_update: self.resumed_at_update,
        })
    }
}

/// Mean over the actors' reports of how many versions behind the learner they acted.
fn weight_lag(sum: f64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

/// What every learner's summary holds.
pub(crate) struct Finished {
    pub(crate) worker: WorkerStats,
    pub(crate) updates_per_second: f64,
    pub(crate) weight_lag: f64,
    pub(crate) actors: usize,
    pub(crate) resumed_at_update: Option<u64>,
}

//! What every distributed learner does around its updates: serve the hub on its cluster
//! address, resume from a checkpoint, count the actors' frames and episodes, show progress,
//! decide when the run is over, publish when actors ask, checkpoint after updates, and end the
//! run so that every actor hears it (or, asked to end, only the leg).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agents::{GraphActor, GraphLearner, Learned};
use rlgraph_core::spaces::Value;
use rlgraph_core::{Backend, CoreError};
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;

use super::access::Access;
use super::cluster::{ClusterSpec, Role};
use super::error::DistributedError;
use super::learner_hub::{LearnerHub, Reports};
use super::learner_options::LearnerOptions;
use super::learner_state::RunCounters;
use super::peers::serve_learner;
use crate::greedy_rounds::GreedyRounds;
use crate::input_log::{rounds_record, LogRecord, LogWriter};
use crate::worker_stats::{solved, Progress, RunLength, WorkerStats};

/// A learner's run in progress, logging what decides its learner's state where `log` is given.
pub(crate) struct LearnerRun<'log, B: Backend> {
    log: Option<&'log mut LogWriter>,
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
    /// How long the run goes.
    length: RunLength,
    /// The frames, episodes and updates the run had when this leg started.
    from: (u64, usize, u64),
    /// The last update's loss.
    loss: Option<f64>,
    /// Greedy rounds, where the run evaluates.
    rounds: Option<GreedyRounds<B>>,
    /// The frames the last look for a due round saw.
    evaluated_to: u64,
    /// Rounds already shown to the progress callback.
    rounds_shown: usize,
    /// The learner's updates at each recent publication, by version.
    published_at: BTreeMap<u64, u64>,
    /// A failure to log in `tick`, which ends the leg; `finish` returns it.
    failed: Option<DistributedError>,
    /// Set when the process is asked to end (SIGTERM or Ctrl-C).
    terminated: Arc<AtomicBool>,
    /// Whether this leg ended because the process was asked to, not because the run is over.
    preempted: bool,
}

impl<'log, B: Backend> LearnerRun<'log, B> {
    /// Goes on from `counters` (the run's so far), publishes the learner's weights and serves
    /// `hub` on the cluster's learner address until the run reaches `length`.
    /// Where `options` ask for evaluation, `actor` (a greedy actor of the learner's
    /// algorithm, built with its own seed) plays the rounds between updates.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn start(
        learner: &mut dyn GraphLearner<B>,
        counters: RunCounters,
        hub: LearnerHub,
        cluster: &ClusterSpec,
        access: &Access,
        options: &LearnerOptions,
        length: RunLength,
        actor: impl FnOnce() -> rlgraph_core::Result<(GraphActor<B>, Option<usize>)>,
        mut log: Option<&'log mut LogWriter>,
    ) -> Result<Self, DistributedError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| DistributedError::Setup(format!("cannot start the learner's runtime: {e}")))?;
        let rounds = match &options.evaluation {
            Some(spec) => {
                let (actor, memory_units) = actor()?;
                Some(GreedyRounds {
                    evaluation: spec.build(options.seed)?,
                    actor,
                    memory_units,
                    seed: options.seed,
                    done: counters.evaluations.clone(),
                })
            }
            None => None,
        };
        let first = learner.publish()?;
        append(&mut log, || LogRecord::published(&first))?;
        hub.publish(&first);
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
        // A learner asked to end (a pod deleted, a job preempted) stops learning, saves and
        // leaves the run to the next learner: the actors and shards go on and wait for it.
        let terminated = Arc::new(AtomicBool::new(false));
        {
            let terminated = terminated.clone();
            runtime.spawn(async move {
                super::role_health::termination().await;
                terminated.store(true, Ordering::SeqCst);
            });
        }
        Ok(LearnerRun {
            log,
            published_at: BTreeMap::from([(first.version, learner.updates())]),
            terminated,
            failed: None,
            preempted: false,
            runtime,
            hub,
            last_checkpoint: learner.updates(),
            server,
            stop_server,
            start: Instant::now(),
            lag_sum: 0.0,
            lag_n: 0,
            actors: BTreeSet::new(),
            last_progress: Instant::now(),
            solved_at: None,
            length,
            from: (counters.frames, counters.episodes.len(), learner.updates()),
            loss: None,
            evaluated_to: counters.frames,
            rounds_shown: counters.evaluations.len(),
            rounds,
            counters,
        })
    }

    /// Takes the actors' reports, tells them the run's progress, reports it every second (this
    /// leg's frames and episodes, the run's rounds, and the learner's rates, weight lag and
    /// `queue_depth` as gauges), and says whether the run is over (its length reached, or its
    /// target return). The run's progress (0 to 1) while it goes on.
    pub(crate) fn tick(
        &mut self,
        options: &LearnerOptions,
        updates: u64,
        queue_depth: usize,
        progress: &mut dyn FnMut(&Progress<'_>),
    ) -> Option<f64> {
        if self.terminated.load(Ordering::SeqCst) {
            if !self.preempted {
                super::log(
                    "learner: asked to end (SIGTERM or Ctrl-C): saving and leaving the run, its actors and shards to \
                     the next learner (start it with --resume-if-present)",
                );
            }
            self.preempted = true;
            return None;
        }
        let reports = self.hub.drain();
        if let Err(e) = log_reports(&mut self.log, &reports) {
            self.failed = Some(e);
            return None;
        }
        let run = &mut self.counters;
        run.frames = run.frames.saturating_add(reports.frames);
        run.episodes.extend(&reports.episode_returns, run.frames);
        for (actor, v) in &reports.actor_versions {
            self.actors.insert(*actor);
            // In updates, not versions: weights are published when asked, not every update.
            if let Some(at) = self.published_at.get(v) {
                self.lag_sum += updates.saturating_sub(*at) as f64;
                self.lag_n += 1;
            }
        }
        let length = self.length;
        let t = (run.frames as f64 / length.timesteps.max(1) as f64).min(1.0);
        self.hub.set_time_percentage(t);
        // A round played since the last report is reported now, so the last one is too.
        if self.last_progress.elapsed() >= Duration::from_secs(1) || run.evaluations.len() > self.rounds_shown {
            self.last_progress = Instant::now();
            let elapsed = self.start.elapsed().as_secs_f64();
            let (frames_from, episodes_from, updates_from) = self.from;
            let leg_frames = run.frames.saturating_sub(frames_from);
            let leg = run.episodes.returns().get(episodes_from..).unwrap_or_default();
            let seconds = elapsed.max(1e-9);
            progress(&Progress {
                timesteps: leg_frames,
                episodes: leg.len() as u64,
                episode_rewards: leg,
                loss: self.loss,
                elapsed,
                evaluations: &run.evaluations,
                gauges: &[
                    ("distributed/frames_per_second", leg_frames as f64 / seconds),
                    (
                        "distributed/updates_per_second",
                        updates.saturating_sub(updates_from) as f64 / seconds,
                    ),
                    ("distributed/updates", updates as f64),
                    ("distributed/weight_lag_updates", weight_lag(self.lag_sum, self.lag_n)),
                    ("distributed/queue_depth", queue_depth as f64),
                ],
            });
            self.rounds_shown = run.evaluations.len();
        }
        let reached = match (&self.rounds, options.target_return) {
            (Some(_), Some(target)) => run.evaluations.last().is_some_and(|e| e.mean_return >= target),
            _ => solved(run.episodes.returns(), options.target_return),
        };
        if reached {
            self.solved_at = Some(run.frames);
            return None;
        }
        let stop = length.stop_at();
        let episodes_done = length.episodes.is_some_and(|e| run.episodes.len() as u64 >= e);
        (run.frames < stop && !episodes_done).then_some(t)
    }

    /// Answers the actors' pulls since the last call: publishes the learner's weights if it
    /// has learned since its last publication, and otherwise tells the waiting pulls that the
    /// version there is the freshest. Ape-X publishes this way, on demand rather than after
    /// every update, which cost the update thread a copy of the weights each time; called
    /// between updates, so a pull waits one update at most.
    pub(crate) fn publish_if_wanted(&mut self, learner: &mut dyn GraphLearner<B>) -> Result<(), DistributedError> {
        if self.hub.take_wanted() {
            if self.published_at.last_key_value().map(|(_, &u)| u) == Some(learner.updates()) {
                self.hub.answer_pulls();
            } else {
                self.publish(learner)?;
            }
        }
        Ok(())
    }

    /// Publishes the learner's weights to the actors (IMPALA's learner after every update).
    pub(crate) fn publish(&mut self, learner: &mut dyn GraphLearner<B>) -> Result<(), DistributedError> {
        let snapshot = learner.publish()?;
        append(&mut self.log, || LogRecord::published(&snapshot))?;
        self.hub.publish(&snapshot);
        self.published_at.insert(snapshot.version, learner.updates());
        // The lag of reports older than this many publications is not measured.
        while self.published_at.len() > 4096 {
            self.published_at.pop_first();
        }
        Ok(())
    }

    /// Logs the record `make` makes, where the run records.
    pub(crate) fn log(&mut self, make: impl FnOnce() -> LogRecord) -> Result<(), DistributedError> {
        append(&mut self.log, make)
    }

    /// One update of `learner` on `batch` at the run's share `t`, logged.
    pub(crate) fn learn(
        &mut self,
        learner: &mut dyn GraphLearner<B>,
        batch: &Value,
        t: f64,
    ) -> Result<Learned, DistributedError> {
        let learned = learner.learn(batch, t)?;
        if let Some(log) = &mut self.log {
            log.append_encoded(&LogRecord::encode_learned(t, learned.loss, learner.updates(), batch))?;
        }
        Ok(learned)
    }

    /// After an update with this `loss`: stops on divergence, plays a greedy round if one is
    /// due and saves the periodic checkpoint.
    pub(crate) fn updated(
        &mut self,
        learner: &mut dyn GraphLearner<B>,
        loss: f64,
        options: &LearnerOptions,
    ) -> Result<(), DistributedError> {
        self.loss = Some(loss);
        if !loss.is_finite() {
            return Err(CoreError::Diverged {
                step: self.counters.frames,
                what: format!("the loss is {loss} at update {}", learner.updates()),
            }
            .into());
        }
        if let Some(rounds) = self.rounds.as_mut() {
            let frames = self.counters.frames;
            // Between updates, so a round plays the weights just learned.
            let log = &mut self.log;
            let mut logged = Ok(());
            rounds.play_if_due(
                || {
                    let snapshot = learner.publish()?;
                    if logged.is_ok() {
                        logged = append(log, || LogRecord::published(&snapshot));
                    }
                    Ok(Box::new(snapshot))
                },
                self.evaluated_to,
                frames,
            )?;
            logged?;
            self.evaluated_to = frames;
            if rounds.done.len() != self.counters.evaluations.len() {
                self.counters.evaluations.clone_from(&rounds.done);
                append(&mut self.log, || rounds_record(&self.counters.evaluations))?;
            }
        }
        if let Some(path) = &options.checkpoint {
            if options.checkpoint_every > 0 && learner.updates() >= self.last_checkpoint + options.checkpoint_every {
                self.last_checkpoint = learner.updates();
                if let Some(log) = &mut self.log {
                    log.checkpointed(learner.updates(), serde_json::Value::Null)?;
                }
                learner.save_checkpoint(path, vec![("distributed", &self.counters)], &[])?;
            }
        }
        Ok(())
    }

    /// Whether the process was asked to end before the run was over (the leg ends, the run
    /// does not: actors are not told, shards are not stopped).
    pub(crate) fn preempted(&self) -> bool {
        self.preempted
    }

    /// Ends the run, or only this leg when [`LearnerRun::preempted`]: tells the actors the run
    /// is over (unless preempted), runs `wind_down` (the shards' last calls) while the hub
    /// still answers, stops serving and returns the run's statistics with this leg's seconds,
    /// the weight lag, the actors heard from and the run's counters (a preempted leg's with
    /// what the actors reported while it drained). `result` is the learning loop's outcome,
    /// returned if it failed.
    pub(crate) fn finish(
        self,
        learner: &mut dyn GraphLearner<B>,
        options: &LearnerOptions,
        result: Result<(), DistributedError>,
        wind_down: impl FnOnce(&Runtime),
    ) -> Result<Finished, DistributedError> {
        if !self.preempted {
            self.hub.stop();
        }
        let runtime_s = self.start.elapsed().as_secs_f64();
        wind_down(&self.runtime);
        if !self.preempted {
            // Keep answering a moment so every actor hears the run is over.
            std::thread::sleep(options.stop_grace);
        }
        let _ = self.stop_server.send(());
        match self.runtime.block_on(self.server) {
            Ok(Err(e)) => return Err(e),
            Err(e) => return Err(DistributedError::Setup(format!("the learner's server failed: {e}"))),
            Ok(Ok(())) => {}
        }
        result?;
        if let Some(e) = self.failed {
            return Err(e);
        }
        let mut counters = self.counters;
        if self.preempted {
            // What the actors reported after the last tick, until the server closed: they count
            // it delivered, so it goes into the checkpoint the next learner resumes from.
            let late = self.hub.drain();
            let mut log = self.log;
            log_reports(&mut log, &late)?;
            counters.frames = counters.frames.saturating_add(late.frames);
            counters.episodes.extend(&late.episode_returns, counters.frames);
        }
        let weight_lag = weight_lag(self.lag_sum, self.lag_n);
        let updates = learner.updates();
        let mut worker = WorkerStats::from_returns(
            counters.frames,
            counters.episodes.returns().to_vec(),
            updates,
            runtime_s,
            self.solved_at,
        );
        // This leg's speed.
        worker.env_frames_per_second = counters.frames.saturating_sub(self.from.0) as f64 / runtime_s.max(1e-9);
        worker.evaluations = counters.evaluations.clone();
        Ok(Finished {
            worker,
            updates_per_second: updates.saturating_sub(self.from.2) as f64 / runtime_s.max(1e-9),
            weight_lag,
            actors: self.actors.len(),
            counters,
            preempted: self.preempted,
        })
    }
}

/// Appends the record `make` makes to `log`, if there is a log (the record is made only then).
fn append(log: &mut Option<&mut LogWriter>, make: impl FnOnce() -> LogRecord) -> Result<(), DistributedError> {
    match log {
        Some(log) => log.append(&make()),
        None => Ok(()),
    }
}

/// Logs the actors' `reports`, unless they hold nothing (the learner drains them every few
/// milliseconds).
fn log_reports(log: &mut Option<&mut LogWriter>, reports: &Reports) -> Result<(), DistributedError> {
    if reports.frames == 0 && reports.episode_returns.is_empty() {
        return Ok(());
    }
    append(log, || LogRecord::Reported {
        frames: reports.frames,
        episode_returns: reports.episode_returns.clone(),
    })
}

/// Mean over the actors' reports of how many updates behind the learner they acted.
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
    pub(crate) counters: RunCounters,
    pub(crate) preempted: bool,
}

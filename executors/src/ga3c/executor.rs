//! `Ga3cExecutor`: starts GA3C's agent, predictor and trainer threads for one agent config,
//! watches them, adjusts their counts and stops them.

use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use agents::{Segment, SegmentAlgorithm};
use crossbeam_channel::{bounded, Receiver, Sender};
use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, CoreError, HostState, Result};
use rlgraph_envs::make;
use serde_json::Value as Json;

use super::adjuster::ThreadAdjuster;
use super::metrics::{Counters, Ga3cStats};
use super::roles::{
    append, poisoned, AgentRole, Ga3cLearner, PredictorRole, Reply, Request, RunLog, Shared, TrainerRole,
};
use super::run_record::RunRecord;
use super::spec::{Ga3cSpec, ThreadCounts};
use crate::distributed::core_error;
use crate::divergence::OnDivergence;
use crate::evaluation::{Evaluated, Evaluation};
use crate::greedy_rounds::GreedyRounds;
use crate::input_log::{LogRecord, Recording};
use crate::run_tally::RunTally;
use crate::worker::Worker;
use crate::worker_stats::{solved, Progress, RunLength};
use crate::WorkerStats;

/// How often the main thread looks at the run.
const TICK: Duration = Duration::from_millis(20);

/// How the algorithm `config` describes acts and learns in GA3C: one that learns from
/// segments; any other is refused by its type.
pub fn ga3c_algorithm<B: Backend>(config: &Json) -> Result<Box<dyn SegmentAlgorithm<B>>> {
    agents::segment_algorithm(config)?.ok_or_else(|| CoreError::Config {
        at: "config.execution_spec.executor".into(),
        reason: format!(
            "ga3c runs agents with an actor-critic policy ({}, or an algorithm registered with \
             agents::register_segment_algorithm), not type {}",
            agents::types_offering::<B>(agents::Layout::Segments).join(", "),
            config.get("type").unwrap_or(&Json::Null)
        ),
    })
}

/// Runs an actor-critic agent config (PPO, actor-critic, IMPALA) GA3C's way: NA agent threads,
/// each stepping one environment; NP predictor threads, each with its own copy of the actor,
/// answering the waiting states in batches; NT trainer threads batching experience into
/// updates of one shared learner, which publishes a weight snapshot after each.
///
/// Every random choice is seeded (agent `i`'s environment from `seed + i`, predictor `j`'s
/// actor from `seed + 1000 + j`), but which states meet in a batch depends on thread
/// scheduling, so two runs with one seed differ.
pub struct Ga3cExecutor<B: Backend> {
    algorithm: Box<dyn SegmentAlgorithm<B>>,
    spec: Ga3cSpec,
    env_id: String,
    state_space: Space,
    action_space: Space,
    seed: u64,
    target_return: Option<f64>,
    on_divergence: OnDivergence,
    /// The run's learner: the last leg's, or the one resumed from a checkpoint.
    learner: Option<Arc<Mutex<Ga3cLearner<B>>>>,
    /// Greedy evaluation rounds, if asked for.
    evaluation: Option<Evaluation>,
    /// Save a checkpoint every so many frames, to this file.
    checkpoints: Option<(u64, PathBuf)>,
    /// What the last leg started from: the earlier legs' counts and results (all zero and
    /// empty for a fresh run).
    resumed: RunRecord,
    /// The run's counts and results so far, as its checkpoints hold them.
    last_record: RunRecord,
    /// The last leg's statistics, GA3C's own measures included.
    last_stats: Option<Ga3cStats>,
    /// The learner input log, where the run records one.
    log: RunLog,
    backend: PhantomData<fn() -> B>,
}

/// The threads of a run and the channels new ones join.
struct Threads {
    handles: Vec<JoinHandle<()>>,
    spawned: ThreadCounts,
    requests: (Sender<Request>, Receiver<Request>),
    training: (Sender<Segment>, Receiver<Segment>),
    replies: Arc<Vec<Sender<Reply>>>,
    /// Each agent's end of its reply channel, until its thread takes it.
    reply_ends: Vec<Option<Receiver<Reply>>>,
}

impl<B: Backend> Ga3cExecutor<B> {
    /// The executor for `config` (an agent config whose `execution_spec` may carry a
    /// `ga3c_spec`; its `executor` key is not required here) on environment `env_id`.
    pub fn new(config: &Json, env_id: &str, seed: u64) -> Result<Self> {
        Self::with_spec(ga3c_algorithm(config)?, Ga3cSpec::parse(config)?, env_id, seed)
    }

    /// The executor for `algorithm` with the settings `spec` on environment `env_id`.
    pub fn with_spec(algorithm: Box<dyn SegmentAlgorithm<B>>, spec: Ga3cSpec, env_id: &str, seed: u64) -> Result<Self> {
        let probe = make(env_id, seed).map_err(|e| CoreError::Config {
            at: "ga3c env".into(),
            reason: e.to_string(),
        })?;
        Ok(Ga3cExecutor {
            algorithm,
            spec,
            env_id: env_id.into(),
            state_space: probe.state_space().clone(),
            action_space: probe.action_space().clone(),
            seed,
            target_return: None,
            on_divergence: OnDivergence::Stop,
            learner: None,
            evaluation: None,
            checkpoints: None,
            resumed: RunRecord::default(),
            last_record: RunRecord::default(),
            last_stats: None,
            log: RunLog::default(),
            backend: PhantomData,
        })
    }

    /// Records the learner's input as `recording` says (see [`crate::input_log`]): the
    /// trainers' batches in the order the learner took them, its publications and
    /// checkpoints. `rlgraph replay` then runs the learner again to its checkpoint's bytes.
    pub fn with_recording(self, recording: &Recording) -> Result<Self> {
        let log = recording
            .open(&self.state_space, &self.action_space, self.seed, B::NAME, "ga3c")
            .map_err(core_error)?;
        *self.log.lock().map_err(|_| poisoned("learner log"))? = Some(log);
        Ok(self)
    }

    /// Stops a run once the mean return of the last 100 episodes reaches `target`.
    pub fn with_target_return(mut self, target: f64) -> Self {
        self.target_return = Some(target);
        self
    }

    /// Plays greedy evaluation rounds as the run passes every `evaluation.every()` frames,
    /// with a greedy actor of its own that takes the learner's weights at that moment; the
    /// rounds go to the stats' `evaluations`, and `with_target_return` then applies to a
    /// round's mean rather than to the last 100 training episodes.
    pub fn with_evaluation(mut self, evaluation: Evaluation) -> Self {
        self.evaluation = Some(evaluation);
        self
    }

    /// Saves a checkpoint to `path` whenever the run's frames pass a multiple of `every`: the
    /// learner (variables, optimizer state, counters) and the run's counts, episode returns
    /// and evaluation rounds. The learner is locked while it is written; the agents go on.
    pub fn with_checkpoints(mut self, every: u64, path: impl Into<PathBuf>) -> Self {
        self.checkpoints = Some((every.max(1), path.into()));
        self
    }

    /// Continues the run from the checkpoint at `path` (written by `with_checkpoints` or
    /// `save_checkpoint` for the same config): its learner, and its counts, which the next
    /// leg's length includes. The agents start new episodes. On error nothing changes.
    pub fn resume(&mut self, path: &Path) -> Result<()> {
        let mut learner = self
            .algorithm
            .learner(&self.state_space, &self.action_space, self.seed)?;
        let mut record = RunRecord::default();
        learner
            .restore_checkpoint(path, vec![(RUN_PART, &mut record)], &mut [])
            .map_err(|e| CoreError::Checkpoint {
                path: path.display().to_string(),
                reason: format!("cannot resume from it: {e}"),
            })?;
        let updates = learner.updates();
        self.learner = Some(Arc::new(Mutex::new(learner)));
        self.last_record = record;
        append(&self.log, || Ok(LogRecord::Resumed { updates }))
    }

    /// The last leg's statistics, with GA3C's own measures (`None` before the first leg).
    pub fn last_stats(&self) -> Option<&Ga3cStats> {
        self.last_stats.as_ref()
    }

    /// Saves the run's learner and counts as a checkpoint `resume` reads.
    pub fn save_checkpoint(&self, path: &Path) -> Result<()> {
        let learner = self.learner.as_ref().ok_or_else(|| CoreError::Config {
            at: "ga3c save_checkpoint".into(),
            reason: "nothing has been trained yet".into(),
        })?;
        save(learner, &self.last_record, path, &self.log)
    }

    /// What a non-finite loss or weight does: stop the run with an error (the default), or
    /// be recorded in `diverged_at_timestep` while training goes on.
    pub fn with_divergence(mut self, on_divergence: OnDivergence) -> Self {
        self.on_divergence = on_divergence;
        self
    }

    /// The settings.
    pub fn spec(&self) -> &Ga3cSpec {
        &self.spec
    }

    /// Writes the last run's learned model (the learner's variables, as
    /// `Agent::export_model` writes them, so `Agent::import_model` of the same config reads
    /// it).
    pub fn export_model(&self, path: &std::path::Path) -> Result<()> {
        let learner = self.learner.as_ref().ok_or_else(|| CoreError::Config {
            at: "ga3c export_model".into(),
            reason: "nothing has been trained yet".into(),
        })?;
        let learner = learner.lock().map_err(|_| CoreError::Config {
            at: "ga3c export_model".into(),
            reason: "a trainer panicked while holding the learner".into(),
        })?;
        learner.executor().save(path)
    }

    /// Runs until `total` environment steps (or the target return), calling `progress` a few
    /// times a second.
    pub fn execute_timesteps(&mut self, total: u64, progress: impl FnMut(&Progress<'_>)) -> Result<Ga3cStats> {
        let length = RunLength {
            timesteps: total,
            episodes: None,
            pause_at: None,
        };
        self.execute_run(length, progress)
    }

    /// Runs until the whole run (earlier and resumed legs included) reaches `length`: its
    /// frames, its episodes or its pause, or the target return; schedules see the share of
    /// `length.timesteps` done, so a paused and resumed run follows the straight run's
    /// schedule. The agents step together, so a run stops a few frames past its mark. The
    /// progress reports count this leg's frames and episodes, and carry GA3C's rates, queue
    /// depths, policy lag and thread counts as gauges (`ga3c/...`).
    pub fn execute_run(&mut self, length: RunLength, mut progress: impl FnMut(&Progress<'_>)) -> Result<Ga3cStats> {
        let total = length.timesteps;
        let start = Instant::now();
        let learner = match self.learner.clone() {
            Some(learner) => learner,
            None => Arc::new(Mutex::new(self.algorithm.learner(
                &self.state_space,
                &self.action_space,
                self.seed,
            )?)),
        };
        let record = self.last_record.clone();
        self.resumed = record.clone();
        let first = {
            let mut learner = learner.lock().map_err(|_| poisoned("learner"))?;
            let first = learner.publish()?;
            append(&self.log, || Ok(LogRecord::published(&first)))?;
            first
        };
        let max = self.spec.max_counts();
        let mut adjuster = ThreadAdjuster::new(self.spec.initial_counts(), max, self.seed);
        let marks = (total, length.stop_at());
        let shared = Arc::new(Shared::new(adjuster.counts(), first, marks, self.on_divergence));
        // The counts go on from the checkpoint's.
        let c = &shared.counters;
        Counters::add(&c.frames, record.tally.timesteps);
        Counters::add(&c.trainings, record.tally.updates);
        Counters::add(&c.trained_frames, record.trained_frames);
        if let Ok(mut episodes) = c.episodes.lock() {
            episodes.clone_from(&record.tally.episodes);
        }
        self.learner = Some(learner.clone());
        let (reply_senders, reply_ends): (Vec<_>, Vec<_>) = (0..max.agents).map(|_| bounded(1)).unzip();
        let mut threads = Threads {
            handles: vec![],
            spawned: ThreadCounts {
                agents: 0,
                predictors: 0,
                trainers: 0,
            },
            requests: bounded(max.agents),
            training: bounded(self.spec.training_queue_capacity),
            replies: Arc::new(reply_senders),
            reply_ends: reply_ends.into_iter().map(Some).collect(),
        };
        let mut rounds = match self.evaluation.take() {
            Some(evaluation) => Some(GreedyRounds {
                evaluation,
                // Apart from the predictors' seeds (`seed + 1000 + j`).
                actor: self
                    .algorithm
                    .actor(&self.state_space, &self.action_space, self.seed + 999)?,
                memory_units: self.algorithm.memory_units(),
                seed: self.seed,
                done: record.tally.evaluations.clone(),
            }),
            None => None,
        };
        let outcome = self.watch(
            &mut threads,
            &shared,
            &learner,
            &mut adjuster,
            Watch {
                stop: length.stop_at(),
                episodes: length.episodes,
                start,
                from: record.tally.timesteps,
            },
            &mut rounds,
            &mut progress,
        );
        let evaluations = rounds
            .as_ref()
            .map_or(record.tally.evaluations.clone(), |r| r.done.clone());
        self.evaluation = rounds.map(|r| r.evaluation);
        shared.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let panicked = threads.handles.drain(..).map(JoinHandle::join).any(|j| j.is_err());
        if let Some(e) = shared.error.lock().ok().and_then(|mut e| e.take()) {
            return Err(e);
        }
        if panicked {
            return Err(CoreError::Config {
                at: "ga3c".into(),
                reason: "a thread panicked".into(),
            });
        }
        let (solved_at, queue_means) = outcome?;
        let c = &shared.counters;
        let mut guard = shared.divergence.lock().map_err(|_| poisoned("divergence guard"))?;
        let last = learner.lock().map_err(|_| poisoned("learner"))?;
        guard.check_weights(Counters::get(&c.frames), || last.executor().variables())?;
        drop(last);
        let episodes = c.episodes.lock().map(|e| e.clone()).unwrap_or_default();
        let trainings = Counters::get(&c.trainings);
        let mut worker = WorkerStats::from_returns(
            Counters::get(&c.frames),
            episodes.returns().to_vec(),
            trainings,
            start.elapsed().as_secs_f64(),
            solved_at,
        );
        worker.diverged_at_timestep = guard.diverged_at;
        // This leg's speed: its frames over its seconds.
        worker.env_frames_per_second =
            (worker.timesteps_executed - self.resumed.tally.timesteps) as f64 / worker.runtime_seconds.max(1e-9);
        self.last_record = RunRecord {
            tally: RunTally {
                timesteps: worker.timesteps_executed,
                updates: trainings,
                episodes,
                evaluations: evaluations.clone(),
            },
            trained_frames: Counters::get(&c.trained_frames),
        };
        worker.evaluations = evaluations;
        let stats = Ga3cStats {
            worker,
            predictions: Counters::get(&c.predictions),
            forward_passes: Counters::get(&c.forward_passes),
            trainings,
            trained_frames: Counters::get(&c.trained_frames),
            mean_prediction_queue: queue_means.0,
            mean_training_queue: queue_means.1,
            lag: c.lag.lock().map(|l| l.clone()).unwrap_or_default(),
            final_counts: adjuster.counts(),
            adjustments: adjuster.trajectory().to_vec(),
        };
        self.last_stats = Some(stats.clone());
        Ok(stats)
    }

    /// The main thread's loop: starts the threads, reports progress, adjusts the counts, and
    /// returns the step the run was solved at and the mean queue depths.
    #[allow(clippy::too_many_arguments)]
    fn watch(
        &self,
        threads: &mut Threads,
        shared: &Arc<Shared>,
        learner: &Arc<Mutex<Ga3cLearner<B>>>,
        adjuster: &mut ThreadAdjuster,
        Watch {
            stop,
            episodes,
            start,
            from,
        }: Watch,
        rounds: &mut Option<GreedyRounds<B>>,
        progress: &mut impl FnMut(&Progress<'_>),
    ) -> Result<(Option<u64>, (f64, f64))> {
        self.spawn_up_to(threads, shared, learner, adjuster.counts())?;
        let (mut queue_sums, mut samples) = ((0.0, 0.0), 0u64);
        // Rates count this leg's work only, not a resumed run's earlier legs.
        let mut window = (Instant::now(), self.resumed.trained_frames);
        let mut last_report = Instant::now();
        let mut watched_to = from;
        let c = &shared.counters;
        loop {
            std::thread::sleep(TICK);
            if shared.stopped() {
                return Ok((None, mean(queue_sums, samples)));
            }
            let frames = Counters::get(&c.frames);
            if let Some(r) = rounds.as_mut() {
                r.play_if_due(|| shared.board.latest(), watched_to, frames)?;
            }
            if let Some((_, path)) = self
                .checkpoints
                .as_ref()
                .filter(|(every, _)| frames / every > watched_to / every)
            {
                let prior = &self.resumed.tally.evaluations;
                save(learner, &record_now(shared, rounds, prior), path, &self.log)?;
            }
            watched_to = frames;
            // The earlier legs' rounds stand when this leg plays none.
            let evaluations = rounds
                .as_ref()
                .map_or(&self.resumed.tally.evaluations[..], |r| &r.done[..]);
            let (pq, tq) = (threads.requests.1.len(), threads.training.1.len());
            queue_sums = (queue_sums.0 + pq as f64, queue_sums.1 + tq as f64);
            samples += 1;
            let solved_now = match (rounds.as_ref(), self.target_return) {
                (Some(_), Some(target)) => evaluations.last().is_some_and(|e| e.mean_return >= target),
                _ => c.episodes.lock().is_ok_and(|e| solved(e.returns(), self.target_return)),
            };
            let over =
                frames >= stop || episodes.is_some_and(|e| c.episodes.lock().is_ok_and(|done| done.len() as u64 >= e));
            if last_report.elapsed() >= Duration::from_millis(200) || solved_now || over {
                last_report = Instant::now();
                // Copied only to report: the agents append to the list while the callback runs.
                let episodes = c.episodes.lock().map(|e| e.clone()).unwrap_or_default();
                let elapsed = start.elapsed().as_secs_f64().max(1e-9);
                let passes = Counters::get(&c.forward_passes);
                let predictions = Counters::get(&c.predictions);
                let trainings = Counters::get(&c.trainings);
                let gauges = [
                    ("ga3c/predictions_per_second", predictions as f64 / elapsed),
                    (
                        "ga3c/trainings_per_second",
                        (trainings - self.resumed.tally.updates) as f64 / elapsed,
                    ),
                    ("ga3c/mean_prediction_batch", predictions as f64 / passes.max(1) as f64),
                    ("ga3c/prediction_queue", pq as f64),
                    ("ga3c/training_queue", tq as f64),
                    (
                        "ga3c/mean_policy_lag",
                        c.lag.lock().map(|l| l.mean()).unwrap_or(f64::NAN),
                    ),
                    ("ga3c/agents", adjuster.counts().agents as f64),
                    ("ga3c/predictors", adjuster.counts().predictors as f64),
                    ("ga3c/trainers", adjuster.counts().trainers as f64),
                ];
                // This leg's frames and episodes, as every worker reports them.
                let leg = episodes
                    .returns()
                    .get(self.resumed.tally.episodes.len()..)
                    .unwrap_or_default();
                progress(&Progress {
                    timesteps: frames.saturating_sub(from),
                    episodes: leg.len() as u64,
                    episode_rewards: leg,
                    loss: (trainings > 0)
                        .then(|| f64::from_bits(c.last_loss.load(std::sync::atomic::Ordering::Relaxed))),
                    elapsed,
                    evaluations,
                    gauges: &gauges,
                });
            }
            if solved_now {
                return Ok((Some(frames), mean(queue_sums, samples)));
            }
            if over {
                return Ok((None, mean(queue_sums, samples)));
            }
            let seconds = window.0.elapsed().as_secs_f64();
            if self.spec.dynamic_adjustment && seconds >= self.spec.adjustment_period_seconds {
                let trained = Counters::get(&c.trained_frames);
                let tps = (trained - window.1) as f64 / seconds;
                let counts = adjuster.observe(tps, start.elapsed().as_secs_f64());
                self.spawn_up_to(threads, shared, learner, counts)?;
                window = (Instant::now(), trained);
            }
        }
    }

    /// Sets the active counts to `counts`, first starting any threads not yet spawned.
    fn spawn_up_to(
        &self,
        t: &mut Threads,
        shared: &Arc<Shared>,
        learner: &Arc<Mutex<Ga3cLearner<B>>>,
        counts: ThreadCounts,
    ) -> Result<()> {
        while t.spawned.agents < counts.agents {
            let index = t.spawned.agents;
            let seed = self.seed + index as u64;
            let role = AgentRole {
                index,
                env: make(&self.env_id, seed).map_err(|e| CoreError::Config {
                    at: format!("ga3c agent {index}"),
                    reason: e.to_string(),
                })?,
                seed,
                requests: t.requests.0.clone(),
                replies: t.reply_ends[index].take().ok_or_else(|| CoreError::Config {
                    at: format!("ga3c agent {index}"),
                    reason: "its reply channel was taken twice".into(),
                })?,
                training: t.training.0.clone(),
                segment: self.algorithm.segment_length(self.spec.t_max),
                memory_units: self.algorithm.memory_units(),
            };
            t.handles.push(spawn(shared, move |s| role.run(s)));
            t.spawned.agents += 1;
        }
        while t.spawned.predictors < counts.predictors {
            let index = t.spawned.predictors;
            let seed = self.seed + 1000 + index as u64;
            let role = PredictorRole {
                index,
                actor: self.algorithm.actor(&self.state_space, &self.action_space, seed)?,
                requests: t.requests.1.clone(),
                replies: t.replies.clone(),
                max_batch: self.spec.prediction_batch_size,
            };
            t.handles.push(spawn(shared, move |s| role.run(s)));
            t.spawned.predictors += 1;
        }
        while t.spawned.trainers < counts.trainers {
            let role = TrainerRole {
                index: t.spawned.trainers,
                learner: learner.clone(),
                log: self.log.clone(),
                training: t.training.1.clone(),
                min_batch: self
                    .spec
                    .training_min_batch_size
                    .unwrap_or_else(|| self.algorithm.default_min_batch()),
            };
            t.handles.push(spawn(shared, move |s| role.run(s)));
            t.spawned.trainers += 1;
        }
        shared.set_counts(counts);
        Ok(())
    }
}

impl<B: Backend> Worker for Ga3cExecutor<B> {
    fn execute_run(&mut self, length: RunLength, progress: &mut dyn FnMut(&Progress<'_>)) -> Result<WorkerStats> {
        let run = Ga3cExecutor::execute_run(self, length, progress)?.worker;
        Ok(self.resumed.tally.leg_of(&run))
    }

    fn save_checkpoint(&mut self, path: &Path) -> Result<()> {
        Ga3cExecutor::save_checkpoint(self, path)
    }

    fn resume(&mut self, path: &Path) -> Result<()> {
        Ga3cExecutor::resume(self, path)
    }

    fn tally(&self) -> &RunTally {
        &self.last_record.tally
    }
}

/// How long a run goes: its frames in all, when this leg started, and the frames it
/// started from.
struct Watch {
    /// The frames the run stops at (its end, or its pause).
    stop: u64,
    /// The episodes the run stops at, if any.
    episodes: Option<u64>,
    start: Instant,
    from: u64,
}

/// The checkpoint part that holds a run's counts and results.
pub(crate) const RUN_PART: &str = "ga3c";

/// The run's counts and results now (`prior`: the rounds of the run resumed from, which stand
/// when this leg plays none).
fn record_now<B: Backend>(shared: &Shared, rounds: &Option<GreedyRounds<B>>, prior: &[Evaluated]) -> RunRecord {
    let c = &shared.counters;
    // Trained frames are read before frames, so they never exceed them in the record.
    let (trainings, trained_frames) = (Counters::get(&c.trainings), Counters::get(&c.trained_frames));
    RunRecord {
        tally: RunTally {
            timesteps: Counters::get(&c.frames),
            updates: trainings,
            episodes: c.episodes.lock().map(|e| e.clone()).unwrap_or_default(),
            evaluations: rounds.as_ref().map_or_else(|| prior.to_vec(), |r| r.done.clone()),
        },
        trained_frames,
    }
}

/// Saves `learner` with `record` beside it, logged first where the run records.
fn save<B: Backend>(learner: &Mutex<Ga3cLearner<B>>, record: &RunRecord, path: &Path, log: &RunLog) -> Result<()> {
    let learner = learner.lock().map_err(|_| poisoned("learner"))?;
    if let Some(log) = log.lock().map_err(|_| poisoned("learner log"))?.as_mut() {
        log.checkpointed(learner.updates(), record.save_state()?.meta)
            .map_err(core_error)?;
    }
    learner.save_checkpoint(path, vec![(RUN_PART, record)], &[])
}

fn spawn(shared: &Arc<Shared>, body: impl FnOnce(&Shared) + Send + 'static) -> JoinHandle<()> {
    let shared = shared.clone();
    std::thread::spawn(move || body(&shared))
}

fn mean(sums: (f64, f64), n: u64) -> (f64, f64) {
    let n = n.max(1) as f64;
    (sums.0 / n, sums.1 / n)
}

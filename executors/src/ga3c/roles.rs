//! The three kinds of GA3C threads and what they share: agents step environments and wait
//! for predictions, predictors batch the waiting states into forward passes, trainers
//! batch experience into updates of the one learner.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agents::{
    memory_rows, memory_value, Actor, GraphActor, Segment, SegmentLearner, StepMemory, Transition, WeightSnapshot,
};
use crossbeam_channel::{Receiver, RecvTimeoutError, SendTimeoutError, Sender};
use rlgraph_core::spaces::{Array, Value};
use rlgraph_core::{Backend, CoreError, Result};
use rlgraph_envs::Env;

use super::metrics::Counters;
use super::segment_value::segments_to_value;
use super::spec::ThreadCounts;
use crate::distributed::core_error;
use crate::divergence::{DivergenceGuard, OnDivergence};
use crate::input_log::{LogRecord, LogWriter};

/// How long a blocked thread waits before it looks at the stop flag again.
const POLL: Duration = Duration::from_millis(5);

/// What every thread shares.
pub(crate) struct Shared {
    /// Set once: every thread returns.
    pub stop: AtomicBool,
    /// The first error a thread met (it also sets `stop`).
    pub error: Mutex<Option<CoreError>>,
    pub counters: Counters,
    /// Threads whose index is at or above their role's count pause.
    active: [AtomicUsize; 3],
    /// The latest published weights.
    pub board: SnapshotBoard,
    /// The run's length in frames, for the schedules' time percentage.
    pub total_frames: u64,
    /// The frames at which agents stop stepping (the run's end or its pause), so a run
    /// ends a step per agent past its mark however late the watcher looks.
    stop_frames: u64,
    /// Watches every trainer's losses.
    pub divergence: Mutex<DivergenceGuard>,
}

impl Shared {
    /// Shared state for a run of `total_frames` that stops stepping at `stop_frames`.
    pub fn new(
        counts: ThreadCounts,
        first: WeightSnapshot,
        (total_frames, stop_frames): (u64, u64),
        on_divergence: OnDivergence,
    ) -> Self {
        let shared = Shared {
            stop: AtomicBool::new(false),
            error: Mutex::new(None),
            counters: Counters::default(),
            active: Default::default(),
            board: SnapshotBoard::new(first),
            total_frames: total_frames.max(1),
            stop_frames,
            divergence: Mutex::new(DivergenceGuard::new(on_divergence)),
        };
        shared.set_counts(counts);
        shared
    }

    pub fn set_counts(&self, c: ThreadCounts) {
        for (slot, n) in self.active.iter().zip([c.agents, c.predictors, c.trainers]) {
            slot.store(n, Ordering::Relaxed);
        }
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Records `error` (the first one wins) and stops every thread.
    pub fn fail(&self, error: CoreError) {
        if let Ok(mut slot) = self.error.lock() {
            slot.get_or_insert(error);
        }
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Waits while thread `index` of `role` (0 agents, 1 predictors, 2 trainers) is paused,
    /// and agents while the run is past its stop mark; false once the run stops.
    fn wait_active(&self, role: usize, index: usize) -> bool {
        let past_mark = || role == 0 && Counters::get(&self.counters.frames) >= self.stop_frames;
        while index >= self.active[role].load(Ordering::Relaxed) || past_mark() {
            if self.stopped() {
                return false;
            }
            std::thread::sleep(POLL);
        }
        !self.stopped()
    }

    fn time_percentage(&self) -> f64 {
        (Counters::get(&self.counters.frames) as f64 / self.total_frames as f64).min(1.0)
    }
}

/// The latest weight snapshot, where predictors look for newer weights before each batch.
pub(crate) struct SnapshotBoard {
    version: AtomicU64,
    latest: Mutex<Arc<WeightSnapshot>>,
}

impl SnapshotBoard {
    fn new(first: WeightSnapshot) -> Self {
        SnapshotBoard {
            version: AtomicU64::new(first.version),
            latest: Mutex::new(Arc::new(first)),
        }
    }

    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    fn put(&self, snapshot: WeightSnapshot) -> Result<()> {
        let version = snapshot.version;
        *self.latest.lock().map_err(|_| poisoned("snapshot board"))? = Arc::new(snapshot);
        self.version.store(version, Ordering::Release);
        Ok(())
    }

    pub(crate) fn latest(&self) -> Result<Arc<WeightSnapshot>> {
        Ok(self.latest.lock().map_err(|_| poisoned("snapshot board"))?.clone())
    }
}

/// The error for a lock that a panicking thread left poisoned.
pub(crate) fn poisoned(what: &str) -> CoreError {
    CoreError::Config {
        at: format!("ga3c {what}"),
        reason: "another thread panicked while holding it".into(),
    }
}

/// An agent's state waiting for an action, with a recurrent policy's memory to act from.
pub(crate) struct Request {
    pub agent: usize,
    pub state: Value,
    pub memory: Option<StepMemory>,
}

/// A predicted action, with what the agent records beside it and a recurrent policy's memory
/// after the step.
pub(crate) struct Reply {
    action: Value,
    log_prob: f64,
    version: u64,
    memory: Option<Vec<f32>>,
}

/// What an agent thread needs.
pub(crate) struct AgentRole {
    pub index: usize,
    pub env: Box<dyn Env>,
    pub seed: u64,
    pub requests: Sender<Request>,
    pub replies: Receiver<Reply>,
    pub training: Sender<Segment>,
    /// Steps per segment, and whether an episode's end cuts one short.
    pub segment: (usize, bool),
    /// A recurrent policy's LSTM units: the agent carries its memory from step to step.
    pub memory_units: Option<usize>,
}

impl AgentRole {
    /// Steps the environment until the run stops; errors stop the run.
    pub fn run(mut self, shared: &Shared) {
        if let Err(e) = self.steps(shared) {
            shared.fail(e);
        }
    }

    fn steps(&mut self, shared: &Shared) -> Result<()> {
        let (length, cut_at_end) = self.segment;
        let env_failed = |e: rlgraph_envs::EnvError| CoreError::Config {
            at: format!("ga3c agent {}", self.index),
            reason: e.to_string(),
        };
        let mut state = self.env.reset(Some(self.seed)).map_err(env_failed)?;
        let mut segment = Segment::default();
        let mut episode_return = 0.0;
        // What the next step acts from: a zero memory at an episode's start.
        let fresh = |units: usize| StepMemory {
            memory: vec![0.0; 2 * units],
            start: true,
        };
        let mut memory = self.memory_units.map(fresh);
        while shared.wait_active(0, self.index) {
            let request = Request {
                agent: self.index,
                state: state.clone(),
                memory: memory.clone(),
            };
            if self.requests.send(request).is_err() {
                return Ok(());
            }
            let Some(reply) = receive(&self.replies, shared) else {
                return Ok(());
            };
            let step = self.env.step(&reply.action).map_err(env_failed)?;
            Counters::add(&shared.counters.frames, 1);
            episode_return += step.reward;
            let done = step.terminated || step.truncated;
            segment.transitions.push(Transition {
                state: std::mem::replace(&mut state, step.observation),
                action: reply.action,
                reward: step.reward,
                terminated: step.terminated,
                truncated: step.truncated,
                next_state: state.clone(),
            });
            segment.log_probs.push(reply.log_prob);
            segment.versions.push(reply.version);
            if let Some(acted_from) = memory.take() {
                segment.memories.push(acted_from);
                memory = match (done, reply.memory) {
                    (true, _) => self.memory_units.map(fresh),
                    (false, Some(after)) => Some(StepMemory {
                        memory: after,
                        start: false,
                    }),
                    (false, None) => {
                        return Err(CoreError::Config {
                            at: format!("ga3c agent {}", self.index),
                            reason: "the predictor gave back no LSTM memory for a recurrent policy".into(),
                        })
                    }
                };
            }
            if done {
                shared
                    .counters
                    .episodes
                    .lock()
                    .map_err(|_| poisoned("episode list"))?
                    .push(episode_return, Counters::get(&shared.counters.frames));
                episode_return = 0.0;
                state = self.env.reset(None).map_err(env_failed)?;
            }
            if segment.len() >= length || (done && cut_at_end) {
                let mut full = std::mem::take(&mut segment);
                loop {
                    match self.training.send_timeout(full, POLL) {
                        Ok(()) => break,
                        Err(SendTimeoutError::Timeout(back)) if !shared.stopped() => full = back,
                        Err(_) => return Ok(()),
                    }
                }
            }
        }
        Ok(())
    }
}

/// The next message, or `None` once the run stops or the sender is gone.
fn receive<T>(from: &Receiver<T>, shared: &Shared) -> Option<T> {
    loop {
        match from.recv_timeout(POLL) {
            Ok(m) => return Some(m),
            Err(RecvTimeoutError::Timeout) if !shared.stopped() => {}
            Err(_) => return None,
        }
    }
}

/// What a predictor thread needs.
pub(crate) struct PredictorRole<B: Backend> {
    pub index: usize,
    pub actor: GraphActor<B>,
    pub requests: Receiver<Request>,
    /// Every agent's reply channel, by agent index.
    pub replies: Arc<Vec<Sender<Reply>>>,
    pub max_batch: usize,
}

impl<B: Backend> PredictorRole<B> {
    /// Runs batched forward passes until the run stops; errors stop the run.
    pub fn run(mut self, shared: &Shared) {
        if let Err(e) = self.predict(shared) {
            shared.fail(e);
        }
    }

    fn predict(&mut self, shared: &Shared) -> Result<()> {
        let mut batch = Vec::with_capacity(self.max_batch);
        let mut states = Vec::with_capacity(self.max_batch);
        while shared.wait_active(1, self.index) {
            let first = match self.requests.recv_timeout(POLL) {
                Ok(r) => r,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            };
            // GA3C's predictor: the first state blocks, the rest are whatever else waits.
            batch.push(first);
            while batch.len() < self.max_batch {
                match self.requests.try_recv() {
                    Ok(r) => batch.push(r),
                    Err(_) => break,
                }
            }
            if shared.board.version() > self.actor.version().unwrap_or(0) {
                let latest = shared.board.latest()?;
                self.actor.load(&latest)?;
            }
            let version = self.actor.version().unwrap_or(0);
            states.extend(
                batch
                    .iter_mut()
                    .map(|r| std::mem::replace(&mut r.state, Value::f32(0.0))),
            );
            let (acted, memories) = self.act(&batch, &states, shared)?;
            states.clear();
            let log_probs = match acted.extras.get("behaviour_log_probs") {
                Some(v) => floats(v)?,
                None => vec![0.0; batch.len()],
            };
            Counters::add(&shared.counters.predictions, batch.len() as u64);
            Counters::add(&shared.counters.forward_passes, 1);
            let mut memories = memories.into_iter();
            for ((request, action), log_prob) in batch.drain(..).zip(acted.actions).zip(log_probs) {
                let reply = Reply {
                    action,
                    log_prob,
                    version,
                    memory: memories.next(),
                };
                // An agent gone (the run stopping) drops its reply.
                if let Some(to) = self.replies.get(request.agent) {
                    let _ = to.send(reply);
                }
            }
        }
        Ok(())
    }
}

impl<B: Backend> PredictorRole<B> {
    /// One forward pass for the batch's `states`; a recurrent policy acts from each request's
    /// memory and gives back each one's memory after the step.
    fn act(&mut self, batch: &[Request], states: &[Value], shared: &Shared) -> Result<(agents::Acted, Vec<Vec<f32>>)> {
        let memories: Option<Vec<&StepMemory>> = batch.iter().map(|r| r.memory.as_ref()).collect();
        let Some(memories) = memories.filter(|m| !m.is_empty()) else {
            return Ok((self.actor.act(states, true, shared.time_percentage())?, vec![]));
        };
        let units = memories[0].memory.len() / 2;
        let memory = memory_value(memories.iter().map(|m| m.memory.as_slice()), units)?;
        let starts = Value::Bool(Array::new(
            [memories.len()],
            memories.iter().map(|m| m.start).collect(),
        )?);
        let (acted, after) = self.actor.act_with_memory(states, [memory, starts], true)?;
        Ok((acted, memory_rows(&after, units)?))
    }
}

fn floats(v: &Value) -> Result<Vec<f64>> {
    match v {
        Value::Float32(a) => Ok(a.data().iter().map(|&x| x as f64).collect()),
        Value::Float64(a) => Ok(a.data().to_vec()),
        other => Err(CoreError::Config {
            at: "ga3c predictor".into(),
            reason: format!("behaviour_log_probs came back as {}", other.kind_name()),
        }),
    }
}

/// The one learner the trainers share.
pub(crate) type Ga3cLearner<B> = Box<dyn SegmentLearner<B>>;

/// What a trainer thread needs.
pub(crate) struct TrainerRole<B: Backend> {
    pub index: usize,
    pub learner: Arc<Mutex<Ga3cLearner<B>>>,
    pub log: RunLog,
    pub training: Receiver<Segment>,
    pub min_batch: usize,
}

impl<B: Backend> TrainerRole<B> {
    /// Gathers segments into updates until the run stops; errors stop the run.
    pub fn run(self, shared: &Shared) {
        if let Err(e) = self.train(shared) {
            shared.fail(e);
        }
    }

    fn train(&self, shared: &Shared) -> Result<()> {
        let mut pending: Vec<Segment> = vec![];
        let mut frames = 0;
        while shared.wait_active(2, self.index) {
            match self.training.recv_timeout(POLL) {
                Ok(s) => {
                    frames += s.len();
                    pending.push(s);
                }
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            }
            if frames < self.min_batch {
                continue;
            }
            let (loss, lags) = {
                let mut learner = self.learner.lock().map_err(|_| poisoned("learner"))?;
                // The learner's weights are the last version published: the lag of a step is
                // how many versions its action's weights are behind them.
                let now = shared.board.version();
                let lags: Vec<u64> = pending
                    .iter()
                    .flat_map(|s| s.versions.iter().map(move |&v| now.saturating_sub(v)))
                    .collect();
                let t = shared.time_percentage();
                let loss = learner.learn_segments(&pending, t)?;
                append(&self.log, || {
                    Ok(LogRecord::Learned {
                        time_percentage: t,
                        loss,
                        updates: learner.updates(),
                        batch: segments_to_value(&pending)?,
                    })
                })?;
                // Checked before publishing, so that a stopped run never hands its agents
                // NaN weights; the step is the environment frames so far.
                shared
                    .divergence
                    .lock()
                    .map_err(|_| poisoned("divergence guard"))?
                    .check_loss(Counters::get(&shared.counters.frames), loss, || {
                        learner.executor().variables()
                    })?;
                let snapshot = learner.publish()?;
                append(&self.log, || Ok(LogRecord::published(&snapshot)))?;
                shared.board.put(snapshot)?;
                (loss, lags)
            };
            let mut histogram = shared.counters.lag.lock().map_err(|_| poisoned("lag histogram"))?;
            for lag in lags {
                histogram.record(lag);
            }
            drop(histogram);
            shared.counters.last_loss.store(loss.to_bits(), Ordering::Relaxed);
            Counters::add(&shared.counters.trainings, 1);
            Counters::add(&shared.counters.trained_frames, frames as u64);
            pending.clear();
            frames = 0;
        }
        Ok(())
    }
}

/// The run's learner input log, where it records one: shared by the trainers, which append
/// while they hold the learner, so the log has the order the learner saw.
pub(crate) type RunLog = Arc<Mutex<Option<LogWriter>>>;

/// Appends the record `make` makes to `log`, where the run records.
pub(crate) fn append(log: &RunLog, make: impl FnOnce() -> Result<LogRecord>) -> Result<()> {
    match log.lock().map_err(|_| poisoned("learner log"))?.as_mut() {
        Some(log) => log.append(&make()?).map_err(core_error),
        None => Ok(()),
    }
}

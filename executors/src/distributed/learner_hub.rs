//! The learner's face to actors: the latest weight snapshot out, actors' progress in. The
//! learning thread publishes into it and drains it; the gRPC service reads and fills it.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use agents::WeightSnapshot;
use rlgraph_core::spaces::{Space, Value};
use tonic::{Request, Response, Status};

use super::proto::learner_server;
use super::proto::{
    ActorReport, DescribeRequest, Description, Nest, ReportReply, RolloutReply, RolloutRequest, WeightsReply,
    WeightsRequest,
};
use super::wire::{decode_value, describe, encode_weights};

/// How long an Ape-X actor's pull waits for the learner to publish fresher weights; after
/// it, the pull gets the latest published (a learner busy saving a checkpoint or playing an
/// evaluation round does not hold actors up).
pub const PULL_WAIT: std::time::Duration = std::time::Duration::from_millis(250);

/// IMPALA's bounded queue of rollouts at the learner.
#[derive(Debug)]
struct Inbox {
    /// The space of one rollout.
    space: Space,
    /// Each rollout with the weight version that acted it.
    queue: VecDeque<(Value, u64)>,
    capacity: usize,
    refused: u64,
}

/// What actors reported and the learner has not taken yet.
#[derive(Debug, Default)]
pub struct Reports {
    /// Environment frames stepped by all actors.
    pub frames: u64,
    /// Returns of finished episodes, in the order they arrived.
    pub episode_returns: Vec<f64>,
    /// Per actor: the weight version it acted with at its last report.
    pub actor_versions: BTreeMap<u32, u64>,
}

/// The state shared by the learning thread and the service.
#[derive(Debug)]
struct Shared {
    /// The last published snapshot, encoded once.
    snapshot: Option<Arc<(u64, Nest)>>,
    reports: Reports,
    time_percentage: f64,
    /// Frames reported over the whole run.
    frames_total: u64,
    /// Frames the learner lets the actors step before they pause (`u64::MAX`: no limit).
    frame_budget: u64,
    /// IMPALA's rollouts (`None` for Ape-X, whose records go to the shards).
    inbox: Option<Inbox>,
}

impl Default for Shared {
    fn default() -> Self {
        Shared {
            snapshot: None,
            reports: Reports::default(),
            time_percentage: 0.0,
            frames_total: 0,
            frame_budget: u64::MAX,
            inbox: None,
        }
    }
}

/// The shared state between the learning thread and the learner's gRPC service.
#[derive(Clone)]
pub struct LearnerHub {
    shared: Arc<Mutex<Shared>>,
    /// An actor asked for weights since the last publication.
    wanted: Arc<AtomicBool>,
    /// Woken at every publication, when the learner has nothing newer, and when the run
    /// stops (actors' pulls wait on it for fresher weights).
    published: Arc<tokio::sync::Notify>,
    /// How long a pull waits for the learner's answer to it ([`PULL_WAIT`] for Ape-X; none
    /// for IMPALA, whose learner publishes after every update).
    pull_wait: std::time::Duration,
    /// The run is over: actors are told to stop.
    stopping: Arc<AtomicBool>,
    /// The largest message the server takes or sends (set when it starts serving).
    pub(crate) max_message_bytes: usize,
}

impl Default for LearnerHub {
    /// Ape-X's hub: pulls wait up to [`PULL_WAIT`] for the learner to publish.
    fn default() -> Self {
        LearnerHub {
            shared: Arc::default(),
            wanted: Arc::default(),
            published: Arc::default(),
            pull_wait: PULL_WAIT,
            stopping: Arc::default(),
            max_message_bytes: 0,
        }
    }
}

impl LearnerHub {
    /// The same hub with pulls that wait up to `wait` for the learner's answer.
    pub fn with_pull_wait(mut self, wait: std::time::Duration) -> Self {
        self.pull_wait = wait;
        self
    }

    /// A hub that queues up to `capacity` rollouts of `rollout_space` (IMPALA's learner,
    /// which publishes after every update: its pulls take what is there and do not wait).
    pub fn with_rollouts(rollout_space: &Space, capacity: usize) -> Self {
        let hub = LearnerHub::default().with_pull_wait(std::time::Duration::ZERO);
        hub.lock().inbox = Some(Inbox {
            space: rollout_space.clone(),
            queue: VecDeque::new(),
            capacity: capacity.max(1),
            refused: 0,
        });
        hub
    }

    /// Takes `n` queued rollouts, oldest first, each with the weight version that acted it,
    /// if that many are queued.
    pub fn take_rollouts(&self, n: usize) -> Option<Vec<(Value, u64)>> {
        let mut shared = self.lock();
        let inbox = shared.inbox.as_mut()?;
        (inbox.queue.len() >= n).then(|| inbox.queue.drain(..n).collect())
    }

    /// Rollouts queued, and rollouts refused as malformed so far.
    pub fn rollout_counts(&self) -> (usize, u64) {
        self.lock()
            .inbox
            .as_ref()
            .map_or((0, 0), |i| (i.queue.len(), i.refused))
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        // A panic elsewhere while holding the lock leaves plain counters behind; they are
        // still usable.
        self.shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Makes `snapshot` the one actors receive, and hands it to the pulls waiting for it.
    pub fn publish(&self, snapshot: &WeightSnapshot) {
        let encoded = Arc::new((snapshot.version, encode_weights(&snapshot.weights)));
        self.lock().snapshot = Some(encoded);
        self.published.notify_waiters();
    }

    /// Wakes the pulls waiting for the learner without a new version: it has learned
    /// nothing since its last publication, so the version there is the freshest.
    pub fn answer_pulls(&self) {
        self.published.notify_waiters();
    }

    /// Asks the learner for weights and waits until it answers (a version newer than the one
    /// there now, or word that there is nothing newer), the run stops, or the hub's pull wait
    /// passes, whichever comes first.
    async fn ask_learner(&self) {
        let seen = self.version();
        let notified = self.published.notified();
        tokio::pin!(notified);
        // Registered before asking, so an answer that comes at once is not missed.
        notified.as_mut().enable();
        self.wanted.store(true, Ordering::Relaxed);
        if self.pull_wait.is_zero() || self.version() > seen || self.stopping.load(Ordering::Relaxed) {
            return;
        }
        let _ = tokio::time::timeout(self.pull_wait, notified).await;
    }

    /// Whether an actor asked for weights since the last call (and clears the request).
    pub fn take_wanted(&self) -> bool {
        self.wanted.swap(false, Ordering::Relaxed)
    }

    /// Takes what actors reported since the last call.
    pub fn drain(&self) -> Reports {
        let mut shared = self.lock();
        let versions = shared.reports.actor_versions.clone();
        let mut taken = std::mem::take(&mut shared.reports);
        shared.reports.actor_versions = versions.clone();
        taken.actor_versions = versions;
        taken
    }

    /// The run's progress (0 to 1) that actors use for their exploration schedules.
    pub fn set_time_percentage(&self, t: f64) {
        self.lock().time_percentage = t;
    }

    /// The run's frames so far (from a checkpoint) and how far actors may step before they
    /// pause for the learner.
    pub fn set_frames(&self, frames_total: u64, frame_budget: u64) {
        let mut shared = self.lock();
        shared.frames_total = frames_total;
        shared.frame_budget = frame_budget;
    }

    /// Tells actors, from their next call on, that the run is over.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::Relaxed);
        self.published.notify_waiters();
    }

    /// The last published version (0 before the first).
    pub fn version(&self) -> u64 {
        self.lock().snapshot.as_ref().map_or(0, |s| s.0)
    }
}

#[tonic::async_trait]
impl learner_server::Learner for LearnerHub {
    async fn get_weights(&self, request: Request<WeightsRequest>) -> Result<Response<WeightsReply>, Status> {
        let have = request.into_inner().have_version;
        // The learner publishes when asked, after the update it is doing: wait for that, so
        // the weights sent are at most one update old.
        self.ask_learner().await;
        let snapshot = self.lock().snapshot.clone();
        let Some(snapshot) = snapshot else {
            return Err(Status::unavailable("the learner has published no weights yet"));
        };
        let (version, nest) = &*snapshot;
        Ok(Response::new(WeightsReply {
            version: *version,
            // Cloned outside the lock: a large network's bytes must not hold up reports.
            weights: (*version != have).then(|| nest.clone()),
        }))
    }

    async fn report(&self, request: Request<ActorReport>) -> Result<Response<ReportReply>, Status> {
        let report = request.into_inner();
        if let Some(r) = report.episode_returns.iter().find(|r| !r.is_finite()) {
            return Err(Status::invalid_argument(format!(
                "actor {}: an episode return of {r} is not finite",
                report.actor
            )));
        }
        let mut shared = self.lock();
        shared.reports.frames = shared.reports.frames.saturating_add(report.frames);
        shared.frames_total = shared.frames_total.saturating_add(report.frames);
        shared.reports.episode_returns.extend(&report.episode_returns);
        shared
            .reports
            .actor_versions
            .insert(report.actor, report.weight_version);
        Ok(Response::new(ReportReply {
            stop: self.stopping.load(Ordering::Relaxed),
            time_percentage: shared.time_percentage,
            learner_version: shared.snapshot.as_ref().map_or(0, |s| s.0),
            pause: shared.frames_total >= shared.frame_budget,
        }))
    }

    async fn describe(&self, _: Request<DescribeRequest>) -> Result<Response<Description>, Status> {
        let space = self.lock().inbox.as_ref().map(|inbox| inbox.space.clone());
        Ok(Response::new(describe(
            "learner",
            space.as_ref(),
            self.max_message_bytes,
            0,
        )))
    }

    async fn push_rollout(&self, request: Request<RolloutRequest>) -> Result<Response<RolloutReply>, Status> {
        let request = request.into_inner();
        let full = || Status::resource_exhausted("the learner's rollout queue is full; send it again later");
        let space = {
            let shared = self.lock();
            match shared.inbox.as_ref() {
                None => {
                    return Err(Status::failed_precondition(
                        "this learner takes no rollouts: Ape-X actors send records to the replay shards",
                    ))
                }
                Some(inbox) if inbox.queue.len() >= inbox.capacity => return Err(full()),
                Some(inbox) => inbox.space.clone(),
            }
        };
        // Decoded and checked outside the lock: reports and weights need not wait for it.
        let decoded = request
            .rollout
            .as_ref()
            .ok_or_else(|| Status::invalid_argument("a rollout request carries no rollout"))
            .and_then(|nest| decode_value(nest, &space).map_err(Status::from));
        let mut shared = self.lock();
        let Some(inbox) = shared.inbox.as_mut() else {
            return Err(Status::internal("the learner's rollout queue went away"));
        };
        match decoded {
            Ok(_) if inbox.queue.len() >= inbox.capacity => Err(full()),
            Ok(rollout) => {
                inbox.queue.push_back((rollout, request.weight_version));
                Ok(Response::new(RolloutReply {
                    queue_depth: inbox.queue.len() as u64,
                }))
            }
            Err(status) => {
                inbox.refused += 1;
                super::log(&format!(
                    "learner: refused a rollout of actor {}: {}",
                    request.actor,
                    status.message()
                ));
                Err(status)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::{Duration, Instant};

    use agents::WeightSnapshot;
    use rlgraph_core::{HostData, HostTensor};
    use tonic::Request;

    use super::super::proto::learner_server::Learner;
    use super::super::proto::WeightsRequest;
    use super::{LearnerHub, PULL_WAIT};

    fn snapshot(version: u64) -> WeightSnapshot {
        let w = HostTensor {
            shape: vec![1],
            data: HostData::F32(vec![version as f32]),
        };
        WeightSnapshot {
            version,
            weights: BTreeMap::from([("w".to_string(), w)]),
        }
    }

    fn pull(hub: &LearnerHub, have: u64) -> u64 {
        let request = Request::new(WeightsRequest {
            have_version: have,
            actor: 0,
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(hub.get_weights(request)).unwrap().into_inner().version
    }

    /// A learner on a thread of its own that answers the first pull it sees by `answer`.
    fn learner(hub: &LearnerHub, answer: fn(&LearnerHub)) -> std::thread::JoinHandle<()> {
        let hub = hub.clone();
        std::thread::spawn(move || {
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(60) {
                if hub.take_wanted() {
                    // The update in progress.
                    std::thread::sleep(Duration::from_millis(20));
                    answer(&hub);
                    return;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    }

    #[test]
    fn a_pull_waits_for_the_learners_answer_to_it() {
        // A long wait, so only the learner's answer ends these pulls.
        let hub = LearnerHub::default().with_pull_wait(Duration::from_secs(60));
        hub.publish(&snapshot(1));
        // The pull gets the version published after it asked, not the one there when it asked.
        let publishing = learner(&hub, |hub| hub.publish(&snapshot(hub.version() + 1)));
        assert_eq!(pull(&hub, 1), 2);
        publishing.join().unwrap();
        // A learner with nothing newer says so, and the pull takes the version there.
        let answering = learner(&hub, LearnerHub::answer_pulls);
        assert_eq!(pull(&hub, 2), 2);
        answering.join().unwrap();
        // The run's end ends a waiting pull too.
        let stopping = learner(&hub, LearnerHub::stop);
        assert_eq!(pull(&hub, 2), 2);
        stopping.join().unwrap();
    }

    #[test]
    fn a_pull_nobody_answers_gives_up_after_its_wait_and_impalas_do_not_wait() {
        let hub = LearnerHub::default().with_pull_wait(Duration::from_millis(50));
        hub.publish(&snapshot(1));
        let started = Instant::now();
        assert_eq!(pull(&hub, 1), 1);
        assert!(
            started.elapsed() >= Duration::from_millis(50),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(LearnerHub::default().pull_wait, PULL_WAIT);
        let space = rlgraph_core::spaces::Space::from(rlgraph_core::spaces::FloatBox::new([1]));
        assert!(LearnerHub::with_rollouts(&space, 4).pull_wait.is_zero());
    }
}

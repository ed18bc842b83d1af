//! An actor's line to the learner: weights by version, progress reports (which pause the
//! actor while it is ahead of the learner), and IMPALA's rollouts, each call with a deadline,
//! retried with backoff while the learner is away, until it has been silent for `give_up`.

use std::time::{Duration, Instant};

use agents::{Actor, WeightSnapshot};

use super::access::Access;
use super::actor_env::ActorEnvs;
use super::cluster::{ClusterSpec, Role};
use super::error::DistributedError;
use super::peers::{call_failed, learner_client, LearnerClient};
use super::proto::{ActorReport, ReportReply, RolloutRequest, WeightsRequest};
use super::wire::decode_weights;
use super::{ActorOptions, ActorSummary};

/// The actor's client of the learner and the runtime its calls run on.
pub(crate) struct LearnerLink {
    pub(crate) runtime: tokio::runtime::Runtime,
    addr: String,
    client: LearnerClient,
    /// When the learner last answered.
    last_answer: Instant,
    /// Whether the last call went unanswered.
    out_of_touch: bool,
    /// Outages the learner came back from: calls answered after one went unanswered.
    pub(crate) reconnects: u64,
    give_up: Duration,
    /// The actor's name in messages (`actor 3`).
    pub(crate) tag: String,
}

/// Work an actor does while the learner holds it paused, on the link's runtime.
pub(crate) type WhilePaused<'a> = dyn FnMut(&tokio::runtime::Runtime) -> Result<(), DistributedError> + 'a;

/// What became of a rollout sent to the learner.
pub(crate) enum Pushed {
    /// Queued.
    Taken,
    /// The learner's queue is full: send it again later.
    QueueFull,
    /// The learner did not answer.
    Unanswered,
    /// The learner refused the rollout itself: sending it again would not help.
    Refused(DistributedError),
}

impl LearnerLink {
    /// A link to the cluster's learner for actor `index`.
    pub(crate) fn new(
        cluster: &ClusterSpec,
        access: &Access,
        index: u32,
        give_up: Duration,
    ) -> Result<Self, DistributedError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| DistributedError::Setup(format!("cannot start the actor's runtime: {e}")))?;
        let addr = cluster.endpoint(Role::Learner, 0)?;
        let client = {
            let _inside = runtime.enter();
            learner_client(&addr, access)?
        };
        Ok(LearnerLink {
            runtime,
            addr,
            client,
            last_answer: Instant::now(),
            out_of_touch: false,
            reconnects: 0,
            give_up,
            tag: format!("actor {index}"),
        })
    }

    /// The learner answered a call.
    fn answered(&mut self) {
        self.last_answer = Instant::now();
        if std::mem::take(&mut self.out_of_touch) {
            self.reconnects += 1;
        }
    }

    /// A call failed with `e`: an error if retrying cannot help (a refused token) or the
    /// learner has been silent for `give_up`; the error to log otherwise.
    fn unanswered(&mut self, e: DistributedError) -> Result<DistributedError, DistributedError> {
        if e.is_token_refusal() {
            return Err(e);
        }
        if matches!(e, DistributedError::Call { .. }) {
            self.out_of_touch = true;
        }
        self.check_silence()?;
        Ok(e)
    }

    /// An error once the learner has been silent for `give_up`.
    fn check_silence(&self) -> Result<(), DistributedError> {
        if self.last_answer.elapsed() > self.give_up {
            return Err(DistributedError::Setup(format!(
                "{}: the learner at {} has not answered for {:?}; giving up",
                self.tag, self.addr, self.give_up
            )));
        }
        Ok(())
    }

    /// The learner's weights if their version is not `have` (a learner resumed from a
    /// checkpoint may publish an older version than an actor holds: its weights win).
    pub(crate) fn weights(&mut self, have: u64, actor: u32) -> Result<Option<WeightSnapshot>, DistributedError> {
        let request = WeightsRequest {
            have_version: have,
            actor,
        };
        let reply = self
            .runtime
            .block_on(self.client.get_weights(request))
            .map_err(|s| call_failed(&self.addr, "GetWeights", s))?
            .into_inner();
        self.answered();
        match reply.weights {
            Some(nest) if reply.version != have => Ok(Some(WeightSnapshot {
                version: reply.version,
                weights: decode_weights(&nest)?,
            })),
            _ => Ok(None),
        }
    }

    /// Loads the learner's current weights into `actor`, waited for with backoff: without
    /// them an actor would send experience of a random policy labelled as nobody's. The
    /// summary of a new actor.
    pub(crate) fn first_weights(
        &mut self,
        actor: &mut impl Actor,
        index: u32,
    ) -> Result<ActorSummary, DistributedError> {
        let mut backoff = Backoff::new();
        loop {
            match self.weights(0, index) {
                Ok(Some(snapshot)) => {
                    actor.load(&snapshot)?;
                    return Ok(ActorSummary {
                        first_version: snapshot.version,
                        version: snapshot.version,
                        weight_loads: 1,
                        ..ActorSummary::default()
                    });
                }
                Ok(None) => {}
                Err(e) => {
                    let e = self.unanswered(e)?;
                    backoff.note(&self.tag, &e);
                }
            }
            backoff.wait();
        }
    }

    /// Reports to the learner; while the learner says to pause, runs `while_paused` (work the
    /// learner may be waiting for), waits and reports again (with nothing new). `None` when
    /// the learner did not answer; an error once it has been silent for `give_up`.
    pub(crate) fn report(
        &mut self,
        mut report: ActorReport,
        while_paused: &mut WhilePaused,
    ) -> Result<Option<ReportReply>, DistributedError> {
        let mut counted = false;
        loop {
            match self.runtime.block_on(self.client.report(report.clone())) {
                Ok(reply) => {
                    self.answered();
                    let reply = reply.into_inner();
                    if reply.stop || !reply.pause {
                        return Ok(Some(reply));
                    }
                    // Counted once: what follows while paused adds nothing.
                    counted = true;
                    report.frames = 0;
                    report.episode_returns.clear();
                    while_paused(&self.runtime)?;
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(status) => {
                    let e = self.unanswered(call_failed(&self.addr, "Report", status))?;
                    super::log(&format!("{}: {e}", self.tag));
                    if !counted {
                        return Ok(None);
                    }
                    // Paused and already counted: wait for the learner to come back.
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        }
    }

    /// Loads the learner's weights into `actor` if they are not the version it holds; an
    /// unanswered call leaves the actor with its weights.
    pub(crate) fn sync(
        &mut self,
        actor: &mut impl Actor,
        summary: &mut ActorSummary,
        index: u32,
    ) -> Result<(), DistributedError> {
        match self.weights(summary.version, index) {
            Ok(Some(snapshot)) => {
                actor.load(&snapshot)?;
                summary.version = snapshot.version;
                summary.weight_loads += 1;
            }
            Ok(None) => {}
            Err(e) => {
                let e = self.unanswered(e)?;
                super::log(&format!("{}: keeps its weights: {e}", self.tag));
            }
        }
        Ok(())
    }

    /// Reports the actor's progress when due (after `report_frames` frames, or right away
    /// with `now`), and takes the run's progress from the answer into `time_percentage`.
    /// Whether the run is over. Without an answer the learner may be restarting: the actor
    /// goes on and reports it all later.
    pub(crate) fn report_progress(
        &mut self,
        envs: &mut ActorEnvs,
        summary: &mut ActorSummary,
        options: &ActorOptions,
        now: bool,
        time_percentage: &mut f64,
        while_paused: &mut WhilePaused,
    ) -> Result<bool, DistributedError> {
        let every_frames = if now { 0 } else { options.report_frames };
        let Some(report) = envs.report_due(options.index, summary.version, every_frames, options.report_interval)
        else {
            return Ok(false);
        };
        let reply = self.report(report, while_paused)?;
        envs.reported(reply.is_some());
        let Some(reply) = reply else { return Ok(false) };
        *time_percentage = reply.time_percentage.clamp(0.0, 1.0);
        if reply.stop {
            summary.frames = envs.frames;
            summary.reconnects = self.reconnects;
        }
        Ok(reply.stop)
    }

    /// Sends one IMPALA rollout.
    pub(crate) fn push_rollout(&mut self, request: RolloutRequest) -> Result<Pushed, DistributedError> {
        match self.runtime.block_on(self.client.push_rollout(request)) {
            Ok(_) => {
                self.answered();
                Ok(Pushed::Taken)
            }
            Err(status) if status.code() == tonic::Code::ResourceExhausted => {
                self.answered();
                Ok(Pushed::QueueFull)
            }
            Err(status) => {
                let e = call_failed(&self.addr, "PushRollout", status);
                if e.is_message_refusal() {
                    self.answered();
                    return Ok(Pushed::Refused(e));
                }
                let e = self.unanswered(e)?;
                super::log(&format!("{}: {e}", self.tag));
                Ok(Pushed::Unanswered)
            }
        }
    }
}

/// Exponential backoff between retries of a failing peer, from 50 ms to 2 s, that logs the
/// first failure of each outage only.
pub(crate) struct Backoff {
    delay: Duration,
    next: Instant,
    logged: bool,
}

impl Backoff {
    /// No delay yet.
    pub(crate) fn new() -> Self {
        Backoff {
            delay: Duration::from_millis(50),
            next: Instant::now(),
            logged: false,
        }
    }

    /// Logs `e` if it starts an outage.
    pub(crate) fn note(&mut self, tag: &str, e: &DistributedError) {
        if !self.logged {
            super::log(&format!("{tag}: {e}; retrying with backoff"));
            self.logged = true;
        }
    }

    /// Sleeps the current delay and doubles it.
    pub(crate) fn wait(&mut self) {
        std::thread::sleep(self.delay);
        self.delay = (self.delay * 2).min(Duration::from_secs(2));
    }

    /// Puts the next try off by the current delay (without sleeping) and doubles it.
    pub(crate) fn defer(&mut self) {
        self.next = Instant::now() + self.delay;
        self.delay = (self.delay * 2).min(Duration::from_secs(2));
    }

    /// Whether the next try is due.
    pub(crate) fn due(&self) -> bool {
        Instant::now() >= self.next
    }

    /// The peer answered: back to no delay.
    pub(crate) fn reset(&mut self) {
        self.delay = Duration::from_millis(50);
        self.next = Instant::now();
        self.logged = false;
    }
}

//! What every distributed actor does with its environments: a vector of copies seeded apart
//! from every other actor's, stepped with the actions it chose, with the finished episodes'
//! returns and the frames kept until the learner has heard of them.

use std::time::{Duration, Instant};

use agents::Transition;
use rlgraph_core::spaces::{Space, Value};
use rlgraph_envs::VectorEnv;

use super::error::DistributedError;
use super::proto::ActorReport;

/// An actor's environments and what it has not reported yet.
pub(crate) struct ActorEnvs {
    envs: VectorEnv,
    states: Vec<Value>,
    returns_now: Vec<f64>,
    finished: Vec<f64>,
    unreported: u64,
    last_report: Instant,
    /// Frames stepped in all.
    pub(crate) frames: u64,
    /// The space of one state, and of one action.
    pub(crate) spaces: (Space, Space),
    /// The seed the actor's graph draws from.
    pub(crate) seed: u64,
}

impl ActorEnvs {
    /// `copies` copies of `env` for actor `index` of a run seeded `seed`.
    pub(crate) fn new(env: &str, copies: usize, seed: u64, index: u32) -> Result<Self, DistributedError> {
        // Each actor explores its own episodes: its copies are seeded apart from every other's.
        let seed = seed.wrapping_add(1 + u64::from(index).wrapping_mul(10_007));
        // An actor is one core's work: its bridged Gymnasium copies share one process.
        let mut envs = VectorEnv::make(env, copies, seed, Some(1))?;
        let spaces = (envs.state_space().clone(), envs.action_space().clone());
        let states = envs.reset_all(Some(seed))?;
        Ok(ActorEnvs {
            returns_now: vec![0.0; states.len()],
            states,
            envs,
            finished: Vec::new(),
            unreported: 0,
            last_report: Instant::now(),
            frames: 0,
            spaces,
            seed,
        })
    }

    /// The states the next actions are chosen from, one per copy.
    pub(crate) fn states(&self) -> &[Value] {
        &self.states
    }

    /// Steps every copy with its action; each copy's transition, in copy order.
    pub(crate) fn step(&mut self, actions: Vec<Value>) -> Result<Vec<Transition>, DistributedError> {
        let steps = self.envs.step(&actions)?;
        let mut out = Vec::with_capacity(steps.len());
        for (i, (r, action)) in steps.into_iter().zip(actions).enumerate() {
            self.returns_now[i] += r.step.reward;
            let next = r.next_observation().clone();
            if r.step.terminated || r.step.truncated {
                self.finished.push(std::mem::take(&mut self.returns_now[i]));
            }
            out.push(Transition {
                state: std::mem::replace(&mut self.states[i], next),
                action,
                reward: r.step.reward,
                terminated: r.step.terminated,
                truncated: r.step.truncated,
                next_state: r.step.observation,
            });
        }
        self.frames += out.len() as u64;
        self.unreported += out.len() as u64;
        Ok(out)
    }

    /// The report due after `every_frames` frames or `every` time, whichever comes first.
    pub(crate) fn report_due(
        &self,
        actor: u32,
        version: u64,
        every_frames: u64,
        every: Duration,
    ) -> Option<ActorReport> {
        (self.unreported >= every_frames || self.last_report.elapsed() >= every).then(|| ActorReport {
            actor,
            frames: self.unreported,
            episode_returns: self.finished.clone(),
            weight_version: version,
        })
    }

    /// Whether the learner took the last report: if so, what it held is off the books;
    /// if not, it goes out again with the next one.
    pub(crate) fn reported(&mut self, taken: bool) {
        self.last_report = Instant::now();
        if taken {
            self.unreported = 0;
            self.finished.clear();
        }
    }
}

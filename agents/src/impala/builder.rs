//! `ImpalaAgent`: IMPALA (Espeholt et al. 2018) in its single-process form, as RLgraph's
//! `SingleIMPALAAgent`, composed of the roles: an actor from [`impala_actor`], a
//! [`RolloutAdder`], a FIFO queue of rollouts (the seam where the distributed executor puts
//! its actors) and an [`ImpalaLearner`].
//!
//! Acting returns each action's log-likelihood under the policy that chose it; the agent
//! holds them only until `observe` hands them to the adder, because the `Agent` API passes
//! actions and transitions separately. The learner takes `batch_size` rollouts at a time;
//! the actor loads the learner's snapshot after every update.

use std::collections::BTreeMap;

use rand_chacha::ChaCha8Rng;
use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{Backend, CoreError, HostState, Result, SavedState};
use rlgraph_memories::FifoQueue;
use serde_json::{json, Value as Json};

use crate::actor::{Acted, GraphActor};
use crate::adders::rollout_adder::RolloutAdder;
use crate::adders::{AddedStep, Adder};
use crate::agent::Transition;
use crate::agent_parts::{AgentParts, SAMPLES_ITS_POLICY};
use crate::batch::{host_floats, stack};
use crate::carried_memory::StepMemory;
use crate::composed_agent::{Algorithm, ComposedAgent, Roles};
use crate::impala::actor::impala_actor_with;
use crate::impala::config::ImpalaConfig;
use crate::impala::learner::ImpalaLearner;
use crate::learner::{GraphLearner, Learner};
use crate::transition_json::{value_to_saved, Reader};
use crate::update_spec::UpdateSpec;

/// The log-likelihoods of the actions just handed out, and the queue of finished rollouts.
struct Inbox {
    pending_log_probs: Vec<f64>,
    queue: FifoQueue,
    record_space: Space,
    state_space: Space,
    action_space: Space,
}

/// IMPALA's part of a composed agent: a [`RolloutAdder`] into a FIFO queue of rollouts, and
/// updates on `batch_size` rollouts at a time.
pub struct Impala {
    adder: RolloutAdder,
    inbox: Inbox,
    batch_size: usize,
    update: UpdateSpec,
}

/// An IMPALA agent on backend `B`.
pub type ImpalaAgent<B> = ComposedAgent<B, Impala>;

impl<B: Backend> Algorithm<B> for Impala {
    type Config = ImpalaConfig;
    type Learner = ImpalaLearner<B>;
    type Adder = RolloutAdder;

    const NAME: &'static str = "IMPALA";
    const UNUSED_PARTS: &'static [(&'static str, &'static str)] = &[
        ("exploration", SAMPLES_ITS_POLICY),
        (
            "memory",
            "its rollouts go through a queue; set `queue_capacity` in the config",
        ),
    ];

    fn parse(spec: &Json) -> Result<ImpalaConfig> {
        ImpalaConfig::parse(spec)
    }

    fn build(
        mut config: ImpalaConfig,
        mut parts: AgentParts<B>,
        state_space: &Space,
        action_space: &Space,
        seed: u64,
    ) -> Result<Roles<B, Self>> {
        parts.take_optimizer(&mut config.optimizer);
        let mut learner = ImpalaLearner::with_parts(&config, &parts, state_space, action_space, seed)?;
        let mut actor = impala_actor_with(&config, &parts, state_space, action_space, seed)?;
        learner.publish_to(&mut actor)?;
        let adder = RolloutAdder::new(config.rollout_length, state_space, action_space, config.memory_units())?;
        let record_space = adder.record_space().clone();
        Ok(Roles {
            actor,
            learner,
            memory_units: config.memory_units(),
            algorithm: Impala {
                inbox: Inbox {
                    pending_log_probs: vec![],
                    queue: FifoQueue::new("fifo-queue", &record_space, config.queue_capacity)?,
                    record_space,
                    state_space: state_space.with_batch_rank(false),
                    action_space: action_space.with_batch_rank(false),
                },
                adder,
                batch_size: config.update.batch_size,
                update: config.update,
            },
        })
    }

    fn adder(&mut self) -> &mut RolloutAdder {
        &mut self.adder
    }

    /// Keeps each exploring action's log-likelihood until its step is observed.
    fn acted(&mut self, acted: &Acted, explore: bool) -> Result<()> {
        if explore {
            self.inbox.pending_log_probs =
                host_floats(acted.extras.get("behaviour_log_probs"), "impala-agent/get_action")?;
        }
        Ok(())
    }

    fn check_observe(&self, env_id: usize) -> Result<()> {
        self.inbox.pending(env_id).map(|_| ())
    }

    fn observe(
        &mut self,
        env_id: usize,
        transition: Transition,
        memory: Option<StepMemory>,
        _actor: &mut GraphActor<B>,
    ) -> Result<()> {
        let log_prob = self.inbox.pending(env_id)?;
        let step = AddedStep {
            env_id,
            transition,
            log_prob: Some(log_prob),
            memory,
        };
        if let Some(rollout) = self.adder.add(step)? {
            let queue = &mut self.inbox.queue;
            // A full queue drops its oldest rollout: actors never wait in one process.
            if queue.size() == queue.capacity() {
                queue.try_dequeue()?;
            }
            queue.try_enqueue(rollout)?;
        }
        Ok(())
    }

    fn update(
        &mut self,
        learner: &mut ImpalaLearner<B>,
        _rng: &mut ChaCha8Rng,
        time_percentage: f64,
    ) -> Result<Option<f64>> {
        let n = self.batch_size;
        if self.inbox.queue.size() < n {
            return Ok(None);
        }
        let rollouts = (0..n)
            .map(|_| self.inbox.queue.try_dequeue().map_err(CoreError::from))
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(learner.learn(&stack(&rollouts)?, time_percentage)?.loss))
    }

    /// Rollout records batched, as the queue holds them one by one (see
    /// [`crate::rollout_record`]).
    fn update_from_batch(
        &mut self,
        learner: &mut ImpalaLearner<B>,
        batch: &Value,
        time_percentage: f64,
    ) -> Result<f64> {
        Ok(learner.learn(batch, time_percentage)?.loss)
    }

    fn update_spec(&self) -> &UpdateSpec {
        &self.update
    }

    fn parts(&self) -> Vec<(&'static str, &dyn HostState)> {
        vec![("adder", &self.adder), ("inbox", &self.inbox)]
    }

    fn parts_mut(&mut self) -> Vec<(&'static str, &mut dyn HostState)> {
        vec![("adder", &mut self.adder), ("inbox", &mut self.inbox)]
    }
}

impl<B: Backend> ComposedAgent<B, Impala> {
    /// Rollouts waiting for the learner.
    pub fn queued_rollouts(&self) -> usize {
        self.algorithm.inbox.queue.size()
    }
}

/// Pending log-likelihoods and queued rollouts ride in checkpoints (the rollouts' leaves as
/// tensors).
impl HostState for Inbox {
    fn save_state(&self) -> Result<SavedState> {
        let mut tensors = BTreeMap::new();
        let queue: Vec<Json> = self
            .queue
            .records()
            .iter()
            .enumerate()
            .map(|(i, record)| value_to_saved(record, &format!("queue[{i}]"), &mut tensors))
            .collect();
        Ok(SavedState {
            tensors,
            meta: json!({ "pending_log_probs": self.pending_log_probs, "queue": queue }),
        })
    }

    fn check_state(&self, state: &SavedState) -> Result<()> {
        self.parse(state).map(|_| ())
    }

    fn load_state(&mut self, state: SavedState) -> Result<()> {
        let (pending, queue) = self.parse(&state)?;
        while self.queue.size() > 0 {
            self.queue.try_dequeue()?;
        }
        for record in queue {
            self.queue.try_enqueue(record)?;
        }
        self.pending_log_probs = pending;
        Ok(())
    }
}

impl Inbox {
    /// The log-likelihood of the action last handed to copy `env_id`.
    fn pending(&self, env_id: usize) -> Result<f64> {
        self.pending_log_probs
            .get(env_id)
            .copied()
            .ok_or_else(|| CoreError::Config {
                at: "impala-agent/observe".into(),
                reason: format!("environment copy {env_id} observed a step it was given no action for"),
            })
    }

    fn parse(&self, state: &SavedState) -> Result<(Vec<f64>, Vec<Value>)> {
        let r = Reader {
            label: "(impala inbox)",
            state_space: &self.state_space,
            action_space: &self.action_space,
            tensors: &state.tensors,
        };
        let m = &state.meta;
        let pending = r
            .list(&m["pending_log_probs"], "pending_log_probs")?
            .iter()
            .enumerate()
            .map(|(i, j)| r.number(j, &format!("pending_log_probs[{i}]")))
            .collect::<Result<Vec<_>>>()?;
        let queue = r
            .list(&m["queue"], "queue")?
            .iter()
            .enumerate()
            .map(|(i, j)| r.value(&self.record_space, j, &format!("queue[{i}]")))
            .collect::<Result<Vec<_>>>()?;
        if queue.len() > self.queue.capacity() {
            return Err(r.error(format!(
                "{} queued rollouts do not fit a queue of {}",
                queue.len(),
                self.queue.capacity()
            )));
        }
        Ok((pending, queue))
    }
}

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
use std::path::Path;

use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{Backend, CoreError, ErasedExecutor, HostState, Result, SavedState};
use rlgraph_memories::FifoQueue;
use serde_json::{json, Value as Json};

use crate::actor::{Actor, GraphActor};
use crate::agent::{reset_graph, Agent, Transition};
use crate::batch::{host_floats, stack};
use crate::carried_memory::CarriedMemory;
use crate::counters::Counters;
use crate::impala_config::ImpalaConfig;
use crate::impala_learner::{impala_actor, ImpalaLearner};
use crate::learner::{GraphLearner, Learner};
use crate::rollout_adder::RolloutAdder;
use crate::transition_json::Reader;
use crate::update_spec::UpdateSpec;

/// The log-likelihoods of the actions just handed out, and the queue of finished rollouts.
struct Inbox {
    pending_log_probs: Vec<f64>,
    queue: FifoQueue,
    record_space: Space,
    state_space: Space,
    action_space: Space,
}

/// An IMPALA agent on backend `B`.
pub struct ImpalaAgent<B: Backend> {
    actor: GraphActor<B>,
    adder: RolloutAdder,
    inbox: Inbox,
    learner: ImpalaLearner<B>,
    config: ImpalaConfig,
    counters: Counters,
    /// A recurrent policy's memory per environment copy.
    memory: Option<CarriedMemory>,
}

impl<B: Backend> ImpalaAgent<B> {
    /// An IMPALA agent for `state_space` and `action_space`, with every random choice drawn
    /// from `seed`.
    pub fn new(config: ImpalaConfig, state_space: &Space, action_space: &Space, seed: u64) -> Result<Self> {
        let mut learner = ImpalaLearner::new(&config, state_space, action_space, seed)?;
        let mut actor = impala_actor(&config, state_space, action_space, seed)?;
        learner.publish_to(&mut actor)?;
        let adder = RolloutAdder::new(config.rollout_length, state_space, action_space, config.memory_units())?;
        let record_space = adder.record_space().clone();
        Ok(ImpalaAgent {
            actor,
            inbox: Inbox {
                pending_log_probs: vec![],
                queue: FifoQueue::new("fifo-queue", &record_space, config.queue_capacity)?,
                record_space,
                state_space: state_space.with_batch_rank(false),
                action_space: action_space.with_batch_rank(false),
            },
            adder,
            learner,
            counters: Counters::new(seed),
            memory: config.memory_units().map(CarriedMemory::new),
            config,
        })
    }

    /// Rollouts waiting for the learner.
    pub fn queued_rollouts(&self) -> usize {
        self.inbox.queue.size()
    }

    /// Environment steps observed.
    pub fn timesteps(&self) -> u64 {
        self.counters.timesteps
    }

    /// Updates done.
    pub fn updates(&self) -> u64 {
        self.learner.updates()
    }

    /// The actor.
    pub fn actor(&self) -> &GraphActor<B> {
        &self.actor
    }

    /// The learner.
    pub fn learner(&self) -> &ImpalaLearner<B> {
        &self.learner
    }

    fn resync_actor(&mut self) -> Result<()> {
        self.learner.republish_to(&mut self.actor)
    }
}

impl<B: Backend> Agent for ImpalaAgent<B> {
    fn get_actions(&mut self, states: &[Value], explore: bool, time_percentage: f64) -> Result<Vec<Value>> {
        let acted = match &mut self.memory {
            Some(memory) => memory.act(&mut self.actor, states, explore)?,
            None => self.actor.act(states, explore, time_percentage)?,
        };
        if explore {
            self.inbox.pending_log_probs =
                host_floats(acted.extras.get("behaviour_log_probs"), "impala-agent/get_action")?;
        }
        Ok(acted.actions)
    }

    fn observe(&mut self, env_id: usize, transition: Transition) -> Result<()> {
        let log_prob = *self
            .inbox
            .pending_log_probs
            .get(env_id)
            .ok_or_else(|| CoreError::Config {
                at: "impala-agent/observe".into(),
                reason: format!("environment copy {env_id} observed a step it was given no action for"),
            })?;
        let memory = match &mut self.memory {
            Some(m) => Some(m.observed(env_id, &transition)?),
            None => None,
        };
        self.counters.timesteps += 1;
        if let Some(rollout) = self.adder.push(env_id, transition, log_prob, memory)? {
            let queue = &mut self.inbox.queue;
            // A full queue drops its oldest rollout: actors never wait in one process.
            if queue.size() == queue.capacity() {
                queue.try_dequeue()?;
            }
            queue.try_enqueue(rollout)?;
        }
        Ok(())
    }

    /// Copies that restart while exploring also end the steps held for them (see
    /// [`RolloutAdder::cut`]).
    fn begin_episodes(&mut self, explore: bool, copies: &[usize]) -> Result<()> {
        if let Some(memory) = &mut self.memory {
            memory.begin(explore, copies);
        }
        if explore {
            for &copy in copies {
                self.adder.cut(copy);
            }
        }
        Ok(())
    }

    fn update(&mut self, time_percentage: f64) -> Result<Option<f64>> {
        let n = self.config.update.batch_size;
        if self.inbox.queue.size() < n {
            return Ok(None);
        }
        let rollouts = (0..n)
            .map(|_| self.inbox.queue.try_dequeue().map_err(CoreError::from))
            .collect::<Result<Vec<_>>>()?;
        let learned = self.learner.learn(&stack(&rollouts)?, time_percentage)?;
        self.learner.publish_to(&mut self.actor)?;
        Ok(Some(learned.loss))
    }

    fn update_spec(&self) -> &UpdateSpec {
        &self.config.update
    }

    /// Saves the learner, the actor's RNG and version, partial and queued rollouts, the
    /// counters and a recurrent policy's memories.
    fn save_checkpoint_with(&self, path: &Path, extra: &[(&str, &dyn HostState)]) -> Result<()> {
        let mut parts: Vec<(&str, &dyn HostState)> = vec![
            ("adder", &self.adder),
            ("inbox", &self.inbox),
            ("agent", &self.counters),
            ("actor", &self.actor),
        ];
        if let Some(memory) = &self.memory {
            parts.push(("memory", memory));
        }
        self.learner.save_checkpoint(path, parts, extra)
    }

    fn restore_checkpoint_with(&mut self, path: &Path, extra: &mut [(&str, &mut dyn HostState)]) -> Result<()> {
        let ImpalaAgent {
            learner,
            adder,
            inbox,
            counters,
            actor,
            memory,
            ..
        } = self;
        let mut parts: Vec<(&str, &mut dyn HostState)> = vec![
            ("adder", adder),
            ("inbox", inbox),
            ("agent", counters),
            ("actor", actor),
        ];
        if let Some(memory) = memory {
            parts.push(("memory", memory));
        }
        learner.restore_checkpoint(path, parts, extra)?;
        self.resync_actor()
    }

    fn weights_changed(&mut self) -> Result<()> {
        self.resync_actor()
    }

    /// Drops partial rollouts, resets the preprocessors and forgets a recurrent policy's
    /// memories; queued rollouts stay.
    fn reset(&mut self) -> Result<()> {
        self.adder.clear();
        if let Some(memory) = &mut self.memory {
            memory.clear();
        }
        reset_graph(self.actor.executor_mut())?;
        reset_graph(self.learner.executor_mut())
    }

    fn graph(&self) -> Option<&dyn ErasedExecutor> {
        Some(self.learner.executor())
    }

    fn graph_mut(&mut self) -> Option<&mut dyn ErasedExecutor> {
        Some(self.learner.executor_mut())
    }
}

/// Pending log-likelihoods and queued rollouts ride in checkpoints as JSON.
impl HostState for Inbox {
    fn save_state(&self) -> Result<SavedState> {
        let queue: Vec<Json> = self.queue.records().iter().map(Value::to_json).collect();
        Ok(SavedState {
            tensors: BTreeMap::new(),
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
    fn parse(&self, state: &SavedState) -> Result<(Vec<f64>, Vec<Value>)> {
        let r = Reader {
            label: "(impala inbox)",
            state_space: &self.state_space,
            action_space: &self.action_space,
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

//! `ImpalaAgent`: IMPALA (Espeholt et al. 2018) in its single-process form, as RLgraph's
//! `SingleIMPALAAgent`.
//!
//! Acting records each action's log-likelihood under the policy that chose it. Every
//! `worker_sample_size` steps of an environment copy become a rollout, which goes into a
//! FIFO queue (the seam where the distributed executor puts its actors). The learner takes
//! `batch_size` rollouts at a time, evaluates them under its current networks, and steps on
//! the V-trace loss, whose importance weights correct for the policy having moved since the
//! rollouts were acted. A truncated episode counts as terminal inside a rollout (its next
//! state is not kept); rollouts run across episode ends.

use std::collections::BTreeMap;
use std::path::Path;

use rlgraph_components::losses::{impala_loss, ImpalaLossSpec};
use rlgraph_components::optimizer;
use rlgraph_core::spaces::{Array, BoolBox, FloatBox, Ranks, Space, Value};
use rlgraph_core::{
    Backend, Component, CoreError, ErasedExecutor, GraphExecutor, GraphFn, HostState, Param, Result, SavedState,
};
use rlgraph_memories::FifoQueue;
use serde_json::{json, Value as Json};

use crate::actor_critic_networks::actor_critic_networks;
use crate::agent::{Agent, Transition, UpdateSpec};
use crate::agent_graph::{act, build_graph, with_acting_apis};
use crate::batch::{field, host_floats, host_scalar, stack, unstack};
use crate::counters::Counters;
use crate::impala_config::ImpalaConfig;
use crate::preprocessing::{preprocess, with_preprocessing};
use crate::transition_json::{transition_to_json, Reader};

/// One acted step: the transition and the behaviour policy's log-likelihood of its action.
#[derive(Clone, Debug, PartialEq)]
struct ActedStep {
    transition: Transition,
    log_prob: f64,
}

/// The actors' side: partial rollouts per copy, the log-likelihoods of the actions just
/// handed out, and the queue of finished rollouts.
struct Actors {
    rollout_length: usize,
    partial: Vec<Vec<ActedStep>>,
    pending_log_probs: Vec<f64>,
    queue: FifoQueue,
    record_space: Space,
    state_space: Space,
    action_space: Space,
}

impl Actors {
    /// The rollout record of `steps` (time first), bootstrapped from the last next state.
    fn record(&self, steps: &[ActedStep]) -> Result<Value> {
        let n = steps.len();
        let column =
            |f: fn(&Transition) -> &Value| stack(&steps.iter().map(|s| f(&s.transition).clone()).collect::<Vec<_>>());
        let floats = |f: fn(&ActedStep) -> f64| -> Result<Value> {
            Ok(Value::Float32(Array::new(
                [n],
                steps.iter().map(|s| f(s) as f32).collect(),
            )?))
        };
        let last = steps.last().ok_or_else(|| CoreError::Config {
            at: "impala-agent/rollout".into(),
            reason: "an empty rollout".into(),
        })?;
        Ok(Value::Dict(BTreeMap::from([
            ("states".to_string(), column(|t| &t.state)?),
            ("actions".to_string(), column(|t| &t.action)?),
            ("behaviour_log_probs".to_string(), floats(|s| s.log_prob)?),
            ("rewards".to_string(), floats(|s| s.transition.reward)?),
            (
                "terminals".to_string(),
                Value::Bool(Array::new(
                    [n],
                    steps
                        .iter()
                        .map(|s| s.transition.terminated || s.transition.truncated)
                        .collect(),
                )?),
            ),
            ("bootstrap_state".to_string(), last.transition.next_state.clone()),
        ])))
    }

    fn push(&mut self, env_id: usize, transition: Transition) -> Result<()> {
        let log_prob = *self.pending_log_probs.get(env_id).ok_or_else(|| CoreError::Config {
            at: "impala-agent/observe".into(),
            reason: format!("environment copy {env_id} observed a step it was given no action for"),
        })?;
        if self.partial.len() <= env_id {
            self.partial.resize_with(env_id + 1, Vec::new);
        }
        self.partial[env_id].push(ActedStep { transition, log_prob });
        if self.partial[env_id].len() == self.rollout_length {
            let steps = std::mem::take(&mut self.partial[env_id]);
            let record = self.record(&steps)?;
            // A full queue drops its oldest rollout: actors never wait in one process.
            if self.queue.size() == self.queue.capacity() {
                self.queue.try_dequeue()?;
            }
            self.queue.try_enqueue(record)?;
        }
        Ok(())
    }
}

/// Partial rollouts, pending log-likelihoods and queued rollouts ride in checkpoints as JSON.
impl HostState for Actors {
    fn save_state(&self) -> Result<SavedState> {
        let step = |s: &ActedStep| {
            let mut j = transition_to_json(&s.transition);
            j.insert("log_prob".into(), s.log_prob.into());
            Json::Object(j)
        };
        let partial: Vec<Json> = self.partial.iter().map(|p| p.iter().map(step).collect()).collect();
        let queue: Vec<Json> = self.queue.records().iter().map(Value::to_json).collect();
        Ok(SavedState {
            tensors: BTreeMap::new(),
            meta: json!({ "partial": partial, "pending_log_probs": self.pending_log_probs, "queue": queue }),
        })
    }

    fn check_state(&self, state: &SavedState) -> Result<()> {
        self.parse(state).map(|_| ())
    }

    fn load_state(&mut self, state: SavedState) -> Result<()> {
        let (partial, pending, queue) = self.parse(&state)?;
        while self.queue.size() > 0 {
            self.queue.try_dequeue()?;
        }
        for record in queue {
            self.queue.try_enqueue(record)?;
        }
        self.partial = partial;
        self.pending_log_probs = pending;
        Ok(())
    }
}

type ParsedActors = (Vec<Vec<ActedStep>>, Vec<f64>, Vec<Value>);

impl Actors {
    fn parse(&self, state: &SavedState) -> Result<ParsedActors> {
        let r = Reader {
            label: "(impala actors)",
            state_space: &self.state_space,
            action_space: &self.action_space,
        };
        let m = &state.meta;
        let partial = r.per_env(m, "partial", |j, at| {
            Ok(ActedStep {
                transition: r.transition(j, at)?,
                log_prob: r.number(&j["log_prob"], &format!("{at}.log_prob"))?,
            })
        })?;
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
        Ok((partial, pending, queue))
    }
}

/// An IMPALA agent on backend `B`.
pub struct ImpalaAgent<B: Backend> {
    exec: GraphExecutor<B>,
    config: ImpalaConfig,
    actors: Actors,
    counters: Counters,
}

impl<B: Backend> ImpalaAgent<B> {
    /// An IMPALA agent for `state_space` and `action_space`, with every random choice drawn
    /// from `seed`.
    pub fn new(config: ImpalaConfig, state_space: &Space, action_space: &Space, seed: u64) -> Result<Self> {
        let loss = impala_loss::<B>(
            "loss",
            ImpalaLossSpec {
                discount: config.discount,
                weight_pg: config.weight_pg,
                weight_vf: config.weight_vf,
                weight_entropy: config.weight_entropy,
                ..ImpalaLossSpec::default()
            },
        );
        let root = Component::<B>::new("impala-agent")
            .with_sub(actor_critic_networks::<B>(
                &config.network_spec,
                &config.value_function_spec,
                action_space,
            )?)
            .with_sub(loss)
            .with_sub(optimizer("optimizer", config.optimizer.clone()));
        let (root, has_pre) = with_preprocessing(root, &config.preprocessing_spec)?;
        let time_major = Ranks {
            batch: true,
            time: true,
            time_major: true,
        };
        let params = [
            "states",
            "actions",
            "behaviour_log_probs",
            "rewards",
            "terminals",
            "bootstrap_states",
            "time_percentage",
        ]
        .into_iter()
        .map(Param::new)
        .collect();
        let root = with_acting_apis(root, has_pre, "networks", "get_action_and_log_likelihood")
            // `states` ... `terminals` are time-major rollouts flattened to `[T * B]`.
            .api("update", params, move |ctx, args| {
                let s = preprocess(ctx, has_pre, args.get(0)?)?;
                let e = ctx.call("networks", "evaluate", &[s, args.get(1)?])?;
                let sb = preprocess(ctx, has_pre, args.get(5)?)?;
                let bootstrap = ctx.call("networks", "state_values", &[sb])?[0];
                let mut tm = |x| ctx.graph_fn1("time_major", &[x, bootstrap]);
                let inputs = [
                    tm(e[0])?,
                    tm(args.get(2)?)?,
                    tm(e[2])?,
                    tm(e[1])?,
                    tm(args.get(3)?)?,
                    tm(args.get(4)?)?,
                    bootstrap,
                ];
                let loss = ctx.call("loss", "loss", &inputs)?[0];
                let vars = ctx.call("networks", "variables", &[])?;
                ctx.call("optimizer", "step", &[vars[0], loss, args.get(6)?])
            })
            .graph_fn(
                GraphFn::tensors("time_major", |_, xs| {
                    let batch = B::shape(xs[1])[0].max(1);
                    let n = B::shape(xs[0])[0];
                    Ok(vec![B::reshape(xs[0], &[n / batch, batch])?])
                })
                .infer(move |_, s| Ok(vec![s[0].with_ranks(time_major)])),
            );
        let batch = |s: &Space| s.with_batch_rank(true);
        let floats = || Space::from(FloatBox::new(Vec::<usize>::new())).with_batch_rank(true);
        let spaces = BTreeMap::from([
            ("states".to_string(), batch(state_space)),
            ("actions".to_string(), batch(action_space)),
            ("behaviour_log_probs".to_string(), floats()),
            ("rewards".to_string(), floats()),
            (
                "terminals".to_string(),
                Space::from(BoolBox::new(Vec::<usize>::new())).with_batch_rank(true),
            ),
            ("bootstrap_states".to_string(), batch(state_space)),
            (
                "time_percentage".to_string(),
                Space::from(FloatBox::new(Vec::<usize>::new())),
            ),
        ]);
        let exec = build_graph(root, &spaces, config.device, seed)?;
        let (state, action) = (state_space.with_batch_rank(false), action_space.with_batch_rank(false));
        let over_time = |s: &Space| s.with_time_rank(true, false);
        let record_space = Space::dict([
            ("states", over_time(&state)),
            ("actions", over_time(&action)),
            (
                "behaviour_log_probs",
                over_time(&FloatBox::new(Vec::<usize>::new()).into()),
            ),
            ("rewards", over_time(&FloatBox::new(Vec::<usize>::new()).into())),
            ("terminals", over_time(&BoolBox::new(Vec::<usize>::new()).into())),
            ("bootstrap_state", state.clone()),
        ])?;
        let actors = Actors {
            rollout_length: config.rollout_length,
            partial: vec![],
            pending_log_probs: vec![],
            queue: FifoQueue::new("fifo-queue", &record_space, config.queue_capacity)?,
            record_space,
            state_space: state,
            action_space: action,
        };
        Ok(ImpalaAgent {
            exec,
            actors,
            counters: Counters::new(seed),
            config,
        })
    }

    /// Rollouts waiting for the learner.
    pub fn queued_rollouts(&self) -> usize {
        self.actors.queue.size()
    }

    /// Environment steps observed.
    pub fn timesteps(&self) -> u64 {
        self.counters.timesteps
    }

    /// Updates done.
    pub fn updates(&self) -> u64 {
        self.counters.updates
    }
}

impl<B: Backend> Agent for ImpalaAgent<B> {
    fn get_actions(&mut self, states: &[Value], explore: bool, _time_percentage: f64) -> Result<Vec<Value>> {
        let (actions, rest) = act(&mut self.exec, states, explore)?;
        if explore {
            self.actors.pending_log_probs = host_floats(rest.first(), "impala-agent/get_action")?;
        }
        Ok(actions)
    }

    fn observe(&mut self, env_id: usize, transition: Transition) -> Result<()> {
        self.counters.timesteps += 1;
        self.actors.push(env_id, transition)
    }

    fn update(&mut self, time_percentage: f64) -> Result<Option<f64>> {
        let n = self.config.update.batch_size;
        if self.actors.queue.size() < n {
            return Ok(None);
        }
        let rollouts = (0..n)
            .map(|_| self.actors.queue.try_dequeue().map_err(CoreError::from))
            .collect::<Result<Vec<_>>>()?;
        // Time-major: step t of rollout b sits at t * n + b.
        let columns =
            |key: &str| -> Result<Vec<Vec<Value>>> { rollouts.iter().map(|r| unstack(&field(r, key)?)).collect() };
        let time_major = |cols: Vec<Vec<Value>>| -> Result<Value> {
            let t_len = cols.first().map_or(0, Vec::len);
            stack(
                &(0..t_len)
                    .flat_map(|t| cols.iter().map(move |c| c[t].clone()))
                    .collect::<Vec<_>>(),
            )
        };
        let bootstrap = stack(
            &rollouts
                .iter()
                .map(|r| field(r, "bootstrap_state"))
                .collect::<Result<Vec<_>>>()?,
        )?;
        let inputs = [
            time_major(columns("states")?)?,
            time_major(columns("actions")?)?,
            time_major(columns("behaviour_log_probs")?)?,
            time_major(columns("rewards")?)?,
            time_major(columns("terminals")?)?,
            bootstrap,
            Value::f32(time_percentage.clamp(0.0, 1.0) as f32),
        ];
        let out = self.exec.execute("update", &inputs)?;
        self.counters.updates += 1;
        host_scalar(out.first(), "impala-agent/update").map(Some)
    }

    fn update_spec(&self) -> &UpdateSpec {
        &self.config.update
    }

    /// Saves variables, the executor's RNG, partial and queued rollouts and the counters.
    fn save_checkpoint(&self, path: &Path) -> Result<()> {
        self.exec
            .save_with(path, &[("actors", &self.actors), ("agent", &self.counters)])
    }

    fn restore_checkpoint(&mut self, path: &Path) -> Result<()> {
        let ImpalaAgent {
            exec, actors, counters, ..
        } = self;
        exec.restore_with(path, &mut [("actors", actors), ("agent", counters)])
    }

    fn graph(&self) -> Option<&dyn ErasedExecutor> {
        Some(&self.exec)
    }

    fn graph_mut(&mut self) -> Option<&mut dyn ErasedExecutor> {
        Some(&mut self.exec)
    }
}

//! `PgAgent`: the on-policy policy-gradient agents, PPO and advantage actor-critic, as
//! RLgraph's `PPOAgent` and `ActorCriticAgent`.
//!
//! As in RLgraph, both keep the latest `memory_spec.capacity` steps per environment copy,
//! and each update learns from the latest `batch_size` of them (or the latest `batch_size`
//! finished episodes, with `sample_episodes`); the worker calls `update` every
//! `update_interval` steps, so batches overlap when the interval is the smaller. PPO first
//! evaluates the batch under the current networks (the old log-likelihoods and values, and
//! GAE advantages from them), then takes `num_iterations` minibatch steps of `sample_size`
//! records; actor-critic takes one step on the whole batch.

use std::collections::BTreeMap;
use std::path::Path;

use rlgraph_components::helpers::{gae_time_major, gae_values};
use rlgraph_components::losses::{actor_critic_loss, ppo_loss, ActorCriticLossSpec, PpoLossSpec};
use rlgraph_core::spaces::{BoolBox, FloatBox, Space, Value};
use rlgraph_core::{Backend, CoreError, DType, ErasedExecutor, GraphExecutor, HostTensor, Param, Result, Tree};

use crate::actor_critic_networks::actor_critic_root;
use crate::agent::{Agent, Transition};
use crate::agent_graph::{act, build_graph, with_acting_apis};
use crate::batch::{field, flag_column, float_column, host_floats, host_scalar, stack, unstack};
use crate::counters::Counters;
use crate::pg_config::{PgAlgorithm, PgConfig};
use crate::preprocessing::preprocess;
use crate::rollout::{Rollout, RolloutBatch};
use crate::update_spec::UpdateSpec;

/// A PPO or actor-critic agent on backend `B`.
pub struct PgAgent<B: Backend> {
    exec: GraphExecutor<B>,
    config: PgConfig,
    rollout: Rollout,
    counters: Counters,
    state_space: Space,
}

/// One on-policy rollout that never left the device: `T` steps of `N` environment copies,
/// one tensor per step, as a device-resident environment produced them.
pub struct TensorRollout<B: Backend> {
    /// The states the actions were taken in, `[N, ...]` per step.
    pub states: Vec<B::Tensor>,
    /// The actions, as `act_tensors` returned them, per step.
    pub actions: Vec<B::Tensor>,
    /// The rewards, F32 `[N]` per step.
    pub rewards: Vec<B::Tensor>,
    /// 1 where a copy's episode terminated at the step, U8 `[N]` per step.
    pub terminated: Vec<B::Tensor>,
    /// 1 where a copy's episode hit its time limit at the step, U8 `[N]` per step.
    pub truncated: Vec<B::Tensor>,
    /// The states after the last step, `[N, ...]` (to bootstrap from).
    pub next_states: B::Tensor,
}

fn scalar_space() -> Space {
    Space::from(FloatBox::new(Vec::<usize>::new()))
}

impl<B: Backend> PgAgent<B> {
    /// A PPO or actor-critic agent for `state_space` and `action_space` (an IntBox, or a
    /// FloatBox for a Gaussian policy), with every random choice drawn from `seed`.
    pub fn new(config: PgConfig, state_space: &Space, action_space: &Space, seed: u64) -> Result<Self> {
        let (name, loss) = match &config.algorithm {
            PgAlgorithm::Ppo {
                clip_ratio,
                value_function_clipping,
                standardize_advantages,
            } => (
                "ppo-agent",
                ppo_loss::<B>(
                    "loss",
                    PpoLossSpec {
                        clip_ratio: clip_ratio.value(0.0),
                        value_function_clipping: *value_function_clipping,
                        standardize_advantages: *standardize_advantages,
                        weight_vf: config.weight_vf,
                        weight_entropy: config.weight_entropy.value(0.0),
                    },
                ),
            ),
            PgAlgorithm::ActorCritic { weight_pg } => (
                "actor-critic-agent",
                actor_critic_loss::<B>(
                    "loss",
                    ActorCriticLossSpec {
                        discount: config.discount,
                        gae_lambda: config.gae_lambda,
                        weight_pg: *weight_pg,
                        weight_vf: config.weight_vf,
                        weight_entropy: config.weight_entropy.value(0.0),
                    },
                ),
            ),
        };
        let ppo = matches!(config.algorithm, PgAlgorithm::Ppo { .. });
        let (root, has_pre) = actor_critic_root(
            name,
            &config.network_spec,
            &config.value_function_spec,
            action_space,
            loss,
            &config.optimizer,
            &config.preprocessing_spec,
        )?;
        let update_params: Vec<Param> = if ppo {
            vec![
                "states",
                "actions",
                "prev_log_probs",
                "prev_values",
                "advantages",
                "clip_ratio",
                "weight_entropy",
                "time_percentage",
            ]
        } else {
            vec![
                "states",
                "actions",
                "rewards",
                "terminals",
                "sequence_indices",
                "time_percentage",
            ]
        }
        .into_iter()
        .map(Param::new)
        .collect();
        let root = with_acting_apis(root, has_pre, "networks", "get_action")
            .api(
                "evaluate",
                vec![Param::new("states"), Param::new("actions")],
                move |ctx, args| {
                    let s = preprocess(ctx, has_pre, args.get(0)?)?;
                    let e = ctx.call("networks", "evaluate", &[s, args.get(1)?])?;
                    Ok(vec![e[0], e[1]])
                },
            )
            .api("update", update_params, move |ctx, args| {
                let s = preprocess(ctx, has_pre, args.get(0)?)?;
                let e = ctx.call("networks", "evaluate", &[s, args.get(1)?])?;
                let (log_probs, values, entropy) = (e[0], e[1], e[2]);
                let (loss, t) = if ppo {
                    let loss_args = [
                        log_probs,
                        args.get(2)?,
                        values,
                        args.get(3)?,
                        args.get(4)?,
                        entropy,
                        args.get(5)?,
                        args.get(6)?,
                    ];
                    (ctx.call("loss", "loss", &loss_args)?[0], args.get(7)?)
                } else {
                    let loss_args = [log_probs, values, args.get(2)?, args.get(3)?, args.get(4)?, entropy];
                    (ctx.call("loss", "loss", &loss_args)?[0], args.get(5)?)
                };
                let vars = ctx.call("networks", "variables", &[])?;
                ctx.call("optimizer", "step", &[vars[0], loss, t])
            });
        let batch = |s: &Space| s.with_batch_rank(true);
        let floats = || scalar_space().with_batch_rank(true);
        let bools = || Space::from(BoolBox::new(Vec::<usize>::new())).with_batch_rank(true);
        let mut spaces = BTreeMap::from([
            ("states".to_string(), batch(state_space)),
            ("actions".to_string(), batch(action_space)),
            ("time_percentage".to_string(), scalar_space()),
        ]);
        if ppo {
            for k in ["prev_log_probs", "prev_values", "advantages"] {
                spaces.insert(k.into(), floats());
            }
            for k in ["clip_ratio", "weight_entropy"] {
                spaces.insert(k.into(), scalar_space());
            }
        } else {
            spaces.insert("rewards".into(), floats());
            spaces.insert("terminals".into(), bools());
            spaces.insert("sequence_indices".into(), bools());
        }
        let exec = build_graph(root, &spaces, config.device, seed)?;
        Ok(PgAgent {
            exec,
            rollout: Rollout::new(config.capacity, state_space, action_space),
            config,
            counters: Counters::new(seed),
            state_space: state_space.with_batch_rank(false),
        })
    }

    /// Environment steps observed.
    pub fn timesteps(&self) -> u64 {
        self.counters.timesteps
    }

    /// Updates done.
    pub fn updates(&self) -> u64 {
        self.counters.updates
    }

    /// The space of one state.
    pub fn state_space(&self) -> &Space {
        &self.state_space
    }

    /// The executor (for the meta graph and direct API calls).
    pub fn executor(&self) -> &GraphExecutor<B> {
        &self.exec
    }

    /// The log-likelihoods of `actions` and the state values of `states` under the current
    /// networks.
    pub fn evaluate(&mut self, states: &[Value], actions: &[Value]) -> Result<(Vec<f64>, Vec<f64>)> {
        let out = self.exec.execute("evaluate", &[stack(states)?, stack(actions)?])?;
        Ok((
            host_floats(out.first(), "pg-agent/evaluate")?,
            host_floats(out.get(1), "pg-agent/evaluate")?,
        ))
    }

    /// Actions for states already on the device (`[N, ...]`), with no host conversion and no
    /// space check: the acting path of device-resident environments.
    pub fn act_tensors(&mut self, states: &B::Tensor, explore: bool) -> Result<B::Tensor> {
        let method = if explore {
            "get_action"
        } else {
            "get_deterministic_action"
        };
        let out = self.exec.execute_tensors(method, [Tree::Leaf(states.clone())])?;
        out.into_iter()
            .next()
            .and_then(Tree::into_leaf)
            .ok_or_else(|| CoreError::Config {
                at: format!("pg-agent/{method}"),
                reason: "no action tensor came back".into(),
            })
    }

    /// A PPO update from a rollout on the device: old log-likelihoods and values in one
    /// evaluation, GAE over the time axis as backend ops ([`gae_time_major`]), then
    /// `num_iterations` minibatch steps of `sample_size` records picked by index on the
    /// device. Only the minibatch indices (drawn from the agent's seeded RNG) go up, and only
    /// the mean loss comes down. Actor-critic is refused: its loss computes advantages on
    /// the host.
    pub fn update_from_tensors(&mut self, rollout: &TensorRollout<B>, time_percentage: f64) -> Result<f64> {
        let bad = |reason: String| CoreError::Config {
            at: "pg-agent/update_from_tensors".into(),
            reason,
        };
        let PgAlgorithm::Ppo { clip_ratio, .. } = &self.config.algorithm else {
            return Err(bad(
                "device-resident rollouts train PPO; actor-critic's loss computes its advantages on the host".into(),
            ));
        };
        let steps = rollout.rewards.len();
        let lengths = [
            rollout.states.len(),
            rollout.actions.len(),
            rollout.terminated.len(),
            rollout.truncated.len(),
        ];
        if steps == 0 || lengths.iter().any(|&l| l != steps) {
            return Err(bad(format!(
                "states, actions, terminated and truncated need one tensor per reward step ({steps}), got {lengths:?}"
            )));
        }
        let copies = B::shape(&rollout.rewards[0]).first().copied().unwrap_or(0);
        let total = steps * copies;
        let t = time_percentage.clamp(0.0, 1.0);
        let device = B::device(&rollout.next_states);
        let states = B::concat(&rollout.states, 0)?;
        let actions = B::concat(&rollout.actions, 0)?;
        // The states after the last step are evaluated with the last actions as stand-ins:
        // only their values are read.
        let all_states = B::concat(&[states.clone(), rollout.next_states.clone()], 0)?;
        let all_actions = B::concat(&[actions.clone(), rollout.actions[steps - 1].clone()], 0)?;
        let out = self
            .exec
            .execute_tensors("evaluate", [Tree::Leaf(all_states), Tree::Leaf(all_actions)])?;
        let leaf = |i: usize| -> Result<B::Tensor> {
            out.get(i)
                .and_then(Tree::as_leaf)
                .map(B::detach)
                .ok_or_else(|| bad("evaluate returned no tensors".into()))
        };
        let log_probs = B::narrow(&B::reshape(&leaf(0)?, &[total + copies])?, 0, 0, total)?;
        let values = B::reshape(&leaf(1)?, &[steps + 1, copies])?;
        let time_major = |ts: &[B::Tensor]| -> Result<B::Tensor> { B::reshape(&B::concat(ts, 0)?, &[steps, copies]) };
        let advantages = gae_time_major::<B>(
            &values,
            &time_major(&rollout.rewards)?,
            &time_major(&rollout.terminated)?,
            &time_major(&rollout.truncated)?,
            self.config.discount,
            self.config.gae_lambda,
        )?;
        let advantages = B::reshape(&advantages, &[total])?;
        let prev_values = B::narrow(&B::reshape(&values, &[total + copies])?, 0, 0, total)?;
        let m = self.config.update.sample_size.unwrap_or(total).min(total);
        let scalar = |v: f64| B::scalar(v, DType::F32, device);
        let (clip, weight_entropy, time) = (
            scalar(clip_ratio.value(t))?,
            scalar(self.config.weight_entropy.value(t))?,
            scalar(t)?,
        );
        let mut loss_sum: Option<B::Tensor> = None;
        for _ in 0..self.config.update.num_iterations {
            let idx: Vec<i64> = rand::seq::index::sample(&mut self.counters.rng, total, m)
                .into_iter()
                .map(|i| i as i64)
                .collect();
            let idx = B::from_host(&HostTensor::i64([m], idx)?, device)?;
            let pick = |x: &B::Tensor| -> Result<Tree<B::Tensor>> { Ok(Tree::Leaf(B::index_select(x, 0, &idx)?)) };
            let inputs = [
                pick(&states)?,
                pick(&actions)?,
                pick(&log_probs)?,
                pick(&prev_values)?,
                pick(&advantages)?,
                Tree::Leaf(clip.clone()),
                Tree::Leaf(weight_entropy.clone()),
                Tree::Leaf(time.clone()),
            ];
            let out = self.exec.execute_tensors("update", inputs)?;
            let loss = out
                .first()
                .and_then(Tree::as_leaf)
                .map(|l| B::detach(l))
                .ok_or_else(|| bad("update returned no loss".into()))?;
            loss_sum = Some(match loss_sum {
                Some(sum) => B::add(&sum, &loss)?,
                None => loss,
            });
        }
        self.counters.timesteps += total as u64;
        self.counters.updates += 1;
        match loss_sum {
            Some(sum) => {
                let sum = B::to_host(&sum)?.data.to_f64();
                Ok(sum.first().copied().unwrap_or(f64::NAN) / self.config.update.num_iterations as f64)
            }
            None => Ok(0.0),
        }
    }

    fn ready(&self) -> bool {
        let need = self.config.update.batch_size;
        if self.config.sample_episodes {
            self.rollout.episodes() >= need
        } else {
            self.rollout.steps() >= need
        }
    }

    /// PPO: old log-likelihoods, values and advantages once, then minibatch steps.
    fn update_ppo(&mut self, batch: RolloutBatch, t: f64) -> Result<f64> {
        let PgAlgorithm::Ppo { clip_ratio, .. } = &self.config.algorithm else {
            return Err(CoreError::Config {
                at: "ppo-agent".into(),
                reason: "not a PPO config".into(),
            });
        };
        let clip = Value::f32(clip_ratio.value(t) as f32);
        let weight_entropy = Value::f32(self.config.weight_entropy.value(t) as f32);
        let (prev_log_probs, prev_values) = self.evaluate(&batch.states, &batch.actions)?;
        let advantages = gae_values(
            &prev_values,
            &batch.rewards,
            &batch.terminals,
            &batch.sequence_indices,
            self.config.discount,
            self.config.gae_lambda,
        )?;
        let n = batch.len();
        let m = self.config.update.sample_size.unwrap_or(n).min(n);
        let mut total = 0.0;
        for _ in 0..self.config.update.num_iterations {
            let idx = rand::seq::index::sample(&mut self.counters.rng, n, m).into_vec();
            let pick = |v: &[Value]| stack(&idx.iter().map(|&i| v[i].clone()).collect::<Vec<_>>());
            let pick_f = |v: &[f64]| float_column(&idx.iter().map(|&i| v[i]).collect::<Vec<_>>());
            let inputs = [
                pick(&batch.states)?,
                pick(&batch.actions)?,
                pick_f(&prev_log_probs)?,
                pick_f(&prev_values)?,
                pick_f(&advantages)?,
                clip.clone(),
                weight_entropy.clone(),
                Value::f32(t as f32),
            ];
            let out = self.exec.execute("update", &inputs)?;
            total += host_scalar(out.first(), "pg-agent/update")?;
        }
        Ok(total / self.config.update.num_iterations as f64)
    }

    /// Actor-critic: one step on the whole batch (the loss computes GAE advantages).
    fn update_actor_critic(&mut self, batch: RolloutBatch, t: f64) -> Result<f64> {
        let inputs = [
            stack(&batch.states)?,
            stack(&batch.actions)?,
            float_column(&batch.rewards)?,
            flag_column(&batch.terminals)?,
            flag_column(&batch.sequence_indices)?,
            Value::f32(t as f32),
        ];
        let out = self.exec.execute("update", &inputs)?;
        host_scalar(out.first(), "pg-agent/update")
    }
}

impl<B: Backend> Agent for PgAgent<B> {
    fn get_actions(&mut self, states: &[Value], explore: bool, _time_percentage: f64) -> Result<Vec<Value>> {
        Ok(act(&mut self.exec, states, explore)?.0)
    }

    fn observe(&mut self, env_id: usize, transition: Transition) -> Result<()> {
        self.counters.timesteps += 1;
        self.rollout.push(env_id, transition);
        Ok(())
    }

    fn update(&mut self, time_percentage: f64) -> Result<Option<f64>> {
        if !self.ready() {
            return Ok(None);
        }
        let batch = if self.config.sample_episodes {
            self.rollout.recent_episodes(self.config.update.batch_size)
        } else {
            self.rollout.recent_steps(self.config.update.batch_size)
        };
        if batch.is_empty() {
            return Ok(None);
        }
        let t = time_percentage.clamp(0.0, 1.0);
        let loss = match self.config.algorithm {
            PgAlgorithm::Ppo { .. } => self.update_ppo(batch, t)?,
            PgAlgorithm::ActorCritic { .. } => self.update_actor_critic(batch, t)?,
        };
        self.counters.updates += 1;
        Ok(Some(loss))
    }

    /// Steps of one or more sequences: `states`, `actions`, `rewards`, `terminals`, and
    /// optional `sequence_indices` (true at each sequence's last step; by default only the
    /// batch's last step ends a sequence besides the terminals).
    fn update_from_batch(&mut self, batch: &Value, time_percentage: f64) -> Result<f64> {
        let flags = |key: &str| -> Result<Vec<bool>> {
            match field(batch, key)? {
                Value::Bool(a) => Ok(a.data().to_vec()),
                other => Err(CoreError::Config {
                    at: format!("update_from_batch.{key}"),
                    reason: format!("expected bools, got {}", other.kind_name()),
                }),
            }
        };
        let rewards = host_floats(Some(&field(batch, "rewards")?), "update_from_batch.rewards")?;
        let terminals = flags("terminals")?;
        let n = rewards.len();
        let sequence_indices = match field(batch, "sequence_indices") {
            Ok(_) => flags("sequence_indices")?,
            Err(_) => (0..n)
                .map(|i| terminals.get(i).copied().unwrap_or(false) || i + 1 == n)
                .collect(),
        };
        let rollout = RolloutBatch {
            states: unstack(&field(batch, "states")?)?,
            actions: unstack(&field(batch, "actions")?)?,
            rewards,
            terminals,
            sequence_indices,
        };
        let lengths = [
            rollout.states.len(),
            rollout.actions.len(),
            rollout.terminals.len(),
            rollout.sequence_indices.len(),
        ];
        if lengths.iter().any(|&l| l != n) || n == 0 {
            return Err(CoreError::Config {
                at: "update_from_batch".into(),
                reason: format!(
                    "states, actions, terminals and sequence_indices must have one entry per reward ({n}), got {lengths:?}"
                ),
            });
        }
        let t = time_percentage.clamp(0.0, 1.0);
        let loss = match self.config.algorithm {
            PgAlgorithm::Ppo { .. } => self.update_ppo(rollout, t)?,
            PgAlgorithm::ActorCritic { .. } => self.update_actor_critic(rollout, t)?,
        };
        self.counters.updates += 1;
        Ok(loss)
    }

    fn update_spec(&self) -> &UpdateSpec {
        &self.config.update
    }

    /// Saves variables, the executor's RNG, the recent steps and the agent's counters.
    fn save_checkpoint(&self, path: &Path) -> Result<()> {
        self.exec
            .save_with(path, &[("rollout", &self.rollout), ("agent", &self.counters)])
    }

    fn restore_checkpoint(&mut self, path: &Path) -> Result<()> {
        let PgAgent {
            exec,
            rollout,
            counters,
            ..
        } = self;
        exec.restore_with(path, &mut [("rollout", rollout), ("agent", counters)])
    }

    fn graph(&self) -> Option<&dyn ErasedExecutor> {
        Some(&self.exec)
    }

    fn graph_mut(&mut self) -> Option<&mut dyn ErasedExecutor> {
        Some(&mut self.exec)
    }
}

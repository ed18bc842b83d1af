//! `PgLearner`: the update graph of PPO and advantage actor-critic (networks, loss, one
//! optimizer for both networks) as a [`Learner`], and [`pg_actor`], the acting graph that
//! loads its snapshots.
//!
//! A batch is a [`RolloutBatch`]: sequences of recent steps with RLgraph's
//! `sequence_indices`. As in RLgraph, PPO first evaluates the batch under the current
//! networks (the old log-likelihoods and values, and GAE advantages from them), then takes
//! `num_iterations` minibatch steps of `sample_size` records; actor-critic takes one step on
//! the whole batch. The actor hands back no extras: the learner evaluates the batch itself,
//! so steps collected under an older policy (overlapping batches) are judged by the current
//! one, as RLgraph's `PPOAgent` does.
//!
//! ```
//! use agents::{pg_actor, Actor, Learner, PgConfig, PgLearner, Rollout, Transition};
//! use backend_candle::Candle;
//! use rlgraph_envs::{CartPole, Env};
//!
//! let config = PgConfig::parse(&serde_json::json!({
//!     "type": "ppo",
//!     "network_spec": [{"type": "dense", "units": 16, "activation": "tanh"}],
//!     "update_spec": {"batch_size": 8, "sample_size": 4, "num_iterations": 2}
//! }))?;
//! let mut env = CartPole::new(0);
//! let (s, a) = (env.state_space().clone(), env.action_space().clone());
//! let mut learner = PgLearner::<Candle>::new(&config, &s, &a, 0)?;
//! let mut actor = pg_actor::<Candle>(&config, &s, &a, 0)?;
//! // The actor plays eight steps; the rollout keeps them per environment copy.
//! let mut rollout = Rollout::new(100, &s, &a);
//! let mut state = env.reset(Some(0))?;
//! for _ in 0..8 {
//!     let action = actor.act(&[state.clone()], true, 0.0)?.actions.remove(0);
//!     let step = env.step(&action)?;
//!     let next = step.observation.clone();
//!     rollout.push(0, Transition {
//!         state: std::mem::replace(&mut state, next.clone()),
//!         action,
//!         reward: step.reward,
//!         terminated: step.terminated,
//!         truncated: step.truncated,
//!         next_state: next,
//!     });
//! }
//! // The learner takes the latest steps (as a Dict, as they would cross to another thread),
//! // and the actor loads its snapshot.
//! learner.learn(&rollout.recent_steps(8).to_value()?, 0.0)?;
//! actor.load(&learner.publish()?)?;
//! assert_eq!((learner.updates(), actor.version()), (1, Some(1)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;

use rlgraph_components::helpers::gae_values;
use rlgraph_components::losses::{actor_critic_loss, ppo_loss, ActorCriticLossSpec, PpoLossSpec};
use rlgraph_core::spaces::{BoolBox, FloatBox, Space, Value};
use rlgraph_core::{Backend, CoreError, Result};

use crate::actor_critic_networks::{actor_critic_root, memory_spaces};
use crate::adders::rollout::RolloutBatch;
use crate::agent_graph::{build_graph, evaluate, params_with_memory, trailing_memory, with_acting_apis};
use crate::agent_parts::AgentParts;
use crate::batch::{flag_column, float_column, host_floats, host_scalar, stack};
use crate::carried_memory::memory_value;
use crate::learner::{GraphLearner, Learned, Learner, LearnerGraph};
use crate::mask_key::mask_key;
use crate::pg::config::{PgAlgorithm, PgConfig};
use crate::pg::recorded_update::Recorded;
use crate::snapshot::WeightSnapshot;

/// The root component's name, which prefixes every variable path (`ppo-agent/networks/...`).
pub(crate) fn root_name(config: &PgConfig) -> &'static str {
    match config.algorithm {
        PgAlgorithm::Ppo { .. } => "ppo-agent",
        PgAlgorithm::ActorCritic { .. } => "actor-critic-agent",
    }
}

fn scalar_space() -> Space {
    Space::from(FloatBox::new(Vec::<usize>::new()))
}

/// How a recurrent batch splits: `count` sequences of `len` steps, one after another.
struct Sequences {
    count: usize,
    len: usize,
    units: usize,
}

impl Sequences {
    /// The rows of sequences `seqs`, in order.
    fn rows(&self, seqs: &[usize]) -> Vec<usize> {
        seqs.iter().flat_map(|&s| s * self.len..(s + 1) * self.len).collect()
    }

    /// The inputs `memory` (each sequence's first) and `starts` (every row's) of `seqs`.
    fn inputs(&self, batch: &RolloutBatch, seqs: &[usize]) -> Result<[Value; 2]> {
        let firsts = seqs.iter().map(|&s| batch.memory[s * self.len].as_slice());
        let starts: Vec<bool> = self.rows(seqs).into_iter().map(|r| batch.starts[r]).collect();
        Ok([memory_value(firsts, self.units)?, flag_column(&starts)?])
    }
}

/// The learner of PPO and actor-critic.
pub struct PgLearner<B: Backend> {
    pub(super) graph: LearnerGraph<B>,
    pub(super) config: PgConfig,
    /// Where the device update stands with recording (see `device_update`).
    pub(super) recorded: Recorded<B>,
}

impl<B: Backend> PgLearner<B> {
    /// The learner for `config` over these spaces (an IntBox action space, or a FloatBox for
    /// a Gaussian policy), its variables and minibatch draws from `seed`.
    pub fn new(config: &PgConfig, state_space: &Space, action_space: &Space, seed: u64) -> Result<Self> {
        PgLearner::with_parts(config, &AgentParts::default(), state_space, action_space, seed)
    }

    /// [`PgLearner::new`] with the layers and preprocessors of `parts` where given.
    pub(crate) fn with_parts(
        config: &PgConfig,
        parts: &AgentParts<B>,
        state_space: &Space,
        action_space: &Space,
        seed: u64,
    ) -> Result<Self> {
        let action_space = &config.sampled_action_space(action_space);
        let ppo = matches!(config.algorithm, PgAlgorithm::Ppo { .. });
        let loss = match &config.algorithm {
            PgAlgorithm::Ppo {
                clip_ratio,
                value_function_clipping,
                standardize_advantages,
            } => ppo_loss::<B>(
                "loss",
                PpoLossSpec {
                    clip_ratio: clip_ratio.value(0.0),
                    value_function_clipping: *value_function_clipping,
                    standardize_advantages: *standardize_advantages,
                    weight_vf: config.weight_vf,
                    weight_entropy: config.weight_entropy.value(0.0),
                },
            ),
            PgAlgorithm::ActorCritic { weight_pg } => actor_critic_loss::<B>(
                "loss",
                ActorCriticLossSpec {
                    discount: config.discount,
                    gae_lambda: config.gae_lambda,
                    weight_pg: *weight_pg,
                    weight_vf: config.weight_vf,
                    weight_entropy: config.weight_entropy.value(0.0),
                },
            ),
        };
        let name = root_name(config);
        let recurrent = config.recurrence.is_some();
        let mask = mask_key(&config.action_mask_key, state_space, action_space)?;
        let (root, input) = actor_critic_root(
            name,
            &config.networks(parts),
            action_space,
            mask,
            loss,
            &config.optimizer,
        )?;
        let update_names: &[&'static str] = if ppo {
            &[
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
            &[
                "states",
                "actions",
                "rewards",
                "terminals",
                "sequence_indices",
                "time_percentage",
            ]
        };
        let root = with_acting_apis(root, input, "networks", "get_action", recurrent)
            .api(
                "evaluate",
                params_with_memory(&["states", "actions"], recurrent),
                move |ctx, args| {
                    let memory = trailing_memory(args, recurrent)?;
                    let e = evaluate(ctx, input, args.get(0)?, args.get(1)?, memory)?;
                    Ok(vec![e[0], e[1]])
                },
            )
            .api(
                "update",
                params_with_memory(update_names, recurrent),
                move |ctx, args| {
                    let memory = trailing_memory(args, recurrent)?;
                    let e = evaluate(ctx, input, args.get(0)?, args.get(1)?, memory)?;
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
                },
            );
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
        if let Some(r) = &config.recurrence {
            spaces.extend(memory_spaces(r));
        }
        let exec = build_graph(root, &spaces, config.device, seed)?;
        Ok(PgLearner {
            graph: LearnerGraph::new(exec, format!("{name}/networks/"), seed),
            config: config.clone(),
            recorded: Recorded::NotYet,
        })
    }

    /// The config it was built from.
    pub fn config(&self) -> &PgConfig {
        &self.config
    }

    /// The log-likelihoods of `actions` and the state values of `states` under the current
    /// networks. A recurrent policy reads the states as one episode from its start.
    pub fn evaluate(&mut self, states: &[Value], actions: &[Value]) -> Result<(Vec<f64>, Vec<f64>)> {
        let mut inputs = vec![stack(states)?, stack(actions)?];
        if let Some(r) = &self.config.recurrence {
            let zeros = vec![0.0; 2 * r.units];
            let starts: Vec<bool> = (0..states.len()).map(|i| i == 0).collect();
            inputs.extend([
                memory_value(std::iter::once(zeros.as_slice()), r.units)?,
                flag_column(&starts)?,
            ]);
        }
        self.evaluate_inputs(&inputs)
    }

    fn evaluate_inputs(&mut self, inputs: &[Value]) -> Result<(Vec<f64>, Vec<f64>)> {
        let out = self.graph.exec.execute("evaluate", inputs)?;
        Ok((
            host_floats(out.first(), "pg-learner/evaluate")?,
            host_floats(out.get(1), "pg-learner/evaluate")?,
        ))
    }

    /// How a recurrent policy's `batch` splits into sequences (`None` for a memoryless one):
    /// one per copy, all of one length, each with the memories its actor acted from.
    fn sequences(&self, batch: &RolloutBatch) -> Result<Option<Sequences>> {
        let Some(r) = &self.config.recurrence else {
            return Ok(None);
        };
        let bad = |reason: String| CoreError::Config {
            at: "pg-learner/learn.batch".into(),
            reason,
        };
        let n = batch.len();
        if batch.memory.len() != n || batch.starts.len() != n {
            return Err(bad(format!(
                "a recurrent policy learns from steps with the memory its actor acted from: \
                 {n} steps, {} memories, {} starts",
                batch.memory.len(),
                batch.starts.len()
            )));
        }
        let len = batch.segments.first().copied().unwrap_or(0);
        if len == 0 || batch.segments.iter().any(|&l| l != len) || batch.segments.iter().sum::<usize>() != n {
            return Err(bad(format!(
                "a recurrent policy learns from sequences of one length, one per environment copy, \
                 got lengths {:?}: the copies stepped unequally (give get_actions every copy's state at each step)",
                batch.segments
            )));
        }
        Ok(Some(Sequences {
            count: batch.segments.len(),
            len,
            units: r.units,
        }))
    }

    /// One update on `batch` at `time_percentage` of the run; returns the (mean) loss.
    pub fn learn_rollout(&mut self, batch: &RolloutBatch, time_percentage: f64) -> Result<f64> {
        if batch.is_empty() {
            return Err(CoreError::Config {
                at: "pg-learner/learn".into(),
                reason: "the batch holds no steps".into(),
            });
        }
        let t = time_percentage.clamp(0.0, 1.0);
        let loss = match self.config.algorithm {
            PgAlgorithm::Ppo { .. } => self.update_ppo(batch, t)?,
            PgAlgorithm::ActorCritic { .. } => self.update_actor_critic(batch, t)?,
        };
        self.graph.counters.updates += 1;
        Ok(loss)
    }

    /// PPO: old log-likelihoods, values and advantages once, then minibatch steps.
    fn update_ppo(&mut self, batch: &RolloutBatch, t: f64) -> Result<f64> {
        let PgAlgorithm::Ppo { clip_ratio, .. } = &self.config.algorithm else {
            return Err(CoreError::Config {
                at: "ppo-learner".into(),
                reason: "not a PPO config".into(),
            });
        };
        let clip = Value::f32(clip_ratio.value(t) as f32);
        let weight_entropy = Value::f32(self.config.weight_entropy.value(t) as f32);
        let layout = self.sequences(batch)?;
        let mut whole = vec![stack(&batch.states)?, stack(&batch.actions)?];
        if let Some(q) = &layout {
            whole.extend(q.inputs(batch, &(0..q.count).collect::<Vec<_>>())?);
        }
        let (prev_log_probs, prev_values) = self.evaluate_inputs(&whole)?;
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
            // A recurrent policy's minibatch is whole sequences, as many as hold `m` steps.
            let (idx, memory) = match &layout {
                Some(q) => {
                    let k = m.div_ceil(q.len).min(q.count);
                    let seqs = rand::seq::index::sample(&mut self.graph.counters.rng, q.count, k).into_vec();
                    (q.rows(&seqs), Some(q.inputs(batch, &seqs)?))
                }
                None => (
                    rand::seq::index::sample(&mut self.graph.counters.rng, n, m).into_vec(),
                    None,
                ),
            };
            let pick = |v: &[Value]| stack(&idx.iter().map(|&i| v[i].clone()).collect::<Vec<_>>());
            let pick_f = |v: &[f64]| float_column(&idx.iter().map(|&i| v[i]).collect::<Vec<_>>());
            let mut inputs = vec![
                pick(&batch.states)?,
                pick(&batch.actions)?,
                pick_f(&prev_log_probs)?,
                pick_f(&prev_values)?,
                pick_f(&advantages)?,
                clip.clone(),
                weight_entropy.clone(),
                Value::f32(t as f32),
            ];
            inputs.extend(memory.into_iter().flatten());
            let out = self.graph.exec.execute("update", &inputs)?;
            total += host_scalar(out.first(), "pg-learner/update")?;
        }
        Ok(total / self.config.update.num_iterations as f64)
    }

    /// Actor-critic: one step on the whole batch (the loss computes GAE advantages).
    fn update_actor_critic(&mut self, batch: &RolloutBatch, t: f64) -> Result<f64> {
        let layout = self.sequences(batch)?;
        let mut inputs = vec![
            stack(&batch.states)?,
            stack(&batch.actions)?,
            float_column(&batch.rewards)?,
            flag_column(&batch.terminals)?,
            flag_column(&batch.sequence_indices)?,
            Value::f32(t as f32),
        ];
        if let Some(q) = &layout {
            inputs.extend(q.inputs(batch, &(0..q.count).collect::<Vec<_>>())?);
        }
        let out = self.graph.exec.execute("update", &inputs)?;
        host_scalar(out.first(), "pg-learner/update")
    }
}

impl<B: Backend> Learner for PgLearner<B> {
    /// `batch`: a Dict of `states`, `actions`, `rewards`, `terminals` and optional
    /// `sequence_indices` (see [`RolloutBatch::from_value`]).
    fn learn(&mut self, batch: &Value, time_percentage: f64) -> Result<Learned> {
        let loss = self.learn_rollout(
            &RolloutBatch::from_value(batch, "pg-learner/learn.batch")?,
            time_percentage,
        )?;
        Ok(Learned { loss, priorities: None })
    }

    fn publish(&mut self) -> Result<WeightSnapshot> {
        self.graph.publish_snapshot()
    }

    fn updates(&self) -> u64 {
        self.graph.counters.updates
    }
}

impl<B: Backend> GraphLearner<B> for PgLearner<B> {
    fn graph(&self) -> &LearnerGraph<B> {
        &self.graph
    }

    fn graph_mut(&mut self) -> &mut LearnerGraph<B> {
        &mut self.graph
    }
}

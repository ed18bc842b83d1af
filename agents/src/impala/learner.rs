//! `ImpalaLearner`: IMPALA's update graph (actor-critic networks, V-trace loss, optimizer)
//! as a [`Learner`]. Its batch is rollouts stacked along a leading batch axis
//! ([`crate::stack`] of the [`crate::RolloutAdder`]'s records); it evaluates them under its
//! current networks and steps on the V-trace loss, whose importance weights correct for the
//! policy having moved since the rollouts were acted. A recurrent policy unrolls each rollout
//! from the memory its actor acted from, through the bootstrap state as one more step.

use std::collections::BTreeMap;

use rlgraph_components::losses::{impala_loss, ImpalaLossSpec};
use rlgraph_core::spaces::{Array, BoolBox, FloatBox, Ranks, Space, Value};
use rlgraph_core::{unstack, Backend, CoreError, GraphFn, Op, Result};

use crate::actor_critic_networks::{actor_critic_root, memory_spaces};
use crate::agent_graph::{build_graph, evaluate, params_with_memory, trailing_memory, with_acting_apis};
use crate::agent_parts::AgentParts;
use crate::batch::{field, flag_column, host_floats, host_scalar, stack, time_major};
use crate::carried_memory::memory_rows;
use crate::impala::config::ImpalaConfig;
use crate::learner::{GraphLearner, Learned, Learner, LearnerGraph};
use crate::mask_key::mask_key;
use crate::snapshot::WeightSnapshot;

/// The root component's name; the networks' variables sit under `impala-agent/networks/`.
pub(crate) const ROOT: &str = "impala-agent";

/// IMPALA's learner.
pub struct ImpalaLearner<B: Backend> {
    graph: LearnerGraph<B>,
    memory_units: Option<usize>,
}

impl<B: Backend> ImpalaLearner<B> {
    /// The learner for `config` over these spaces, its variables drawn from `seed`.
    pub fn new(config: &ImpalaConfig, state_space: &Space, action_space: &Space, seed: u64) -> Result<Self> {
        ImpalaLearner::with_parts(config, &AgentParts::default(), state_space, action_space, seed)
    }

    /// [`ImpalaLearner::new`] with the layers and preprocessors of `parts` where given.
    pub(crate) fn with_parts(
        config: &ImpalaConfig,
        parts: &AgentParts<B>,
        state_space: &Space,
        action_space: &Space,
        seed: u64,
    ) -> Result<Self> {
        let loss = impala_loss::<B>(
            "loss",
            ImpalaLossSpec {
                discount: config.discount,
                weight_pg: config.weight_pg,
                weight_vf: config.weight_vf,
                weight_entropy: config.weight_entropy,
                reward_clipping: config.reward_clipping,
                ..ImpalaLossSpec::default()
            },
        );
        let mask = mask_key(&config.action_mask_key, state_space, action_space)?;
        let (root, input) = actor_critic_root(
            ROOT,
            &config.networks(parts),
            action_space,
            mask,
            loss,
            &config.optimizer,
        )?;
        let time_major = Ranks {
            batch: true,
            time: true,
            time_major: true,
        };
        let recurrent = config.recurrence.is_some();
        let with_memory = move |names: &[&'static str]| params_with_memory(names, recurrent);
        // The networks over every step and bootstrap state, rollout after rollout (so an LSTM
        // unrolls each rollout from its first memory), split into time-major `[T, B]`
        // log-likelihoods, values and entropies, and the bootstrap states' values `[B]`.
        // `grid` is any `[T, B]` input, for the layout.
        let time_major_eval = move |ctx: &mut rlgraph_core::ApiCtx<'_, B>, args: &rlgraph_core::Args, grid: Op| {
            let memory = trailing_memory(args, recurrent)?;
            let e = evaluate(ctx, input, args.get(0)?, args.get(1)?, memory)?;
            let mut split = |x| ctx.graph_fn("time_major", &[x, grid]);
            let (log_probs, values, entropy) = (split(e[0])?, split(e[1])?, split(e[2])?);
            Ok::<_, rlgraph_core::CoreError>([log_probs[0], values[0], entropy[0], values[1]])
        };
        let update_params = with_memory(&[
            "states",
            "actions",
            "behaviour_log_probs",
            "rewards",
            "terminals",
            "time_percentage",
        ]);
        let root = with_acting_apis(root, input, "networks", "get_action_and_log_likelihood", recurrent)
            .api("update", update_params, move |ctx, args| {
                let [log_probs, values, entropy, bootstrap] = time_major_eval(ctx, args, args.get(3)?)?;
                let inputs = [
                    log_probs,
                    args.get(2)?,
                    entropy,
                    values,
                    args.get(3)?,
                    args.get(4)?,
                    bootstrap,
                ];
                let loss = ctx.call("loss", "loss", &inputs)?[0];
                let vars = ctx.call("networks", "variables", &[])?;
                ctx.call("optimizer", "step", &[vars[0], loss, args.get(5)?])
            })
            // The log-likelihoods of `actions` and the values of `states`, one per row (a
            // recurrent policy's rows are sequences from each `memory`), as PPO's `evaluate`.
            .api("evaluate", with_memory(&["states", "actions"]), move |ctx, args| {
                let memory = trailing_memory(args, recurrent)?;
                let e = evaluate(ctx, input, args.get(0)?, args.get(1)?, memory)?;
                Ok(vec![e[0], e[1]])
            })
            .api(
                "evaluate_rollouts",
                with_memory(&["states", "actions", "rewards"]),
                move |ctx, args| {
                    let [log_probs, values, _, bootstrap] = time_major_eval(ctx, args, args.get(2)?)?;
                    Ok(vec![log_probs, values, bootstrap])
                },
            )
            .graph_fn(
                // `[B * (T + 1)]` rows, rollout after rollout, as `[T, B]` and the last step's `[B]`.
                GraphFn::tensors("time_major", |_, xs| {
                    let grid = B::shape(xs[1]);
                    let (t, b) = (grid[0], grid[1]);
                    let rows = B::transpose(&B::reshape(xs[0], &[b, t + 1])?, 0, 1)?;
                    Ok(vec![
                        B::narrow(&rows, 0, 0, t)?,
                        B::reshape(&B::narrow(&rows, 0, t, 1)?, &[b])?,
                    ])
                })
                .outputs(2)
                .infer(move |_, s| Ok(vec![s[0].with_ranks(time_major), s[0].clone()])),
            );
        let batch = |s: &Space| s.with_batch_rank(true);
        let grid = |s: Space| s.with_ranks(time_major);
        let mut spaces = BTreeMap::from([
            ("states".to_string(), batch(state_space)),
            ("actions".to_string(), batch(action_space)),
            (
                "behaviour_log_probs".to_string(),
                grid(FloatBox::new(Vec::<usize>::new()).into()),
            ),
            ("rewards".to_string(), grid(FloatBox::new(Vec::<usize>::new()).into())),
            ("terminals".to_string(), grid(BoolBox::new(Vec::<usize>::new()).into())),
            (
                "time_percentage".to_string(),
                Space::from(FloatBox::new(Vec::<usize>::new())),
            ),
        ]);
        if let Some(r) = &config.recurrence {
            spaces.extend(memory_spaces(r));
        }
        let exec = build_graph(root, &spaces, config.device, seed)?;
        Ok(ImpalaLearner {
            graph: LearnerGraph::new(exec, format!("{ROOT}/networks/"), seed),
            memory_units: config.memory_units(),
        })
    }

    /// The current networks' log-likelihoods of a batch's actions and values of its states,
    /// time-major (`[T][B]`), and the values of its bootstrap states (`[B]`): with the
    /// actor's weights, the log-likelihoods are the batch's `behaviour_log_probs`.
    pub fn evaluate_rollouts(&mut self, batch: &Value) -> Result<(Vec<f64>, Vec<f64>, Vec<f64>)> {
        let layout = RolloutLayout::of(batch, self.memory_units)?;
        let mut inputs = layout.steps.clone();
        inputs.push(layout.grid("rewards")?);
        inputs.extend(layout.memory.clone());
        let out = self.graph.exec.execute("evaluate_rollouts", &inputs)?;
        let at = "impala-learner/evaluate_rollouts";
        Ok((
            host_floats(out.first(), at)?,
            host_floats(out.get(1), at)?,
            host_floats(out.get(2), at)?,
        ))
    }
}

/// How the update reads a batch of rollouts stacked batch-first (`states` `[B, T, ...]`, ...,
/// `bootstrap_state` `[B, ...]`): the states and actions rollout after rollout, each rollout's
/// bootstrap state as one more step (its action a stand-in: only its value is read); the
/// per-step numbers time-major, `[T, B]`; a recurrent policy's first memories and starts.
struct RolloutLayout {
    batch: Value,
    /// `[B * (T + 1)]` states and actions.
    steps: Vec<Value>,
    /// `memory` (`[B, units]` each) and `starts` (`[B * (T + 1)]`), for a recurrent policy.
    memory: Vec<Value>,
    t: usize,
    b: usize,
}

impl RolloutLayout {
    fn of(batch: &Value, memory_units: Option<usize>) -> Result<Self> {
        let at = "impala-learner/learn.batch";
        let bad = |reason: String| CoreError::Config { at: at.into(), reason };
        let terminals = match field(batch, "terminals")? {
            Value::Bool(a) if a.shape().len() == 2 => a,
            other => {
                return Err(bad(format!(
                    "terminals: expected [rollouts, steps] bools, got {}",
                    other.kind_name()
                )))
            }
        };
        let (b, t) = (terminals.shape()[0], terminals.shape()[1]);
        if b == 0 || t == 0 {
            return Err(bad("the batch holds no steps".into()));
        }
        let rows = |key: &str| -> Result<Vec<Vec<Value>>> {
            let rollouts = unstack(&field(batch, key)?)?;
            if rollouts.len() != b {
                return Err(bad(format!("{key}: {} rollouts, terminals {b}", rollouts.len())));
            }
            rollouts.iter().map(unstack).collect()
        };
        let (states, actions) = (rows("states")?, rows("actions")?);
        let bootstrap = unstack(&field(batch, "bootstrap_state")?)?;
        if bootstrap.len() != b {
            return Err(bad(format!(
                "bootstrap_state: {} states for {b} rollouts",
                bootstrap.len()
            )));
        }
        let mut all_states = Vec::with_capacity(b * (t + 1));
        let mut all_actions = Vec::with_capacity(b * (t + 1));
        for (i, (s, a)) in states.into_iter().zip(actions).enumerate() {
            if s.len() != t || a.len() != t {
                return Err(bad(format!(
                    "rollout {i} has {} states and {} actions, terminals {t}",
                    s.len(),
                    a.len()
                )));
            }
            let (last_state, last_action) = (bootstrap.get(i), a.last().cloned());
            all_states.extend(s.into_iter().chain(last_state.cloned()));
            all_actions.extend(a.into_iter().chain(last_action));
        }
        let memory = match memory_units {
            None => vec![],
            Some(units) => {
                let missing = |key: &str| {
                    bad(format!(
                        "{key}: a recurrent policy learns from rollouts with the memory its actor acted \
                         from (RolloutAdder::new with the LSTM's units)"
                    ))
                };
                let memory = field(batch, "memory").map_err(|_| missing("memory"))?;
                let first_memories = memory_rows(&memory, units)?.len();
                if first_memories != b {
                    return Err(bad(format!("memory: {first_memories} first memories for {b} rollouts")));
                }
                let starts = match field(batch, "starts").map_err(|_| missing("starts"))? {
                    Value::Bool(s) => s,
                    other => return Err(bad(format!("starts: expected bools, got {}", other.kind_name()))),
                };
                if starts.shape() != [b, t] {
                    return Err(bad(format!("starts: expected [{b}, {t}], got {:?}", starts.shape())));
                }
                // The bootstrap state starts an episode where the rollout's last step ended one.
                let flags: Vec<bool> = (0..b)
                    .flat_map(|i| {
                        let row = &starts.data()[i * t..(i + 1) * t];
                        row.iter().copied().chain([terminals.data()[i * t + t - 1]])
                    })
                    .collect();
                vec![memory, flag_column(&flags)?]
            }
        };
        Ok(RolloutLayout {
            batch: batch.clone(),
            steps: vec![stack(&all_states)?, stack(&all_actions)?],
            memory,
            t,
            b,
        })
    }

    /// `key`'s `[B, T]` numbers as `[T, B]`.
    fn grid(&self, key: &str) -> Result<Value> {
        let column = time_major(&field(&self.batch, key)?)?;
        let shape = [self.t, self.b];
        Ok(match column {
            Value::Float32(a) => Value::Float32(Array::new(shape, a.into_parts().1)?),
            Value::Bool(a) => Value::Bool(Array::new(shape, a.into_parts().1)?),
            other => {
                return Err(CoreError::Config {
                    at: format!("impala-learner/learn.batch.{key}"),
                    reason: format!("expected floats or bools, got {}", other.kind_name()),
                })
            }
        })
    }
}

impl<B: Backend> Learner for ImpalaLearner<B> {
    /// `batch`: rollouts stacked batch-first (`states` `[B, T, ...]`, ...,
    /// `bootstrap_state` `[B, ...]`; a recurrent policy's `memory` and `starts` too).
    fn learn(&mut self, batch: &Value, time_percentage: f64) -> Result<Learned> {
        let layout = RolloutLayout::of(batch, self.memory_units)?;
        let mut inputs = layout.steps.clone();
        inputs.extend([
            layout.grid("behaviour_log_probs")?,
            layout.grid("rewards")?,
            layout.grid("terminals")?,
            Value::f32(time_percentage.clamp(0.0, 1.0) as f32),
        ]);
        inputs.extend(layout.memory);
        let out = self.graph.exec.execute("update", &inputs)?;
        self.graph.counters.updates += 1;
        Ok(Learned {
            loss: host_scalar(out.first(), "impala-learner/update")?,
            priorities: None,
        })
    }

    fn publish(&mut self) -> Result<WeightSnapshot> {
        self.graph.publish_snapshot()
    }

    fn updates(&self) -> u64 {
        self.graph.counters.updates
    }
}

impl<B: Backend> GraphLearner<B> for ImpalaLearner<B> {
    fn graph(&self) -> &LearnerGraph<B> {
        &self.graph
    }

    fn graph_mut(&mut self) -> &mut LearnerGraph<B> {
        &mut self.graph
    }
}

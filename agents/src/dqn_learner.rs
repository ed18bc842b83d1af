//! `DqnLearner`: DQN's update graph (policy, target, loss, optimizer, target sync) as a
//! [`Learner`], for DQN, its variants and Ape-X.

use std::collections::BTreeMap;

use rlgraph_components::losses::{dqn_loss, DqnLossSpec};
use rlgraph_components::{dueling_policy, layers_from_spec, optimizer, policy, synchronizable};
use rlgraph_core::spaces::{Array, BoolBox, FloatBox, Space, Value};
use rlgraph_core::{ApiCtx, Args, Backend, Component, CoreError, Op, Param, Result};

use crate::batch::{field, host_floats, host_scalar, transition_inputs};
use crate::dqn_config::{DqnConfig, MemoryKind};
use crate::learner::{Learned, Learner, LearnerGraph};
use crate::preprocessing::{preprocess, with_preprocessing};
use crate::snapshot::WeightSnapshot;

/// The root component's name; the policy's variables sit under `dqn-agent/policy/`.
pub(crate) const ROOT: &str = "dqn-agent";

/// The DQN policy component (plain or dueling) named `policy`.
pub(crate) fn dqn_policy<B: Backend>(
    config: &DqnConfig,
    action_space: &Space,
    num_actions: usize,
) -> Result<Component<B>> {
    let layers = layers_from_spec::<B>(&config.network_spec, "config.network_spec")?;
    Ok(if config.dueling {
        dueling_policy::<B>("policy", layers, num_actions, config.units_state_value_stream)
    } else {
        policy::<B>("policy", layers, action_space)?
    })
}

/// The number of actions of a scalar IntBox action space; an error for any other.
pub(crate) fn num_actions(action_space: &Space) -> Result<usize> {
    action_space
        .num_categories()
        .filter(|_| action_space.shape() == Some(&[][..]))
        .map(|n| n as usize)
        .ok_or_else(|| CoreError::Config {
            at: "action_space".into(),
            reason: format!(
                "DQN needs a scalar IntBox action space, got {}",
                action_space.describe()
            ),
        })
}

/// The Q-values of `policy` for `x`: the third output of a dueling policy's `get_q_values`,
/// or a plain policy's action-adapter outputs (the Categorical logits).
pub(crate) fn q_values<B: Backend>(ctx: &mut ApiCtx<'_, B>, policy: &str, dueling: bool, x: Op) -> Result<Op> {
    Ok(if dueling {
        ctx.call(policy, "get_q_values", &[x])?[2]
    } else {
        ctx.call(policy, "get_adapter_outputs", &[x])?[0]
    })
}

/// The DQN loss (`loss`, `loss_per_item`) of a batch `(states, actions, rewards, terminals,
/// next_states[, importance_weights])`.
fn dqn_loss_of<B: Backend>(
    ctx: &mut ApiCtx<'_, B>,
    args: &Args,
    has_pre: bool,
    dueling: bool,
    double_q: bool,
    weighted: bool,
) -> Result<Vec<Op>> {
    let s = preprocess(ctx, has_pre, args.get(0)?)?;
    let sp = preprocess(ctx, has_pre, args.get(4)?)?;
    let q_s = q_values(ctx, "policy", dueling, s)?;
    let qt_sp = q_values(ctx, "target-policy", dueling, sp)?;
    let mut loss_args = vec![q_s, args.get(1)?, args.get(2)?, args.get(3)?, qt_sp];
    if double_q {
        loss_args.push(q_values(ctx, "policy", dueling, sp)?);
    }
    if weighted {
        loss_args.push(args.get(5)?);
    }
    ctx.call("loss", "loss", &loss_args)
}

/// DQN's learner: `update(states, actions, rewards, terminals, next_states,
/// [importance_weights,] time_percentage)` and the target sync it schedules.
pub struct DqnLearner<B: Backend> {
    graph: LearnerGraph<B>,
    prioritized: bool,
    update_interval: u64,
    sync_interval: u64,
}

impl<B: Backend> DqnLearner<B> {
    /// The learner for `config` over these spaces, its variables drawn from `seed`.
    pub fn new(config: &DqnConfig, state_space: &Space, action_space: &Space, seed: u64) -> Result<Self> {
        let num_actions = num_actions(action_space)?;
        let policy_component = dqn_policy::<B>(config, action_space, num_actions)?;
        let target = policy_component.copy_as("target-policy", false);
        let prioritized = matches!(config.memory, MemoryKind::Prioritized { .. });
        let loss_spec = DqnLossSpec {
            discount: config.discount,
            double_q: config.double_q,
            huber_loss: config.huber_loss,
            importance_weights: prioritized,
            n_step: config.n_step as u32,
        };
        let (dueling, double_q) = (config.dueling, config.double_q);
        let root = Component::<B>::new(ROOT)
            .with_sub(policy_component)
            .with_sub(target)
            .with_sub(dqn_loss("loss", loss_spec))
            .with_sub(optimizer("optimizer", config.optimizer.clone()))
            .with_sub(synchronizable("target-sync", config.update.sync_tau));
        let (root, has_pre) = with_preprocessing(root, &config.preprocessing_spec)?;
        let mut update_params: Vec<Param> = ["states", "actions", "rewards", "terminals", "next_states"]
            .into_iter()
            .map(Param::new)
            .collect();
        if prioritized {
            update_params.push(Param::new("importance_weights"));
        }
        update_params.push(Param::new("time_percentage"));
        let time_at = update_params.len() - 1;
        let root = root
            .api("get_q_values", vec![Param::new("states")], move |ctx, args| {
                let x = preprocess(ctx, has_pre, args.get(0)?)?;
                Ok(vec![q_values(ctx, "policy", dueling, x)?])
            })
            .api("update", update_params, move |ctx, args| {
                let out = dqn_loss_of(ctx, args, has_pre, dueling, double_q, prioritized)?;
                let vars = ctx.call("policy", "variables", &[])?;
                let step = ctx.call("optimizer", "step", &[vars[0], out[0], args.get(time_at)?])?;
                Ok(vec![step[0], out[1]])
            })
            .api("sync_target", vec![], |ctx, _| {
                let src = ctx.call("policy", "variables", &[])?;
                let dst = ctx.call("target-policy", "variables", &[])?;
                ctx.call("target-sync", "sync", &[src[0], dst[0]])?;
                Ok(vec![])
            });
        let batch = |s: &Space| s.with_batch_rank(true);
        let scalar = || Space::from(FloatBox::new(Vec::<usize>::new())).with_batch_rank(true);
        let mut spaces = BTreeMap::from([
            ("states".to_string(), batch(state_space)),
            ("next_states".to_string(), batch(state_space)),
            ("actions".to_string(), batch(action_space)),
            ("rewards".to_string(), scalar()),
            (
                "terminals".to_string(),
                Space::from(BoolBox::new(Vec::<usize>::new())).with_batch_rank(true),
            ),
            (
                "time_percentage".to_string(),
                Space::from(FloatBox::new(Vec::<usize>::new())),
            ),
        ]);
        if prioritized {
            spaces.insert("importance_weights".into(), scalar());
        }
        let mut exec = crate::agent_graph::build_graph(root, &spaces, config.device, seed)?;
        // The target starts equal to the policy.
        exec.execute("sync_target", &[])?;
        Ok(DqnLearner {
            graph: LearnerGraph::new(exec, format!("{ROOT}/policy/"), seed),
            prioritized,
            update_interval: config.update.update_interval,
            sync_interval: config.update.sync_interval,
        })
    }
}

/// Replay priorities from per-item losses: `|loss| + 1e-6`, so no record becomes unreachable.
pub(crate) fn priorities_of(per_item: &[f64]) -> Vec<f64> {
    per_item.iter().map(|l| l.abs() + 1e-6).collect()
}

impl<B: Backend> Learner for DqnLearner<B> {
    /// `batch` holds `states`, `actions`, `rewards`, `terminals`, `next_states`, and with
    /// prioritized replay optionally `importance_weights` (ones when absent).
    fn learn(&mut self, batch: &Value, time_percentage: f64) -> Result<Learned> {
        let mut inputs = transition_inputs(batch)?;
        if self.prioritized {
            let n = match &inputs[2] {
                Value::Float32(r) => r.data().len(),
                other => {
                    return Err(CoreError::Config {
                        at: "dqn-learner/learn.rewards".into(),
                        reason: format!("expected float rewards, got {}", other.kind_name()),
                    })
                }
            };
            inputs.push(match field(batch, "importance_weights") {
                Ok(w) => w,
                Err(_) => Value::Float32(Array::new([n], vec![1.0; n])?),
            });
        }
        inputs.push(Value::f32(time_percentage.clamp(0.0, 1.0) as f32));
        let out = self.graph.exec.execute("update", &inputs)?;
        let loss = host_scalar(out.first(), "dqn-learner/update")?;
        let priorities = if self.prioritized {
            Some(priorities_of(&host_floats(out.get(1), "dqn-learner/update")?))
        } else {
            None
        };
        self.graph.counters.updates += 1;
        self.graph.counters.steps_since_sync += self.update_interval;
        if self.graph.counters.steps_since_sync >= self.sync_interval {
            self.graph.exec.execute("sync_target", &[])?;
            self.graph.counters.steps_since_sync = 0;
        }
        Ok(Learned { loss, priorities })
    }

    fn publish(&mut self) -> Result<WeightSnapshot> {
        self.graph.publish_snapshot()
    }

    fn updates(&self) -> u64 {
        self.graph.counters.updates
    }
}

impl<B: Backend> std::ops::Deref for DqnLearner<B> {
    type Target = LearnerGraph<B>;
    fn deref(&self) -> &LearnerGraph<B> {
        &self.graph
    }
}

impl<B: Backend> std::ops::DerefMut for DqnLearner<B> {
    fn deref_mut(&mut self) -> &mut LearnerGraph<B> {
        &mut self.graph
    }
}

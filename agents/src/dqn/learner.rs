//! `DqnLearner`: DQN's update graph (policy, target, loss, optimizer, target sync) as a
//! [`Learner`], for DQN, its variants and Ape-X.

use rlgraph_components::action_mask::apply_mask_fn;
use rlgraph_components::losses::{dqn_loss, DqnLossSpec};
use rlgraph_components::towers::{average_gradients, concat_batch, shard_of, split_batch, step_on_average};
use rlgraph_components::{optimizer, synchronizable, MultiGpuSync};
use rlgraph_core::spaces::{Array, FloatBox, Space, Value};
use rlgraph_core::{ApiCtx, Args, Backend, Component, CoreError, Device, Op, Param, Result};

use crate::agent_parts::AgentParts;
use crate::batch::{field_ref, host_floats, host_scalar, transition_inputs, update_input_spaces};
use crate::dqn::config::{DqnConfig, MemoryKind};
use crate::dqn::policy::{dqn_policy, q_values, ROOT};
use crate::learner::{GraphLearner, Learned, Learner, LearnerGraph};
use crate::mask_key::mask_key;
use crate::preprocessing::{action_mask, preprocess, with_preprocessing, StateInput};
use crate::snapshot::WeightSnapshot;
use crate::UpdateSpec;

/// The DQN loss (`loss`, `loss_per_item`) of a preprocessed batch `[states, actions,
/// rewards, terminals, next_states(, importance_weights)]`, from the sub-components
/// `policy`, `target-policy` and `loss` of the component whose API this is. With the next
/// states' action mask, the bootstrap's max (and double Q's argmax) runs over valid actions
/// only, through the graph function `mask`.
fn dqn_loss_of<B: Backend>(
    ctx: &mut ApiCtx<'_, B>,
    batch: &[Op],
    next_mask: Option<Op>,
    dueling: bool,
    double_q: bool,
) -> Result<Vec<Op>> {
    let (s, sp) = (batch[0], batch[4]);
    let q_s = q_values(ctx, "policy", dueling, s)?;
    let next_q = |ctx: &mut ApiCtx<'_, B>, policy: &str| -> Result<Op> {
        let q = q_values(ctx, policy, dueling, sp)?;
        match next_mask {
            Some(m) => ctx.graph_fn1("mask", &[q, m]),
            None => Ok(q),
        }
    };
    let qt_sp = next_q(ctx, "target-policy")?;
    let mut loss_args = vec![q_s, batch[1], batch[2], batch[3], qt_sp];
    if double_q {
        loss_args.push(next_q(ctx, "policy")?);
    }
    loss_args.extend(batch.get(5));
    ctx.call("loss", "loss", &loss_args)
}

/// The batch inputs of `update`, with both state batches through the preprocessors.
fn preprocessed_batch<B: Backend>(
    ctx: &mut ApiCtx<'_, B>,
    args: &Args,
    input: StateInput,
    weighted: bool,
) -> Result<Vec<Op>> {
    let mut batch = vec![preprocess(ctx, input, args.get(0)?)?];
    for i in 1..4 {
        batch.push(args.get(i)?);
    }
    batch.push(preprocess(ctx, input, args.get(4)?)?);
    if weighted {
        batch.push(args.get(5)?);
    }
    Ok(batch)
}

/// The batch parameter names of the DQN loss.
fn batch_params(weighted: bool) -> Vec<Param> {
    let mut names = vec!["states", "actions", "rewards", "terminals", "next_states"];
    if weighted {
        names.push("importance_weights");
    }
    names.into_iter().map(Param::new).collect()
}

/// Tower `t` of a multi-GPU DQN learner on `device`: copies of the policy, its target and
/// the loss, with `loss(batch...)` on an already preprocessed shard and the variables of its
/// policy and target, which the root copies in from tower 0 before each update.
fn dqn_tower<B: Backend>(
    t: usize,
    root: &Component<B>,
    device: Device,
    weighted: bool,
    dueling: bool,
    double_q: bool,
) -> Result<Component<B>> {
    let sub = |name: &str| {
        root.subs()
            .iter()
            .find(|c| c.name() == name)
            .ok_or_else(|| CoreError::Config {
                at: format!("{ROOT}/{name}"),
                reason: "a DQN tower copies this component, which is missing".into(),
            })
    };
    Ok(Component::<B>::new(format!("tower-{t}"))
        .with_kind("tower")
        .with_sub(sub("policy")?.copy_as("policy", true))
        .with_sub(sub("target-policy")?.copy_as("target-policy", false))
        .with_sub(sub("loss")?.copy_as("loss", false))
        .on_device(device)
        .api("loss", batch_params(weighted), move |ctx, args| {
            dqn_loss_of(ctx, &args.present(), None, dueling, double_q)
        })
        .api("policy_variables", vec![], |ctx, _| {
            ctx.call("policy", "variables", &[])
        })
        .api("target_variables", vec![], |ctx, _| {
            ctx.call("target-policy", "variables", &[])
        }))
}

/// Adds towers 1.. of `strategy` to the DQN root, and the graph functions and
/// synchronizers its multi-tower `update` uses. Tower 0 is the root's own policy.
fn with_towers<B: Backend>(
    mut root: Component<B>,
    strategy: &MultiGpuSync,
    weighted: bool,
    dueling: bool,
    double_q: bool,
) -> Result<Component<B>> {
    let n = strategy.towers;
    for (t, device) in strategy.devices::<B>()?.into_iter().enumerate().skip(1) {
        let tower = dqn_tower(t, &root, device, weighted, dueling, double_q)?;
        root = root
            .with_sub(tower)
            .with_sub(synchronizable(&format!("tower-{t}-sync"), 1.0))
            .with_sub(synchronizable(&format!("tower-{t}-target-sync"), 1.0));
    }
    let k = 5 + usize::from(weighted);
    Ok(root
        .graph_fn(split_batch(n, k))
        .graph_fn(average_gradients(n))
        .graph_fn(concat_batch("concat_loss_per_item")))
}

/// `update` over `n` towers: copy tower 0 (the root's policy and target) into the others,
/// split the preprocessed batch, one loss per tower on its shard, gradients averaged by shard
/// size, one optimizer step on tower 0, and the per-item losses joined in batch order.
fn tower_update<B: Backend>(
    ctx: &mut ApiCtx<'_, B>,
    batch: &[Op],
    n: usize,
    time: Op,
    dueling: bool,
    double_q: bool,
) -> Result<Vec<Op>> {
    let vars0 = ctx.call("policy", "variables", &[])?[0];
    let targets0 = ctx.call("target-policy", "variables", &[])?[0];
    let mut vars = vec![vars0];
    for t in 1..n {
        let tower = format!("tower-{t}");
        let v = ctx.call(&tower, "policy_variables", &[])?[0];
        let tv = ctx.call(&tower, "target_variables", &[])?[0];
        ctx.call(&format!("tower-{t}-sync"), "sync", &[vars0, v])?;
        ctx.call(&format!("tower-{t}-target-sync"), "sync", &[targets0, tv])?;
        vars.push(v);
    }
    let shards = ctx.graph_fn("split", batch)?;
    let mut losses = vec![];
    let mut per_item = vec![];
    for t in 0..n {
        let out = if t == 0 {
            dqn_loss_of(ctx, &shard_of(&shards, n, 0), None, dueling, double_q)?
        } else {
            ctx.call(&format!("tower-{t}"), "loss", &shard_of(&shards, n, t))?
        };
        losses.push(out[0]);
        per_item.push(out[1]);
    }
    let mean_loss = step_on_average(ctx, &vars, &losses, &shards[..n], time)?;
    let per_item = ctx.graph_fn("concat_loss_per_item", &per_item)?[0];
    Ok(vec![mean_loss, per_item])
}

/// DQN's learner: `update(states, actions, rewards, terminals, next_states,
/// [importance_weights,] time_percentage)` and the target sync it schedules.
pub struct DqnLearner<B: Backend> {
    graph: LearnerGraph<B>,
    prioritized: bool,
    update: UpdateSpec,
}

impl<B: Backend> DqnLearner<B> {
    /// The learner for `config` over these spaces, its variables drawn from `seed`.
    pub fn new(config: &DqnConfig, state_space: &Space, action_space: &Space, seed: u64) -> Result<Self> {
        DqnLearner::with_parts(config, &AgentParts::default(), state_space, action_space, seed)
    }

    /// [`DqnLearner::new`] with the network and preprocessors of `parts` where given.
    pub(crate) fn with_parts(
        config: &DqnConfig,
        parts: &AgentParts<B>,
        state_space: &Space,
        action_space: &Space,
        seed: u64,
    ) -> Result<Self> {
        let policy_component = dqn_policy::<B>(config, parts, action_space)?;
        let target = policy_component.copy_as("target-policy", false);
        let prioritized = matches!(config.memory, MemoryKind::Prioritized { .. });
        let loss_spec = DqnLossSpec {
            discount: config.discount,
            double_q: config.double_q,
            huber_loss: config.huber_loss,
            importance_weights: prioritized,
            n_step: config.n_step as u32,
            container_loss: config.container_loss,
            shared_container_action_target: config.shared_container_action_target,
        };
        let (dueling, double_q) = (config.dueling, config.double_q);
        let root = Component::<B>::new(ROOT)
            .with_kind("dqn-agent")
            .with_sub(policy_component)
            .with_sub(target)
            .with_sub(dqn_loss("loss", loss_spec))
            .with_sub(optimizer("optimizer", config.optimizer.clone()))
            .with_sub(synchronizable("target-sync", config.update.sync_tau));
        let towers = config.multi_gpu.as_ref().map_or(1, |m| m.towers);
        let root = match &config.multi_gpu {
            Some(strategy) if towers > 1 => with_towers(root, strategy, prioritized, dueling, double_q)?,
            _ => root,
        };
        let mask = mask_key(&config.action_mask_key, state_space, action_space)?;
        if let (Some(key), true) = (mask, towers > 1) {
            return Err(CoreError::Config {
                at: format!("states/{key}"),
                reason: "action masks are not built for multi_gpu_sync towers yet; \
                         use one device, or drop the mask from the observation"
                    .into(),
            });
        }
        let (root, input) = with_preprocessing(root, &config.preprocessing_spec, parts.preprocessor_members()?, mask)?;
        let mut update_params = batch_params(prioritized);
        update_params.push(Param::new("time_percentage"));
        let time_at = update_params.len() - 1;
        let root = root
            .api("get_q_values", vec![Param::new("states")], move |ctx, args| {
                let states = args.get(0)?;
                let x = preprocess(ctx, input, states)?;
                let q = q_values(ctx, "policy", dueling, x)?;
                match action_mask(ctx, input, states, false)? {
                    Some(m) => Ok(vec![ctx.graph_fn1("mask", &[q, m])?]),
                    None => Ok(vec![q]),
                }
            })
            .api("update", update_params, move |ctx, args| {
                let batch = preprocessed_batch(ctx, args, input, prioritized)?;
                let next_mask = action_mask(ctx, input, args.get(4)?, false)?;
                let time = args.get(time_at)?;
                if towers > 1 {
                    return tower_update(ctx, &batch, towers, time, dueling, double_q);
                }
                let out = dqn_loss_of(ctx, &batch, next_mask, dueling, double_q)?;
                let vars = ctx.call("policy", "variables", &[])?;
                let step = ctx.call("optimizer", "step", &[vars[0], out[0], time])?;
                Ok(vec![step[0], out[1]])
            })
            .graph_fn(apply_mask_fn("mask"))
            .api("sync_target", vec![], |ctx, _| {
                let src = ctx.call("policy", "variables", &[])?;
                let dst = ctx.call("target-policy", "variables", &[])?;
                ctx.call("target-sync", "sync", &[src[0], dst[0]])?;
                Ok(vec![])
            });
        let mut spaces = update_input_spaces(state_space, action_space);
        if prioritized {
            spaces.insert(
                "importance_weights".into(),
                Space::from(FloatBox::new(Vec::<usize>::new())).with_batch_rank(true),
            );
        }
        let mut exec = crate::agent_graph::build_graph(root, &spaces, config.device, seed)?;
        // The target starts equal to the policy.
        exec.execute("sync_target", &[])?;
        Ok(DqnLearner {
            graph: LearnerGraph::new(exec, format!("{ROOT}/policy/"), seed),
            prioritized,
            update: config.update.clone(),
        })
    }
}

/// A prioritized batch's `importance_weights`, ones (one per reward) where it has none.
fn importance_weights(batch: &Value, rewards: &Value) -> Result<Value> {
    if let Ok(w) = field_ref(batch, "importance_weights") {
        return Ok(w.clone());
    }
    match rewards {
        Value::Float32(r) => Ok(Value::Float32(Array::new([r.data().len()], vec![1.0; r.data().len()])?)),
        other => Err(CoreError::Config {
            at: "dqn-learner/learn.rewards".into(),
            reason: format!("expected float rewards, got {}", other.kind_name()),
        }),
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
        let weights = match self.prioritized {
            true => Some(importance_weights(batch, inputs[2])?),
            false => None,
        };
        inputs.extend(&weights);
        let time = Value::f32(time_percentage.clamp(0.0, 1.0) as f32);
        inputs.push(&time);
        let out = self.graph.exec.execute_refs("update", &inputs)?;
        let loss = host_scalar(out.first(), "dqn-learner/update")?;
        let priorities = if self.prioritized {
            Some(priorities_of(&host_floats(out.get(1), "dqn-learner/update")?))
        } else {
            None
        };
        self.graph.counters.updates += 1;
        if self.graph.counters.due_for_sync(&self.update) {
            self.graph.exec.execute("sync_target", &[])?;
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

impl<B: Backend> GraphLearner<B> for DqnLearner<B> {
    fn graph(&self) -> &LearnerGraph<B> {
        &self.graph
    }

    fn graph_mut(&mut self) -> &mut LearnerGraph<B> {
        &mut self.graph
    }
}

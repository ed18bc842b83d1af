//! `Td3Learner`: TD3's update graph (Fujimoto et al. 2018: a deterministic policy, twin
//! critics, their targets, two optimizers) as a [`Learner`], and [`td3_actor`], the acting
//! graph that loads its snapshots.
//!
//! Every update steps the critics toward `r + gamma (1 - d) min(Q1', Q2')(s', a')`, where
//! `a'` is the target policy's action plus clipped Gaussian noise (target smoothing); every
//! `policy_delay`-th update also steps the policy up the first critic and moves all targets
//! by `sync_tau`.

use std::collections::BTreeMap;

use rlgraph_components::policy::squashed_bounds;
use rlgraph_components::{dense, neural_network, optimizer, synchronizable, Activation, DenseSpec};
use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{ApiCtx, Args, Backend, Component, CoreError, GraphFn, Param, Result};

use crate::actor::GraphActor;
use crate::agent_graph::{actor_seed, build_graph, with_acting_apis};
use crate::agent_parts::AgentParts;
use crate::batch::{host_scalar, transition_inputs, update_input_spaces};
use crate::learner::{GraphLearner, Learned, Learner, LearnerGraph};
use crate::preprocessing::{preprocess, with_preprocessing, StateInput};
use crate::snapshot::WeightSnapshot;
use crate::td3::config::Td3Config;
use crate::td3::loss::td3_loss;
use crate::twin_critics::twin_critics;

/// The root component's name; the policy's variables sit under `td3-agent/policy/`.
const ROOT: &str = "td3-agent";

/// The action range TD3 acts in: `(low, high)` of a FloatBox whose elements share finite
/// bounds, and its element count.
fn action_range(action_space: &Space) -> Result<((f64, f64), usize)> {
    match squashed_bounds(action_space) {
        Some(bounds) => Ok((bounds, action_space.shape().unwrap_or(&[]).iter().product())),
        None => Err(CoreError::Config {
            at: "action_space".into(),
            reason: format!(
                "TD3 needs a FloatBox action space with the same finite bounds for every element, got {}",
                action_space.describe()
            ),
        }),
    }
}

/// TD3's deterministic policy `policy`: the hidden layers, a tanh layer of the action's size,
/// scaled to the action range. `get_deterministic_action(nn_inputs)` is that action;
/// `get_action` adds Gaussian noise of `exploration_noise` half-widths and clips to the range;
/// `get_smoothed_action` adds noise of `target_policy_noise` half-widths clipped to
/// `target_noise_clip` half-widths, then clips to the range (the target policy's smoothing).
fn deterministic_policy<B: Backend>(
    config: &Td3Config,
    layers: Vec<Component<B>>,
    action_space: &Space,
) -> Result<Component<B>> {
    let ((low, high), size) = action_range(action_space)?;
    let (half, mid) = ((high - low) / 2.0, (high + low) / 2.0);
    let shape = action_space.shape().unwrap_or(&[]).to_vec();
    let out = action_space.clone();
    let (explore, smooth, clip) = (
        config.exploration_noise * half,
        config.target_policy_noise * half,
        config.target_noise_clip * half,
    );
    let noisy = move |name: &'static str, std: f64, clip: Option<f64>| {
        GraphFn::tensors(name, move |ctx, xs| {
            let noise = B::normal(&B::shape(xs[0]), 0.0, std, B::dtype(xs[0]), ctx.device(), ctx.rng())?;
            let noise = match clip {
                Some(c) => B::clamp(&noise, -c, c)?,
                None => noise,
            };
            Ok(vec![B::clamp(&B::add(xs[0], &noise)?, low, high)?])
        })
        .infer_same()
    };
    let act = |method: &'static str| {
        move |ctx: &mut ApiCtx<'_, B>, args: &Args| {
            let h = ctx.call("neural-network", "call", &[args.get(0)?])?;
            let t = ctx.call("action-layer", "call", &h)?;
            let a = ctx.graph_fn1("to_range", &t)?;
            match method {
                "get_deterministic_action" => Ok(vec![a]),
                _ => ctx.graph_fn(method, &[a]),
            }
        }
    };
    let nn_inputs = || vec![Param::new("nn_inputs")];
    Ok(Component::new("policy")
        .with_kind("deterministic-policy")
        .with_sub(neural_network("neural-network", layers))
        .with_sub(dense(
            "action-layer",
            DenseSpec {
                activation: Activation::Tanh,
                ..DenseSpec::new(size)
            },
        ))
        .api("get_deterministic_action", nn_inputs(), act("get_deterministic_action"))
        .api("get_action", nn_inputs(), act("get_action"))
        .api("get_smoothed_action", nn_inputs(), act("get_smoothed_action"))
        .graph_fn(
            GraphFn::tensors("to_range", move |_, xs| {
                let mut to = vec![B::shape(xs[0])[0]];
                to.extend(&shape);
                Ok(vec![B::reshape(&B::affine(xs[0], half, mid)?, &to)?])
            })
            .infer(move |_, s| Ok(vec![out.with_ranks(s[0].ranks().unwrap_or_default())])),
        )
        .graph_fn(noisy("get_action", explore, None))
        .graph_fn(noisy("get_smoothed_action", smooth, Some(clip))))
}

/// TD3's learner.
pub struct Td3Learner<B: Backend> {
    graph: LearnerGraph<B>,
    config: Td3Config,
}

/// The critics' step on a batch `(states, actions, rewards, terminals, next_states,
/// time_percentage)`: the step's outputs, the loss first.
fn update_critics<B: Backend>(
    ctx: &mut ApiCtx<'_, B>,
    args: &Args,
    input: StateInput,
) -> Result<Vec<rlgraph_core::Op>> {
    let s = preprocess(ctx, input, args.get(0)?)?;
    let sp = preprocess(ctx, input, args.get(4)?)?;
    let next = ctx.call("target-policy", "get_smoothed_action", &[sp])?;
    let qt = ctx.call("target-critics", "q_values", &[sp, next[0]])?;
    let q = ctx.call("critics", "q_values", &[s, args.get(1)?])?;
    let loss = ctx.call(
        "loss",
        "critic_loss",
        &[args.get(2)?, args.get(3)?, q[0], q[1], qt[0], qt[1]],
    )?;
    let vars = ctx.call("critics", "variables", &[])?;
    ctx.call("critic-optimizer", "step", &[vars[0], loss[0], args.get(5)?])
}

/// The policy's step on `(states, time_percentage)`: up the first critic's value of its own
/// actions.
fn update_policy<B: Backend>(ctx: &mut ApiCtx<'_, B>, args: &Args, input: StateInput) -> Result<Vec<rlgraph_core::Op>> {
    let s = preprocess(ctx, input, args.get(0)?)?;
    let a = ctx.call("policy", "get_deterministic_action", &[s])?;
    let q = ctx.call("critics", "q_values", &[s, a[0]])?;
    let loss = ctx.call("loss", "actor_loss", &[q[0]])?;
    let vars = ctx.call("policy", "variables", &[])?;
    ctx.call("policy-optimizer", "step", &[vars[0], loss[0], args.get(1)?])
}

/// Moves both targets toward their sources with the synchronizers named `{how}-critics`
/// and `{how}-policy` (one each: a component's method takes one set of input spaces).
fn sync_targets<B: Backend>(how: &'static str) -> impl Fn(&mut ApiCtx<'_, B>, &Args) -> Result<Vec<rlgraph_core::Op>> {
    move |ctx, _| {
        for source in ["critics", "policy"] {
            let src = ctx.call(source, "variables", &[])?;
            let dst = ctx.call(&format!("target-{source}"), "variables", &[])?;
            ctx.call(&format!("{how}-{source}"), "sync", &[src[0], dst[0]])?;
        }
        Ok(vec![])
    }
}

impl<B: Backend> Td3Learner<B> {
    /// The learner for `config` over these spaces (a bounded FloatBox action space), with the
    /// layers and preprocessors of `parts` where given, its variables drawn from `seed`.
    pub(crate) fn new(
        config: &Td3Config,
        parts: &AgentParts<B>,
        state_space: &Space,
        action_space: &Space,
        seed: u64,
    ) -> Result<Self> {
        let policy = deterministic_policy::<B>(config, parts.network_layers(&config.network_spec)?, action_space)?;
        let critics = twin_critics::<B>(&config.value_function_spec, parts)?;
        let root = Component::<B>::new(ROOT)
            .with_kind("td3-agent")
            .with_sub(policy.copy_as("target-policy", false))
            .with_sub(policy)
            .with_sub(critics.copy_as("target-critics", false))
            .with_sub(critics)
            .with_sub(td3_loss::<B>("loss", config.discount))
            .with_sub(optimizer("policy-optimizer", config.optimizer.clone()))
            .with_sub(optimizer("critic-optimizer", config.value_function_optimizer.clone()))
            .with_sub(synchronizable("sync-critics", config.update.sync_tau))
            .with_sub(synchronizable("sync-policy", config.update.sync_tau))
            .with_sub(synchronizable("init-critics", 1.0))
            .with_sub(synchronizable("init-policy", 1.0));
        let (root, input) = with_preprocessing(root, &config.preprocessing_spec, parts.preprocessor_members()?, None)?;
        let params = |names: &[&'static str]| names.iter().copied().map(Param::new).collect::<Vec<_>>();
        let root = with_acting_apis(root, input, "policy", "get_action", false)
            .api(
                "update_critics",
                params(&[
                    "states",
                    "actions",
                    "rewards",
                    "terminals",
                    "next_states",
                    "time_percentage",
                ]),
                move |ctx, args| update_critics(ctx, args, input),
            )
            .api(
                "update_policy",
                params(&["states", "time_percentage"]),
                move |ctx, args| update_policy(ctx, args, input),
            )
            .api("sync_targets", vec![], sync_targets("sync"))
            .api("init_targets", vec![], sync_targets("init"));
        let spaces = update_input_spaces(state_space, action_space);
        let mut exec = build_graph(root, &spaces, rlgraph_core::Device::Cpu, seed)?;
        exec.execute("init_targets", &[])?;
        Ok(Td3Learner {
            graph: LearnerGraph::new(exec, format!("{ROOT}/policy/"), seed),
            config: config.clone(),
        })
    }

    /// The config it was built from.
    pub fn config(&self) -> &Td3Config {
        &self.config
    }
}

impl<B: Backend> Learner for Td3Learner<B> {
    /// `batch`: transitions as the replay memory holds them (`states`, `actions`, `rewards`,
    /// `terminals`, `next_states`). The loss returned is the critics'.
    fn learn(&mut self, batch: &Value, time_percentage: f64) -> Result<Learned> {
        let mut inputs = transition_inputs(batch)?;
        let time = Value::f32(time_percentage.clamp(0.0, 1.0) as f32);
        inputs.push(&time);
        let critic = self.graph.executor_mut().execute_refs("update_critics", &inputs)?;
        if self.graph.counted_update().is_multiple_of(self.config.policy_delay) {
            let exec = self.graph.executor_mut();
            exec.execute_refs("update_policy", &[inputs[0], &time])?;
            exec.execute("sync_targets", &[])?;
        }
        Ok(Learned {
            loss: host_scalar(critic.first(), "td3-learner/update_critics")?,
            priorities: None,
        })
    }

    fn publish(&mut self) -> Result<WeightSnapshot> {
        self.graph.publish_snapshot()
    }

    fn updates(&self) -> u64 {
        self.graph.updates()
    }
}

impl<B: Backend> GraphLearner<B> for Td3Learner<B> {
    fn graph(&self) -> &LearnerGraph<B> {
        &self.graph
    }

    fn graph_mut(&mut self) -> &mut LearnerGraph<B> {
        &mut self.graph
    }
}

/// TD3's actor, with the layers and preprocessors of `parts` where given: `get_action(states)`
/// is the policy's action plus exploration noise, clipped to the range;
/// `get_deterministic_action(states)` the policy's action. Its policy variables have the
/// learner's paths, so the learner's snapshots load into it.
pub(crate) fn td3_actor<B: Backend>(
    config: &Td3Config,
    parts: &AgentParts<B>,
    state_space: &Space,
    action_space: &Space,
    seed: u64,
) -> Result<GraphActor<B>> {
    let policy = deterministic_policy::<B>(config, parts.network_layers(&config.network_spec)?, action_space)?;
    let root = Component::<B>::new(ROOT).with_kind("td3-actor").with_sub(policy);
    let (root, input) = with_preprocessing(root, &config.preprocessing_spec, parts.preprocessor_members()?, None)?;
    let root = with_acting_apis(root, input, "policy", "get_action", false);
    let spaces = BTreeMap::from([("states".to_string(), state_space.with_batch_rank(true))]);
    let exec = build_graph(root, &spaces, rlgraph_core::Device::Cpu, actor_seed(seed))?;
    Ok(GraphActor::new(exec, &[], false))
}

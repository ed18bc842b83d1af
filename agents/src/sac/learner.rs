//! `SacLearner`: soft actor-critic's update graph (policy, twin critics and their Polyak
//! target, three optimizers) as a [`Learner`], and [`sac_actor`], the acting graph that loads
//! its snapshots.
//!
//! Each update makes two passes over one batch: the critics step on the critic loss, then
//! the policy steps on the actor loss and alpha on the alpha loss, both against the freshly
//! updated critics (two executions, because libtorch frees a graph after one backward pass
//! and the second pass must see the updated critics anyway). The targets move by `sync_tau`
//! every `sync_interval` steps.

use std::collections::BTreeMap;

use rlgraph_components::losses::{sac_loss, SacLossSpec};
use rlgraph_components::policy::squashed_bounds;
use rlgraph_components::{greedy_fn, optimizer, policy_with, synchronizable, PolicyOptions};
use rlgraph_core::spaces::{FloatBox, Space, Value};
use rlgraph_core::{ApiCtx, Args, Backend, Component, CoreError, DType, GraphFn, Op, Param, Result};

use crate::actor::GraphActor;
use crate::agent_graph::{actor_seed, build_graph, with_acting_apis};
use crate::agent_parts::AgentParts;
use crate::batch::{host_scalar, transition_inputs, update_input_spaces};
use crate::learner::{GraphLearner, Learned, Learner, LearnerGraph};
use crate::mask_key::refuse_mask;
use crate::preprocessing::{preprocess, with_preprocessing, StateInput};
use crate::sac::config::SacConfig;
use crate::snapshot::WeightSnapshot;
use crate::twin_critics::twin_critics;

/// The root component's name; the policy's variables sit under `sac-agent/policy/`.
const ROOT: &str = "sac-agent";

/// SAC's learner.
pub struct SacLearner<B: Backend> {
    graph: LearnerGraph<B>,
    config: SacConfig,
}

/// The number of categories of a scalar IntBox action space (SAC's discrete form), `None`
/// for a bounded FloatBox; any other space is refused.
fn discrete_actions(action_space: &Space) -> Result<Option<usize>> {
    let categories = action_space
        .num_categories()
        .filter(|_| action_space.shape() == Some(&[][..]))
        .map(|n| n as usize);
    if squashed_bounds(action_space).is_none() && categories.is_none() {
        return Err(CoreError::Config {
            at: "action_space".into(),
            reason: format!(
                "SAC needs a FloatBox action space with the same finite bounds for every element, \
                 or a scalar IntBox, got {}",
                action_space.describe()
            ),
        });
    }
    Ok(categories)
}

/// SAC's policy: tanh-squashed Gaussian, or over `categories` a Gumbel-softmax whose relaxed
/// one-hot actions the critics read.
fn sac_policy<B: Backend>(
    config: &SacConfig,
    parts: &AgentParts<B>,
    action_space: &Space,
    categories: Option<usize>,
) -> Result<Component<B>> {
    let layers = parts.network_layers(&config.network_spec)?;
    policy_with::<B>(
        "policy",
        layers,
        action_space,
        PolicyOptions {
            gumbel_softmax_temperature: categories.map(|_| config.gumbel_softmax_temperature),
            ..PolicyOptions::default()
        },
    )
}

/// Everything both update passes need: `(actor, critic, alpha)` losses of a batch
/// `(states, actions, rewards, terminals, next_states)`.
fn sac_losses<B: Backend>(
    ctx: &mut ApiCtx<'_, B>,
    args: &Args,
    input: StateInput,
    discrete: bool,
) -> Result<(Op, Op, Op)> {
    let s = preprocess(ctx, input, args.get(0)?)?;
    let sp = preprocess(ctx, input, args.get(4)?)?;
    let next = ctx.call("policy", "get_action_and_log_likelihood", &[sp])?;
    let lp_next = ctx.graph_fn1("per_item", &[next[1]])?;
    let qt = ctx.call("target-critics", "q_values", &[sp, next[0]])?;
    // Discrete actions were stored as ints; the critics read them as one-hot vectors, the
    // points of the simplex the relaxed (Gumbel-softmax) actions live in.
    let actions = if discrete {
        ctx.graph_fn1("one_hot", &[args.get(1)?])?
    } else {
        args.get(1)?
    };
    let q = ctx.call("critics", "q_values", &[s, actions])?;
    let fresh = ctx.call("policy", "get_action_and_log_likelihood", &[s])?;
    let lp_fresh = ctx.graph_fn1("per_item", &[fresh[1]])?;
    let q_fresh = ctx.call("critics", "q_values", &[s, fresh[0]])?;
    let out = ctx.call(
        "loss",
        "loss",
        &[
            args.get(2)?,
            args.get(3)?,
            q[0],
            q[1],
            qt[0],
            qt[1],
            lp_next,
            lp_fresh,
            q_fresh[0],
            q_fresh[1],
        ],
    )?;
    Ok((out[0], out[2], out[4]))
}

impl<B: Backend> SacLearner<B> {
    /// The learner for `config` over these spaces (a bounded FloatBox or a scalar IntBox
    /// action space), its variables drawn from `seed`.
    pub fn new(config: &SacConfig, state_space: &Space, action_space: &Space, seed: u64) -> Result<Self> {
        SacLearner::with_parts(config, &AgentParts::default(), state_space, action_space, seed)
    }

    /// [`SacLearner::new`] with the layers and preprocessors of `parts` where given.
    pub(crate) fn with_parts(
        config: &SacConfig,
        parts: &AgentParts<B>,
        state_space: &Space,
        action_space: &Space,
        seed: u64,
    ) -> Result<Self> {
        let categories = discrete_actions(action_space)?;
        let discrete = categories.is_some();
        let action_size = categories.unwrap_or_else(|| action_space.shape().unwrap_or(&[]).iter().product());
        let critics = twin_critics::<B>(&config.value_function_spec, parts)?;
        let loss = sac_loss::<B>(
            "loss",
            SacLossSpec {
                discount: config.discount,
                initial_alpha: config.initial_alpha,
                target_entropy: config.target_entropy,
            },
        );
        let root = Component::<B>::new(ROOT)
            .with_kind("sac-agent")
            .with_sub(sac_policy::<B>(config, parts, action_space, categories)?)
            .with_sub(critics.copy_as("target-critics", false))
            .with_sub(critics)
            .with_sub(loss)
            .with_sub(optimizer("policy-optimizer", config.optimizer.clone()))
            .with_sub(optimizer("critic-optimizer", config.value_function_optimizer.clone()))
            .with_sub(optimizer("alpha-optimizer", config.optimizer.clone()))
            .with_sub(synchronizable("target-sync", config.update.sync_tau))
            .with_sub(synchronizable("target-init", 1.0))
            .graph_fn(rlgraph_components::sum_item_dims::<B>("per_item"))
            .graph_fn(
                GraphFn::tensors("one_hot", move |_, xs| {
                    Ok(vec![B::one_hot(&B::cast(xs[0], DType::I64)?, action_size, DType::F32)?])
                })
                .infer(move |_, s| {
                    Ok(vec![
                        Space::from(FloatBox::new([action_size])).with_ranks(s[0].ranks().unwrap_or_default())
                    ])
                }),
            );
        refuse_mask(&config.action_mask_key, state_space, "SAC")?;
        let (root, input) = with_preprocessing(root, &config.preprocessing_spec, parts.preprocessor_members()?, None)?;
        let update_params = || {
            [
                "states",
                "actions",
                "rewards",
                "terminals",
                "next_states",
                "time_percentage",
            ]
            .into_iter()
            .map(Param::new)
            .collect::<Vec<_>>()
        };
        let sync = |sync: &'static str| {
            move |ctx: &mut ApiCtx<'_, B>, _: &Args| {
                let src = ctx.call("critics", "variables", &[])?;
                let dst = ctx.call("target-critics", "variables", &[])?;
                ctx.call(sync, "sync", &[src[0], dst[0]])?;
                Ok(vec![])
            }
        };
        let tuned = config.target_entropy.is_some();
        let root = with_acting_apis(root, input, "policy", "get_action", false)
            .api("update_critics", update_params(), move |ctx, args| {
                let (_, critic, _) = sac_losses(ctx, args, input, discrete)?;
                let vars = ctx.call("critics", "variables", &[])?;
                ctx.call("critic-optimizer", "step", &[vars[0], critic, args.get(5)?])
            })
            .api("update_policy_and_alpha", update_params(), move |ctx, args| {
                let (actor, _, alpha) = sac_losses(ctx, args, input, discrete)?;
                let policy_vars = ctx.call("policy", "variables", &[])?;
                let a = ctx.call("policy-optimizer", "step", &[policy_vars[0], actor, args.get(5)?])?;
                if !tuned {
                    return Ok(vec![a[0]]);
                }
                let loss_vars = ctx.call("loss", "variables", &[])?;
                let b = ctx.call("alpha-optimizer", "step", &[loss_vars[0], alpha, args.get(5)?])?;
                Ok(vec![a[0], b[0]])
            })
            .api("get_alpha", vec![], |ctx, _| ctx.call("loss", "get_alpha", &[]))
            .api("sync_targets", vec![], sync("target-sync"))
            .api("init_targets", vec![], sync("target-init"));
        let spaces = update_input_spaces(state_space, action_space);
        let mut exec = build_graph(root, &spaces, config.device, seed)?;
        exec.execute("init_targets", &[])?;
        Ok(SacLearner {
            graph: LearnerGraph::new(exec, format!("{ROOT}/policy/"), seed),
            config: config.clone(),
        })
    }

    /// The config it was built from.
    pub fn config(&self) -> &SacConfig {
        &self.config
    }

    /// The current temperature alpha.
    pub fn alpha(&mut self) -> Result<f64> {
        host_scalar(
            self.graph.exec.execute("get_alpha", &[])?.first(),
            "sac-learner/get_alpha",
        )
    }
}

impl<B: Backend> Learner for SacLearner<B> {
    /// `batch`: transitions as the replay memory holds them (`states`, `actions`, `rewards`,
    /// `terminals`, `next_states`). The loss returned is the critics'.
    fn learn(&mut self, batch: &Value, time_percentage: f64) -> Result<Learned> {
        let mut inputs = transition_inputs(batch)?;
        let time = Value::f32(time_percentage.clamp(0.0, 1.0) as f32);
        inputs.push(&time);
        let (exec, counters) = (&mut self.graph.exec, &mut self.graph.counters);
        let critic = exec.execute_refs("update_critics", &inputs)?;
        exec.execute_refs("update_policy_and_alpha", &inputs)?;
        counters.updates += 1;
        // Every update, not every round: SB3's SAC takes its Polyak step after each of its
        // `gradient_steps` (DQN's hard copies, `Counters::due_for_sync`, wait for the round).
        let update = &self.config.update;
        if counters.count_toward_sync(update.update_interval, update.sync_interval) {
            exec.execute("sync_targets", &[])?;
        }
        Ok(Learned {
            loss: host_scalar(critic.first(), "sac-learner/update_critics")?,
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

/// SAC's actor: `get_action(states)` samples the policy, `get_deterministic_action(states)`
/// takes its mode; with discrete actions both end in an argmax inside the graph (the relaxed
/// sample's argmax is a Categorical sample: Gumbel-max), so the environment gets integers.
/// Its policy variables have the learner's paths, so the learner's snapshots load into it.
pub fn sac_actor<B: Backend>(
    config: &SacConfig,
    state_space: &Space,
    action_space: &Space,
    seed: u64,
) -> Result<GraphActor<B>> {
    sac_actor_with(config, &AgentParts::default(), state_space, action_space, seed)
}

/// [`sac_actor`] with the layers and preprocessors of `parts` where given.
pub(crate) fn sac_actor_with<B: Backend>(
    config: &SacConfig,
    parts: &AgentParts<B>,
    state_space: &Space,
    action_space: &Space,
    seed: u64,
) -> Result<GraphActor<B>> {
    let categories = discrete_actions(action_space)?;
    let root = Component::<B>::new(ROOT)
        .with_kind("sac-actor")
        .with_sub(sac_policy::<B>(config, parts, action_space, categories)?);
    refuse_mask(&config.action_mask_key, state_space, "SAC")?;
    let (root, input) = with_preprocessing(root, &config.preprocessing_spec, parts.preprocessor_members()?, None)?;
    let root = match categories {
        None => with_acting_apis(root, input, "policy", "get_action", false),
        Some(_) => {
            let act = move |method: &'static str| {
                move |ctx: &mut ApiCtx<'_, B>, args: &Args| {
                    let s = preprocess(ctx, input, args.get(0)?)?;
                    let relaxed = ctx.call("policy", method, &[s])?[0];
                    Ok(vec![ctx.graph_fn1("argmax", &[relaxed])?])
                }
            };
            root.api("get_action", vec![Param::new("states")], act("get_action"))
                .api(
                    "get_deterministic_action",
                    vec![Param::new("states")],
                    act("get_deterministic_action"),
                )
                .graph_fn(greedy_fn("argmax"))
        }
    };
    let spaces = BTreeMap::from([("states".to_string(), state_space.with_batch_rank(true))]);
    let exec = build_graph(root, &spaces, config.device, actor_seed(seed))?;
    Ok(GraphActor::new(exec, &[], false))
}

impl<B: Backend> GraphLearner<B> for SacLearner<B> {
    fn graph(&self) -> &LearnerGraph<B> {
        &self.graph
    }

    fn graph_mut(&mut self) -> &mut LearnerGraph<B> {
        &mut self.graph
    }
}

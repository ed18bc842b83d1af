//! `ImpalaLearner`: IMPALA's update graph (actor-critic networks, V-trace loss, optimizer)
//! as a [`Learner`]. Its batch is rollouts stacked along a leading batch axis
//! ([`crate::stack`] of the [`crate::RolloutAdder`]'s records); it evaluates them under its
//! current networks and steps on the V-trace loss, whose importance weights correct for the
//! policy having moved since the rollouts were acted.

use std::collections::BTreeMap;

use rlgraph_components::losses::{impala_loss, ImpalaLossSpec};
use rlgraph_core::spaces::{BoolBox, FloatBox, Ranks, Space, Value};
use rlgraph_core::{Backend, GraphFn, Param, Result};

use crate::actor_critic_networks::{actor_critic_actor, actor_critic_root};
use crate::agent_graph::{build_graph, evaluate, with_acting_apis};
use crate::batch::{field, host_scalar, time_major};
use crate::impala_config::ImpalaConfig;
use crate::learner::{Learned, Learner, LearnerGraph};
use crate::preprocessing::{mask_key, preprocess};
use crate::snapshot::WeightSnapshot;

/// The root component's name; the networks' variables sit under `impala-agent/networks/`.
pub(crate) const ROOT: &str = "impala-agent";

/// IMPALA's learner.
pub struct ImpalaLearner<B: Backend> {
    graph: LearnerGraph<B>,
}

impl<B: Backend> ImpalaLearner<B> {
    /// The learner for `config` over these spaces, its variables drawn from `seed`.
    pub fn new(config: &ImpalaConfig, state_space: &Space, action_space: &Space, seed: u64) -> Result<Self> {
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
        let (root, input) = actor_critic_root(ROOT, &config.networks(), action_space, mask, loss, &config.optimizer)?;
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
        let root = with_acting_apis(root, input, "networks", "get_action_and_log_likelihood", false)
            // `states` ... `terminals` are time-major rollouts flattened to `[T * B]`.
            .api("update", params, move |ctx, args| {
                let e = evaluate(ctx, input, args.get(0)?, args.get(1)?, None)?;
                let sb = preprocess(ctx, input, args.get(5)?)?;
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
        Ok(ImpalaLearner {
            graph: LearnerGraph::new(exec, format!("{ROOT}/networks/"), seed),
        })
    }
}

/// The update's inputs from rollouts stacked batch-first: time-major, so step `t` of rollout
/// `b` sits at `t * B + b`.
fn update_inputs(batch: &Value, time_percentage: f64) -> Result<Vec<Value>> {
    let column = |key: &str| time_major(&field(batch, key)?);
    Ok(vec![
        column("states")?,
        column("actions")?,
        column("behaviour_log_probs")?,
        column("rewards")?,
        column("terminals")?,
        field(batch, "bootstrap_state")?,
        Value::f32(time_percentage.clamp(0.0, 1.0) as f32),
    ])
}

impl<B: Backend> Learner for ImpalaLearner<B> {
    /// `batch`: rollouts stacked batch-first (`states` `[B, T, ...]`, ...,
    /// `bootstrap_state` `[B, ...]`).
    fn learn(&mut self, batch: &Value, time_percentage: f64) -> Result<Learned> {
        let out = self
            .graph
            .exec
            .execute("update", &update_inputs(batch, time_percentage)?)?;
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

/// IMPALA's actor: `get_action(states)` gives the sampled actions and their
/// `behaviour_log_probs`, `get_deterministic_action(states)` the greedy ones. Its network
/// variables have the learner's paths, so the learner's snapshots load into it.
pub fn impala_actor<B: Backend>(
    config: &ImpalaConfig,
    state_space: &Space,
    action_space: &Space,
    seed: u64,
) -> Result<crate::GraphActor<B>> {
    actor_critic_actor(
        ROOT,
        &config.networks(),
        state_space,
        action_space,
        "get_action_and_log_likelihood",
        &["behaviour_log_probs"],
        seed,
    )
}

impl<B: Backend> std::ops::Deref for ImpalaLearner<B> {
    type Target = LearnerGraph<B>;
    fn deref(&self) -> &LearnerGraph<B> {
        &self.graph
    }
}

impl<B: Backend> std::ops::DerefMut for ImpalaLearner<B> {
    fn deref_mut(&mut self) -> &mut LearnerGraph<B> {
        &mut self.graph
    }
}

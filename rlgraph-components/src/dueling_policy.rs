//! The dueling Q-network policy of Wang et al. (2016) for DQN: one state-value stream and one
//! advantage stream (action adapter) per discrete action, `q = v + a - mean(a)`, as RLgraph's
//! `DuelingPolicy` builds it for primitive and container actions.

use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{Backend, Component, CoreError, GraphFn, Param, Result};

use crate::action_adapter::{action_adapter, AdapterSpec};
use crate::activation::Activation;
use crate::discrete_actions::{discrete_actions, greedy_fn, DiscreteAction};
use crate::layers::{dense, DenseSpec};
use crate::nest::join_like;
use crate::network::neural_network;

/// The dueling Q-network policy named `name` over `action_space` (a bounded IntBox, or a
/// Dict or Tuple of them): a state-value stream (a ReLU layer of `units_state_value_stream`
/// units, then one output) shared by every action, and per action an advantage stream (the
/// action adapter, `action-adapter` for one action, `action-adapter-<i>` in flat-key order
/// for container actions). API methods: `get_q_values(nn_inputs)` -> (state values,
/// advantages, q-values), the last two nested like the action space, and
/// `get_action(nn_inputs)` -> the greedy action.
pub fn dueling_policy<B: Backend>(
    name: &str,
    layers: Vec<Component<B>>,
    action_space: &Space,
    units_state_value_stream: usize,
    adapter: Option<&AdapterSpec>,
) -> Result<Component<B>> {
    let actions = discrete_actions(&action_space.with_batch_rank(false), "a dueling policy")?;
    let container = action_space.is_container();
    if let (true, Some(a)) = (container, adapter) {
        a.check_keys(&actions.iter().map(|a| a.key.as_str()).collect::<Vec<_>>())?;
    }
    let adapter_name = move |i: usize| match container {
        true => format!("action-adapter-{i}"),
        false => "action-adapter".to_string(),
    };
    let mut c = Component::new(name)
        .with_kind("dueling-policy")
        .with_sub(neural_network("neural-network", layers))
        .with_sub(dense(
            "dense-layer-state-value-stream",
            DenseSpec {
                activation: Activation::Relu,
                ..DenseSpec::new(units_state_value_stream)
            },
        ))
        .with_sub(dense("state-value-node", DenseSpec::new(1)));
    for (i, action) in actions.iter().enumerate() {
        let spec = match container {
            true => adapter.and_then(|a| a.for_action(&action.key)),
            false => adapter.cloned(),
        };
        c = c
            .with_sub(action_adapter::<B>(&adapter_name(i), action.units(), spec.as_ref())?)
            .graph_fn(dueling_fn::<B>(&format!("dueling-{i}"), action.clone()));
    }
    let n = actions.len();
    Ok(c.api("get_q_values", vec![Param::new("nn_inputs")], move |ctx, args| {
        let h = ctx.call("neural-network", "call", &[args.get(0)?])?;
        let v = ctx.call("dense-layer-state-value-stream", "call", &h)?;
        let v = ctx.call("state-value-node", "call", &v)?[0];
        let (mut values, mut advantages, mut q) = (None, vec![], vec![]);
        for i in 0..n {
            let a = ctx.call(&adapter_name(i), "call", &h)?[0];
            let out = ctx.graph_fn(&format!("dueling-{i}"), &[v, a])?;
            values.get_or_insert(out[0]);
            advantages.push(out[1]);
            q.push(out[2]);
        }
        let values = values.ok_or_else(|| CoreError::Component {
            component: "dueling-policy".into(),
            method: Some("get_q_values".into()),
            reason: "the action space has no actions".into(),
        })?;
        if !container {
            // One action: nothing to join (and no extra step when acting).
            return Ok(vec![values, advantages[0], q[0]]);
        }
        let advantages = ctx.graph_fn1("join", &advantages)?;
        let q = ctx.graph_fn1("join", &q)?;
        Ok(vec![values, advantages, q])
    })
    .api("get_action", vec![Param::new("nn_inputs")], |ctx, args| {
        let q = ctx.call_own("get_q_values", &[args.get(0)?])?;
        ctx.graph_fn("greedy", &[q[2]])
    })
    .graph_fn(join_like::<B>("join", &action_space.with_batch_rank(false)))
    .graph_fn(greedy_fn::<B>("greedy")))
}

/// `dueling-<i>`: the state values `v` `[batch, 1]` and the flat advantages `a` of `action`
/// to (state values `[batch]`, advantages and Q-values `[batch, ..shape, categories]`),
/// the mean taken over the categories of each action element.
fn dueling_fn<B: Backend>(name: &str, action: DiscreteAction) -> GraphFn<B> {
    let infer_action = action.clone();
    GraphFn::tensors(name, move |_, xs| {
        let (v, a) = (xs[0], xs[1]);
        let batch = B::shape(a)[0];
        let mut q_shape = vec![batch];
        q_shape.extend_from_slice(&action.shape);
        q_shape.push(action.categories);
        let a = B::reshape(a, &q_shape)?;
        let mut v_shape = vec![1; q_shape.len()];
        v_shape[0] = batch;
        let last = q_shape.len() - 1;
        let q = B::add(&B::reshape(v, &v_shape)?, &B::sub(&a, &B::mean(&a, &[last], true)?)?)?;
        Ok([B::squeeze(v, 1)?, a, q])
    })
    .outputs(3)
    .infer(move |_, s| {
        let ranks = s[1].ranks().unwrap_or_default();
        let mut shape = infer_action.shape.clone();
        shape.push(infer_action.categories);
        let q = Space::from(FloatBox::new(shape)).with_ranks(ranks);
        Ok(vec![Space::from(FloatBox::new([])).with_ranks(ranks), q.clone(), q])
    })
}

//! DQN's actor: an acting graph with epsilon-greedy exploration inside it (drawn from the
//! executor's seeded RNG), and Ape-X's worker-side priorities computed from its Q-values.

use std::collections::BTreeMap;

use rlgraph_components::action_mask::apply_mask_fn;
use rlgraph_components::{epsilon_exploration, greedy_fn};
use rlgraph_core::spaces::{FloatBox, Space, Value};
use rlgraph_core::{ApiCtx, Backend, Component, Op, Param, Result};

use crate::actor::GraphActor;
use crate::agent_graph::{actor_seed, build_graph};
use crate::agent_parts::AgentParts;
use crate::batch::{field, host_floats};
use crate::dqn::config::DqnConfig;
use crate::dqn::policy::{dqn_policy, q_values, ROOT};
use crate::mask_key::mask_key;
use crate::preprocessing::{action_mask, preprocess, with_preprocessing};

/// The actor of a DQN (or Ape-X) agent: `get_action(states, time_percentage)` gives the
/// epsilon-greedy actions, `get_deterministic_action(states)` the greedy ones, and
/// `get_q_values(states)` the Q-values (which [`apex_priorities`] uses; acting returns no
/// extras, so a step copies only the actions to the host). Where the states carry action
/// masks, invalid actions' Q-values are masked out, so both kinds of action are valid ones.
/// Its policy variables have the learner's paths, so the learner's snapshots load into it.
pub fn dqn_actor<B: Backend>(
    config: &DqnConfig,
    state_space: &Space,
    action_space: &Space,
    seed: u64,
) -> Result<GraphActor<B>> {
    dqn_actor_with(config, &AgentParts::default(), state_space, action_space, seed)
}

/// [`dqn_actor`] with the network and preprocessors of `parts` where given.
pub(crate) fn dqn_actor_with<B: Backend>(
    config: &DqnConfig,
    parts: &AgentParts<B>,
    state_space: &Space,
    action_space: &Space,
    seed: u64,
) -> Result<GraphActor<B>> {
    let dueling = config.dueling;
    let root = Component::<B>::new(ROOT)
        .with_kind("dqn-actor")
        .with_sub(dqn_policy::<B>(config, parts, action_space)?)
        .with_sub(epsilon_exploration::<B>(
            "exploration",
            config.epsilon.clone(),
            action_space,
        )?);
    let mask = mask_key(&config.action_mask_key, state_space, action_space)?;
    let (root, input) = with_preprocessing(root, &config.preprocessing_spec, parts.preprocessor_members()?, mask)?;
    // The Q-values of the states, and the mask they were masked with (where they carry one).
    let masked_q = move |ctx: &mut ApiCtx<'_, B>, states: Op, acting: bool| -> Result<(Op, Option<Op>)> {
        let x = preprocess(ctx, input, states)?;
        let q = q_values(ctx, "policy", dueling, x)?;
        match action_mask(ctx, input, states, acting)? {
            Some(m) => Ok((ctx.graph_fn1("mask", &[q, m])?, Some(m))),
            None => Ok((q, None)),
        }
    };
    let root = root
        .api("get_q_values", vec![Param::new("states")], move |ctx, args| {
            Ok(vec![masked_q(ctx, args.get(0)?, false)?.0])
        })
        .api(
            "get_deterministic_action",
            vec![Param::new("states")],
            move |ctx, args| {
                let (q, _) = masked_q(ctx, args.get(0)?, true)?;
                Ok(vec![ctx.graph_fn1("greedy", &[q])?])
            },
        )
        .api(
            "get_action",
            vec![Param::new("states"), Param::new("time_percentage")],
            move |ctx, args| {
                let (q, mask) = masked_q(ctx, args.get(0)?, true)?;
                let mut inputs = vec![ctx.graph_fn1("greedy", &[q])?, args.get(1)?];
                inputs.extend(mask);
                Ok(vec![ctx.call("exploration", "get_action", &inputs)?[0]])
            },
        )
        .graph_fn(apply_mask_fn("mask"))
        .graph_fn(greedy_fn("greedy"));
    let spaces = BTreeMap::from([
        ("states".to_string(), state_space.with_batch_rank(true)),
        (
            "time_percentage".to_string(),
            Space::from(FloatBox::new(Vec::<usize>::new())),
        ),
    ]);
    let exec = build_graph(root, &spaces, config.device, actor_seed(seed))?;
    Ok(GraphActor::new(exec, &[], true))
}

/// Ape-X's worker-side priorities of n-step transition `records` under the actor's current
/// Q-values: per record `|mean TD| + 1e-6` with `TD = R + discount^n (1 - terminal)
/// max_a Q(s', a) - Q(s, a_taken)`, the mean taken over every action element (and every
/// action of a container), as the DQN loss averages them.
pub fn apex_priorities<B: Backend>(
    actor: &mut GraphActor<B>,
    records: &Value,
    discount: f64,
    n_step: usize,
) -> Result<Vec<f64>> {
    let exec = actor.executor_mut();
    let mut q = exec.execute_many(&[
        ("get_q_values", vec![field(records, "states")?]),
        ("get_q_values", vec![field(records, "next_states")?]),
    ])?;
    let q_next = q
        .pop()
        .and_then(|mut v| v.pop())
        .ok_or_else(|| bad("no next-state Q-values".into()))?;
    let q_now = q
        .pop()
        .and_then(|mut v| v.pop())
        .ok_or_else(|| bad("no Q-values".into()))?;
    let rewards = host_floats(Some(&field(records, "rewards")?), "apex/rewards")?;
    let terminals: Vec<bool> = match field(records, "terminals")? {
        Value::Bool(a) => a.data().to_vec(),
        other => return Err(bad(format!("expected boolean terminals, got {}", other.kind_name()))),
    };
    let actions = field(records, "actions")?;
    let n = rewards.len();
    if n == 0 || terminals.len() != n {
        return Err(bad(format!(
            "{n} rewards and {} terminals do not make one batch",
            terminals.len()
        )));
    }
    let gamma_n = discount.powi(n_step as i32);
    let (mut td_sum, mut elements) = (vec![0.0; n], 0usize);
    let (now, next) = (q_now.flatten(), q_next.flatten());
    let taken = actions.flatten();
    if now.len() != taken.len() || next.len() != taken.len() {
        return Err(bad(format!("{} Q heads for {} actions", now.len(), taken.len())));
    }
    for (((key, q_s), (_, q_sp)), (_, a)) in now.into_iter().zip(next).zip(taken) {
        let q_s = host_floats(Some(q_s), "apex/get_q_values")?;
        let q_sp = host_floats(Some(q_sp), "apex/get_q_values")?;
        let a: Vec<usize> = match a {
            Value::Int32(a) => a.data().iter().map(|&x| x.max(0) as usize).collect(),
            Value::Int64(a) => a.data().iter().map(|&x| x.max(0) as usize).collect(),
            other => {
                return Err(bad(format!(
                    "expected integer actions at {key:?}, got {}",
                    other.kind_name()
                )))
            }
        };
        // Per record: `per_item` action elements, each with `width` Q-values.
        let per_item = a.len() / n;
        if per_item == 0 || a.len() != n * per_item || q_s.len() % a.len() != 0 || q_sp.len() != q_s.len() {
            return Err(bad(format!(
                "{n} rewards, {} actions and {} Q-values at {key:?} do not make one batch",
                a.len(),
                q_s.len()
            )));
        }
        let width = q_s.len() / a.len();
        for (j, &choice) in a.iter().enumerate() {
            let row = j * width..(j + 1) * width;
            let q_taken = *q_s[row.clone()]
                .get(choice)
                .ok_or_else(|| bad(format!("action {choice} at {key:?} is not one of {width}")))?;
            let best_next = q_sp[row].iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let i = j / per_item;
            let bootstrap = if terminals[i] { 0.0 } else { gamma_n * best_next };
            td_sum[i] += rewards[i] + bootstrap - q_taken;
        }
        elements += per_item;
    }
    Ok(td_sum.iter().map(|td| (td / elements as f64).abs() + 1e-6).collect())
}

fn bad(reason: String) -> rlgraph_core::CoreError {
    rlgraph_core::CoreError::Config {
        at: "apex_priorities".into(),
        reason,
    }
}

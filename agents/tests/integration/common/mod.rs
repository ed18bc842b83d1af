//! What the agent tests share: one environment step acted, taken and observed, and runs of
//! them on Pendulum.

use agents::{Agent, Transition};
use rlgraph_core::spaces::Value;
use rlgraph_envs::{Env, Step};

/// Acts on `state` (exploring, at time percentage 0.5), steps `env`, and has the agent
/// observe the transition as environment copy `env_id`. `state` moves on to the next
/// observation, or to a fresh reset when the episode ended. Returns the action and the step.
pub fn act_and_observe(agent: &mut dyn Agent, env: &mut dyn Env, state: &mut Value, env_id: usize) -> (Value, Step) {
    let action = agent
        .get_actions(std::slice::from_ref(state), true, 0.5)
        .unwrap()
        .remove(0);
    let step = env.step(&action).unwrap();
    let next = if step.terminated || step.truncated {
        env.reset(None).unwrap()
    } else {
        step.observation.clone()
    };
    let transition = Transition {
        state: std::mem::replace(state, next),
        action: action.clone(),
        reward: step.reward,
        terminated: step.terminated,
        truncated: step.truncated,
        next_state: step.observation.clone(),
    };
    agent.observe(env_id, transition).unwrap();
    (action, step)
}

/// Plays `steps` steps of Pendulum-v1 from a reset with `seed`, updating after each when
/// `update`; returns the rewards and the losses.
pub fn pendulum_steps(agent: &mut dyn Agent, seed: u64, steps: usize, update: bool) -> (Vec<f64>, Vec<f64>) {
    let mut env = rlgraph_envs::Pendulum::new(0);
    let mut state = env.reset(Some(seed)).unwrap();
    let (mut rewards, mut losses) = (vec![], vec![]);
    for _ in 0..steps {
        let (_, step) = act_and_observe(agent, &mut env, &mut state, 0);
        rewards.push(step.reward);
        if update {
            losses.extend(agent.update(0.5).unwrap());
        }
    }
    (rewards, losses)
}

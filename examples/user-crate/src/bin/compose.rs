//! A second program of theirs: a DQN composed from Rust values (their layer among them, no
//! JSON network) trained 400 steps on their environment; it prints the run's summary.

use rlgraph::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    own_rl::register();
    let env = make("OwnPole-v0", 0)?;
    let (states, actions) = (env.state_space().clone(), env.action_space().clone());
    let hidden = dense::<Candle>(
        "hidden",
        DenseSpec {
            activation: Activation::Tanh,
            ..DenseSpec::new(16)
        },
    );
    let agent = DqnAgent::<Candle>::builder(serde_json::json!({
        "type": "dqn",
        "update_spec": {"update_interval": 4, "batch_size": 16, "steps_before_update": 32},
    }))
    .network(vec![hidden, own_rl::halve::<Candle>()])
    .optimizer(OptimizerSpec::adam(0.001))
    .memory(ReplayMemory::new(
        "replay",
        &transition_space(&states, &actions)?,
        1000,
    )?)
    .build(&states, &actions, 0)?;
    let envs = VectorEnv::new(vec![make("OwnPole-v0", 1)?], Stepping::Sequential)?;
    let mut worker = SingleThreadedWorker::new(agent, envs, 0);
    let length = RunLength {
        timesteps: 400,
        episodes: None,
        pause_at: None,
    };
    let run = drive(&mut worker, &DriveOptions::new(length), &mut |_| {})?;
    println!("{}", run.summary());
    Ok(())
}

//! Every RLgraph config kept in `configs/rlgraph/` (RLgraph's own files, unmodified) either
//! builds its agent here, or is refused by the name of the one thing it lacks.

use backend_candle::Candle;
use rlgraph_core::spaces::Space;
use rlgraph_envs::make;
use serde_json::json;

/// What building a reference config gives: `Ok(())`, or an error containing every part.
enum Outcome {
    Builds,
    Refused(&'static [&'static str]),
}

/// Stands for Atari Pong's spaces (RGB frames, six actions), which need no Python here.
const PONG: &str = "pong";

fn spaces(env: &str) -> (Space, Space) {
    if env == PONG {
        let frames = json!({"type": "int-box", "shape": [210, 160, 3], "low": 0, "high": 256, "dtype": "uint8"});
        return (
            Space::from_json(&frames).unwrap(),
            Space::from_json(&json!({"type": "int-box", "high": 6})).unwrap(),
        );
    }
    let probe = make(env, 0).unwrap();
    (probe.state_space().clone(), probe.action_space().clone())
}

#[test]
fn each_reference_config_builds_or_names_what_it_lacks() {
    use Outcome::*;
    let cases: [(&str, &str, Outcome); 15] = [
        ("actor_critic_agent_for_cartpole.json", "CartPole-v1", Builds),
        // Ray's settings are noted and unused: one process runs every role.
        ("apex_agent_cartpole.json", "CartPole-v1", Builds),
        ("apex_pong.json", PONG, Builds),
        ("dqn_agent_for_2x2_gridworld.json", "GridWorld-2x2", Builds),
        (
            "dqn_agent_for_2x2_gridworld_with_container_actions.json",
            "GridWorld-2x2-ftj-xy+orientation",
            Builds,
        ),
        ("dqn_agent_for_cartpole.json", "CartPole-v1", Builds),
        ("dqn_agent_for_pong.json", PONG, Builds),
        ("dqn_cartpole.json", "CartPole-v1", Builds),
        (
            "impala_agent_for_cartpole.json",
            "CartPole-v1",
            Refused(&["config.environment_spec", "Gymnasium bridge"]),
        ),
        (
            "impala_distributed_clusterspec.json",
            "CartPole-v1",
            Refused(&["cluster spec", "distributed"]),
        ),
        ("multi_gpu_dqn_for_2x2_gridworld.json", "GridWorld-2x2", Builds),
        ("ppo_agent_for_cartpole.json", "CartPole-v1", Builds),
        ("ppo_agent_for_pendulum.json", "Pendulum-v1", Builds),
        ("sac_agent_for_pendulum.json", "Pendulum-v1", Builds),
        (
            "test_lstm_nn.json",
            "CartPole-v1",
            Refused(&["neural-network spec", "not an agent config"]),
        ),
    ];
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/rlgraph");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".json"))
        .collect();
    files.sort();
    let named: Vec<&str> = cases.iter().map(|c| c.0).collect();
    assert_eq!(files, named, "every reference config has a case");
    for (file, env, outcome) in cases {
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap();
        let (states, actions) = spaces(env);
        let built = agents::build_agent::<Candle>(&json, &states, &actions, 0);
        match (outcome, built) {
            (Builds, Ok(_)) => {}
            (Builds, Err(e)) => panic!("{file}: {e}"),
            (Refused(parts), Err(e)) => {
                let e = e.to_string();
                assert_eq!(e.lines().count(), 1, "{file}: {e}");
                assert!(parts.iter().all(|p| e.contains(p)), "{file}: {e}");
            }
            (Refused(_), Ok(_)) => panic!("{file} built; it should have been refused"),
        }
    }
    // On an environment with one action, the per-action adapters are what does not fit.
    let container: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("dqn_agent_for_2x2_gridworld_with_container_actions.json")).unwrap(),
    )
    .unwrap();
    let probe = make("GridWorld-2x2", 0).unwrap();
    let err = agents::build_agent::<Candle>(&container, probe.state_space(), probe.action_space(), 0)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("config.policy_spec.action_adapter_spec") && err.contains("container actions"),
        "{err}"
    );
    // Keys read without a use are reported, not dropped silently.
    let multi: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("multi_gpu_dqn_for_2x2_gridworld.json")).unwrap())
            .unwrap();
    let unused: Vec<String> = agents::unused_keys(&multi).into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        unused,
        [
            "config.execution_spec.session_config",
            "config.execution_spec.disable_monitoring",
            "config.execution_spec.gpu_spec.per_process_gpu_memory_fraction"
        ]
    );
}

//! A registered algorithm's ONNX export: refused by name until the algorithm registers its
//! acting plan, which it may register once; a preset of DQN that registers DQN's plan then
//! exports the built-in DQN's graph byte for byte.

use agents::{build_agent, register_acting_plan, register_algorithm, DqnAgent, DqnConfig};
use backend_candle::Candle;
use rlgraph_core::spaces::{FloatBox, IntBox, Space};
use rlgraph_onnx::export_onnx;
use serde_json::{json, Value as Json};

/// A DQN config with a dueling head, small enough to export in milliseconds.
fn dqn_config() -> Json {
    json!({
        "type": "dqn",
        "network_spec": [{"type": "dense", "units": 5, "activation": "tanh", "scope": "hidden"}],
        "policy_spec": {"type": "dueling-policy", "units_state_value_stream": 3}
    })
}

#[test]
fn a_registered_algorithm_exports_once_it_registers_its_acting_plan() {
    let (states, actions) = (Space::from(FloatBox::new([4])), Space::from(IntBox::new(3).unwrap()));
    // A preset of DQN, as a user's crate might register it.
    register_algorithm::<Candle, Json>("onnx-test-dqn", |_, s, a, seed| {
        Ok(Box::new(DqnAgent::<Candle>::new(DqnConfig::parse(&dqn_config())?, s, a, seed)?) as _)
    })
    .unwrap();
    let weights = build_agent::<Candle>(&dqn_config(), &states, &actions, 7)
        .unwrap()
        .get_weights()
        .unwrap();
    let registered = json!({"type": "onnx-test-dqn"});
    let e = export_onnx(&registered, &states, &actions, &weights)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(r#"agents of type "onnx-test-dqn""#) && e.contains("register_acting_plan"),
        "{e}"
    );
    register_acting_plan::<Json>("onnx-test-dqn", |_| Ok(DqnConfig::parse(&dqn_config())?.acting_plan())).unwrap();
    let again = register_acting_plan::<Json>("onnx-test-dqn", |_| Ok(DqnConfig::parse(&dqn_config())?.acting_plan()));
    assert!(again.unwrap_err().to_string().contains("already registered"));
    // Its plan is the built-in DQN's, so the same weights make the same graph, byte for byte;
    // the models differ only in the config their metadata carries, which comes last: its
    // entry's tag (field 14, bytes: 114) and length sit in the five bytes before its key.
    let graph = |model: &[u8]| -> Vec<u8> {
        let marker = b"rlgraph.config";
        let at = model
            .windows(marker.len())
            .position(|w| w == marker)
            .expect("the config's metadata");
        let tag = (at - 5..at).rev().find(|&i| model[i] == 114).expect("the entry's tag");
        model[..tag].to_vec()
    };
    let built_in = export_onnx(&dqn_config(), &states, &actions, &weights).unwrap();
    let exported = export_onnx(&registered, &states, &actions, &weights).unwrap();
    assert!(graph(&built_in).len() > 1000);
    assert!(
        graph(&exported) == graph(&built_in),
        "the registered plan made another graph"
    );
}

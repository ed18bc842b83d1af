//! A component type of one's own, registered by name: built from its JSON spec with typed
//! settings, tested alone, used as a layer of a DQN network from a config, and checked when
//! the config loads, on candle and on tch.

use agents::build_agent;
use rlgraph_components::{from_spec, register_component, registered_components};
use rlgraph_core::spaces::{FloatBox, IntBox, Space, Value};
use rlgraph_core::{Backend, Component, ComponentTest, GraphFn, Param};
use rlgraph_tests::both_backends;
use serde_json::json;

/// The settings of `soft-sign`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SoftSign {
    /// What the squashed value is multiplied by.
    scale: f64,
}

/// `scale * x / (1 + |x|)`, elementwise.
fn soft_sign<B: Backend>(s: SoftSign, _at: &str) -> rlgraph_core::Result<Component<B>> {
    Ok(Component::new("soft-sign")
        .api("call", vec![Param::new("inputs")], |ctx, args| {
            ctx.graph_fn("apply", &[args.get(0)?])
        })
        .graph_fn(
            GraphFn::tensors("apply", move |_, xs| {
                let squashed = B::div(xs[0], &B::affine(&B::abs(xs[0])?, 1.0, 1.0)?)?;
                Ok(vec![B::affine(&squashed, s.scale, 0.0)?])
            })
            .infer_same(),
        ))
}

/// Registers `soft-sign` on `B` once for the process (each test may be the first).
fn registered<B: Backend>() {
    match register_component::<B, SoftSign>("soft-sign", soft_sign::<B>) {
        Ok(()) => {}
        Err(e) if e.to_string().contains("already registered") => {}
        Err(e) => panic!("{e}"),
    }
    assert!(registered_components().contains(&"soft-sign".to_string()));
}

fn dqn(layer: serde_json::Value) -> serde_json::Value {
    json!({
        "type": "dqn",
        "network_spec": [{"type": "dense", "units": 8, "activation": "tanh"}, layer],
        "memory_spec": {"type": "replay", "capacity": 64},
        "update_spec": {"update_interval": 4, "batch_size": 8, "steps_before_update": 8}
    })
}

both_backends! {
    fn a_registered_type_is_built_from_its_spec_and_computes_what_it_says<B>() {
        registered::<B>();
        let c = from_spec::<B>(&json!({"type": "Soft_Sign", "scale": 2.0}), "spec").unwrap();
        let inputs = Space::from(FloatBox::new([3])).with_batch_rank(true);
        let mut test = ComponentTest::<B>::new(c, [("inputs", inputs)], 0).unwrap();
        // By hand: 2 * (-3 / 4), 2 * (0 / 1), 2 * (1 / 2).
        let x = Value::Float32(rlgraph_core::spaces::Array::new([1, 3], vec![-3.0, 0.0, 1.0]).unwrap());
        let out = test.call("call", &[x]).unwrap();
        let expected = Value::Float32(rlgraph_core::spaces::Array::new([1, 3], vec![-1.5, 0.0, 1.0]).unwrap());
        assert_eq!(out, vec![expected]);
    }

    fn a_dqn_network_takes_a_registered_layer_and_its_config_is_checked_on_load<B>() {
        registered::<B>();
        let (states, actions) = (Space::from(FloatBox::new([4])), Space::from(IntBox::new(2).unwrap()));
        let mut agent = build_agent::<B>(&dqn(json!({"type": "soft-sign", "scale": 1.0})), &states, &actions, 0).unwrap();
        let obs = Value::Float32(rlgraph_core::spaces::Array::new([4], vec![0.1, 0.0, -0.1, 0.2]).unwrap());
        let acted = agent.get_actions(&[obs], false, 0.0).unwrap();
        assert!(acted.len() == 1 && actions.contains(&acted[0]), "{acted:?}");
        // A typo key and a wrong type are refused when the config loads, by key path.
        for (layer, path) in [
            (json!({"type": "soft-sign", "scal": 1.0}), "config.network_spec[1].scal"),
            (json!({"type": "soft-sign", "scale": "big"}), "config.network_spec[1].scale"),
        ] {
            let e = agents::DqnConfig::parse(&dqn(layer.clone())).err().unwrap_or_else(|| panic!("accepts {layer}")).to_string();
            assert!(e.contains(path), "{layer}: {e}");
        }
        // A type no one registered says how to register one.
        let e = agents::DqnConfig::parse(&dqn(json!({"type": "soft-plus-plus"}))).err().unwrap().to_string();
        assert!(e.contains("register_component") && e.contains("soft-sign"), "{e}");
        // A built-in name, or an alias of one, cannot be taken.
        for taken in ["dense", "DenseLayer", "adam"] {
            let e = register_component::<B, SoftSign>(taken, soft_sign::<B>).unwrap_err().to_string();
            assert!(e.contains("built-in"), "{taken}: {e}");
        }
    }
}

//! Any JSON as an agent config, built on CartPole's spaces (and a continuous action space);
//! an agent that builds is asked for an action. Refusals are fine; panics are not.
#![no_main]

use backend_candle::Candle;
use libfuzzer_sys::fuzz_target;
use rlgraph_spaces::{Array, FloatBox, IntBox, Space, Value};

fuzz_target!(|data: &[u8]| {
    let Ok(config) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let states = Space::from(FloatBox::new([4]));
    let Ok(discrete) = IntBox::new(2) else { return };
    let Ok(continuous) = FloatBox::bounded([1], -2.0, 2.0) else {
        return;
    };
    for actions in [Space::from(discrete), Space::from(continuous)] {
        if let Ok(mut agent) = agents::build_agent::<Candle>(&config, &states, &actions, 0) {
            if let Ok(a) = Array::new([4], vec![0.01f32, -0.02, 0.03, 0.0]) {
                let _ = agent.get_actions(&[Value::Float32(a)], true, 0.5);
            }
        }
    }
});

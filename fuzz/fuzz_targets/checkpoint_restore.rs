//! A checkpoint from arbitrary bytes, restored into a DQN agent with a prioritized replay
//! memory. Every file but a real one must be refused, and a refused one changes nothing.
#![no_main]

use std::sync::atomic::{AtomicU64, Ordering};

use agents::Agent;
use backend_candle::Candle;
use libfuzzer_sys::fuzz_target;
use rlgraph_spaces::{FloatBox, IntBox, Space};

static N: AtomicU64 = AtomicU64::new(0);

fuzz_target!(|data: &[u8]| {
    let config = serde_json::json!({
        "type": "dqn",
        "network_spec": [{"type": "dense", "units": 4}],
        "memory_spec": {"type": "prioritized_replay", "capacity": 16},
    });
    let states = Space::from(FloatBox::new([4]));
    let Ok(actions) = IntBox::new(2) else { return };
    let Ok(mut agent) = agents::build_agent::<Candle>(&config, &states, &Space::from(actions), 0) else {
        return;
    };
    let before = agent.get_weights().ok();
    let path = std::env::temp_dir().join(format!(
        "rlgraph-fuzz-{}-{}.safetensors",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let restored = agent.restore_checkpoint(&path);
    let _ = std::fs::remove_file(&path);
    if restored.is_err() {
        assert_eq!(
            agent.get_weights().ok(),
            before,
            "a refused checkpoint changed the weights"
        );
    }
});

//! Checkpoint restore from hostile bytes, into a DQN agent with a prioritized replay memory
//! that holds a few records. A refused file must leave the weights as they were; any file
//! may be refused, none may panic.
//!
//! The first input byte picks what the rest is: 0, a whole file; 1 or 2, edits (4 bytes each:
//! a 3-byte offset, then the byte to write there) of the agent's own checkpoint, in format 1
//! (no checksum) or format 2. Random bytes almost never pass the checksum, so format-1 edits
//! are what reach the checks behind it: tensor shapes and dtypes, NaN weights, records
//! outside their space, bad priorities.
#![no_main]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use agents::{Agent, Transition};
use backend_candle::Candle;
use libfuzzer_sys::fuzz_target;
use rand::SeedableRng;
use rlgraph_spaces::{FloatBox, IntBox, Space};

struct Fixture {
    agent: Box<dyn Agent + Send>,
    /// The agent's own checkpoint, as written (format 2) and rewritten without its checksum.
    format2: Vec<u8>,
    format1: Vec<u8>,
}

static FIXTURE: OnceLock<Mutex<Option<Fixture>>> = OnceLock::new();
static FILES: AtomicU64 = AtomicU64::new(0);

fn temp_path() -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "rlgraph-fuzz-{}-{}.safetensors",
        std::process::id(),
        FILES.fetch_add(1, Ordering::Relaxed)
    ))
}

fn fixture() -> Option<Fixture> {
    let config = serde_json::json!({
        "type": "dqn",
        "network_spec": [{"type": "dense", "units": 4}],
        "memory_spec": {"type": "prioritized_replay", "capacity": 16},
    });
    let states = Space::from(FloatBox::new([4]));
    let actions = Space::from(IntBox::new(2).ok()?);
    let mut agent = agents::build_agent::<Candle>(&config, &states, &actions, 0).ok()?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    for step in 0..6 {
        let transition = Transition {
            state: states.sample(None, &mut rng),
            action: actions.sample(None, &mut rng),
            reward: 1.0,
            terminated: step == 5,
            truncated: false,
            next_state: states.sample(None, &mut rng),
        };
        agent.observe(0, transition).ok()?;
    }
    let path = temp_path();
    agent.save_checkpoint(&path).ok()?;
    let format2 = std::fs::read(&path).ok()?;
    std::fs::remove_file(&path).ok()?;
    let format1 = without_checksum(&format2)?;
    Some(Fixture {
        agent,
        format2,
        format1,
    })
}

/// The same safetensors file with its rlgraph metadata marked format 1 and the checksum
/// field gone; tensor offsets are relative to the data, so only the header changes.
fn without_checksum(file: &[u8]) -> Option<Vec<u8>> {
    let n = u64::from_le_bytes(file.get(..8)?.try_into().ok()?) as usize;
    let mut header: serde_json::Value = serde_json::from_slice(file.get(8..8 + n)?).ok()?;
    let text = header["__metadata__"]["rlgraph"].as_str()?;
    let mut meta: serde_json::Value = serde_json::from_str(text).ok()?;
    meta["format"] = "rlgraph-rs checkpoint 1".into();
    meta.as_object_mut()?.remove("crc32c");
    header["__metadata__"]["rlgraph"] = meta.to_string().into();
    let mut text = header.to_string();
    while text.len() % 8 != 0 {
        text.push(' ');
    }
    let mut out = (text.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(file.get(8 + n..)?);
    Some(out)
}

fn edited(base: &[u8], edits: &[u8]) -> Vec<u8> {
    let mut file = base.to_vec();
    for e in edits.chunks_exact(4) {
        let offset = u32::from_le_bytes([e[0], e[1], e[2], 0]) as usize % file.len().max(1);
        if let Some(b) = file.get_mut(offset) {
            *b = e[3];
        }
    }
    file
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Ok(mut slot) = FIXTURE.get_or_init(|| Mutex::new(fixture())).lock() else {
        return;
    };
    let fixture = slot
        .as_mut()
        .expect("the fixture agent builds and saves its checkpoint");
    let file = match mode % 3 {
        0 => rest.to_vec(),
        1 => edited(&fixture.format1, rest),
        _ => edited(&fixture.format2, rest),
    };
    let before = fixture.agent.get_weights().ok();
    let path = temp_path();
    if std::fs::write(&path, &file).is_err() {
        return;
    }
    let restored = fixture.agent.restore_checkpoint(&path);
    let _ = std::fs::remove_file(&path);
    if restored.is_err() {
        assert_eq!(
            fixture.agent.get_weights().ok(),
            before,
            "a refused checkpoint changed the weights"
        );
    }
});

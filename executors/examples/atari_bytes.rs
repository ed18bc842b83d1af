//! What one stored and one sent Atari transition costs, in bytes, for RLgraph's Pong configs:
//!
//! - the replay: the process's resident memory (`VmRSS`) grown by filling a DQN replay made
//!   as the agent makes it (`dqn_replay` from the config's roles), divided by its capacity,
//!   for the default (`uint8`: bytes, each frame stored once), for `float32` (float frames,
//!   each stored once) and for `plain` (float stacks, each frame in every stack that holds it,
//!   the layout before frames were stored once);
//! - the wire: the encoded size of an Ape-X insert of 50 records, per record.
//!
//! The records come from a recorded run of random frames (which no two steps share, the least
//! favourable case for storing frames once), stacked four deep as RLgraph's `sequence` stacks
//! them, with episodes of 200 to 2,000 steps.
//!
//! `cargo run --release -p executors --example atari_bytes [uint8|float32|plain] [CAPACITY] [CONFIG]`
//! (one layout per process, so that memory freed by one is not counted by the other).

use agents::{dqn_replay, transitions_batch, DqnConfig, Transition, WorkerLayout};
use backend_candle::Candle;
use executors::distributed::proto::InsertRequest;
use executors::distributed::wire::encode_value;
use prost::Message;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlgraph_core::spaces::{Array, Dtype, IntBox, Space, Value};

fn rss_bytes() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb * 1024.0)
}

/// A recorded run's transitions, `n` at a time: stacks of `frames` `[h, w]` byte frames.
struct Run {
    h: usize,
    w: usize,
    frames: Vec<Vec<u8>>,
    left: usize,
    rng: ChaCha8Rng,
}

impl Run {
    fn frame(&mut self) -> Vec<u8> {
        let n = self.h * self.w;
        (0..n).map(|_| self.rng.random()).collect()
    }

    fn stack(&self, bytes: bool) -> Value {
        let k = self.frames.len();
        let mut out = Vec::with_capacity(self.h * self.w * k);
        for p in 0..self.h * self.w {
            out.extend(self.frames.iter().map(|f| f[p]));
        }
        let shape = [self.h, self.w, k];
        match bytes {
            true => Value::Uint8(Array::new(shape, out).expect("shape")),
            false => Value::Float32(Array::new(shape, out.iter().map(|&b| b as f32 / 255.0).collect()).expect("shape")),
        }
    }

    fn next(&mut self, bytes: bool) -> Transition {
        let state = self.stack(bytes);
        let terminated = self.left == 0;
        let f = self.frame();
        self.frames.remove(0);
        self.frames.push(f);
        let next_state = self.stack(bytes);
        if terminated {
            let first = self.frame();
            self.frames = vec![first; self.frames.len()];
            self.left = self.rng.random_range(200..2000);
        } else {
            self.left -= 1;
        }
        Transition {
            state,
            action: Value::i32(self.rng.random_range(0..6)),
            reward: 0.0,
            terminated,
            truncated: false,
            next_state,
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let storage = args.next().unwrap_or_else(|| "uint8".into());
    let capacity: usize = args.next().map(|c| c.parse()).transpose()?.unwrap_or(20_000);
    let config_path = args
        .next()
        .unwrap_or_else(|| "configs/rlgraph/dqn_agent_for_pong.json".into());
    let spec: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&config_path)?)?;
    let raw = Space::from(
        IntBox::new(256)?
            .with_dtype(Dtype::Uint8)?
            .with_shape(vec![210, 160, 3]),
    );
    let actions = Space::from(IntBox::new(6)?);
    {
        let mut spec = spec.clone();
        spec["frame_storage"] = if storage == "uint8" { "uint8" } else { "float32" }.into();
        spec["memory_spec"]["capacity"] = capacity.into();
        let layout = WorkerLayout::plan::<Candle>(&spec, &raw, 0)?.ok_or("no frame stack in the config")?;
        let (h, w, k) = match layout.state_space.shape() {
            Some(&[h, w, k]) => (h, w, k),
            other => return Err(format!("unexpected state shape {other:?}").into()),
        };
        let mut inner = layout.inner_spec.clone();
        if storage == "plain" {
            if let Some(memory) = inner["memory_spec"].as_object_mut() {
                memory.remove("frame_stack");
            }
        }
        let config = DqnConfig::parse(&inner)?;
        let mut run = Run {
            h,
            w,
            frames: vec![vec![0; h * w]; k],
            left: 500,
            rng: ChaCha8Rng::seed_from_u64(1),
        };
        let bytes = layout.bytes;
        let before = rss_bytes();
        let mut replay = dqn_replay(&config, &layout.state_space, &actions)?;
        let mut inserted = 0;
        let mut wire = 0.0;
        while inserted < capacity {
            let batch: Vec<Transition> = (0..50).map(|_| run.next(bytes)).collect();
            let records = transitions_batch(&batch)?;
            if inserted == 0 {
                let request = InsertRequest {
                    records: Some(encode_value(&records)?),
                    ..Default::default()
                };
                wire = request.encoded_len() as f64 / batch.len() as f64;
            }
            replay.insert(&records, None)?;
            inserted += batch.len();
        }
        let per = (rss_bytes() - before) / capacity as f64;
        println!(
            "{{\"config\": {config_path:?}, \"frame_storage\": {storage:?}, \"capacity\": {capacity}, \"rss_bytes_per_transition\": {per:.0}, \"wire_bytes_per_record\": {wire:.0}}}"
        );
    }
    Ok(())
}

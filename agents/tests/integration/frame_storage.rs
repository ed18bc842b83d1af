//! Bytes from the environment to the network: how RLgraph's Pong configs are laid out (bytes
//! stacked on the acting side, the scaling in the graph), that the floats reaching the
//! network are today's (exactly where today's frames are whole numbers, within the byte
//! rounding where a resize averages pixels), that a whole DQN run learns the same weights
//! either way, and that what cannot be kept as bytes is refused by name.

use std::collections::BTreeMap;

use agents::{build_agent, FrameStorage, Transition, WorkerLayout, WorkerStreams};

use crate::common;
use backend_candle::Candle;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlgraph_components::{from_spec, preprocessor_stack};
use rlgraph_core::spaces::{Array, Dtype, FloatBox, IntBox, Space, Value};
use rlgraph_core::ComponentTest;
use rlgraph_envs::{Env, RandomEnv};
use serde_json::{json, Value as Json};

fn rlgraph_config(name: &str) -> Json {
    let path = format!("{}/../configs/rlgraph/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn atari_space(h: usize, w: usize) -> Space {
    Space::from(
        IntBox::new(256)
            .unwrap()
            .with_dtype(Dtype::Uint8)
            .unwrap()
            .with_shape(vec![h, w, 3]),
    )
}

fn kinds(specs: &[Json]) -> Vec<String> {
    specs.iter().map(|s| s["type"].as_str().unwrap().to_string()).collect()
}

#[test]
fn rlgraphs_pong_configs_stack_bytes_and_scale_in_the_graph() {
    let raw = atari_space(210, 160);
    let dqn = WorkerLayout::plan::<Candle>(&rlgraph_config("dqn_agent_for_pong.json"), &raw, 0)
        .unwrap()
        .expect("a frame stack runs on the acting side");
    assert!(dqn.bytes);
    assert_eq!(
        kinds(&dqn.worker_specs),
        ["image_crop", "image_resize", "grayscale", "round_to_uint8", "sequence"]
    );
    assert_eq!(
        kinds(dqn.inner_spec["preprocessing_spec"].as_array().unwrap()),
        ["convert_type", "divide"]
    );
    let bytes = |shape: Vec<usize>| {
        Space::from(
            IntBox::new(256)
                .unwrap()
                .with_dtype(Dtype::Uint8)
                .unwrap()
                .with_shape(shape),
        )
    };
    assert_eq!(dqn.state_space, bytes(vec![80, 80, 4]));
    assert_eq!(
        dqn.inner_spec["memory_spec"]["frame_stack"],
        json!({"frames": 4, "group": 1})
    );

    let apex = WorkerLayout::plan::<Candle>(&rlgraph_config("apex_pong.json"), &raw, 0)
        .unwrap()
        .unwrap();
    assert_eq!(
        kinds(&apex.worker_specs),
        [
            "grayscale",
            "image_resize",
            "convert_type",
            "round_to_uint8",
            "sequence"
        ]
    );
    assert_eq!(
        kinds(apex.inner_spec["preprocessing_spec"].as_array().unwrap()),
        ["convert_type", "divide"]
    );
    assert_eq!(apex.state_space, bytes(vec![84, 84, 4]));

    // Asked for floats, the stack is today's, and the replay still stores its frames once.
    let mut float = rlgraph_config("dqn_agent_for_pong.json");
    float["frame_storage"] = json!("float32");
    let float = WorkerLayout::plan::<Candle>(&float, &raw, 0).unwrap().unwrap();
    assert!(!float.bytes);
    assert_eq!(float.state_space, Space::from(FloatBox::new([80, 80, 4])));
    assert_eq!(float.inner_spec["preprocessing_spec"], json!([]));
    assert_eq!(
        float.inner_spec["memory_spec"]["frame_stack"],
        json!({"frames": 4, "group": 1})
    );
}

/// `frames` through the acting-side stacks of `specs` as laid out for `storage`, then through
/// the graph's preprocessing: what the network's first layer receives, per step. An episode
/// ends after step `end`.
fn network_inputs(specs: &[Json], storage: FrameStorage, frames: &[Value], end: usize) -> Vec<Vec<f32>> {
    let raw = atari_space(12, 10);
    let config = json!({"type": "dqn", "preprocessing_spec": specs, "frame_storage": storage,
                        "network_spec": [{"type": "dense", "units": 2}]});
    let layout = WorkerLayout::plan::<Candle>(&config, &raw, 0).unwrap().unwrap();
    assert_eq!(layout.bytes, storage == FrameStorage::Uint8);
    let mut streams = WorkerStreams::<Candle>::new(layout.worker_specs.clone(), &raw, 0).unwrap();
    let graph_specs = layout.inner_spec["preprocessing_spec"].as_array().unwrap().clone();
    let members = graph_specs
        .iter()
        .enumerate()
        .map(|(i, s)| from_spec::<Candle>(s, "graph").map(|c| c.copy_as(format!("p{i}"), true)))
        .collect::<rlgraph_core::Result<Vec<_>>>()
        .unwrap();
    let mut graph = ComponentTest::<Candle>::new(
        preprocessor_stack("graph", members),
        [("inputs", layout.state_space.with_batch_rank(true))],
        0,
    )
    .unwrap();
    let mut out = vec![];
    let mut state = streams.act_states(&frames[..1]).unwrap().remove(0);
    for t in 0..frames.len() - 1 {
        let stepped = streams
            .observe(
                0,
                Transition {
                    state: frames[t].clone(),
                    action: Value::i32(0),
                    reward: 0.0,
                    terminated: t == end,
                    truncated: false,
                    next_state: frames[t + 1].clone(),
                },
            )
            .unwrap();
        assert_eq!(stepped.state, state, "step {t}: the state acted on is the one stored");
        let batch = rlgraph_core::stack(std::slice::from_ref(&stepped.next_state)).unwrap();
        let input = match &graph.call("preprocess", &[batch]).unwrap()[0] {
            Value::Float32(a) => a.data().to_vec(),
            other => panic!("the network gets float32, not {}", other.kind_name()),
        };
        out.push(input);
        state = if t == end {
            streams.act_states(&frames[t + 1..t + 2]).unwrap().remove(0)
        } else {
            stepped.next_state
        };
    }
    out
}

fn random_frames(n: usize, seed: u64) -> Vec<Value> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| Value::Uint8(Array::new([12, 10, 3], (0..360).map(|_| rng.random()).collect()).unwrap()))
        .collect()
}

#[test]
fn bytes_reach_the_network_as_todays_floats() {
    let frames = random_frames(14, 1);
    // Crop and grayscale keep whole numbers (a uint8 grayscale truncates, as RLgraph's), so
    // the bytes stored are today's values exactly, and so are the floats.
    let whole = [
        json!({"type": "image_crop", "x": 1, "y": 2, "width": 8, "height": 8}),
        json!({"type": "grayscale", "keep_rank": true}),
        json!({"type": "divide", "divisor": 255}),
        json!({"type": "sequence", "sequence_length": 4, "batch_size": 1, "add_rank": false}),
    ];
    let today = network_inputs(&whole, FrameStorage::Float32, &frames, 5);
    let bytes = network_inputs(&whole, FrameStorage::Uint8, &frames, 5);
    assert_eq!(bytes, today, "the same floats, bit for bit, across an episode's end");

    // RLgraph's Pong order: a resize averages pixels, and bytes round the average (as
    // OpenCV's uint8 resize does): within half a grey level, no more.
    let pong = rlgraph_config("dqn_agent_for_pong.json")["preprocessing_spec"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| match s["type"].as_str() {
            Some("image_crop") => json!({"type": "image_crop", "x": 0, "y": 2, "width": 10, "height": 10}),
            Some("image_resize") => json!({"type": "image_resize", "width": 4, "height": 4}),
            _ => s.clone(),
        })
        .collect::<Vec<_>>();
    let today = network_inputs(&pong, FrameStorage::Float32, &frames, 7);
    let bytes = network_inputs(&pong, FrameStorage::Uint8, &frames, 7);
    let worst = today
        .iter()
        .flatten()
        .zip(bytes.iter().flatten())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    assert!(worst <= 0.5 / 255.0 + 1e-6, "{worst}");
    assert!(
        worst > 0.0,
        "the resize's averages are not whole numbers, so rounding shows"
    );
}

/// The DQN config of the runs below, keeping frames as `storage`.
fn run_config(storage: FrameStorage) -> Json {
    json!({
        "type": "dqn",
        "frame_storage": storage,
        "memory_spec": {"type": "replay", "capacity": 40},
        "preprocessing_spec": [
            {"type": "image_crop", "x": 1, "y": 2, "width": 8, "height": 8},
            {"type": "grayscale", "keep_rank": true},
            {"type": "divide", "divisor": 255},
            {"type": "sequence", "sequence_length": 4, "batch_size": 1, "add_rank": false}
        ],
        "network_spec": [
            {"type": "conv2d", "filters": 3, "kernel_size": 3, "strides": 2, "activation": "relu"},
            {"type": "reshape", "flatten": true}
        ],
        "update_spec": {"update_interval": 4, "steps_before_update": 16, "batch_size": 8, "sync_interval": 8}
    })
}

/// A DQN run on random uint8 images, through `build_agent`: the agent after 60 steps and a
/// few updates, with the config's frames kept as `storage`.
fn agent_after_run(storage: FrameStorage) -> Box<dyn agents::Agent + Send> {
    let raw = atari_space(12, 10);
    let actions = Space::from(IntBox::new(3).unwrap());
    let mut env = RandomEnv::new(raw.clone(), actions.clone(), 0.1, 3);
    let mut agent = build_agent::<Candle>(&run_config(storage), &raw, &actions, 5).unwrap();
    let initial = agent.get_weights().unwrap();
    let mut updates = 0;
    let mut state = env.reset(Some(3)).unwrap();
    for t in 0..60 {
        common::act_and_observe(agent.as_mut(), &mut env, &mut state, 0);
        if t >= 16 && t % 4 == 0 {
            updates += usize::from(agent.update(t as f64 / 60.0).unwrap().is_some());
        }
    }
    assert!(
        updates >= 8 && agent.get_weights().unwrap() != initial,
        "{updates} updates changed nothing"
    );
    agent
}

fn weights_after_run(storage: FrameStorage) -> BTreeMap<String, rlgraph_core::HostTensor> {
    agent_after_run(storage).get_weights().unwrap()
}

#[test]
fn a_checkpoint_of_float_stacks_is_refused_by_an_agent_of_bytes_and_changes_nothing() {
    let dir = std::env::temp_dir().join(format!("rlgraph-frame-storage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("floats.safetensors");
    agent_after_run(FrameStorage::Float32).save_checkpoint(&path).unwrap();
    let mut bytes = agent_after_run(FrameStorage::Uint8);
    let before = bytes.get_weights().unwrap();
    let err = bytes.restore_checkpoint(&path).unwrap_err().to_string();
    // The replay names its float frames against the bytes it stores.
    assert!(
        err.contains("records#frames") && err.contains("F32") && err.contains("Uint8"),
        "{err}"
    );
    assert_eq!(bytes.get_weights().unwrap(), before);
    // Its own checkpoint restores.
    let own = dir.join("bytes.safetensors");
    bytes.save_checkpoint(&own).unwrap();
    bytes.restore_checkpoint(&own).unwrap();
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_dqn_run_on_bytes_learns_the_same_weights_as_on_floats() {
    // The frames are whole numbers here, so both runs see the same floats, act alike, sample
    // the same records (each frame stored once either way) and take the same steps.
    let floats = weights_after_run(FrameStorage::Float32);
    let bytes = weights_after_run(FrameStorage::Uint8);
    assert!(floats.keys().any(|k| k.contains("conv")), "{:?}", floats.keys());
    assert_eq!(bytes, floats);
}

#[test]
fn what_cannot_be_kept_as_bytes_is_refused_by_name() {
    let raw = atari_space(12, 10);
    let mut config = json!({"type": "dqn", "frame_storage": "uint8", "network_spec": [{"type": "dense", "units": 2}],
        "preprocessing_spec": [{"type": "normalize"}, {"type": "sequence", "sequence_length": 2}]});
    let err = WorkerLayout::plan::<Candle>(&config, &raw, 0).unwrap_err().to_string();
    assert!(
        err.contains("config.frame_storage") && err.contains("preprocessing_spec[0] (normalize)"),
        "{err}"
    );

    // Float observations have no bytes to keep.
    let floats = Space::from(FloatBox::new([4, 4, 3]));
    let err = WorkerLayout::plan::<Candle>(&config, &floats, 0)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("config.frame_storage") && err.contains("Float32") && err.contains("[4, 4, 3]"),
        "{err}"
    );

    // Under "auto" the same configs keep today's floats.
    config["frame_storage"] = json!("auto");
    assert!(!WorkerLayout::plan::<Candle>(&config, &raw, 0).unwrap().unwrap().bytes);
    config["frame_storage"] = json!("bytes");
    let err = WorkerLayout::plan::<Candle>(&config, &raw, 0).unwrap_err().to_string();
    assert!(
        err.contains("config.frame_storage") && err.contains("\"uint8\""),
        "{err}"
    );

    // A frame stack that does not split the states as it says, set by hand.
    let config = json!({"type": "dqn", "network_spec": [{"type": "dense", "units": 2}],
        "memory_spec": {"type": "replay", "frame_stack": {"frames": 4, "group": 1}}});
    let states = Space::from(FloatBox::new([6, 6, 3]));
    let err = build_agent::<Candle>(&config, &states, &Space::from(IntBox::new(2).unwrap()), 0)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("config.memory_spec.frame_stack") && err.contains("[6, 6, 3]"),
        "{err}"
    );
}

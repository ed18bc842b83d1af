//! How stacked observations travel: the split of a `preprocessing_spec` that keeps state
//! (a frame stack) between the acting side, which runs it per environment copy, and the
//! agent's graph, which runs the rest on every batch it is given.
//!
//! Atari frames are bytes. Kept as bytes through the acting side, the adder, the replay and
//! the wire, a transition costs a few kilobytes instead of the 200 KB of two float32 stacks.
//! So when the observation is uint8 and its preprocessing only crops, resizes, grayscales and
//! stacks frames before scaling them, the acting side rounds each preprocessed frame to a
//! byte (as RLgraph's OpenCV path and Gymnasium's `AtariPreprocessing` keep them) and stacks
//! bytes, and the scaling (`convert_type` to float, `divide`, `multiply`) moves into the
//! graph, where it runs on the device. The replay then stores each frame once
//! ([`rlgraph_memories::FrameStacks`]).

use rlgraph_core::spaces::{Dtype, Space};
use rlgraph_core::{Backend, Result};
use rlgraph_memories::FrameStack;
use serde::Deserialize;
use serde_json::{json, Value as Json};

use crate::agent_spec::{config, FrameStorage};
use crate::preprocessing::{is_stateful, preprocessor_kind};
use crate::worker_preprocessing::preprocessed_space;

/// Preprocessors that keep an image's bytes meaningful: each is linear in the pixel values
/// (so a scaling moved past it gives the same result) and makes frames, not statistics.
const KEEPS_BYTES: [&str; 4] = ["imagecrop", "imageresize", "grayscale", "transpose"];

/// Preprocessors that only scale values, which move into the graph.
fn scales(spec: &Json) -> bool {
    matches!(preprocessor_kind(spec).as_str(), "divide" | "multiply")
}

/// Whether `spec` converts to a float type.
fn converts_to_float(spec: &Json) -> bool {
    preprocessor_kind(spec) == "converttype"
        && spec
            .get("to_dtype")
            .and_then(Json::as_str)
            .is_some_and(|d| d.to_lowercase().starts_with("float"))
}

/// How an agent's preprocessing runs: per environment copy on the acting side, and in the
/// graph.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerLayout {
    /// The preprocessor specs each environment copy's stack runs on the acting side.
    pub worker_specs: Vec<Json>,
    /// The config the agent's roles (actor, learner, replay) are built from: its
    /// `preprocessing_spec` is what runs in their graphs, and for DQN its
    /// `memory_spec.frame_stack` says how the stacks split into frames.
    pub inner_spec: Json,
    /// The states the roles see: what the acting side's stack makes of an observation.
    pub state_space: Space,
    /// Whether those states are bytes.
    pub bytes: bool,
}

impl WorkerLayout {
    /// The layout of the config `spec` for observations of `raw_space`, or `None` when its
    /// preprocessing keeps no state (then all of it runs in the graph). An explicit
    /// `frame_storage: "uint8"` that the observation or the preprocessing cannot honour is
    /// refused, naming the key and what stands in the way.
    pub fn plan<B: Backend>(spec: &Json, raw_space: &Space, seed: u64) -> Result<Option<WorkerLayout>> {
        let storage = match spec.get("frame_storage") {
            None => FrameStorage::Auto,
            Some(v) => FrameStorage::deserialize(v).map_err(|_| {
                config(
                    "config.frame_storage",
                    format!("expected \"auto\", \"uint8\" or \"float32\", got {v}"),
                )
            })?,
        };
        let raw = raw_space.with_batch_rank(false);
        let raw_is_bytes = matches!(&raw, Space::Int(_)) && raw.dtype() == Some(Dtype::Uint8);
        if storage == FrameStorage::Uint8 && !raw_is_bytes {
            return Err(config(
                "config.frame_storage",
                format!(
                    "\"uint8\" keeps observations as bytes, but they are {} of shape {:?}; use \"auto\" or \"float32\"",
                    raw.dtype()
                        .map_or_else(|| raw.kind_name().to_string(), |d| format!("{d:?}")),
                    raw.shape().unwrap_or(&[])
                ),
            ));
        }
        let specs: Vec<Json> = spec
            .get("preprocessing_spec")
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_default();
        if !specs.iter().any(is_stateful) {
            return Ok(None);
        }
        // The per-copy stack runs over the whole observation; it would stack (or fold away)
        // an action mask, which the agent's graph splits off only inside the graph.
        let mask_key = spec
            .get("action_mask_key")
            .and_then(Json::as_str)
            .unwrap_or(rlgraph_components::action_mask::DEFAULT_MASK_KEY);
        if rlgraph_components::action_mask::has_mask(&raw, mask_key) {
            return Err(config(
                "config.preprocessing_spec",
                format!(
                    "stateful preprocessors (sequence, moving_standardize) run per environment copy over the whole \
                     observation and do not split off the action mask {mask_key:?} yet; use stateless preprocessors \
                     with masked states"
                ),
            ));
        }
        let blocker = match storage {
            FrameStorage::Float32 => Some("frame_storage is \"float32\"".to_string()),
            _ if !raw_is_bytes => Some("the observation is not uint8".into()),
            _ => byte_blocker(&specs),
        };
        if let (FrameStorage::Uint8, Some(why)) = (storage, &blocker) {
            return Err(config(
                "config.frame_storage",
                format!("\"uint8\" cannot be kept: {why}; use \"auto\" or \"float32\""),
            ));
        }
        let bytes = blocker.is_none();
        let (worker_specs, graph_specs) = if bytes {
            split_for_bytes(&specs)
        } else {
            (specs.clone(), vec![])
        };
        let state_space = preprocessed_space::<B>(&worker_specs, &raw, seed)?;
        let mut inner_spec = spec.clone();
        if let Some(map) = inner_spec.as_object_mut() {
            map.insert("preprocessing_spec".into(), Json::Array(graph_specs));
            map.remove("frame_storage");
            let frames = frame_stack(&worker_specs, &state_space);
            // An algorithm whose memory stacks frames keeps each frame once.
            if let Some(frames) = frames.filter(|_| crate::algorithm_registry::stacks_frames(spec)) {
                let memory = map.entry("memory_spec").or_insert_with(|| json!({}));
                if let Some(memory) = memory.as_object_mut() {
                    memory
                        .entry("frame_stack")
                        .or_insert_with(|| json!({"frames": frames.frames, "group": frames.group}));
                }
            }
        }
        Ok(Some(WorkerLayout {
            worker_specs,
            inner_spec,
            state_space,
            bytes,
        }))
    }
}

/// Why a uint8 observation's stateful preprocessing cannot be kept as bytes, if it cannot.
fn byte_blocker(specs: &[Json]) -> Option<String> {
    let kinds: Vec<String> = specs.iter().map(preprocessor_kind).collect();
    let sequences: Vec<usize> = (0..kinds.len()).filter(|&i| kinds[i] == "sequence").collect();
    let &[at] = sequences.as_slice() else {
        return Some(format!(
            "bytes are kept for one frame stack (sequence), and this preprocessing has {}",
            sequences.len()
        ));
    };
    for (i, (kind, spec)) in kinds.iter().zip(specs).enumerate() {
        let ok = if i > at {
            // Past the stack only scaling may follow: anything else would change the stack.
            scales(spec) || converts_to_float(spec)
        } else {
            i == at || KEEPS_BYTES.contains(&kind.as_str()) || scales(spec) || converts_to_float(spec)
        };
        if !ok {
            return Some(format!(
                "preprocessing_spec[{i}] ({kind}) is not one of the crops, resizes, grayscales, transposes and scalings that bytes can go through"
            ));
        }
    }
    None
}

/// The specs for bytes: the acting side runs everything but the scalings, with each frame
/// rounded to a byte just before the stack; the graph converts the stacked bytes to float and
/// scales them, in the config's order. A `convert_type` to float ahead of the stack stays
/// where it is, so a grayscale after it still weighs floats, as it did; one after the stack
/// is the graph's first step already.
fn split_for_bytes(specs: &[Json]) -> (Vec<Json>, Vec<Json>) {
    let mut worker = vec![];
    let mut graph = vec![json!({"type": "convert_type", "to_dtype": "float32", "scope": "to-float"})];
    let mut stacked = false;
    for spec in specs {
        if preprocessor_kind(spec) == "sequence" {
            worker.push(json!({"type": "round_to_uint8", "scope": "round-to-uint8"}));
            worker.push(spec.clone());
            stacked = true;
        } else if scales(spec) {
            graph.push(spec.clone());
        } else if !stacked {
            worker.push(spec.clone());
        }
    }
    (worker, graph)
}

/// How the stacks the worker specs end in split into frames: the last spec is a `sequence`
/// over one leaf (`add_rank`: one element of each frame per group; else a frame's channels).
fn frame_stack(worker_specs: &[Json], state_space: &Space) -> Option<FrameStack> {
    let last = worker_specs.last()?;
    if preprocessor_kind(last) != "sequence" || state_space.is_container() {
        return None;
    }
    let frames = last.get("sequence_length").and_then(Json::as_u64).unwrap_or(2) as usize;
    let add_rank = last.get("add_rank").and_then(Json::as_bool).unwrap_or(true);
    let width = state_space.shape()?.last().copied()?;
    let group = if add_rank { 1 } else { width / frames.max(1) };
    (frames > 0 && group * frames == width).then_some(FrameStack { frames, group })
}

//! `GymEnv`: a Gymnasium environment in its own Python process, as an [`Env`](crate::Env).

use std::sync::Mutex;

use rlgraph_spaces::{Array, Dtype, Space, Value};
use serde_json::{json, Map, Value as Json};

use crate::env::{bad_action, Env, EnvError, Result, Step};
use crate::gym::process::Process;

/// The prefix of environment ids that go through the bridge: `gym:CartPole-v1`.
pub const GYM_PREFIX: &str = "gym:";

/// A Gymnasium environment driven through `bridge.py` in a Python process of its own, so
/// that several copies step in parallel without sharing a GIL.
///
/// Spaces are converted on start-up: Box (bounds and dtype kept; 8- and 16-bit integers
/// widen to int32, wider ones to int64, float16 to float32), Discrete (with its `start`),
/// MultiDiscrete and integer Boxes with one range for all elements, MultiBinary (as a
/// BoolBox), Dict and Tuple. Anything else is refused by name.
pub struct GymEnv {
    id: String,
    state_space: Space,
    action_space: Space,
    /// Behind a lock only so that `state(&self)` can ask Python.
    process: Mutex<Process>,
    /// The seed of the first reset, when that reset brings none (`make(id, seed)`).
    pending_seed: Option<u64>,
    episode_over: bool,
}

impl GymEnv {
    /// Starts `gymnasium.make(gym_id, **kwargs)` in a new process of the Python that
    /// [`crate::gym::python`] names; the first reset without a seed uses `seed`.
    pub fn new(gym_id: &str, kwargs: Map<String, Json>, seed: u64) -> Result<Self> {
        GymEnv::with_python(&crate::gym::python(), gym_id, kwargs, seed)
    }

    /// [`GymEnv::new`] with the Python interpreter `python` (a path, or a name on the `PATH`).
    pub fn with_python(python: &str, gym_id: &str, kwargs: Map<String, Json>, seed: u64) -> Result<Self> {
        let started = Started::new(python, gym_id, kwargs, 1)?;
        Ok(GymEnv {
            id: started.id,
            state_space: started.state_space,
            action_space: started.action_space,
            process: Mutex::new(started.process),
            pending_seed: Some(seed),
            episode_over: true,
        })
    }

    /// Parses `gym:ID` or `gym:ID?key=value&key=value` (each value JSON where it parses
    /// as JSON, a string otherwise) and starts the environment. The keys of RLgraph's
    /// `OpenAIGymEnv` (`max_num_noops`, `noop_action`, `episodic_life`, `fire_reset`,
    /// `clip_rewards`, and `frameskip` on `NoFrameskip` ids) are applied by the bridge; the
    /// others go to `gymnasium.make`.
    pub fn from_id(id: &str, seed: u64) -> Result<Self> {
        GymEnv::from_id_with_python(&crate::gym::python(), id, seed)
    }

    /// [`GymEnv::from_id`] with the Python interpreter `python`.
    pub fn from_id_with_python(python: &str, id: &str, seed: u64) -> Result<Self> {
        let (gym_id, kwargs) = parse_id(id)?;
        GymEnv::with_python(python, &gym_id, kwargs, seed)
    }

    fn call(&self, request: Json) -> std::result::Result<crate::gym::process::Reply, String> {
        let mut process = self
            .process
            .lock()
            .map_err(|_| "the bridge's lock is poisoned".to_string())?;
        process.call(&request)
    }

    fn failed(&self, what: &str, reason: String) -> EnvError {
        EnvError::Bridge {
            env: self.id.clone(),
            what: what.into(),
            reason,
        }
    }

    fn observation(&self, what: &str, payload: &[u8]) -> Result<Value> {
        decode(&self.state_space, payload).map_err(|reason| self.failed(what, reason))
    }
}

impl Env for GymEnv {
    fn id(&self) -> &str {
        &self.id
    }

    fn state_space(&self) -> &Space {
        &self.state_space
    }

    fn action_space(&self) -> &Space {
        &self.action_space
    }

    fn reset(&mut self, seed: Option<u64>) -> Result<Value> {
        let seed = seed.or(self.pending_seed.take());
        let reply = self
            .call(json!({"op": "reset", "seed": seed}))
            .map_err(|r| self.failed("reset", r))?;
        let observation = self.observation("reset", &reply.payload)?;
        self.episode_over = false;
        Ok(observation)
    }

    fn step(&mut self, action: &Value) -> Result<Step> {
        if self.episode_over {
            return Err(EnvError::EpisodeOver { env: self.id.clone() });
        }
        if !self.action_space.contains(action) {
            return Err(bad_action(&self.id, &self.action_space, action));
        }
        let reply = self
            .call(json!({"op": "step", "action": action.to_json()}))
            .map_err(|r| self.failed("step", r))?;
        let observation = self.observation("step", &reply.payload)?;
        let field = |key: &str| reply.header.get(key);
        let (Some(reward), Some(terminated), Some(truncated)) = (
            field("reward").and_then(Json::as_f64),
            field("terminated").and_then(Json::as_bool),
            field("truncated").and_then(Json::as_bool),
        ) else {
            return Err(self.failed(
                "step",
                format!("a step reply without reward and flags: {}", reply.header),
            ));
        };
        self.episode_over = terminated || truncated;
        Ok(Step {
            observation,
            reward,
            terminated,
            truncated,
        })
    }

    fn render(&mut self) -> Result<crate::render::RgbFrame> {
        let reply = self
            .call(json!({"op": "render"}))
            .map_err(|r| self.failed("render", r))?;
        let size = |key: &str| reply.header.get(key).and_then(Json::as_u64).map(|n| n as usize);
        match (size("width"), size("height")) {
            (Some(width), Some(height)) if reply.payload.len() == width * height * 3 => Ok(crate::render::RgbFrame {
                width,
                height,
                pixels: reply.payload,
            }),
            _ => Err(self.failed(
                "render",
                format!(
                    "a frame of {} bytes that is not its width x height x 3: {}",
                    reply.payload.len(),
                    reply.header
                ),
            )),
        }
    }

    fn state(&self) -> Option<Vec<f64>> {
        let reply = self.call(json!({"op": "get_state"})).ok()?;
        let state = reply.header.get("state")?.as_array()?;
        state.iter().map(Json::as_f64).collect()
    }

    fn set_state(&mut self, state: &[f64]) -> Result<()> {
        if let Some(bad) = state.iter().find(|x| !x.is_finite()) {
            return Err(EnvError::BadState {
                env: self.id.clone(),
                reason: format!("{bad} is not a finite number"),
            });
        }
        if self.episode_over {
            // Gymnasium steps only after a reset, and the state replaces the reset's.
            self.reset(None)?;
        }
        self.call(json!({"op": "set_state", "state": state}))
            .map(|_| ())
            .map_err(|reason| EnvError::BadState {
                env: self.id.clone(),
                reason,
            })
    }
}

/// A bridge process that has declared its spaces.
pub(crate) struct Started {
    /// `gym:ID`, for messages.
    pub(crate) id: String,
    pub(crate) state_space: Space,
    pub(crate) action_space: Space,
    pub(crate) process: Process,
}

impl Started {
    /// Starts `copies` copies of `gymnasium.make(gym_id, **kwargs)` in one process of
    /// `python` and reads the spaces it declares.
    pub(crate) fn new(python: &str, gym_id: &str, kwargs: Map<String, Json>, copies: usize) -> Result<Self> {
        let id = format!("{GYM_PREFIX}{gym_id}");
        let unknown = |reason: String| EnvError::Unknown { id: id.clone(), reason };
        let args = json!({"id": gym_id, "kwargs": kwargs, "copies": copies});
        let (process, spaces) = Process::start(python, &args).map_err(&unknown)?;
        let space = |key: &str| -> Result<Space> {
            let spec = spaces.get(key).unwrap_or(&Json::Null);
            Space::from_json(spec)
                .map_err(|e| unknown(format!("the bridge declared an {key} rlgraph cannot read: {e}")))
        };
        Ok(Started {
            state_space: space("observation_space")?,
            action_space: space("action_space")?,
            id,
            process,
        })
    }
}

/// The Gymnasium id and `gymnasium.make` keywords of `gym:ID?key=value&...` (each value
/// JSON where it parses as JSON, a string otherwise).
pub(crate) fn parse_id(id: &str) -> Result<(String, Map<String, Json>)> {
    let rest = id.strip_prefix(GYM_PREFIX).unwrap_or(id);
    let (gym_id, query) = rest.split_once('?').unwrap_or((rest, ""));
    if gym_id.trim().is_empty() {
        return Err(EnvError::Unknown {
            id: id.into(),
            reason: "no Gymnasium id after `gym:` (for example gym:CartPole-v1)".into(),
        });
    }
    let mut kwargs = Map::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(EnvError::Unknown {
                id: id.into(),
                reason: format!("{pair:?} is not key=value"),
            });
        };
        let value = serde_json::from_str(value).unwrap_or_else(|_| Json::String(value.into()));
        kwargs.insert(key.into(), value);
    }
    Ok((gym_id.to_string(), kwargs))
}

/// The bytes one observation of `space` takes on the bridge (its leaves back to back).
pub(crate) fn observation_bytes(space: &Space) -> std::result::Result<usize, String> {
    space.flatten().into_iter().try_fold(0, |total, (key, leaf)| {
        let n: usize = leaf.shape().unwrap_or(&[]).iter().product();
        Ok(total + n * leaf_bytes(&key, leaf.dtype().unwrap_or(Dtype::Float32))?)
    })
}

/// The bytes of one element of `dtype` on the bridge.
fn leaf_bytes(key: &str, dtype: Dtype) -> std::result::Result<usize, String> {
    match dtype {
        Dtype::Bool | Dtype::Uint8 => Ok(1),
        Dtype::Int32 | Dtype::Float32 => Ok(4),
        Dtype::Int64 | Dtype::Float64 => Ok(8),
        Dtype::Text => Err(format!("{key}: text observations cannot cross the bridge")),
    }
}

/// The value of `space` whose leaves are `bytes`, back to back in flat order, each
/// little-endian (what `bridge.py`'s `encode` writes).
pub fn decode(space: &Space, bytes: &[u8]) -> std::result::Result<Value, String> {
    let mut rest = bytes;
    let mut leaves = vec![];
    for (key, leaf) in space.flatten() {
        let shape = leaf.shape().unwrap_or(&[]).to_vec();
        let n: usize = shape.iter().product();
        let dtype = leaf.dtype().unwrap_or(Dtype::Float32);
        let size = leaf_bytes(&key, dtype)?;
        if rest.len() < n * size {
            return Err(format!(
                "the observation has {} bytes; the space {} needs more",
                bytes.len(),
                space.describe()
            ));
        }
        let (mine, tail) = rest.split_at(n * size);
        rest = tail;
        let value = match dtype {
            Dtype::Bool => Value::Bool(array(&shape, mine.iter().map(|&b| b != 0).collect())?),
            Dtype::Uint8 => Value::Uint8(array(&shape, mine.to_vec())?),
            Dtype::Int32 => Value::Int32(array(&shape, words(mine, i32::from_le_bytes))?),
            Dtype::Int64 => Value::Int64(array(&shape, words(mine, i64::from_le_bytes))?),
            Dtype::Float32 => Value::Float32(array(&shape, words(mine, f32::from_le_bytes))?),
            Dtype::Float64 => Value::Float64(array(&shape, words(mine, f64::from_le_bytes))?),
            Dtype::Text => unreachable!("refused above"),
        };
        leaves.push((key, value));
    }
    if !rest.is_empty() {
        return Err(format!(
            "the observation has {} bytes, {} more than the space {} holds",
            bytes.len(),
            rest.len(),
            space.describe()
        ));
    }
    if !space.is_container() {
        return leaves.pop().map(|(_, v)| v).ok_or_else(|| "no observation".to_string());
    }
    Value::unflatten(leaves).map_err(|e| e.to_string())
}

fn array<T>(shape: &[usize], data: Vec<T>) -> std::result::Result<Array<T>, String> {
    Array::new(shape.to_vec(), data).map_err(|e| e.to_string())
}

/// Fixed-size little-endian words.
fn words<T, const N: usize>(bytes: &[u8], from: fn([u8; N]) -> T) -> Vec<T> {
    bytes
        .chunks_exact(N)
        .map(|c| from(c.try_into().unwrap_or([0; N])))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_reads_dict_leaves_in_sorted_key_order() {
        let space = Space::from_json_str(r#"{"b": {"type": "float-box", "shape": [2]}, "a": "int64"}"#).unwrap();
        let mut bytes = 7i64.to_le_bytes().to_vec();
        bytes.extend(1.5f32.to_le_bytes());
        bytes.extend((-2.0f32).to_le_bytes());
        let value = decode(&space, &bytes).unwrap();
        assert_eq!(
            value.to_json(),
            serde_json::json!({"a": 7, "b": [1.5, -2.0]}),
            "a (int64) first, then b"
        );
    }

    #[test]
    fn decode_refuses_too_few_or_too_many_bytes() {
        let space = Space::from_json_str(r#"{"type": "float-box", "shape": [2]}"#).unwrap();
        assert!(decode(&space, &[0; 7]).unwrap_err().contains("needs more"));
        assert!(decode(&space, &[0; 9]).unwrap_err().contains("1 more"));
        assert!(decode(&space, &[0; 8]).is_ok());
    }
}

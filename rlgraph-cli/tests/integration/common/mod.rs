//! Running the `rlgraph` binary from the repository root.

use std::process::Command;

/// The Python with gymnasium (and mujoco) that tests of the bridge and the native MuJoCo tasks
/// use, or `None`: they skip (an error instead where `RLGRAPH_REQUIRE_GYM` is set).
pub fn python() -> Option<String> {
    rlgraph_envs::gym::python_for_tests().unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `rlgraph ARGS` and returns (exit code, stdout, stderr).
pub fn rlgraph(args: &[&str]) -> (i32, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rlgraph"));
    command
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    // The checkout's Python, where one is and none is named, for the environments that need
    // one (the bridge's, and MuJoCo's library for the native MuJoCo tasks).
    if std::env::var_os("RLGRAPH_PYTHON").is_none() {
        if let Ok(Some(python)) = rlgraph_envs::gym::python_for_tests() {
            command.env("RLGRAPH_PYTHON", python);
        }
    }
    let out = command.output().expect("the rlgraph binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Trains `config` on `env` for `timesteps` steps from `seed` into the run directory `out`,
/// asserting that the run succeeds.
pub fn train_into(config: &str, env: &str, timesteps: u64, seed: u64, out: &str) {
    let (steps, seed) = (timesteps.to_string(), seed.to_string());
    let (code, _, stderr) = rlgraph(&[
        "train",
        config,
        "--env",
        env,
        "--timesteps",
        &steps,
        "--seed",
        &seed,
        "--out",
        out,
    ]);
    assert_eq!(code, 0, "{stderr}");
}

pub mod cluster;
pub mod roles;

/// The TensorBoard event file in `dir`, if there is one.
pub fn event_file(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).find(|p| {
        p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("events.out.tfevents.")
    })
}

/// Whether any TensorBoard event file in `dir` holds a scalar tagged `tag`.
pub fn events_have(dir: &std::path::Path, tag: &str) -> bool {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).any(|p| {
        p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("events.out.tfevents.")
            && std::fs::read(&p)
                .unwrap()
                .windows(tag.len())
                .any(|w| w == tag.as_bytes())
    })
}

/// A safetensors file's JSON header (each tensor's name, dtype, shape and data offsets, and
/// its `__metadata__`) and the number of bytes that follow the header.
pub fn safetensors_header(path: &std::path::Path) -> (serde_json::Map<String, serde_json::Value>, usize) {
    let (bytes, header, start) = read_safetensors(path);
    (header, bytes.len() - start)
}

/// The bytes of the safetensors file at `path`, its header, and where its data begins.
fn read_safetensors(path: &std::path::Path) -> (Vec<u8>, serde_json::Map<String, serde_json::Value>, usize) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let n = u64::from_le_bytes(bytes[..8].try_into().expect("an 8-byte header length")) as usize;
    let header = serde_json::from_slice::<serde_json::Value>(&bytes[8..8 + n])
        .expect("a JSON header")
        .as_object()
        .expect("a JSON object")
        .clone();
    (bytes, header, 8 + n)
}

/// Every F32 tensor of the safetensors file at `path` but the host's (`#`-prefixed) state, by
/// name.
#[cfg(feature = "tch")]
pub fn safetensors_f32s(path: &std::path::Path) -> std::collections::BTreeMap<String, Vec<f32>> {
    let (bytes, header, start) = read_safetensors(path);
    header
        .iter()
        .filter(|(name, info)| !name.starts_with('#') && info["dtype"] == "F32")
        .map(|(name, info)| {
            let offsets = &info["data_offsets"];
            let (from, to) = (offsets[0].as_u64().unwrap(), offsets[1].as_u64().unwrap());
            let data = &bytes[start + from as usize..start + to as usize];
            let values = data
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                .collect();
            (name.clone(), values)
        })
        .collect()
}

//! A ChaCha8 RNG's exact position as JSON (seed, stream, word position), so that whatever is
//! restored from a checkpoint continues the same random stream.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value as Json};

/// `{"rng_seed": [32 bytes], "rng_stream": n, "rng_word_pos": "n"}` (the word position is a
/// u128, so it is written as a string).
pub fn rng_to_json(rng: &ChaCha8Rng) -> Json {
    json!({
        "rng_seed": rng.get_seed().to_vec(),
        "rng_stream": rng.get_stream(),
        "rng_word_pos": rng.get_word_pos().to_string(),
    })
}

/// The RNG `rng_to_json` described, read from `state` (other keys are ignored), or the name
/// of the field that is missing or malformed.
pub fn rng_from_json(state: &Json) -> Result<ChaCha8Rng, String> {
    let seed: Vec<u8> = state["rng_seed"]
        .as_array()
        .map(|a| a.iter().filter_map(|x| x.as_u64()).map(|x| x as u8).collect())
        .unwrap_or_default();
    let seed: [u8; 32] = seed.try_into().map_err(|_| "bad rng_seed".to_string())?;
    let stream = state["rng_stream"].as_u64().ok_or("bad rng_stream")?;
    let word_pos: u128 = state["rng_word_pos"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .ok_or("bad rng_word_pos")?;
    let mut rng = ChaCha8Rng::from_seed(seed);
    rng.set_stream(stream);
    rng.set_word_pos(word_pos);
    Ok(rng)
}

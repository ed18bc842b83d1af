//! A space spec from arbitrary text: parsed, sampled with a batch, printed as JSON and read
//! back as a value of the space. Any of these may refuse; none may panic or abort.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rand::SeedableRng;
use rlgraph_spaces::Space;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // A value to read rides after the first newline.
    let (spec, value) = text.split_once('\n').unwrap_or((text, ""));
    let Ok(space) = Space::from_json_str(spec) else { return };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    if space.flat_dim() <= 1 << 16 {
        let sample = space.with_batch_rank(true).sample(Some(2), &mut rng);
        let json = sample.to_json();
        let _ = space.with_batch_rank(true).value_from_json(&json);
    }
    if let Ok(json) = serde_json::from_str(value) {
        let _ = space.value_from_json(&json);
    }
});

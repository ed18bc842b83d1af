//! `rlgraph space`: a space spec in, its structure, samples and checks out, as JSON.

use std::path::Path;

use clap::Args;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_spaces::Space;
use serde_json::{json, Value as Json};

/// The most sampled numbers one report prints (2^24, some hundreds of MB of JSON).
const MAX_PRINTED_NUMBERS: usize = 1 << 24;

/// Arguments of `rlgraph space`.
#[derive(Args)]
pub struct SpaceArgs {
    /// The space spec: JSON text, or the path of a JSON file.
    spec: String,
    /// How many samples to draw.
    #[arg(long, default_value_t = 1)]
    samples: usize,
    /// The batch size of each sample (for spaces with a batch rank).
    #[arg(long)]
    batch: Option<usize>,
    /// The seed of the sampling RNG.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// A value (JSON text) to check against the space; the check's verdict is printed.
    #[arg(long)]
    check: Option<String>,
}

/// Runs the subcommand and returns the JSON report, or a one-line error.
pub fn run(args: &SpaceArgs) -> Result<String, String> {
    let looks_like_json = args.spec.trim_start().starts_with(['{', '[', '"']);
    let text = if Path::new(&args.spec).is_file() {
        std::fs::read_to_string(&args.spec).map_err(|e| format!("cannot read {}: {e}", args.spec))?
    } else if !looks_like_json && Path::new(&args.spec).extension().is_some_and(|e| e == "json") {
        return Err(format!(
            "cannot read {}: no such file (give JSON text or the path of a JSON file)",
            args.spec
        ));
    } else {
        args.spec.clone()
    };
    let space = Space::from_json_str(&text).map_err(|e| format!("space spec: {e}"))?;
    // Every sampled number is printed: refuse a report no terminal or file should hold.
    let numbers = [args.samples, args.batch.unwrap_or(1), space.flat_dim().max(1)]
        .iter()
        .try_fold(1usize, |n, x| n.checked_mul(*x))
        .filter(|n| *n <= MAX_PRINTED_NUMBERS);
    if numbers.is_none() {
        return Err(format!(
            "--samples {} x --batch {} x {} numbers per item is more than the {MAX_PRINTED_NUMBERS} numbers `rlgraph space` prints; ask for fewer samples or a smaller batch",
            args.samples,
            args.batch.unwrap_or(1),
            space.flat_dim()
        ));
    }
    let flat: Vec<Json> = space
        .flatten()
        .into_iter()
        .map(|(key, leaf)| {
            json!({
                "key": key,
                "space": leaf.describe(),
                "shape": leaf.get_shape(true, true),
                "flat_dim": leaf.flat_dim(),
            })
        })
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let samples: Vec<Json> = (0..args.samples)
        .map(|_| space.sample(args.batch, &mut rng).to_json())
        .collect();
    let mut report = json!({
        "space": space.to_json(),
        "flat_dim": space.flat_dim(),
        "flat": flat,
        "seed": args.seed,
        "samples": samples,
    });
    if let Some(value_text) = &args.check {
        let value: Json = serde_json::from_str(value_text).map_err(|e| format!("--check value is not JSON: {e}"))?;
        report["check"] = match space.value_from_json(&value) {
            Ok(_) => json!({"contained": true}),
            Err(e) => json!({"contained": false, "reason": e.to_string()}),
        };
    }
    serde_json::to_string_pretty(&report).map_err(|e| e.to_string())
}

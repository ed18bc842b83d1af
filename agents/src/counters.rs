//! The agent's own counters and RNG, saved in checkpoints so a resumed run continues exactly.

use std::collections::BTreeMap;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_core::{rng_from_json, rng_to_json, CoreError, HostState, Result, SavedState};

/// The agent's own counters and RNG, so a checkpoint resumes exactly.
pub(crate) struct Counters {
    /// Draws every host-side random choice (exploration, sampling).
    pub rng: ChaCha8Rng,
    /// Environment steps observed.
    pub timesteps: u64,
    /// Updates done.
    pub updates: u64,
    /// Environment steps since the target network was last synced.
    pub steps_since_sync: u64,
    /// Weight snapshots published (the last one's version).
    pub published: u64,
}

impl HostState for Counters {
    fn save_state(&self) -> Result<SavedState> {
        Ok(SavedState {
            tensors: BTreeMap::new(),
            meta: {
                let mut meta = rng_to_json(&self.rng);
                meta["timesteps"] = self.timesteps.into();
                meta["updates"] = self.updates.into();
                meta["steps_since_sync"] = self.steps_since_sync.into();
                meta["published"] = self.published.into();
                meta
            },
        })
    }

    fn check_state(&self, state: &SavedState) -> Result<()> {
        parse_counters(state).map(|_| ())
    }

    fn load_state(&mut self, state: SavedState) -> Result<()> {
        *self = parse_counters(&state)?;
        Ok(())
    }
}

fn parse_counters(state: &SavedState) -> Result<Counters> {
    let bad = |reason: String| CoreError::Checkpoint {
        path: "(agent counters)".into(),
        reason,
    };
    let m = &state.meta;
    let rng = rng_from_json(m).map_err(bad)?;
    let count = |k: &str| m[k].as_u64().ok_or_else(|| bad(format!("{k} is missing or malformed")));
    Ok(Counters {
        rng,
        timesteps: count("timesteps")?,
        updates: count("updates")?,
        steps_since_sync: count("steps_since_sync")?,
        // Checkpoints from before snapshots were versioned have none.
        published: if m["published"].is_null() {
            0
        } else {
            count("published")?
        },
    })
}

impl Counters {
    /// Fresh counters with the RNG seeded from `seed`.
    pub fn new(seed: u64) -> Self {
        Counters {
            rng: ChaCha8Rng::seed_from_u64(seed.wrapping_add(0x5eed)),
            timesteps: 0,
            updates: 0,
            steps_since_sync: 0,
            published: 0,
        }
    }
}

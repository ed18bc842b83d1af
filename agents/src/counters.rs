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
    /// Environment steps since the target network was last synced, counted at the end of each
    /// update round (see [`Counters::due_for_sync`]).
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

    /// Counts one update (already added to `updates`) toward the target sync; true when the
    /// target is due, and the count starts again.
    ///
    /// A round of `update_steps` updates covers `update_interval` environment steps. The count
    /// moves at the end of each round, so a target never changes inside a round: with SB3's
    /// `gradient_steps` the whole burst of updates learns against one target, as there, and
    /// the target syncs after the first round that ends `sync_interval` or more steps after
    /// the last sync. With one update per round this is RLgraph's count.
    pub fn due_for_sync(&mut self, update: &crate::UpdateSpec) -> bool {
        if !self.updates.is_multiple_of(update.update_steps.max(1)) {
            return false;
        }
        self.count_toward_sync(update.update_interval, update.sync_interval)
    }

    /// Adds `steps` to the steps since the last sync; true (and the count starts again) once
    /// they reach `interval`.
    pub fn count_toward_sync(&mut self, steps: u64, interval: u64) -> bool {
        self.steps_since_sync += steps;
        let due = self.steps_since_sync >= interval;
        if due {
            self.steps_since_sync = 0;
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::Counters;
    use crate::UpdateSpec;

    /// The rounds (1-based) after which the target syncs, for updates grouped as `spec`
    /// groups them, over `rounds` update rounds; and whether any sync fell inside a round.
    fn syncs(spec: &UpdateSpec, rounds: u64) -> (Vec<u64>, bool) {
        let mut counters = Counters::new(0);
        let (mut synced, mut inside) = (vec![], false);
        for round in 1..=rounds {
            for k in 0..spec.update_steps {
                counters.updates += 1;
                if counters.due_for_sync(spec) {
                    synced.push(round);
                    inside |= k + 1 < spec.update_steps;
                }
            }
        }
        (synced, inside)
    }

    #[test]
    fn one_update_per_round_syncs_as_rlgraph_counts() {
        // RLgraph's defaults: an update every 4 steps, a sync every 32: every 8th update.
        let spec = UpdateSpec::default();
        assert_eq!(syncs(&spec, 24), (vec![8, 16, 24], false));
    }

    #[test]
    fn bursts_of_updates_sync_between_rounds_every_sync_interval_steps() {
        // The zoo's MountainCar: 8 updates every 16 steps, a sync every 600 steps. The first
        // round to end 600 or more steps after the last sync is the 38th (608 steps), then the
        // 76th (38 rounds later again). Counting each update as 16 steps would sync inside the
        // 5th round.
        let spec = UpdateSpec {
            update_interval: 16,
            update_steps: 8,
            sync_interval: 600,
            ..UpdateSpec::default()
        };
        assert_eq!(syncs(&spec, 80), (vec![38, 76], false));
        // The zoo's CartPole: 128 updates every 256 steps, a sync every 10 steps. SB3 syncs
        // during collection, between bursts: after every round here.
        let spec = UpdateSpec {
            update_interval: 256,
            update_steps: 128,
            sync_interval: 10,
            ..UpdateSpec::default()
        };
        assert_eq!(syncs(&spec, 3), (vec![1, 2, 3], false));
    }
}

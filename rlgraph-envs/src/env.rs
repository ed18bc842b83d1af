//! The `Env` trait every environment implements, its step result and its errors.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_spaces::{FloatBox, IntBox, Space, Value};

/// What went wrong in an environment.
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    /// An action outside the action space.
    #[error("env '{env}': action {action} is not in the action space ({expected})")]
    BadAction {
        /// The environment's id.
        env: String,
        /// The action, as given.
        action: String,
        /// The action space.
        expected: String,
    },
    /// `step` after the episode ended, without a `reset`.
    #[error("env '{env}': the episode is over (terminated or truncated); call reset first")]
    EpisodeOver {
        /// The environment's id.
        env: String,
    },
    /// A state that cannot be set.
    #[error("env '{env}': cannot set state: {reason}")]
    BadState {
        /// The environment's id.
        env: String,
        /// What is wrong.
        reason: String,
    },
    /// The Gymnasium bridge's Python process failed a request, or stopped answering.
    #[error("env '{env}': {what} failed in the Gymnasium bridge: {reason}")]
    Bridge {
        /// The environment's id.
        env: String,
        /// The request (`reset`, `step`).
        what: String,
        /// Python's error, or how the process ended.
        reason: String,
    },
    /// An environment that breaks the `Env` contract ([`crate::check_env`] says how).
    #[error("env '{env}' breaks the Env contract: {reason}")]
    Contract {
        /// The environment's id.
        env: String,
        /// What is wrong, and where.
        reason: String,
    },
    /// An unknown environment id or bad settings.
    #[error("env {id:?}: {reason}")]
    Unknown {
        /// The id asked for.
        id: String,
        /// What is wrong, and what is known.
        reason: String,
    },
}

/// Shorthand for results of the environments.
pub type Result<T, E = EnvError> = std::result::Result<T, E>;

/// One transition: Gymnasium's `(observation, reward, terminated, truncated)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The observation after the action.
    pub observation: Value,
    /// The reward for the action.
    pub reward: f64,
    /// The episode reached a terminal state of the MDP (no bootstrap past it).
    pub terminated: bool,
    /// The episode was cut by the time limit (bootstrap past it is still valid).
    pub truncated: bool,
}

/// An environment's exact position, so that a resumed run steps on as if it never stopped:
/// its internal state (as [`Env::state`] gives it), its RNG and its episode clock.
#[derive(Clone, Debug, PartialEq)]
pub struct EnvSnapshot {
    /// The internal state (empty for environments without one).
    pub state: Vec<f64>,
    /// The RNG's exact position (`None` for deterministic environments).
    pub rng: Option<ChaCha8Rng>,
    /// Steps taken in the current episode (the time limit counts them).
    pub episode_steps: usize,
    /// Whether the episode is over (a step then needs a reset first).
    pub episode_over: bool,
}

/// An environment: seeded resets and steps, with declared spaces.
pub trait Env: Send {
    /// The environment's id (`CartPole-v1`, `GridWorld-2x2`).
    fn id(&self) -> &str;
    /// The space of observations.
    fn state_space(&self) -> &Space;
    /// The space of actions.
    fn action_space(&self) -> &Space;
    /// Starts an episode; with a seed, the environment's RNG is reseeded first (Gymnasium's
    /// `reset(seed=...)`), otherwise it continues. Only environments in another process
    /// (the Gymnasium bridge) can fail here.
    fn reset(&mut self, seed: Option<u64>) -> Result<Value>;
    /// Applies `action`.
    fn step(&mut self, action: &Value) -> Result<Step>;
    /// The internal state as `set_state` takes it, where the environment has one.
    fn state(&self) -> Option<Vec<f64>> {
        None
    }
    /// Sets the internal state directly (a testing aid, like `env.unwrapped.state = ...`).
    fn set_state(&mut self, state: &[f64]) -> Result<()> {
        let _ = state;
        Err(EnvError::BadState {
            env: self.id().to_string(),
            reason: "this environment has no settable state".into(),
        })
    }
    /// A picture of the current state, for videos; an error for environments that cannot draw
    /// themselves.
    fn render(&mut self) -> Result<crate::render::RgbFrame> {
        Err(EnvError::Unknown {
            id: self.id().to_string(),
            reason: "this environment cannot render (CartPole-v1 does, and gym: ids with render_mode=rgb_array)".into(),
        })
    }
    /// The exact position for a checkpoint, where the environment can give one.
    fn snapshot(&self) -> Option<EnvSnapshot> {
        None
    }
    /// Continues from `snapshot`; on error the environment is as it was.
    fn restore_snapshot(&mut self, snapshot: &EnvSnapshot) -> Result<()> {
        let _ = snapshot;
        Err(EnvError::BadState {
            env: self.id().to_string(),
            reason: "this environment cannot be restored from a checkpoint".into(),
        })
    }
}

/// The RNG an environment reseeds on `reset(Some(seed))`.
pub(crate) fn seeded(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// What every environment carries: its spaces, its RNG and its episode clock.
pub(crate) struct Core {
    pub(crate) rng: ChaCha8Rng,
    pub(crate) episode: EpisodeClock,
    pub(crate) state_space: Space,
    pub(crate) action_space: Space,
}

impl Core {
    pub(crate) fn new(id: &str, limit: Option<usize>, seed: u64, state_space: Space, action_space: Space) -> Self {
        Core {
            rng: seeded(seed),
            episode: EpisodeClock::new(id, limit),
            state_space,
            action_space,
        }
    }

    /// Starts an episode, reseeding first when given a seed; returns the RNG to draw the
    /// start state from.
    pub(crate) fn begin(&mut self, seed: Option<u64>) -> &mut ChaCha8Rng {
        if let Some(seed) = seed {
            self.rng = seeded(seed);
        }
        self.episode.start();
        &mut self.rng
    }

    /// `state` as exactly `N` finite values, each within its `(low, high)` bound (the
    /// observation space's, where Gymnasium declares one), and a new episode. `fields` names
    /// the values, comma-separated, for the error.
    pub(crate) fn set<const N: usize>(
        &mut self,
        state: &[f64],
        fields: &str,
        bounds: [(f64, f64); N],
    ) -> Result<[f64; N]> {
        let bad = |reason: String| EnvError::BadState {
            env: self.episode.id.clone(),
            reason,
        };
        let exact: [f64; N] = state
            .try_into()
            .map_err(|_| bad(format!("expected {N} values ({fields}), got {}", state.len())))?;
        for ((x, (low, high)), name) in exact.iter().zip(bounds).zip(fields.split(", ")) {
            if !x.is_finite() {
                return Err(bad(format!("{name} is {x}; expected a finite number")));
            }
            if *x < low || *x > high {
                return Err(bad(format!("{name} is {x}; expected a number from {low} to {high}")));
            }
        }
        self.episode.start();
        Ok(exact)
    }

    /// The bounds of the observation space's first `N` elements (for environments whose
    /// state is their observation).
    pub(crate) fn observation_bounds<const N: usize>(&self) -> [(f64, f64); N] {
        let mut out = [(f64::NEG_INFINITY, f64::INFINITY); N];
        if let Space::Float(b) = &self.state_space {
            for (i, o) in out.iter_mut().enumerate() {
                let (l, h) = b.bounds_of(i);
                *o = (l, h);
            }
        }
        out
    }
}

impl Core {
    /// The snapshot of an environment in internal state `state`.
    pub(crate) fn snapshot(&self, state: Vec<f64>) -> EnvSnapshot {
        EnvSnapshot {
            state,
            rng: Some(self.rng.clone()),
            episode_steps: self.episode.steps,
            episode_over: self.episode.over,
        }
    }

    /// Takes the RNG and episode clock of `snapshot` (after its state was set).
    pub(crate) fn resume(&mut self, snapshot: &EnvSnapshot) {
        if let Some(rng) = &snapshot.rng {
            self.rng = rng.clone();
        }
        self.episode.resume(snapshot);
    }
}

/// `Env::snapshot` and `Env::restore_snapshot` for a type with a `core: Core` field, whose
/// internal state is what `state` gives and `set_state` takes (bounds checked there).
macro_rules! core_snapshots {
    () => {
        fn snapshot(&self) -> Option<$crate::env::EnvSnapshot> {
            Some(self.core.snapshot(Env::state(self).unwrap_or_default()))
        }

        fn restore_snapshot(&mut self, snapshot: &$crate::env::EnvSnapshot) -> Result<()> {
            if !snapshot.state.is_empty() || Env::state(self).is_some() {
                self.set_state(&snapshot.state)?;
            }
            self.core.resume(snapshot);
            Ok(())
        }
    };
}
pub(crate) use core_snapshots;

/// `Env`'s id and space getters for a type with a `core: Core` field.
macro_rules! core_accessors {
    () => {
        fn id(&self) -> &str {
            &self.core.episode.id
        }

        fn state_space(&self) -> &Space {
            &self.core.state_space
        }

        fn action_space(&self) -> &Space {
            &self.core.action_space
        }
    };
}
pub(crate) use core_accessors;

/// A float box with per-element bounds (which the environments' constants always satisfy).
pub(crate) fn float_box(low: Vec<f64>, high: Vec<f64>) -> Space {
    let n = low.len();
    FloatBox::per_element([n], low, high)
        .map(Space::from)
        .unwrap_or_else(|_| Space::from(FloatBox::new([n])))
}

/// The scalar IntBox `0..n` of `n` discrete actions.
pub(crate) fn discrete(n: i64) -> Space {
    Space::from(IntBox::new(n).unwrap_or_else(|_| IntBox::unbounded()))
}

/// An episode's clock, as every environment keeps one: its steps, its time limit, and whether
/// it is over (a step then fails until the next reset). For environments of one's own:
///
/// ```
/// use rlgraph_envs::EpisodeClock;
///
/// let mut clock = EpisodeClock::new("Chain-v0", Some(2));
/// clock.start(); // in reset
/// clock.tick()?; // at the top of step
/// assert!(!clock.finish(false)); // at the end of step: not truncated yet
/// clock.tick()?;
/// assert!(clock.finish(false)); // the second step reaches the limit: truncated
/// assert!(clock.is_over() && clock.tick().is_err());
/// # Ok::<(), rlgraph_envs::EnvError>(())
/// ```
#[derive(Clone, Debug)]
pub struct EpisodeClock {
    pub(crate) id: String,
    pub(crate) steps: usize,
    pub(crate) limit: Option<usize>,
    pub(crate) over: bool,
}

impl EpisodeClock {
    /// The clock of environment `id`, with a time limit of `limit` steps (none for `None`);
    /// over until the first `start`.
    pub fn new(id: &str, limit: Option<usize>) -> Self {
        EpisodeClock {
            id: id.into(),
            steps: 0,
            limit,
            over: true,
        }
    }

    /// Starts an episode (in `reset`).
    pub fn start(&mut self) {
        self.steps = 0;
        self.over = false;
    }

    /// Takes the step count and the over flag of `snapshot`.
    pub(crate) fn resume(&mut self, snapshot: &EnvSnapshot) {
        self.steps = snapshot.episode_steps;
        self.over = snapshot.episode_over;
    }

    /// Counts a step (at the top of `step`), or fails with `EpisodeOver` when the episode is
    /// over.
    pub fn tick(&mut self) -> Result<()> {
        if self.over {
            return Err(EnvError::EpisodeOver { env: self.id.clone() });
        }
        // Saturating: a snapshot from elsewhere may hold any count.
        self.steps = self.steps.saturating_add(1);
        Ok(())
    }

    /// Closes a step (at the end of `step`): returns `truncated` (the time limit reached
    /// without `terminated`), and marks the episode over when it ended either way.
    pub fn finish(&mut self, terminated: bool) -> bool {
        let truncated = !terminated && self.limit.is_some_and(|l| self.steps >= l);
        self.over = terminated || truncated;
        truncated
    }

    /// Steps taken in this episode.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// Whether the episode is over.
    pub fn is_over(&self) -> bool {
        self.over
    }
}

/// The integer action in `0..n` (an int32, int64 or uint8 scalar), or a `BadAction` error
/// naming environment `env` and its action `space`.
pub fn discrete_action(env: &str, space: &Space, action: &Value, n: i64) -> Result<usize> {
    let x = match action {
        Value::Int32(a) if a.data().len() == 1 => a.data()[0] as i64,
        Value::Int64(a) if a.data().len() == 1 => a.data()[0],
        Value::Uint8(a) if a.data().len() == 1 => a.data()[0] as i64,
        _ => -1,
    };
    if (0..n).contains(&x) {
        Ok(x as usize)
    } else {
        Err(bad_action(env, space, action))
    }
}

/// The float action of `dim` elements (float32 or float64), or a `BadAction` error naming
/// environment `env` and its action `space` (NaN is refused).
pub fn float_action(env: &str, space: &Space, action: &Value, dim: usize) -> Result<Vec<f64>> {
    let v: Vec<f64> = match action {
        Value::Float32(a) => a.data().iter().map(|&x| x as f64).collect(),
        Value::Float64(a) => a.data().to_vec(),
        _ => vec![],
    };
    if v.len() == dim && v.iter().all(|x| !x.is_nan()) {
        Ok(v)
    } else {
        Err(bad_action(env, space, action))
    }
}

/// The `BadAction` error for `action`, naming environment `env` and its action `space`.
pub fn bad_action(env: &str, space: &Space, action: &Value) -> EnvError {
    let shown = action.to_json().to_string();
    EnvError::BadAction {
        env: env.into(),
        action: shown,
        expected: space.describe(),
    }
}

/// A float32 observation vector of `values` (as a `FloatBox` of rank 1 holds it).
pub fn observation(values: &[f64]) -> Value {
    Value::Float32(
        rlgraph_spaces::Array::new([values.len()], values.iter().map(|&x| x as f32).collect())
            .unwrap_or_else(|_| unreachable!("shape matches the data")),
    )
}

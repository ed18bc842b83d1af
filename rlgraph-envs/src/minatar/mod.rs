//! MinAtar (Young & Tian 2019; the `minatar` 1.0.15 package) in Rust: Asterix, Breakout,
//! Freeway, Seaquest and Space Invaders on a 10x10 board, as the ids the package registers
//! with Gymnasium: `MinAtar/<Game>-v1` with the game's minimal action set and
//! `MinAtar/<Game>-v0` with all six actions (no-op, left, up, right, down, fire).
//!
//! Every step equals the package's run of `gymnasium.make(id)` at its defaults: sticky
//! actions with probability 0.1 (the previous action is repeated) and difficulty ramping on.
//! Random choices come from NumPy's legacy `RandomState`, reproduced exactly (MT19937, its
//! `rand` and `randint`), one generator shared by the sticky actions and the game as in the
//! package: `reset(Some(seed))` is `env.reset(seed=seed)` on a freshly made environment
//! (`RandomState(seed)`; seeds from 2^32 up, which NumPy refuses as ints, seed it as the
//! array `[seed & 0xffffffff, seed >> 32]`), and `reset(None)` continues that generator into
//! the next episode as `env.reset()` does. `make(id, seed)` followed by `reset(None)` equals
//! `reset(Some(seed))`. The tests compare whole runs against the package step by step.
//!
//! The package registers no `max_episode_steps`, and `gymnasium.make` then adds no time
//! limit, so there is none here either: episodes end only as the games end them (Freeway
//! ends itself on its 2,501st step, as `terminated`).
//!
//! Observations are the package's 10x10xC boolean boards (channels last, `C` per game) as
//! uint8 0 or 1 in an `IntBox` of `0..2`: the representation this project gives image-like
//! observations (Atari frames through the bridge are uint8 boxes), so frame stacks and
//! replays keep them as bytes.
//!
//! `Env::state` gives the game's whole state as numbers (a tag naming the id, the sticky
//! action, then the game's fields and lists) and `set_state` takes such a state back,
//! checked; a snapshot adds NumPy's generator (its 624 words and position), so a restored
//! environment continues bit for bit.

mod asterix;
mod breakout;
mod freeway;
mod numpy_random;
mod seaquest;
mod space_invaders;
mod state;

use rlgraph_spaces::{Array, Dtype, IntBox, Space, Value};

use crate::env::{core_accessors, discrete, discrete_action, Core, Env, EnvSnapshot};
use crate::{EnvError, Result, Step};
use asterix::Asterix;
use breakout::Breakout;
use freeway::Freeway;
use numpy_random::{RandomState, STATE_WORDS};
use seaquest::Seaquest;
use space_invaders::SpaceInvaders;
use state::Reader;

/// The prefix of MinAtar ids.
pub const MINATAR_PREFIX: &str = "MinAtar/";

/// The MinAtar ids: minimal action sets (`-v1`), then all six actions (`-v0`).
pub const MINATAR_IDS: &[&str] = &[
    "MinAtar/Asterix-v1",
    "MinAtar/Breakout-v1",
    "MinAtar/Freeway-v1",
    "MinAtar/Seaquest-v1",
    "MinAtar/SpaceInvaders-v1",
    "MinAtar/Asterix-v0",
    "MinAtar/Breakout-v0",
    "MinAtar/Freeway-v0",
    "MinAtar/Seaquest-v0",
    "MinAtar/SpaceInvaders-v0",
];

/// The probability that the previous action is repeated instead of the one given.
pub const STICKY_ACTION_PROB: f64 = 0.1;

/// The first value of a state or snapshot is this plus the id's place in [`MINATAR_IDS`], a
/// range no other environment's state starts with (the native MuJoCo tasks use 1 to 3).
const TAG_BASE: f64 = 1000.0;

/// Whether `id` is a MinAtar id.
pub fn is_minatar_id(id: &str) -> bool {
    MINATAR_IDS.contains(&id)
}

// The package's six actions, as its games number them.
const LEFT: usize = 1;
const UP: usize = 2;
const RIGHT: usize = 3;
const DOWN: usize = 4;
const FIRE: usize = 5;

/// The five games.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Asterix,
    Breakout,
    Freeway,
    Seaquest,
    SpaceInvaders,
}

const KINDS: [Kind; 5] = [
    Kind::Asterix,
    Kind::Breakout,
    Kind::Freeway,
    Kind::Seaquest,
    Kind::SpaceInvaders,
];

impl Kind {
    /// The package's name of the game (its module under `minatar.environments`).
    fn name(self) -> &'static str {
        match self {
            Kind::Asterix => "asterix",
            Kind::Breakout => "breakout",
            Kind::Freeway => "freeway",
            Kind::Seaquest => "seaquest",
            Kind::SpaceInvaders => "space_invaders",
        }
    }

    fn channels(self) -> usize {
        match self {
            Kind::Asterix => asterix::CHANNELS,
            Kind::Breakout => breakout::CHANNELS,
            Kind::Freeway => freeway::CHANNELS,
            Kind::Seaquest => seaquest::CHANNELS,
            Kind::SpaceInvaders => space_invaders::CHANNELS,
        }
    }

    fn minimal_actions(self) -> &'static [usize] {
        match self {
            Kind::Asterix => asterix::MINIMAL_ACTIONS,
            Kind::Breakout => breakout::MINIMAL_ACTIONS,
            Kind::Freeway => freeway::MINIMAL_ACTIONS,
            Kind::Seaquest => seaquest::MINIMAL_ACTIONS,
            Kind::SpaceInvaders => space_invaders::MINIMAL_ACTIONS,
        }
    }

    /// The game before its first reset.
    fn game(self) -> Game {
        match self {
            Kind::Asterix => Game::Asterix(Asterix::new()),
            Kind::Breakout => Game::Breakout(Breakout::new()),
            Kind::Freeway => Game::Freeway(Freeway::new()),
            Kind::Seaquest => Game::Seaquest(Seaquest::new()),
            Kind::SpaceInvaders => Game::SpaceInvaders(SpaceInvaders::new()),
        }
    }

    fn decode(self, r: &mut Reader) -> std::result::Result<Game, String> {
        Ok(match self {
            Kind::Asterix => Game::Asterix(Asterix::decode(r)?),
            Kind::Breakout => Game::Breakout(Breakout::decode(r)?),
            Kind::Freeway => Game::Freeway(Freeway::decode(r)?),
            Kind::Seaquest => Game::Seaquest(Seaquest::decode(r)?),
            Kind::SpaceInvaders => Game::SpaceInvaders(SpaceInvaders::decode(r)?),
        })
    }
}

/// A game's state.
#[derive(Clone, Debug, PartialEq)]
enum Game {
    Asterix(Asterix),
    Breakout(Breakout),
    Freeway(Freeway),
    Seaquest(Seaquest),
    SpaceInvaders(SpaceInvaders),
}

impl Game {
    fn reset(&mut self, rng: &mut dyn Draws) {
        match self {
            Game::Asterix(g) => g.reset(rng),
            Game::Breakout(g) => g.reset(rng),
            Game::Freeway(g) => g.reset(rng),
            Game::Seaquest(g) => g.reset(rng),
            Game::SpaceInvaders(g) => g.reset(rng),
        }
    }

    fn act(&mut self, a: usize, rng: &mut dyn Draws) -> (i64, bool) {
        match self {
            Game::Asterix(g) => g.act(a, rng),
            Game::Breakout(g) => g.act(a, rng),
            Game::Freeway(g) => g.act(a, rng),
            Game::Seaquest(g) => g.act(a, rng),
            Game::SpaceInvaders(g) => g.act(a, rng),
        }
    }

    fn observe(&self, cells: &mut Cells) {
        match self {
            Game::Asterix(g) => g.observe(cells),
            Game::Breakout(g) => g.observe(cells),
            Game::Freeway(g) => g.observe(cells),
            Game::Seaquest(g) => g.observe(cells),
            Game::SpaceInvaders(g) => g.observe(cells),
        }
    }

    fn encode(&self, out: &mut Vec<f64>) {
        match self {
            Game::Asterix(g) => g.encode(out),
            Game::Breakout(g) => g.encode(out),
            Game::Freeway(g) => g.encode(out),
            Game::Seaquest(g) => g.encode(out),
            Game::SpaceInvaders(g) => g.encode(out),
        }
    }
}

/// Where a game's random numbers come from, called in the package's order: NumPy's
/// generator as the package draws them, or numbers given by a caller that steps the game
/// with draws of its own ([`MinAtar::step_drawing`], as the tensor games' tests do).
pub trait Draws {
    /// A uniform in `[0, 1)`, as NumPy's `rand()`.
    fn rand(&mut self) -> f64;
    /// An integer in `low..high`, as NumPy's `randint(low, high)`.
    fn randint(&mut self, low: i64, high: i64) -> i64;
}

impl Draws for RandomState {
    fn rand(&mut self) -> f64 {
        RandomState::rand(self)
    }

    fn randint(&mut self, low: i64, high: i64) -> i64 {
        RandomState::randint(self, low, high)
    }
}

/// A 10x10xC board of 0/1 bytes, channels last (the package's `state()` layout).
struct Cells {
    data: Vec<u8>,
    channels: usize,
}

impl Cells {
    /// Sets channel `c` at row `y`, column `x`. The games only name cells on the board (their
    /// decoders refuse states that would name others); any other is left alone.
    fn set(&mut self, y: i64, x: i64, c: usize) {
        if (0..10).contains(&y) && (0..10).contains(&x) {
            let i = (y as usize * 10 + x as usize) * self.channels + c;
            if let Some(cell) = self.data.get_mut(i) {
                *cell = 1;
            }
        }
    }
}

/// A MinAtar game as an [`Env`]: see the [module](self) documentation.
pub struct MinAtar {
    kind: Kind,
    /// The id's place in [`MINATAR_IDS`].
    place: usize,
    /// The package's action (0 to 5) for each of this id's actions.
    action_set: &'static [usize],
    game: Game,
    rng: RandomState,
    /// The previous action (of the package's six), which a sticky step repeats.
    last_action: usize,
    core: Core,
}

impl MinAtar {
    /// The game of `id` (one of [`MINATAR_IDS`]), whose first `reset(None)` seeds as
    /// `reset(Some(seed))`; fails naming the known ids for any other id.
    pub fn new(id: &str, seed: u64) -> Result<Self> {
        let place = MINATAR_IDS
            .iter()
            .position(|&known| known == id)
            .ok_or_else(|| EnvError::Unknown {
                id: id.into(),
                reason: format!("not a MinAtar game; known: {}", MINATAR_IDS.join(", ")),
            })?;
        // MINATAR_IDS lists the games in KINDS' order, minimal action sets first (a test
        // holds the two lists together).
        let kind = KINDS[place % KINDS.len()];
        let action_set: &'static [usize] = if place < KINDS.len() {
            kind.minimal_actions()
        } else {
            &[0, 1, 2, 3, 4, 5]
        };
        let shape = [10, 10, kind.channels()];
        let state_space = IntBox::with_bounds(0, 2)
            .and_then(|b| b.with_shape(shape).with_dtype(Dtype::Uint8))
            .map(Space::from)
            .map_err(|e| EnvError::Unknown {
                id: id.into(),
                reason: e.to_string(),
            })?;
        Ok(MinAtar {
            kind,
            place,
            action_set,
            game: kind.game(),
            rng: RandomState::from_seed(seed),
            last_action: 0,
            core: Core::new(
                MINATAR_IDS[place],
                None,
                seed,
                state_space,
                discrete(action_set.len() as i64),
            ),
        })
    }

    /// The package's name of the game (`breakout`, `space_invaders`, ...).
    pub fn game_name(&self) -> &'static str {
        self.kind.name()
    }

    /// The package's action (0 no-op, 1 left, 2 up, 3 right, 4 down, 5 fire) that each of
    /// this id's actions is.
    pub fn action_set(&self) -> &'static [usize] {
        self.action_set
    }

    /// `step(action)` with every random number of the step (the sticky action's first, then
    /// the game's) taken from `draws` instead of the environment's generator, which is left
    /// where it is: how a caller with draws of its own replays them in the native game.
    pub fn step_drawing(&mut self, action: &Value, draws: &mut dyn Draws) -> Result<Step> {
        self.step_from(action, Some(draws))
    }

    /// The board now, as the package's `state()` draws it.
    pub fn board(&self) -> Value {
        self.observe()
    }

    /// `reset(None)` with the game's start drawn from `draws` (see [`MinAtar::step_drawing`]).
    pub fn reset_drawing(&mut self, draws: &mut dyn Draws) -> Value {
        self.core.episode.start();
        self.game.reset(draws);
        self.observe()
    }

    fn step_from(&mut self, action: &Value, draws: Option<&mut dyn Draws>) -> Result<Step> {
        let n = self.action_set.len();
        let index = discrete_action(self.id(), &self.core.action_space, action, n as i64)?;
        self.core.episode.tick()?;
        let rng: &mut dyn Draws = match draws {
            Some(draws) => draws,
            None => &mut self.rng,
        };
        let mut a = self.action_set[index];
        // `Environment.act`: the draw comes first, every step.
        if rng.rand() < STICKY_ACTION_PROB {
            a = self.last_action;
        }
        self.last_action = a;
        let (reward, terminated) = self.game.act(a, rng);
        let truncated = self.core.episode.finish(terminated);
        Ok(Step {
            observation: self.observe(),
            reward: reward as f64,
            terminated,
            truncated,
        })
    }

    /// The board as the package's `state()` draws it.
    fn observe(&self) -> Value {
        let channels = self.kind.channels();
        let mut cells = Cells {
            data: vec![0; 100 * channels],
            channels,
        };
        self.game.observe(&mut cells);
        Value::Uint8(
            Array::new([10, 10, channels], cells.data).unwrap_or_else(|_| unreachable!("the shape holds the data")),
        )
    }

    fn tag(&self) -> f64 {
        TAG_BASE + self.place as f64
    }

    fn bad_state(&self, reason: String) -> EnvError {
        EnvError::BadState {
            env: self.id().into(),
            reason,
        }
    }

    /// Reads a state as `Env::state` writes it (`what` is "state" or "snapshot" for the
    /// errors): the sticky action and the game, and the values after them.
    fn decode<'a>(&self, values: &'a [f64], what: &str) -> Result<(usize, Game, &'a [f64])> {
        let id = self.id();
        let Some((&tag, _)) = values.split_first() else {
            return Err(self.bad_state(format!("the {what} is empty")));
        };
        if tag != self.tag() {
            let of = MINATAR_IDS
                .iter()
                .enumerate()
                .find(|(i, _)| tag == TAG_BASE + *i as f64)
                .map(|(_, other)| other);
            return Err(self.bad_state(match of {
                Some(other) => format!("the {what} is of {other}, not {id}"),
                None => format!("the {what} is not of a MinAtar game (its first value is {tag})"),
            }));
        }
        let mut r = Reader::starting_at(values, 1);
        let read = |r: &mut Reader| -> std::result::Result<(usize, Game), String> {
            let last_action = r.int("the previous action", 0, 5)? as usize;
            Ok((last_action, self.kind.decode(r)?))
        };
        let (last_action, game) = read(&mut r).map_err(|e| self.bad_state(format!("in the {what}, {e}")))?;
        Ok((last_action, game, r.rest()))
    }
}

impl Env for MinAtar {
    core_accessors!();

    fn reset(&mut self, seed: Option<u64>) -> Result<Value> {
        if let Some(seed) = seed {
            // A freshly made environment: the package's `last_action` starts at 0, and only
            // its constructor sets it.
            self.rng = RandomState::from_seed(seed);
            self.last_action = 0;
        }
        self.core.episode.start();
        self.game.reset(&mut self.rng);
        Ok(self.observe())
    }

    fn step(&mut self, action: &Value) -> Result<Step> {
        self.step_from(action, None)
    }

    /// The tag of the id (1000 plus its place in [`MINATAR_IDS`]), the previous action (of the
    /// package's six), then the game's fields as its `encode` documents them.
    fn state(&self) -> Option<Vec<f64>> {
        let mut out = vec![self.tag(), self.last_action as f64];
        self.game.encode(&mut out);
        Some(out)
    }

    /// Sets the game (and the sticky action) to a state as `state` gives it, checked, and
    /// starts an episode from there; the generator goes on where it is.
    fn set_state(&mut self, state: &[f64]) -> Result<()> {
        let (last_action, game, rest) = self.decode(state, "state")?;
        if !rest.is_empty() {
            return Err(self.bad_state(format!(
                "the state has {} values after the game's; a snapshot's generator cannot be set as a state",
                rest.len()
            )));
        }
        self.last_action = last_action;
        self.game = game;
        self.core.episode.start();
        Ok(())
    }

    /// The state, then NumPy's generator: its 624 words and its position.
    fn snapshot(&self) -> Option<EnvSnapshot> {
        let mut state = Env::state(self).unwrap_or_default();
        let (words, pos) = self.rng.words_and_pos();
        state.extend(words.iter().map(|&w| f64::from(w)));
        state.push(pos as f64);
        Some(EnvSnapshot {
            state,
            rng: None,
            episode_steps: self.core.episode.steps(),
            episode_over: self.core.episode.is_over(),
        })
    }

    fn restore_snapshot(&mut self, snapshot: &EnvSnapshot) -> Result<()> {
        let (last_action, game, rest) = self.decode(&snapshot.state, "snapshot")?;
        if rest.len() != STATE_WORDS + 1 {
            return Err(self.bad_state(format!(
                "the snapshot holds {} values after the game's; NumPy's generator takes {} (its words and position)",
                rest.len(),
                STATE_WORDS + 1
            )));
        }
        let mut r = Reader::starting_at(&snapshot.state, snapshot.state.len() - rest.len());
        let mut words = [0u32; STATE_WORDS];
        let mut read = || -> std::result::Result<RandomState, String> {
            for (i, w) in words.iter_mut().enumerate() {
                *w = r.int(format_args!("generator word {i}"), 0, u32::MAX.into())? as u32;
            }
            let pos = r.int("the generator's position", 0, STATE_WORDS as i64)? as usize;
            RandomState::from_words_and_pos(words, pos)
                .ok_or_else(|| "the generator's position is past its words".into())
        };
        let rng = read().map_err(|e| self.bad_state(format!("snapshot: {e}")))?;
        self.last_action = last_action;
        self.game = game;
        self.rng = rng;
        self.core.episode.resume(snapshot);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_id_names_the_game_its_place_picks() {
        for (place, id) in MINATAR_IDS.iter().enumerate() {
            let game = KINDS[place % KINDS.len()].name().replace('_', "");
            assert!(id.to_lowercase().contains(&game), "{id} at {place} picks {game}");
            assert_eq!(id.ends_with("-v1"), place < KINDS.len(), "{id}: the -v1 ids come first");
        }
    }
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Random play over many episodes: every state reached reads back as itself through
    /// `state` and `set_state`, and a snapshot restored into another copy goes on the same.
    #[test]
    fn every_state_reached_reads_back_and_snapshots_resume() {
        for id in MINATAR_IDS {
            let mut env = MinAtar::new(id, 5).unwrap();
            let mut copy = MinAtar::new(id, 77).unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            env.reset(None).unwrap();
            let n = env.action_set().len() as i32;
            for t in 0..20_000 {
                let state = env.state().unwrap();
                let game = env.game.clone();
                env.set_state(&state).unwrap_or_else(|e| panic!("{id} at {t}: {e}"));
                assert_eq!(env.game, game, "{id} at {t}");
                if t % 997 == 0 {
                    copy.restore_snapshot(&env.snapshot().unwrap()).unwrap();
                    let a = Value::i32(rng.random_range(0..n));
                    assert_eq!(copy.step(&a).unwrap(), env.step(&a).unwrap(), "{id} at {t}");
                    if env.core.episode.is_over() {
                        assert_eq!(copy.reset(None).unwrap(), env.reset(None).unwrap());
                    }
                    continue;
                }
                let step = env.step(&Value::i32(rng.random_range(0..n))).unwrap();
                if step.terminated {
                    env.reset(None).unwrap();
                }
            }
        }
    }
}

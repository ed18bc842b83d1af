//! MinAtar's games as tensor programs: every copy's board, sticky action and draw counter in
//! one F32 row, stepped by tensor ops on any backend and device.
//!
//! A row is `[tick_lo, tick_hi, last_action, fields...]`: the copy's step count since it was
//! made (split at 2^24 so that both halves stay exact in f32), then what the native game's
//! `Env::state` gives after its tag (the sticky action, then the game's fields). So a row
//! without its first two values and with the id's tag in front is a state the native game
//! takes with `set_state`, and the tests step both from there. Seaquest alone holds its
//! lists in fixed slots instead (see `seaquest.rs`); [`minatar_state`] and [`minatar_row`]
//! turn any game's rows into native states and back.
//!
//! Random numbers are counter-based: copy `i` at tick `t` draws Philox4x32-10 of the counter
//! `(t mod 2^32, i, t >> 32, 1)` under the seed (restart streams use a last word of 0, so the
//! two never meet), and word `j`'s top 24 bits are the uniform `u_j` in `[0, 1)`. Word 0 decides
//! the sticky action (`u_0 < 0.1` repeats the previous one, as the package's
//! `Environment.act` does with its own generator), word 1 a restart's draw, words 2 and 3 the
//! game's own. Nothing is uploaded per step, and a copy's numbers do not depend on how many
//! copies step beside it or on which device.

mod asterix;
mod breakout;
mod freeway;
mod native_pass;
mod seaquest;
mod space_invaders;

use rand_chacha::ChaCha8Rng;
use rlgraph_core::{Backend, CoreError, DType, Device, HostTensor, Result};
use rlgraph_envs::minatar::{MinAtar, STICKY_ACTION_PROB};
use rlgraph_envs::Env;

use rlgraph_core::spaces::Space;

use crate::batched::{column, discrete_actions, Batched, Dynamics};
use crate::philox::{unit_floats, PhiloxTensors};
use crate::reset_stream::{ResetStream, Restarts};
use crate::tensor_env::TensorEnv;
use asterix::Asterix;
use breakout::Breakout;
use freeway::Freeway;
use native_pass::{NativeDraws, NativePass};
use seaquest::Seaquest;
use space_invaders::SpaceInvaders;

/// `n` copies of MinAtar id `id` on `device`, drawing under `seed` and observed in `spaces`;
/// `None` for an id without a tensor version.
pub(crate) fn make<B: Backend>(
    id: &str,
    n: usize,
    seed: u64,
    device: Device,
    spaces: impl FnOnce() -> Result<(Space, Space)>,
) -> Option<Result<Box<dyn TensorEnv<B>>>> {
    fn boxed<B: Backend, G: Game<B> + 'static>(
        id: &str,
        n: usize,
        seed: u64,
        device: Device,
        game: Result<G>,
        spaces: (Space, Space),
    ) -> Result<Box<dyn TensorEnv<B>>> {
        let dynamics = MinAtarDynamics::new(id, n, seed, device, game)?;
        // The stream gives only the copies' first start: later ones come from the draws.
        let restarts = Restarts::Stream { depth: 1 };
        Ok(Box::new(Batched::with_restarts(
            dynamics, n, device, seed, restarts, spaces,
        )?))
    }
    let game = Kind::of(id)?;
    Some(spaces().and_then(|spaces| match game {
        Kind::Asterix => boxed(id, n, seed, device, Asterix::new(n, device), spaces),
        Kind::Breakout => boxed(id, n, seed, device, Breakout::new(n, device), spaces),
        Kind::Freeway => boxed(id, n, seed, device, Freeway::new(n, device), spaces),
        Kind::Seaquest => boxed(id, n, seed, device, Seaquest::new(n, device), spaces),
        Kind::SpaceInvaders => boxed(id, n, seed, device, SpaceInvaders::new(n, device), spaces),
    }))
}

/// The games with tensor versions.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Asterix,
    Breakout,
    Freeway,
    Seaquest,
    SpaceInvaders,
}

impl Kind {
    /// The game of MinAtar id `id`, if it has a tensor version.
    fn of(id: &str) -> Option<Kind> {
        Some(match id {
            "MinAtar/Asterix-v1" | "MinAtar/Asterix-v0" => Kind::Asterix,
            "MinAtar/Breakout-v1" | "MinAtar/Breakout-v0" => Kind::Breakout,
            "MinAtar/Freeway-v1" | "MinAtar/Freeway-v0" => Kind::Freeway,
            "MinAtar/Seaquest-v1" | "MinAtar/Seaquest-v0" => Kind::Seaquest,
            "MinAtar/SpaceInvaders-v1" | "MinAtar/SpaceInvaders-v0" => Kind::SpaceInvaders,
            _ => return None,
        })
    }

    /// A row's game fields as the native state's game values (what follows the tag and the
    /// sticky action); Seaquest's slots become its lists.
    fn native_of_fields(self, fields: &[f64]) -> std::result::Result<Vec<f64>, String> {
        match self {
            Kind::Seaquest => seaquest::native_of_fields(fields),
            _ => Ok(fields.to_vec()),
        }
    }

    /// The native state's game values as a row's game fields (the inverse).
    fn fields_of_native(self, game: &[f64]) -> std::result::Result<Vec<f64>, String> {
        match self {
            Kind::Seaquest => seaquest::fields_of_native(game),
            _ => Ok(game.to_vec()),
        }
    }
}

/// A tick as a row holds it: its two halves, split at 2^24 so that both stay exact in f32.
fn tick_halves(tick: u64) -> [f64; 2] {
    let split = TICK_SPLIT as u64;
    [(tick % split) as f64, (tick / split) as f64]
}

/// The tag that starts the native `Env::state` of `id` (a MinAtar id with a tensor version).
fn tag_of(id: &str) -> Result<(Kind, f64)> {
    let at = || format!("MinAtar rows of {id}");
    let kind = Kind::of(id).ok_or_else(|| CoreError::Config {
        at: at(),
        reason: "not a MinAtar game with a tensor version".into(),
    })?;
    let native = MinAtar::new(id, 0).map_err(|e| CoreError::Config {
        at: at(),
        reason: e.to_string(),
    })?;
    let tag = native
        .state()
        .and_then(|s| s.first().copied())
        .ok_or_else(|| CoreError::Config {
            at: at(),
            reason: "the native game gives no state".into(),
        })?;
    Ok((kind, tag))
}

/// The native `Env::state` (the tag, the sticky action, the game's values) that a row of
/// MinAtar id `id` holds, its tick left out: what the native game's `set_state` takes.
pub fn minatar_state(id: &str, row: &[f64]) -> Result<Vec<f64>> {
    let (kind, tag) = tag_of(id)?;
    let bad = |reason: String| CoreError::Config {
        at: format!("the native state of a {id} row"),
        reason,
    };
    let Some(fields) = row.get(PREFIX..) else {
        return Err(bad(format!("a row has at least {PREFIX} values, not {}", row.len())));
    };
    let game = kind.native_of_fields(fields).map_err(bad)?;
    Ok([vec![tag, row[PREFIX - 1]], game].concat())
}

/// The row of MinAtar id `id` at tick `tick` holding `state`, a native `Env::state` of the id
/// (the inverse of [`minatar_state`]).
pub fn minatar_row(id: &str, tick: u64, state: &[f64]) -> Result<Vec<f64>> {
    let (kind, tag) = tag_of(id)?;
    let bad = |reason: String| CoreError::Config {
        at: format!("the {id} row of a native state"),
        reason,
    };
    match state {
        [first, last_action, game @ ..] if *first == tag => {
            let fields = kind.fields_of_native(game).map_err(bad)?;
            Ok([tick_halves(tick).to_vec(), vec![*last_action], fields].concat())
        }
        _ => Err(bad(format!(
            "the state does not start with {id}'s tag {tag} and a sticky action"
        ))),
    }
}

/// One game's rules over the game's part of the rows (`[n, fields]`, the native game's
/// `encode` order), as tensor ops.
pub(crate) trait Game<B: Backend>: Send {
    /// Values in the game's part of a row.
    fn fields(&self) -> usize;
    /// Where the terminal flag is among them.
    fn terminal(&self) -> usize;
    /// Sets of four uniforms the game draws each step beyond the shared four (`draws[4..]`).
    fn extra_words(&self) -> usize {
        0
    }
    /// Which uniforms the native game takes, for the host pass on the CPU; `None` (the
    /// default) for a game whose rows are not native states, which steps as tensor ops there.
    fn native_draws(&self) -> Option<NativeDraws> {
        None
    }
    /// Every copy's start, `[n, fields]`, from the step's uniforms (`draws[1]` onwards).
    fn start(&self, draws: &[B::Tensor]) -> Result<B::Tensor>;
    /// One start on the host, for the copies' first episode.
    fn start_host(&self, rng: &mut ChaCha8Rng) -> Vec<f64>;
    /// `(fields, reward, lost)` after every copy plays `played` (the package's action, F32
    /// `[n, 1]`) from `fields`; reward and lost are F32 `[n, 1]`. Copies already terminal are
    /// put back by the caller.
    fn act(
        &self,
        fields: &B::Tensor,
        played: &B::Tensor,
        draws: &[B::Tensor],
    ) -> Result<(B::Tensor, B::Tensor, B::Tensor)>;
    /// The observation's channels, each U8 `[n, 100, 1]`, in the package's order.
    fn observe(&self, fields: &B::Tensor) -> Result<Vec<B::Tensor>>;
}

/// A MinAtar game as [`Dynamics`]: the shared prefix (tick, sticky action) around a [`Game`].
pub(crate) struct MinAtarDynamics<B: Backend, G: Game<B>> {
    common: Common<B>,
    game: G,
    n: usize,
    /// The native games that step the copies on the CPU, where the game has a host pass.
    host: Option<NativePass>,
}

impl<B: Backend, G: Game<B>> MinAtarDynamics<B, G> {
    fn new(id: &str, n: usize, seed: u64, device: Device, game: Result<G>) -> Result<Self> {
        let game = game?;
        let host = match (device, game.native_draws(), Kind::of(id)) {
            (Device::Cpu, Some(draws), Some(kind)) => {
                Some(NativePass::new(id, kind, seed, 1 + game.extra_words() as u32, draws)?)
            }
            _ => None,
        };
        Ok(MinAtarDynamics {
            common: Common::new(id, n, seed, device, game.extra_words())?,
            game,
            n,
            host,
        })
    }

    fn fields(&self, state: &B::Tensor) -> Result<B::Tensor> {
        B::narrow(state, 1, PREFIX, self.game.fields())
    }
}

impl<B: Backend, G: Game<B>> Dynamics<B> for MinAtarDynamics<B, G> {
    fn id(&self) -> &str {
        &self.common.id
    }

    fn width(&self) -> usize {
        PREFIX + self.game.fields()
    }

    fn limit(&self) -> Option<usize> {
        None
    }

    /// A start at tick 0 with no previous action (only the copies' first episode starts so;
    /// later ones start from the step's draws).
    fn start_state(&self, rng: &mut ChaCha8Rng) -> Vec<f64> {
        [vec![0.0; PREFIX], self.game.start_host(rng)].concat()
    }

    /// Not a box: restarts come from [`Dynamics::restart`] (the first start's prefix, fixed).
    fn start_box(&self) -> (Vec<f64>, Vec<f64>) {
        let row = self.start_state(&mut rand::SeedableRng::seed_from_u64(0));
        (row.clone(), row)
    }

    fn actions(&self, actions: &B::Tensor, n: usize) -> Result<B::Tensor> {
        discrete_actions::<B>(self.id(), actions, n, self.common.num_actions)
    }

    fn draws(&self, state: &B::Tensor) -> Result<Vec<B::Tensor>> {
        self.common.draws(state)
    }

    fn advance(
        &self,
        s: &B::Tensor,
        actions: &B::Tensor,
        draws: &[B::Tensor],
    ) -> Result<(B::Tensor, B::Tensor, B::Tensor)> {
        let played = self.common.played(s, actions, draws)?;
        let fields = self.fields(s)?;
        let (moved, reward, lost) = self.game.act(&fields, &played, draws)?;
        // A terminal game stands still and scores nothing, as the native `act` returns early.
        let terminal = column::<B>(&fields, self.game.terminal())?;
        let still = B::gt(&terminal, &self.common.zero)?;
        let next = B::concat(
            &[
                self.common.next_tick(s)?,
                played,
                B::where_cond(&still, &fields, &moved)?,
            ],
            1,
        )?;
        let reward = B::squeeze(&B::where_cond(&still, &self.common.zero, &reward)?, 1)?;
        let terminated = B::cast(&B::squeeze(&B::maximum(&lost, &terminal)?, 1)?, DType::U8)?;
        Ok((next, reward, terminated))
    }

    fn restart(
        &self,
        next: &B::Tensor,
        _starts: &mut ResetStream<B>,
        done: &B::Tensor,
        draws: &[B::Tensor],
    ) -> Result<B::Tensor> {
        let start = B::concat(&[B::narrow(next, 1, 0, PREFIX)?, self.game.start(draws)?], 1)?;
        B::where_cond(&B::unsqueeze(done, 1)?, &start, next)
    }

    fn observe(&self, s: &B::Tensor) -> Result<B::Tensor> {
        let channels = self.game.observe(&self.fields(s)?)?;
        B::reshape(&B::concat(&channels, 2)?, &[self.n, 10, 10, channels.len()])
    }

    fn fused(&self) -> bool {
        self.host.is_some()
    }

    fn advance_one(&self, copy: usize, row: &mut [f32], action: f64) -> Result<(f32, bool)> {
        match &self.host {
            Some(host) => host.advance(copy, row, action),
            None => Ok((0.0, false)),
        }
    }

    fn restart_one(&self, copy: usize, row: &mut [f32]) -> Result<bool> {
        match &self.host {
            Some(host) => host.restart(copy, row).map(|()| true),
            None => Ok(false),
        }
    }

    fn observe_host(&self, rows: &[f32]) -> Option<Result<HostTensor>> {
        let width = self.width();
        self.host.as_ref().map(|host| host.observe(rows, width))
    }
}

/// Values before a game's fields in a row: the tick's two halves and the sticky action.
pub(crate) const PREFIX: usize = 3;

/// Where the tick's low half wraps into its high half.
const TICK_SPLIT: f64 = (1u64 << 24) as f64;

/// What every tensor MinAtar game shares: its id, action set, draws and sticky action.
pub(crate) struct Common<B: Backend> {
    pub(crate) id: String,
    /// The package's action (0 to 5) of each of the id's actions, F32 `[k]`.
    action_table: B::Tensor,
    pub(crate) num_actions: usize,
    generator: PhiloxTensors<B>,
    /// Each copy's index, I64 `[n]`: the counter's second word.
    copies: B::Tensor,
    /// The counter's last word of each set of four uniforms a step draws (1, then 2 and on
    /// for a game's extra sets), I64 `[n]` each.
    domains: Vec<B::Tensor>,
    sticky: B::Tensor,
    split: B::Tensor,
    pub(crate) zero: B::Tensor,
}

impl<B: Backend> Common<B> {
    /// The shared parts of `id` (a MinAtar id) for `n` copies on `device`, keyed by `seed`.
    pub(crate) fn new(id: &str, n: usize, seed: u64, device: Device, extra_words: usize) -> Result<Self> {
        let host = MinAtar::new(id, seed).map_err(|e| CoreError::Config {
            at: format!("tensor env {id}"),
            reason: e.to_string(),
        })?;
        let table: Vec<f32> = host.action_set().iter().map(|&a| a as f32).collect();
        let scalar = |v: f64| B::scalar(v, DType::F32, device);
        Ok(Common {
            id: id.into(),
            num_actions: table.len(),
            action_table: B::from_host(&HostTensor::f32([table.len()], table)?, device)?,
            generator: PhiloxTensors::new([seed as u32, (seed >> 32) as u32], device)?,
            copies: B::arange(n, device)?,
            domains: (1..=1 + extra_words)
                .map(|d| B::full(&[n], d as f64, DType::I64, device))
                .collect::<Result<_>>()?,
            sticky: B::scalar(STICKY_ACTION_PROB, DType::F32, device)?,
            split: scalar(TICK_SPLIT)?,
            zero: scalar(0.0)?,
        })
    }

    /// The uniforms of every copy at its tick, each F32 `[n, 1]`: four from the counter's
    /// domain 1, then four from each of the game's extra domains (see the module docs).
    pub(crate) fn draws(&self, state: &B::Tensor) -> Result<Vec<B::Tensor>> {
        let half = |i| B::squeeze(&B::cast(&column::<B>(state, i)?, DType::I64)?, 1);
        let tick = B::add(&half(0)?, &B::shift_left(&half(1)?, 24)?)?;
        let mut uniforms = Vec::with_capacity(4 * self.domains.len());
        for domain in &self.domains {
            for word in self.generator.apply_count(&tick, &self.copies, domain)? {
                uniforms.push(B::unsqueeze(&unit_floats::<B>(&word)?, 1)?);
            }
        }
        Ok(uniforms)
    }

    /// The tick after `state`'s, as its two F32 columns `[n, 2]`.
    pub(crate) fn next_tick(&self, state: &B::Tensor) -> Result<B::Tensor> {
        let low = B::affine(&column::<B>(state, 0)?, 1.0, 1.0)?;
        let carry = B::ge(&low, &self.split)?;
        let low = B::where_cond(&carry, &self.zero, &low)?;
        let high = B::add(&column::<B>(state, 1)?, &B::cast(&carry, DType::F32)?)?;
        B::concat(&[low, high], 1)
    }

    /// The package action each copy plays, `[n, 1]`: the previous one where `u_0` is below the
    /// sticky probability, else the one given (`actions`: the id's action indices, `[n, 1]`).
    pub(crate) fn played(&self, state: &B::Tensor, actions: &B::Tensor, draws: &[B::Tensor]) -> Result<B::Tensor> {
        let index = B::cast(&B::squeeze(actions, 1)?, DType::I64)?;
        let given = B::unsqueeze(&B::index_select(&self.action_table, 0, &index)?, 1)?;
        B::where_cond(&B::lt(&draws[0], &self.sticky)?, &column::<B>(state, 2)?, &given)
    }
}

/// `mask` (U8) as F32 0 or 1: the games' branch conditions are combined by arithmetic.
pub(crate) fn f32_of<B: Backend>(mask: &B::Tensor) -> Result<B::Tensor> {
    B::cast(mask, DType::F32)
}

/// One channel of a board, U8 `[n, 100, 1]`: 1 at each copy's cell `y * 10 + x`.
pub(crate) fn cell<B: Backend>(y: &B::Tensor, x: &B::Tensor) -> Result<B::Tensor> {
    let index = B::cast(&B::squeeze(&B::add(&B::affine(y, 10.0, 0.0)?, x)?, 1)?, DType::I64)?;
    B::unsqueeze(&B::one_hot(&index, 100, DType::U8)?, 2)
}

/// A 0/1 F32 map `[n, 100]` as a channel, U8 `[n, 100, 1]`.
pub(crate) fn channel<B: Backend>(map: &B::Tensor) -> Result<B::Tensor> {
    B::unsqueeze(&B::cast(map, DType::U8)?, 2)
}

/// `t` (F32) equal to `v`, as F32 0 or 1.
pub(crate) fn is<B: Backend>(t: &B::Tensor, v: f64) -> Result<B::Tensor> {
    f32_of::<B>(&B::eq(t, &B::scalar(v, DType::F32, B::device(t))?)?)
}

/// `1 - t`: the complement of a 0/1 mask.
pub(crate) fn not<B: Backend>(t: &B::Tensor) -> Result<B::Tensor> {
    B::affine(t, -1.0, 1.0)
}

/// `yes` where the 0/1 mask `mask` is 1, `no` elsewhere.
pub(crate) fn pick<B: Backend>(mask: &B::Tensor, yes: &B::Tensor, no: &B::Tensor) -> Result<B::Tensor> {
    B::where_cond(&B::gt(mask, &B::scalar(0.0, DType::F32, B::device(mask))?)?, yes, no)
}

/// `at` (F32 `[n, 1]`) moved by `by` where `played` is `action`, kept within `low..=high`.
pub(crate) fn moved<B: Backend>(
    played: &B::Tensor,
    action: f64,
    at: &B::Tensor,
    by: f64,
    (low, high): (f64, f64),
) -> Result<B::Tensor> {
    pick::<B>(
        &is::<B>(played, action)?,
        &B::clamp(&B::affine(at, 1.0, by)?, low, high)?,
        at,
    )
}

/// A 0/1 map F32 `[n, 100]` with one cell per lane: lane `j` at board row `rows[j]` (F32
/// `[1, k]`) and column `xs[:, j]` (F32 `[n, k]`), set where `on[:, j]` (0/1 `[n, k]`) is 1. The
/// lanes' rows differ, so no two lanes meet in a cell.
pub(crate) fn lane_cells<B: Backend>(rows: &B::Tensor, xs: &B::Tensor, on: &B::Tensor) -> Result<B::Tensor> {
    let shape = B::shape(xs);
    let index = B::cast(&B::add(&B::affine(rows, 10.0, 0.0)?, xs)?, DType::I64)?;
    // One scatter, rather than summing k one-hot maps over the lanes (candle's reduction over
    // a middle dimension took most of a step).
    let empty = B::full(&[shape[0], 100], 0.0, DType::F32, B::device(xs))?;
    B::scatter_add(&empty, 1, &index, on)
}

/// A fixed 0/1 map `[1, 100]` with 1 at the cells `on` (`y * 10 + x`) picks.
pub(crate) fn fixed_map<B: Backend>(device: Device, on: impl Fn(usize, usize) -> bool) -> Result<B::Tensor> {
    let cells: Vec<f32> = (0..100).map(|i| f32::from(u8::from(on(i / 10, i % 10)))).collect();
    B::from_host(&HostTensor::f32([1, 100], cells)?, device)
}

/// A fixed 0/1 map as host values, for a start on the host.
pub(crate) fn fixed_cells(on: impl Fn(usize, usize) -> bool) -> Vec<f64> {
    (0..100).map(|i| f64::from(u8::from(on(i / 10, i % 10)))).collect()
}

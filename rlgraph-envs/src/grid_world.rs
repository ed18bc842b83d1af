//! RLgraph's `GridWorld`: its maps, action types, state representations, rewards and
//! discrete state numbering.

use rlgraph_spaces::{Array, Dtype, IntBox, Space, Value};

use crate::env::{bad_action, discrete_action, Env, EnvError, EnvSnapshot, EpisodeClock, Result, Step};

/// RLgraph's built-in maps: `S` start, `G` goal, `H` hole, `F` fire, `W` wall, space free.
pub const MAPS: &[(&str, &[&str])] = &[
    ("chain", &["G    S  F G"]),
    (
        "long-chain",
        &["G                         S                    F     G"],
    ),
    ("2x2", &["SH", " G"]),
    ("4x4", &["S   ", " H H", "   H", "H  G"]),
    (
        "8x8",
        &[
            "S       ", "        ", "   H    ", "     H  ", "   H    ", " HH   H ", " H  H H ", "   H   G",
        ],
    ),
    (
        "8x16",
        &[
            "S      H        ",
            "   H       HH   ",
            "    FF   WWWWWWW",
            "  H      W      ",
            "    FF   W  H   ",
            "         W      ",
            "    FF   W      ",
            "  H          H G",
        ],
    ),
    (
        "16x16",
        &[
            "S      H        ",
            "           HH   ",
            "    FF   W     W",
            "         W      ",
            "WWW FF      H   ",
            "         W      ",
            " FFFF    W      ",
            "  H          H  ",
            "       H        ",
            "   H       HH   ",
            "WWWW     WWWWWWW",
            "  H      W    W ",
            "    FF   W  H W ",
            "WWWW    WW    W ",
            "    FF   W      ",
            "  H          H G",
        ],
    ),
    (
        "4-room",
        &[
            "     W     ",
            "     W     ",
            "        G  ",
            "     W     ",
            "     W     ",
            "W WWWW     ",
            "     WWW WW",
            "     W     ",
            "  S  W     ",
            "           ",
            "     W     ",
        ],
    ),
];

/// How the agent acts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionType {
    /// Up (0), right (1), down (2), left (3).
    Udlr,
    /// A Dict of `forward` (0 back, 1 stay, 2 forward), `turn` (0 left, 1 none, 2 right) and
    /// `jump` (0 no, 1 yes: two fields ahead, over walls, fire and holes).
    Ftj,
    /// The `ftj` choices bundled into one integer in `0..18` (RLgraph's mapping:
    /// `turn = a / 6`, `forward = (a % 6) / 2`, `jump = a % 2`).
    Ftjb,
}

/// What the agent observes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateRepresentation {
    /// One integer: the field, counted down each column from the top-left, column by column.
    Discrete,
    /// `[x, y]`.
    Xy,
    /// `[x, y, ox, oy]`, with the orientation as a unit vector (up is `[0, 1]`).
    XyOrientation,
    /// A `[rows, cols, 3]` image: fire 127 / hole 255 in channel 0, wall 127 / goal 255 in
    /// channel 1, the agent 255 in channel 2.
    Camera,
}

/// The rewards of RLgraph's sparse reward function.
pub const HOLE_REWARD: f64 = -5.0;
/// Stepping onto fire.
pub const FIRE_REWARD: f64 = -3.0;
/// Reaching the goal.
pub const GOAL_REWARD: f64 = 1.0;
/// Any other step (a wall bump included).
pub const STEP_REWARD: f64 = -0.1;

/// A grid world as lookup tables (see [`GridWorld::tables`]); entry `[s * num_actions + a]`
/// of the per-transition tables is action `a` taken in state `s`.
#[derive(Clone, Debug)]
pub struct GridTables {
    /// States: fields times four orientations.
    pub num_states: usize,
    /// Flat actions.
    pub num_actions: usize,
    /// The state every episode starts in.
    pub start_state: usize,
    /// The state after each transition.
    pub next_state: Vec<usize>,
    /// The reward of each transition.
    pub reward: Vec<f64>,
    /// Whether each transition ends the episode.
    pub terminal: Vec<bool>,
    /// The observation of each state.
    pub observations: Vec<Value>,
}

/// A grid world.
#[derive(Clone)]
pub struct GridWorld {
    id: String,
    world: Vec<Vec<u8>>,
    rows: usize,
    cols: usize,
    start: usize,
    pos: usize,
    orientation: u32,
    action_type: ActionType,
    representation: StateRepresentation,
    episode: EpisodeClock,
    state_space: Space,
    action_space: Space,
}

impl GridWorld {
    /// The world named `map` (one of [`MAPS`]), or one given as rows.
    pub fn new(map: &str, action_type: ActionType, representation: StateRepresentation) -> Result<Self> {
        let rows: Vec<&str> = MAPS
            .iter()
            .find(|(name, _)| *name == map)
            .map(|(_, rows)| rows.to_vec())
            .ok_or_else(|| EnvError::Unknown {
                id: format!("GridWorld-{map}"),
                reason: format!(
                    "unknown map; known: {}",
                    MAPS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                ),
            })?;
        Self::from_rows(&format!("GridWorld-{map}"), &rows, action_type, representation)
    }

    /// The world named by the part of an id after `GridWorld-`: a map of [`MAPS`], optionally
    /// followed by `-ftj` or `-ftjb` and by `-xy`, `-xy+orientation` or `-camera`.
    pub fn from_id_suffix(rest: &str) -> Result<Self> {
        let mut map = rest;
        let mut representation = StateRepresentation::Discrete;
        for (suffix, r) in [
            ("-xy+orientation", StateRepresentation::XyOrientation),
            ("-xy", StateRepresentation::Xy),
            ("-camera", StateRepresentation::Camera),
        ] {
            if let Some(m) = map.strip_suffix(suffix) {
                map = m;
                representation = r;
                break;
            }
        }
        let mut action_type = ActionType::Udlr;
        for (suffix, a) in [("-ftjb", ActionType::Ftjb), ("-ftj", ActionType::Ftj)] {
            if let Some(m) = map.strip_suffix(suffix) {
                map = m;
                action_type = a;
                break;
            }
        }
        GridWorld::new(map, action_type, representation)
    }

    /// A world from its rows (`["S ", " G"]`); exactly one `S` and at least one `G`.
    pub fn from_rows(
        id: &str,
        rows: &[&str],
        action_type: ActionType,
        representation: StateRepresentation,
    ) -> Result<Self> {
        let bad = |reason: String| EnvError::Unknown { id: id.into(), reason };
        let world: Vec<Vec<u8>> = rows.iter().map(|r| r.bytes().collect()).collect();
        let (n_rows, n_cols) = (world.len(), world.first().map_or(0, Vec::len));
        if n_rows == 0 || n_cols == 0 || world.iter().any(|r| r.len() != n_cols) {
            return Err(bad("rows must be non-empty and of equal length".into()));
        }
        if let Some(c) = world.iter().flatten().find(|c| !b"SGHFW ".contains(c)) {
            return Err(bad(format!(
                "unknown field {:?}; fields are S, G, H, F, W and space",
                *c as char
            )));
        }
        let starts: Vec<usize> = (0..n_cols)
            .flat_map(|x| (0..n_rows).map(move |y| (x, y)))
            .filter(|&(x, y)| world[y][x] == b'S')
            .map(|(x, y)| x * n_rows + y)
            .collect();
        if starts.len() != 1 || !world.iter().flatten().any(|&c| c == b'G') {
            return Err(bad("a world needs exactly one S and at least one G".into()));
        }
        let int_box = |low: i64, high: i64, shape: Vec<usize>| {
            IntBox::with_bounds(low, high).map(|b| Space::from(b.with_shape(shape)))
        };
        let side = n_rows.max(n_cols) as i64;
        let state_space = match representation {
            StateRepresentation::Discrete => int_box(0, (n_rows * n_cols) as i64, vec![]),
            StateRepresentation::Xy => int_box(0, side, vec![2]),
            StateRepresentation::XyOrientation => int_box(-1, side, vec![4]),
            StateRepresentation::Camera => IntBox::with_bounds(0, 256)
                .and_then(|b| b.with_shape([n_rows, n_cols, 3]).with_dtype(Dtype::Uint8))
                .map(Space::from),
        }
        .map_err(|e| bad(e.to_string()))?;
        let action_space = match action_type {
            ActionType::Udlr => int_box(0, 4, vec![]),
            ActionType::Ftjb => int_box(0, 18, vec![]),
            ActionType::Ftj => Space::dict([
                ("forward", int_box(0, 3, vec![]).map_err(|e| bad(e.to_string()))?),
                ("turn", int_box(0, 3, vec![]).map_err(|e| bad(e.to_string()))?),
                ("jump", int_box(0, 2, vec![]).map_err(|e| bad(e.to_string()))?),
            ]),
        }
        .map_err(|e| bad(e.to_string()))?;
        Ok(GridWorld {
            id: id.into(),
            world,
            rows: n_rows,
            cols: n_cols,
            start: starts[0],
            pos: starts[0],
            orientation: 0,
            action_type,
            representation,
            episode: EpisodeClock::new(id, None),
            state_space,
            action_space,
        })
    }

    /// The current field as RLgraph numbers it.
    pub fn discrete_pos(&self) -> usize {
        self.pos
    }

    fn xy(&self, pos: usize) -> (usize, usize) {
        (pos / self.rows, pos % self.rows)
    }

    fn field(&self, pos: usize) -> u8 {
        let (x, y) = self.xy(pos);
        self.world[y][x]
    }

    /// The field after moving one step in `direction` (0 up, 1 right, 2 down, 3 left): walls
    /// and the border keep the agent in place, and so does standing on a hole or the goal
    /// (unless in the air during a jump).
    fn next_pos(&self, pos: usize, direction: u32, in_air: bool) -> usize {
        let (x, y) = self.xy(pos);
        let (x, y) = (x as i64, y as i64);
        let (dx, dy) = [(0, -1), (1, 0), (0, 1), (-1, 0)][direction as usize % 4];
        let nx = (x + dx).clamp(0, self.cols as i64 - 1) as usize;
        let ny = (y + dy).clamp(0, self.rows as i64 - 1) as usize;
        let next = nx * self.rows + ny;
        let here = self.field(pos);
        if self.world[ny][nx] == b'W' || (!in_air && (here == b'H' || here == b'G')) {
            pos
        } else {
            next
        }
    }

    /// The move of one action from field `pos` facing `orientation` (degrees): the new field,
    /// the new orientation, the reward and whether the episode terminates. `action` is
    /// `(direction, 0, 0)` for udlr, `(forward, turn, jump)` otherwise.
    fn transition(&self, pos: usize, orientation: u32, action: (usize, usize, usize)) -> (usize, u32, f64, bool) {
        let (direction, orientation, jump) = match self.action_type {
            ActionType::Udlr => (Some(action.0 as u32), orientation, false),
            _ => {
                let (forward, turn, jump) = action;
                let orientation = (orientation + 360 + (turn as u32) * 90 - 90) % 360;
                let ahead = orientation / 90;
                let direction = match forward {
                    2 => Some(ahead),
                    0 => Some((ahead + 2) % 4),
                    _ => None,
                };
                (direction, orientation, jump == 1)
            }
        };
        let mut pos = pos;
        if let Some(d) = direction {
            pos = self.next_pos(pos, d, false);
        }
        if jump {
            let ahead = orientation / 90;
            pos = self.next_pos(pos, ahead, false);
            pos = self.next_pos(pos, ahead, true);
        }
        let (reward, terminated) = match self.field(pos) {
            b'H' => (HOLE_REWARD, true),
            b'F' => (FIRE_REWARD, false),
            b'G' => (GOAL_REWARD, true),
            _ => (STEP_REWARD, false),
        };
        (pos, orientation, reward, terminated)
    }

    /// The whole world as lookup tables over the states `pos * 4 + orientation / 90` and the
    /// flat actions (udlr `0..4`, or ftjb's `0..18`), for steppers that work on tables (the
    /// device-resident grid world).
    pub fn tables(&self) -> Result<GridTables> {
        let actions: Vec<(usize, usize, usize)> = match self.action_type {
            ActionType::Udlr => (0..4).map(|d| (d, 0, 0)).collect(),
            ActionType::Ftjb => (0..18).map(|a| ((a % 6) / 2, a / 6, a % 2)).collect(),
            ActionType::Ftj => {
                return Err(EnvError::Unknown {
                    id: self.id.clone(),
                    reason: "a table needs flat actions; use the ftjb form of the ftj actions".into(),
                })
            }
        };
        let num_states = self.rows * self.cols * 4;
        let mut tables = GridTables {
            num_states,
            num_actions: actions.len(),
            start_state: self.start * 4,
            next_state: Vec::with_capacity(num_states * actions.len()),
            reward: Vec::with_capacity(num_states * actions.len()),
            terminal: Vec::with_capacity(num_states * actions.len()),
            observations: Vec::with_capacity(num_states),
        };
        let mut probe = self.clone();
        for state in 0..num_states {
            let (pos, orientation) = (state / 4, (state % 4) as u32 * 90);
            for &action in &actions {
                let (p, o, r, t) = self.transition(pos, orientation, action);
                tables.next_state.push(p * 4 + (o / 90) as usize);
                tables.reward.push(r);
                tables.terminal.push(t);
            }
            probe.pos = pos;
            probe.orientation = orientation;
            tables.observations.push(probe.observe());
        }
        Ok(tables)
    }

    fn observe(&self) -> Value {
        let (x, y) = self.xy(self.pos);
        let ints = |v: Vec<i32>| Value::Int32(Array::new([v.len()], v).unwrap_or_else(|_| unreachable!()));
        match self.representation {
            StateRepresentation::Discrete => Value::i32(self.pos as i32),
            StateRepresentation::Xy => ints(vec![x as i32, y as i32]),
            StateRepresentation::XyOrientation => {
                let (ox, oy) = [(0, 1), (1, 0), (0, -1), (-1, 0)][(self.orientation / 90) as usize % 4];
                ints(vec![x as i32, y as i32, ox, oy])
            }
            StateRepresentation::Camera => {
                let mut pixels = vec![0u8; self.rows * self.cols * 3];
                for (row, line) in self.world.iter().enumerate() {
                    for (col, &c) in line.iter().enumerate() {
                        let at = (row * self.cols + col) * 3;
                        match c {
                            b'F' => pixels[at] = 127,
                            b'H' => pixels[at] = 255,
                            b'W' => pixels[at + 1] = 127,
                            b'G' => pixels[at + 1] = 255,
                            _ => {}
                        }
                    }
                }
                pixels[(y * self.cols + x) * 3 + 2] = 255;
                Value::Uint8(Array::new([self.rows, self.cols, 3], pixels).unwrap_or_else(|_| unreachable!()))
            }
        }
    }

    /// `(forward, turn, jump)` of an ftj or ftjb action.
    fn ftj(&self, action: &Value) -> Result<(usize, usize, usize)> {
        if self.action_type == ActionType::Ftjb {
            let a = discrete_action(&self.id, &self.action_space, action, 18)?;
            return Ok(((a % 6) / 2, a / 6, a % 2));
        }
        let get = |key: &str, n: i64| match action {
            Value::Dict(d) => d
                .get(key)
                .map(|v| discrete_action(&self.id, &self.action_space, v, n))
                .unwrap_or_else(|| Err(bad_action(&self.id, &self.action_space, action))),
            _ => Err(bad_action(&self.id, &self.action_space, action)),
        };
        Ok((get("forward", 3)?, get("turn", 3)?, get("jump", 2)?))
    }
}

impl Env for GridWorld {
    fn id(&self) -> &str {
        &self.id
    }

    fn state_space(&self) -> &Space {
        &self.state_space
    }

    fn action_space(&self) -> &Space {
        &self.action_space
    }

    /// Starts at `S`; the world is deterministic, so the seed changes nothing.
    fn reset(&mut self, _seed: Option<u64>) -> Result<Value> {
        self.pos = self.start;
        self.orientation = 0;
        self.episode.start();
        Ok(self.observe())
    }

    fn step(&mut self, action: &Value) -> Result<Step> {
        let (forward, turn, jump) = match self.action_type {
            ActionType::Udlr => (discrete_action(&self.id, &self.action_space, action, 4)?, 0, 0),
            _ => self.ftj(action)?,
        };
        self.episode.tick()?;
        let (pos, orientation, reward, terminated) = self.transition(self.pos, self.orientation, (forward, turn, jump));
        self.pos = pos;
        self.orientation = orientation;
        let truncated = self.episode.finish(terminated);
        Ok(Step {
            observation: self.observe(),
            reward,
            terminated,
            truncated,
        })
    }

    /// `[discrete_pos]`.
    fn state(&self) -> Option<Vec<f64>> {
        Some(vec![self.pos as f64])
    }

    /// `[discrete_pos]`, or `[x, y]`.
    fn set_state(&mut self, state: &[f64]) -> Result<()> {
        let bad = |reason: String| EnvError::BadState {
            env: self.id.clone(),
            reason,
        };
        let pos = match state {
            [p] => *p as usize,
            [x, y] => (*x as usize) * self.rows + *y as usize,
            _ => return Err(bad(format!("expected [pos] or [x, y], got {state:?}"))),
        };
        if state.iter().any(|v| *v < 0.0 || v.fract() != 0.0) || pos >= self.rows * self.cols {
            return Err(bad(format!(
                "{state:?} is not a field of this {}x{} world",
                self.rows, self.cols
            )));
        }
        self.pos = pos;
        self.episode.start();
        Ok(())
    }

    /// The state is `[discrete_pos, orientation in degrees]`; the world has no RNG.
    fn snapshot(&self) -> Option<EnvSnapshot> {
        Some(EnvSnapshot {
            state: vec![self.pos as f64, self.orientation as f64],
            rng: None,
            episode_steps: self.episode.steps,
            episode_over: self.episode.over,
        })
    }

    fn restore_snapshot(&mut self, snapshot: &EnvSnapshot) -> Result<()> {
        let whole = |v: f64, below: usize| v >= 0.0 && v.fract() == 0.0 && v < below as f64;
        match snapshot.state[..] {
            [pos, orientation] if whole(pos, self.rows * self.cols) && whole(orientation / 90.0, 4) => {
                self.pos = pos as usize;
                self.orientation = orientation as u32;
                self.episode.resume(snapshot);
                Ok(())
            }
            _ => Err(EnvError::BadState {
                env: self.id.clone(),
                reason: format!(
                    "snapshot state {:?} is not [field, orientation in degrees] of this {}x{} world",
                    snapshot.state, self.rows, self.cols
                ),
            }),
        }
    }
}

//! Gymnasium's MuJoCo locomotion tasks (`Hopper-v5`, `Walker2d-v5`, `HalfCheetah-v5`) stepped
//! in this process: the physics is MuJoCo's own library (`libmujoco`, from the `mujoco`
//! Python wheel), the model files are Gymnasium's, and the rewards, terminations,
//! observations and restarts are Gymnasium's equations written here. A step costs MuJoCo's
//! time and little else, where the bridge (`gym:Hopper-v5`) adds Python and a pipe to each.
//!
//! From the same starting state and actions, a step gives Gymnasium's observation, reward and
//! termination to the bit (the tests compare them). Restarts draw from this crate's seeded RNG,
//! not NumPy's, so a seed picks other (equally distributed) starts than Gymnasium's.

mod library;

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use rlgraph_spaces::{FloatBox, Space, Value};

use crate::env::{bad_action, core_accessors, float_action, float_box, observation, Core, Env, EnvSnapshot};
use crate::{EnvError, Result, Step};
use library::{Sim, CTRL, INTEGRATION, QPOS, QVEL, TIME};

/// The ids of the native MuJoCo tasks.
pub const MUJOCO_IDS: &[&str] = &["Hopper-v5", "Walker2d-v5", "HalfCheetah-v5"];

/// Gymnasium's time limit for these tasks.
const TIME_LIMIT: usize = 1000;

/// When a hopping robot counts as healthy: strict bounds on its height (`qpos[1]`), its
/// angle (`qpos[2]`) and, for Hopper, every element of the state after the first two.
struct Healthy {
    z: (f64, f64),
    angle: (f64, f64),
    state: Option<(f64, f64)>,
}

impl Healthy {
    fn holds(&self, qpos: &[f64], qvel: &[f64]) -> bool {
        let within = |(low, high): (f64, f64), x: f64| low < x && x < high;
        let state_ok = match self.state {
            Some(bounds) => qpos.iter().chain(qvel).skip(2).all(|&x| within(bounds, x)),
            None => true,
        };
        state_ok && within(self.z, qpos[1]) && within(self.angle, qpos[2])
    }
}

/// One of Gymnasium's v5 locomotion tasks, at its default settings.
struct Task {
    id: &'static str,
    /// Gymnasium's model file.
    xml: &'static str,
    frame_skip: usize,
    nq: usize,
    nv: usize,
    nu: usize,
    ctrl_cost_weight: f64,
    /// Health bounds that end an episode and earn 1 a step while they hold.
    healthy: Option<Healthy>,
    reset_noise_scale: f64,
    /// Whether restart velocities are normal (HalfCheetah) rather than uniform noise.
    normal_velocity_noise: bool,
    /// Observed velocities are clipped to ± this (Hopper, Walker2d).
    velocity_clip: Option<f64>,
}

const TASKS: [Task; 3] = [
    Task {
        id: "Hopper-v5",
        xml: "hopper.xml",
        frame_skip: 4,
        nq: 6,
        nv: 6,
        nu: 3,
        ctrl_cost_weight: 1e-3,
        healthy: Some(Healthy {
            z: (0.7, f64::INFINITY),
            angle: (-0.2, 0.2),
            state: Some((-100.0, 100.0)),
        }),
        reset_noise_scale: 5e-3,
        normal_velocity_noise: false,
        velocity_clip: Some(10.0),
    },
    Task {
        id: "Walker2d-v5",
        xml: "walker2d_v5.xml",
        frame_skip: 4,
        nq: 9,
        nv: 9,
        nu: 6,
        ctrl_cost_weight: 1e-3,
        healthy: Some(Healthy {
            z: (0.8, 2.0),
            angle: (-1.0, 1.0),
            state: None,
        }),
        reset_noise_scale: 5e-3,
        normal_velocity_noise: false,
        velocity_clip: Some(10.0),
    },
    Task {
        id: "HalfCheetah-v5",
        xml: "half_cheetah.xml",
        frame_skip: 5,
        nq: 9,
        nv: 9,
        nu: 6,
        ctrl_cost_weight: 0.1,
        healthy: None,
        reset_noise_scale: 0.1,
        normal_velocity_noise: true,
        velocity_clip: None,
    },
];

/// Whether `id` names a native MuJoCo task.
pub fn is_mujoco_id(id: &str) -> bool {
    MUJOCO_IDS.contains(&id)
}

/// A MuJoCo locomotion task stepped in this process, with Gymnasium's v5 rewards,
/// terminations, observations (float32 here) and 1,000-step limit.
pub struct MujocoEnv {
    task: &'static Task,
    /// The task's place in [`TASKS`].
    place: usize,
    sim: Sim,
    core: Core,
    /// Positions then velocities (`nq + nv`), as last read from the simulation.
    state: Vec<f64>,
    /// The model's resting positions (`qpos0`), which restarts add noise to.
    init_qpos: Vec<f64>,
    /// Seconds per step: MuJoCo's timestep times the frame skip.
    dt: f64,
}

impl MujocoEnv {
    /// The task `id` (one of [`MUJOCO_IDS`]), seeded, with the MuJoCo of the bridge's Python
    /// (`$RLGRAPH_PYTHON`, else `python3`); fails when `id` is not one, or when MuJoCo's
    /// library or Gymnasium's model files cannot be found (the error says how to install them).
    pub fn new(id: &str, seed: u64) -> Result<Self> {
        Self::with_python(&crate::gym::python(), id, seed)
    }

    /// [`MujocoEnv::new`] with the MuJoCo and Gymnasium that `python` imports. The library is
    /// loaded once per process, from the first Python asked.
    pub fn with_python(python: &str, id: &str, seed: u64) -> Result<Self> {
        let unknown = |reason: String| EnvError::Unknown { id: id.into(), reason };
        let place = TASKS
            .iter()
            .position(|t| t.id == id)
            .ok_or_else(|| unknown(format!("not a native MuJoCo task; known: {}", MUJOCO_IDS.join(", "))))?;
        let task = &TASKS[place];
        let mut sim = Sim::load(python, task.xml).map_err(unknown)?;
        let sizes = [sim.size(QPOS), sim.size(QVEL), sim.size(CTRL)];
        if sizes != [task.nq, task.nv, task.nu] {
            return Err(unknown(format!(
                "{} has {} positions, {} velocities and {} controls; Gymnasium's {id} has {}, {} and {}",
                task.xml, sizes[0], sizes[1], sizes[2], task.nq, task.nv, task.nu
            )));
        }
        sim.reset();
        let mut init_qpos = vec![0.0; task.nq];
        sim.get(QPOS, &mut init_qpos);
        // The timestep is the time one step advances (the model's field is not read
        // directly, so no struct layout of MuJoCo's is assumed).
        sim.step();
        let mut time = [0.0];
        sim.get(TIME, &mut time);
        sim.reset();
        let obs_dim = task.nq - 1 + task.nv;
        let state_space = Space::from(FloatBox::new([obs_dim]));
        let action_space = float_box(vec![-1.0; task.nu], vec![1.0; task.nu]);
        let state = init_qpos
            .iter()
            .copied()
            .chain(std::iter::repeat_n(0.0, task.nv))
            .collect();
        Ok(MujocoEnv {
            task,
            place,
            sim,
            core: Core::new(id, Some(TIME_LIMIT), seed, state_space, action_space),
            state,
            init_qpos,
            dt: time[0] * task.frame_skip as f64,
        })
    }

    /// Seconds of simulated time per step.
    pub fn dt(&self) -> f64 {
        self.dt
    }

    /// Reads positions and velocities back from the simulation.
    fn read(&mut self) {
        self.sim.get(QPOS | QVEL, &mut self.state);
    }

    /// The positions and the velocities.
    fn qpos_qvel(&self) -> (&[f64], &[f64]) {
        self.state.split_at(self.task.nq)
    }

    /// Positions without the first (the x position), then velocities, clipped where the
    /// task clips them: Gymnasium's `_get_obs`.
    fn observe(&self) -> Value {
        let clip = self.task.velocity_clip.unwrap_or(f64::INFINITY);
        let (qpos, qvel) = self.qpos_qvel();
        let values: Vec<f64> = qpos[1..]
            .iter()
            .copied()
            .chain(qvel.iter().map(|v| v.clamp(-clip, clip)))
            .collect();
        observation(&values)
    }

    /// The task's place among [`TASKS`], from 1, as snapshots record it.
    fn tag(&self) -> f64 {
        (self.place + 1) as f64
    }

    fn bad_state(&self, reason: String) -> EnvError {
        EnvError::BadState {
            env: self.task.id.into(),
            reason,
        }
    }

    /// A `BadState` error for the first value of `values` that is not finite, calling it
    /// `what {i}`.
    fn check_finite(&self, values: &[f64], what: &str) -> Result<()> {
        match values.iter().position(|x| !x.is_finite()) {
            Some(i) => Err(self.bad_state(format!("{what} {i} is {}; expected a finite number", values[i]))),
            None => Ok(()),
        }
    }
}

impl Env for MujocoEnv {
    core_accessors!();

    fn reset(&mut self, seed: Option<u64>) -> Result<Value> {
        let task = self.task;
        let scale = task.reset_noise_scale;
        let rng = self.core.begin(seed);
        let mut start: Vec<f64> = self
            .init_qpos
            .iter()
            .map(|q| q + rng.random_range(-scale..scale))
            .collect();
        for _ in 0..task.nv {
            let noise = match task.normal_velocity_noise {
                true => scale * Distribution::<f64>::sample(&StandardNormal, rng),
                false => rng.random_range(-scale..scale),
            };
            start.push(noise);
        }
        self.sim.reset();
        self.sim.set(QPOS | QVEL, &start);
        self.sim.forward();
        self.read();
        Ok(self.observe())
    }

    fn step(&mut self, action: &Value) -> Result<Step> {
        let task = self.task;
        let a = float_action(task.id, &self.core.action_space, action, task.nu)?;
        if a.iter().any(|x| !x.is_finite()) {
            return Err(bad_action(task.id, &self.core.action_space, action));
        }
        self.core.episode.tick()?;
        let x_before = self.state[0];
        // MuJoCo clamps the controls to the model's range (±1); the cost is of the action
        // as given, as in Gymnasium.
        self.sim.set(CTRL, &a);
        for _ in 0..task.frame_skip {
            self.sim.step();
        }
        self.read();
        let x_velocity = (self.state[0] - x_before) / self.dt;
        let (qpos, qvel) = self.qpos_qvel();
        let healthy = task.healthy.as_ref().map(|h| h.holds(qpos, qvel));
        let healthy_reward = if healthy == Some(true) { 1.0 } else { 0.0 };
        let ctrl_cost = task.ctrl_cost_weight * a.iter().map(|x| x * x).sum::<f64>();
        let reward = (x_velocity + healthy_reward) - ctrl_cost;
        let terminated = healthy == Some(false);
        let truncated = self.core.episode.finish(terminated);
        Ok(Step {
            observation: self.observe(),
            reward,
            terminated,
            truncated,
        })
    }

    /// Positions then velocities (`nq + nv` values), as Gymnasium's `set_state` takes them.
    fn state(&self) -> Option<Vec<f64>> {
        Some(self.state.clone())
    }

    /// Sets positions then velocities (Gymnasium's `set_state(qpos, qvel)`) and starts an
    /// episode from there.
    fn set_state(&mut self, state: &[f64]) -> Result<()> {
        let n = self.task.nq + self.task.nv;
        if state.len() != n {
            return Err(self.bad_state(format!(
                "expected {n} values ({} positions, then {} velocities), got {}",
                self.task.nq,
                self.task.nv,
                state.len()
            )));
        }
        self.check_finite(state, "value")?;
        self.sim.set(QPOS | QVEL, state);
        self.sim.forward();
        self.read();
        self.core.episode.start();
        Ok(())
    }

    /// The task (its place among the native tasks, from 1), then the whole integration state
    /// (MuJoCo's `mjSTATE_INTEGRATION`: with the solver's warm start and the controls), so a
    /// restored run steps on bit for bit.
    fn snapshot(&self) -> Option<EnvSnapshot> {
        let mut state = vec![0.0; 1 + self.sim.size(INTEGRATION)];
        state[0] = self.tag();
        self.sim.get(INTEGRATION, &mut state[1..]);
        Some(self.core.snapshot(state))
    }

    fn restore_snapshot(&mut self, snapshot: &EnvSnapshot) -> Result<()> {
        let id = self.task.id;
        let (tag, state) = snapshot.state.split_first().unwrap_or((&0.0, &[]));
        if *tag != self.tag() {
            let of = TASKS
                .iter()
                .zip(1..)
                .find(|(_, i)| *tag == f64::from(*i))
                .map(|(t, _)| t.id);
            return Err(self.bad_state(match of {
                Some(other) => format!("the snapshot is of {other}, not {id}"),
                None => format!("the snapshot is not of a native MuJoCo task (its first value is {tag})"),
            }));
        }
        let expected = self.sim.size(INTEGRATION);
        if state.len() != expected {
            return Err(self.bad_state(format!(
                "the snapshot holds {} values of MuJoCo's integration state, where this MuJoCo's {id} has \
                 {expected}: was it saved with another MuJoCo version?",
                state.len()
            )));
        }
        self.check_finite(state, "snapshot value")?;
        self.sim.set(INTEGRATION, state);
        self.sim.forward();
        self.read();
        self.core.resume(snapshot);
        Ok(())
    }
}

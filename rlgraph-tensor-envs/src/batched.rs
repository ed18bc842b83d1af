//! `Batched`: the part every tensor environment shares (step clocks, time limits, resets
//! inside the step), around a [`Dynamics`] that says how one step changes the state.

use rand_chacha::ChaCha8Rng;
use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, CoreError, DType, Device, HostTensor, Result};

use crate::host_pass::HostCopies;
use crate::reset_stream::{ResetStream, Restarts};
use crate::tensor_env::{TensorEnv, TensorEnvSnapshot, TensorStep};

/// How one environment's state changes, written as tensor ops over all copies at once.
pub trait Dynamics<B: Backend>: Send {
    /// The environment's id.
    fn id(&self) -> &str;
    /// Values in one copy's physical state.
    fn width(&self) -> usize;
    /// The element type of the state.
    fn state_dtype(&self) -> DType {
        DType::F32
    }
    /// The time limit in steps, if any.
    fn limit(&self) -> Option<usize>;
    /// One start state, drawn as the host environment's `reset` draws it.
    fn start_state(&self, rng: &mut ChaCha8Rng) -> Vec<f64>;
    /// The box `start_state` draws uniformly from, `(low, high)` per state value (equal
    /// bounds for a fixed value): where Philox restarts draw.
    fn start_box(&self) -> (Vec<f64>, Vec<f64>);
    /// The actions as this environment uses them, or an error naming what is wrong.
    fn actions(&self, actions: &B::Tensor, n: usize) -> Result<B::Tensor>;
    /// The random numbers one step of every copy uses, drawn from `state` itself (dynamics
    /// that draw keep their counters in the state); none by default. `advance` and `restart`
    /// are given them.
    fn draws(&self, state: &B::Tensor) -> Result<Vec<B::Tensor>> {
        let _ = state;
        Ok(Vec::new())
    }
    /// `(next_state, reward, terminated)` from `state` `[n, width]`, the prepared actions and
    /// the step's [`Dynamics::draws`].
    fn advance(
        &self,
        state: &B::Tensor,
        actions: &B::Tensor,
        draws: &[B::Tensor],
    ) -> Result<(B::Tensor, B::Tensor, B::Tensor)>;
    /// Every copy's state once finished copies restart: the next start state from `starts`
    /// where `done` (U8 `[n]`) is 1 (those copies' cursors move on), `next` elsewhere.
    /// Dynamics whose start states are drawn every step ([`Dynamics::draws`]) make their own
    /// from `draws` instead, and leave `starts` alone.
    fn restart(
        &self,
        next: &B::Tensor,
        starts: &mut ResetStream<B>,
        done: &B::Tensor,
        draws: &[B::Tensor],
    ) -> Result<B::Tensor> {
        let _ = draws;
        B::where_cond(&B::unsqueeze(done, 1)?, &starts.next(done)?, next)
    }
    /// The observations of `state`.
    fn observe(&self, state: &B::Tensor) -> Result<B::Tensor>;
    /// Whether [`Dynamics::advance_one`] steps one copy in plain Rust; then [`Batched`] runs
    /// the fused pass on the CPU.
    fn fused(&self) -> bool {
        false
    }
    /// The whole step of all copies (dynamics, step clock, restart from the stream) as one
    /// CUDA C++ kernel, for [`crate::OneKernel`], which documents its parameters; `None` where
    /// the environment has none.
    fn cuda_step(&self) -> Option<CudaStep> {
        None
    }
    /// One copy's step in plain Rust, computed in f32 in `advance`'s order: copy `copy`'s `row`
    /// (`[width]`) moves in place given its raw `action`; returns its reward and whether it
    /// terminated.
    fn advance_one(&self, copy: usize, row: &mut [f32], action: f64) -> Result<(f32, bool)> {
        let _ = (copy, row, action);
        Ok((0.0, false))
    }
    /// One ended copy's restart in plain Rust, for dynamics that make their own starts: `row`,
    /// the row copy `copy` ended on, becomes its next start, as [`Dynamics::restart`] makes it;
    /// `false` (the default) leaves the restart to the start-state stream.
    fn restart_one(&self, copy: usize, row: &mut [f32]) -> Result<bool> {
        let _ = (copy, row);
        Ok(false)
    }
    /// The observations of the host pass's rows (`[n * width]`, row-major), made on the host,
    /// equal to [`Dynamics::observe`]'s; `None` (the default) leaves them to `observe`.
    fn observe_host(&self, rows: &[f32]) -> Option<Result<HostTensor>> {
        let _ = rows;
        None
    }
}

/// An environment's step as CUDA C++ source (see [`Dynamics::cuda_step`]).
#[derive(Clone, Debug)]
pub struct CudaStep {
    /// The source: one `extern "C" __global__` function, and whatever it needs.
    pub source: String,
    /// The function's name.
    pub name: &'static str,
}

/// N copies of the environment `D` on one device.
pub struct Batched<B: Backend, D: Dynamics<B>> {
    pub(crate) dynamics: D,
    pub(crate) n: usize,
    device: Device,
    pub(crate) state: B::Tensor,
    pub(crate) elapsed: B::Tensor,
    limit: Option<B::Tensor>,
    zero: B::Tensor,
    zero_flag: B::Tensor,
    no_flags: B::Tensor,
    pub(crate) stream: ResetStream<B>,
    state_space: Space,
    action_space: Space,
    /// Whether steps run as one host pass (CPU, dynamics that can); see [`Batched::set_fused`].
    fused: bool,
    /// The copies on the host while the fused pass runs; the tensors are authoritative
    /// otherwise.
    host: Option<HostCopies>,
    /// What the last step reached before restarts, for [`TensorEnv::final_observation`].
    reached: Reached<B>,
}

/// The states the last step reached before finished copies restarted, kept in the cheapest
/// form each path has: the tensor path's advanced state, or the host pass's ended rows.
enum Reached<B: Backend> {
    /// No step since the copies were (re)set: the current state.
    Current,
    /// The tensor path's state after the dynamics, before restarts.
    Advanced(B::Tensor),
    /// The host pass: the ended copies' rows; the others are the current state.
    EndedRows(Vec<(usize, Vec<f32>)>),
}

impl<B: Backend, D: Dynamics<B>> Batched<B, D> {
    /// `n` copies of `dynamics` on `device`, with start states streamed from `seed` (`depth`
    /// per copy), observed in `state_space` and acting in `action_space`.
    pub fn new(dynamics: D, n: usize, device: Device, seed: u64, depth: usize, spaces: (Space, Space)) -> Result<Self> {
        Self::with_restarts(dynamics, n, device, seed, Restarts::Stream { depth }, spaces)
    }

    /// `n` copies of `dynamics` on `device`, restarting as `restarts` says, keyed by `seed`.
    pub fn with_restarts(
        dynamics: D,
        n: usize,
        device: Device,
        seed: u64,
        restarts: Restarts,
        spaces: (Space, Space),
    ) -> Result<Self> {
        if n == 0 {
            return Err(CoreError::Config {
                at: format!("tensor env {}", dynamics.id()),
                reason: "num_envs must be at least 1".into(),
            });
        }
        if !B::device_available(device) {
            return Err(CoreError::Device(format!(
                "tensor env {}: backend {} cannot use {device} here",
                dynamics.id(),
                B::NAME
            )));
        }
        let mut stream = match restarts {
            Restarts::Stream { depth } => ResetStream::new(
                n,
                depth,
                dynamics.width(),
                dynamics.state_dtype(),
                device,
                seed,
                |rng| dynamics.start_state(rng),
            )?,
            Restarts::Philox => {
                let (low, high) = dynamics.start_box();
                ResetStream::philox(n, &low, &high, dynamics.state_dtype(), device, seed).map_err(|e| {
                    CoreError::Config {
                        at: format!("tensor env {}: restarts", dynamics.id()),
                        reason: e.to_string(),
                    }
                })?
            }
        };
        let state = stream.next_all()?;
        Ok(Batched {
            limit: dynamics
                .limit()
                .map(|l| B::scalar(l as f64, DType::F32, device))
                .transpose()?,
            n,
            device,
            state,
            elapsed: B::full(&[n], 0.0, DType::F32, device)?,
            zero: B::scalar(0.0, DType::F32, device)?,
            zero_flag: B::scalar(0.0, DType::U8, device)?,
            no_flags: B::full(&[n], 0.0, DType::U8, device)?,
            fused: can_fuse(device, &dynamics),
            host: None,
            reached: Reached::Current,
            stream,
            dynamics,
            state_space: spaces.0,
            action_space: spaces.1,
        })
    }

    /// Runs steps as one host pass where that is possible (the default on the CPU for
    /// dynamics that can), or as tensor ops; both give the same numbers.
    pub fn set_fused(&mut self, on: bool) -> Result<()> {
        self.sync_tensors()?;
        self.fused = on && can_fuse(self.device, &self.dynamics);
        Ok(())
    }

    /// Whether steps run as one host pass.
    pub fn fused(&self) -> bool {
        self.fused
    }

    /// Hands the host pass's step counts and restart cursors back to the tensors.
    fn sync_tensors(&mut self) -> Result<()> {
        if let Some(host) = self.host.take() {
            self.elapsed = host.upload(&mut self.stream)?;
        }
        Ok(())
    }

    /// One fused step: the copies stepped, clocked and restarted in one host pass, and the
    /// results uploaded as the tensor path's.
    fn fused_step(&mut self, actions: &B::Tensor) -> Result<TensorStep<B>> {
        if B::shape(actions) != [self.n] {
            // The tensor path's check names what is wrong.
            self.dynamics.actions(actions, self.n)?;
        }
        let host = match &mut self.host {
            Some(host) => host,
            None => self
                .host
                .insert(HostCopies::download(&self.state, &self.elapsed, &self.stream)?),
        };
        let actions = B::to_host(actions)?.data.to_f64();
        let (dynamics, limit) = (&self.dynamics, self.dynamics.limit());
        let out = host.step(
            &actions,
            limit,
            |i, row, a| dynamics.advance_one(i, row, a),
            |i, row| dynamics.restart_one(i, row),
        )?;
        let n = self.n;
        self.state = B::from_host(
            &HostTensor::f32([n, host.state.len() / n], host.state.clone())?,
            self.device,
        )?;
        self.reached = Reached::EndedRows(out.finals);
        let observation = match dynamics.observe_host(&host.state) {
            Some(board) => B::from_host(&board?, self.device)?,
            None => dynamics.observe(&self.state)?,
        };
        Ok(TensorStep {
            observation,
            reward: B::from_host(&HostTensor::f32([n], out.reward)?, self.device)?,
            terminated: B::from_host(&HostTensor::u8([n], out.terminated)?, self.device)?,
            truncated: B::from_host(&HostTensor::u8([n], out.truncated)?, self.device)?,
        })
    }

    /// Whether `state` and `elapsed` fit these copies (`[n, width]` and `n` counts); `what`
    /// names the caller in the error.
    fn check_shape(&self, state: &HostTensor, elapsed: &[usize], what: &str) -> Result<()> {
        let expected = [self.n, self.dynamics.width()];
        if state.shape == expected && elapsed.len() == self.n {
            return Ok(());
        }
        Err(CoreError::Config {
            at: format!("tensor env {}: {what}", self.dynamics.id()),
            reason: format!(
                "expected a state of shape {expected:?} and {} step counts, got {:?} and {}",
                self.n,
                state.shape,
                elapsed.len()
            ),
        })
    }

    /// The physical state of every copy, `[n, width]`.
    pub fn state(&self) -> &B::Tensor {
        &self.state
    }

    /// The tensors a step replaces (state, step counts, restart cursors), for a recording to
    /// pin. Only meaningful with the host pass off (`set_fused(false)`), which hands the pass's
    /// counts back to these tensors.
    pub(crate) fn step_parts(&self) -> [B::Tensor; 3] {
        [self.state.clone(), self.elapsed.clone(), self.stream.cursor().clone()]
    }

    /// Puts back tensors [`Batched::step_parts`] gave, in its order.
    pub(crate) fn set_step_parts(&mut self, [state, elapsed, cursor]: [B::Tensor; 3]) {
        self.state = state;
        self.elapsed = elapsed;
        self.stream.set_cursor_tensor(cursor);
    }
}

impl<B: Backend, D: Dynamics<B>> TensorEnv<B> for Batched<B, D> {
    fn id(&self) -> &str {
        self.dynamics.id()
    }

    fn num_envs(&self) -> usize {
        self.n
    }

    fn device(&self) -> Device {
        self.device
    }

    fn state_space(&self) -> &Space {
        &self.state_space
    }

    fn action_space(&self) -> &Space {
        &self.action_space
    }

    fn reset(&mut self) -> Result<B::Tensor> {
        self.sync_tensors()?;
        let all = B::full(&[self.n], 1.0, DType::U8, self.device)?;
        let draws = self.dynamics.draws(&self.state)?;
        self.state = self.dynamics.restart(&self.state, &mut self.stream, &all, &draws)?;
        self.elapsed = B::full(&[self.n], 0.0, DType::F32, self.device)?;
        self.reached = Reached::Current;
        self.dynamics.observe(&self.state)
    }

    fn final_observation(&mut self) -> Result<B::Tensor> {
        match &self.reached {
            Reached::Current => self.dynamics.observe(&self.state),
            Reached::Advanced(next) => self.dynamics.observe(next),
            Reached::EndedRows(rows) if rows.is_empty() => self.dynamics.observe(&self.state),
            Reached::EndedRows(rows) => {
                let mut state = B::to_host(&self.state)?;
                let width = self.dynamics.width();
                match &mut state.data {
                    rlgraph_core::HostData::F32(data) => {
                        for (i, row) in rows {
                            data[i * width..(i + 1) * width].copy_from_slice(row);
                        }
                    }
                    other => {
                        return Err(CoreError::Config {
                            at: format!("tensor env {}: final_observation", self.dynamics.id()),
                            reason: format!("the host pass keeps f32 states, found {:?}", other.dtype()),
                        })
                    }
                }
                self.dynamics.observe(&B::from_host(&state, self.device)?)
            }
        }
    }

    fn step(&mut self, actions: &B::Tensor) -> Result<TensorStep<B>> {
        if B::device(actions) != self.device {
            return Err(CoreError::Config {
                at: format!("tensor env {}: step", self.dynamics.id()),
                reason: format!(
                    "actions are on {}, the environment on {}; move them first",
                    B::device(actions),
                    self.device
                ),
            });
        }
        if self.fused {
            return self.fused_step(actions);
        }
        let actions = self.dynamics.actions(actions, self.n)?;
        let draws = self.dynamics.draws(&self.state)?;
        let (next, reward, terminated) = self.dynamics.advance(&self.state, &actions, &draws)?;
        let elapsed = B::affine(&self.elapsed, 1.0, 1.0)?;
        let (truncated, done) = match &self.limit {
            Some(limit) => {
                let truncated = B::where_cond(&terminated, &self.zero_flag, &B::ge(&elapsed, limit)?)?;
                let done = B::maximum(&terminated, &truncated)?;
                (truncated, done)
            }
            None => (self.no_flags.clone(), terminated.clone()),
        };
        self.elapsed = B::where_cond(&done, &self.zero, &elapsed)?;
        self.state = self.dynamics.restart(&next, &mut self.stream, &done, &draws)?;
        self.reached = Reached::Advanced(next);
        Ok(TensorStep {
            observation: self.dynamics.observe(&self.state)?,
            reward,
            terminated,
            truncated,
        })
    }

    fn moving_parts(&self) -> Option<Vec<B::Tensor>> {
        (!self.fused).then(|| self.step_parts().to_vec())
    }

    fn use_host_pass(&mut self, on: bool) -> Result<bool> {
        self.set_fused(on)?;
        Ok(self.fused)
    }

    fn set_moving_parts(&mut self, parts: Vec<B::Tensor>) -> Result<()> {
        let parts: [B::Tensor; 3] = parts.try_into().map_err(|p: Vec<B::Tensor>| CoreError::Config {
            at: format!("tensor env {}: set_moving_parts", self.dynamics.id()),
            reason: format!("expected the 3 tensors moving_parts gave, got {}", p.len()),
        })?;
        self.set_step_parts(parts);
        Ok(())
    }

    fn set_state(&mut self, state: &HostTensor, elapsed: &[usize]) -> Result<B::Tensor> {
        self.check_shape(state, elapsed, "set_state")?;
        self.sync_tensors()?;
        let state = B::cast(&B::from_host(state, self.device)?, self.dynamics.state_dtype())?;
        let counts: Vec<f32> = elapsed.iter().map(|&e| e as f32).collect();
        self.elapsed = B::from_host(&HostTensor::f32([self.n], counts)?, self.device)?;
        self.state = state;
        self.reached = Reached::Current;
        self.dynamics.observe(&self.state)
    }

    fn snapshot(&mut self) -> Result<TensorEnvSnapshot> {
        // The host pass, where one runs, holds the counts and cursors until handed back.
        self.sync_tensors()?;
        Ok(TensorEnvSnapshot {
            state: B::to_host(&self.state)?,
            elapsed: B::to_host(&self.elapsed)?
                .data
                .to_f64()
                .into_iter()
                .map(|e| e as usize)
                .collect(),
            cursors: self.stream.cursors()?,
        })
    }

    fn restore(&mut self, snapshot: &TensorEnvSnapshot) -> Result<B::Tensor> {
        // The shape first: a snapshot of another environment is named as such.
        self.check_shape(&snapshot.state, &snapshot.elapsed, "restore")?;
        self.stream
            .check_cursor(&snapshot.cursors)
            .map_err(|reason| CoreError::Config {
                at: format!("tensor env {}: restore", self.dynamics.id()),
                reason,
            })?;
        let observation = self.set_state(&snapshot.state, &snapshot.elapsed)?;
        self.stream.set_cursor(&snapshot.cursors)?;
        Ok(observation)
    }
}

/// Whether `dynamics` on `device` can step as one host pass: on the CPU, with f32 states and
/// a one-copy step in plain Rust.
fn can_fuse<B: Backend, D: Dynamics<B>>(device: Device, dynamics: &D) -> bool {
    device == Device::Cpu && dynamics.fused() && dynamics.state_dtype() == DType::F32
}

/// Column `i` of `state`, as `[n, 1]`: dynamics are written one state variable at a time.
pub fn column<B: Backend>(state: &B::Tensor, i: usize) -> Result<B::Tensor> {
    B::narrow(state, 1, i, 1)
}

/// Discrete actions `[n]` (any dtype) as F32 `[n, 1]`, clamped into `0..count`.
pub fn discrete_actions<B: Backend>(id: &str, actions: &B::Tensor, n: usize, count: usize) -> Result<B::Tensor> {
    let shape = B::shape(actions);
    if shape != [n] {
        return Err(CoreError::Config {
            at: format!("tensor env {id}: step"),
            reason: format!("expected one discrete action per copy, shape [{n}], got {shape:?}"),
        });
    }
    let a = B::clamp(&B::cast(actions, DType::F32)?, 0.0, (count - 1) as f64)?;
    B::unsqueeze(&a, 1)
}

//! `Captured`: a tensor environment whose step is recorded once and replayed (CUDA graphs).

use rlgraph_core::{capture, Backend, CoreError, Replay, Result};

use crate::batched::{Batched, Dynamics};
use crate::tensor_env::{TensorEnv, TensorEnvSnapshot, TensorStep};

/// The copies of a [`Batched`] environment stepped by replaying one recorded step: one launch
/// per step instead of one per op, with the same numbers as [`Batched::step`] (restarts come
/// from the same start-state stream).
///
/// The step's tensors live in the recording's memory: each [`Captured::step`] overwrites the
/// previous step's observation, rewards and flags, so copy what must outlive a step.
///
/// ```no_run
/// use backend_tch::Tch;
/// use rlgraph_core::backend::prelude::*;
/// use rlgraph_core::{Device, DType};
/// use rlgraph_envs::{CartPole, Env};
/// use rlgraph_tensor_envs::{default_depth, Batched, Captured, CartPoleDynamics};
///
/// let (n, gpu) = (1024, Device::Cuda(0));
/// let spaces = (CartPole::new(0).state_space().clone(), CartPole::new(0).action_space().clone());
/// let envs = Batched::new(CartPoleDynamics::<Tch>::new(n, gpu)?, n, gpu, 0, default_depth(n), spaces)?;
/// let actions = Tch::full(&[n], 1.0, DType::I64, gpu)?;
/// let mut captured = Captured::new(envs, &actions)?;
/// for _ in 0..1000 {
///     let step = captured.step(&actions)?;
///     let _rewards = &step.reward;
/// }
/// # Ok::<(), rlgraph_core::CoreError>(())
/// ```
pub struct Captured<B: Backend, D: Dynamics<B>> {
    env: Batched<B, D>,
    graph: Box<dyn Replay>,
    /// Where each step's actions go before the replay.
    actions: B::Tensor,
    /// The state, step counts and restart cursors the recording reads and writes back.
    pinned: [B::Tensor; 3],
    out: TensorStep<B>,
}

impl<B: Backend, D: Dynamics<B>> Captured<B, D> {
    /// Records one step of `env` for actions of `actions`' shape and dtype (nothing is
    /// stepped: the copies stand where they stood).
    pub fn new(mut env: Batched<B, D>, actions: &B::Tensor) -> Result<Self> {
        env.set_fused(false)?;
        // One step first, undone after: libtorch loads kernels and fills its caches on first
        // use, which a recording must not see.
        let before = env.snapshot()?;
        env.step(actions)?;
        env.restore(&before)?;
        let device = env.device();
        let buffer = B::full(&B::shape(actions), 0.0, B::dtype(actions), device)?;
        B::copy_into(&buffer, actions)?;
        let pinned = env.step_parts();
        let (graph, out) = capture::<B, _>(device, || {
            let out = env.step(&buffer)?;
            for (dst, src) in pinned.iter().zip(env.step_parts()) {
                B::copy_into(dst, &src)?;
            }
            env.set_step_parts(pinned.clone());
            Ok(out)
        })?;
        Ok(Captured {
            env,
            graph,
            actions: buffer,
            pinned,
            out,
        })
    }

    /// Steps every copy with `actions` (the recording's shape and dtype), restarting finished
    /// copies.
    pub fn step(&mut self, actions: &B::Tensor) -> Result<&TensorStep<B>> {
        let expected = (B::shape(&self.actions), B::dtype(&self.actions));
        let got = (B::shape(actions), B::dtype(actions));
        if expected != got {
            return Err(CoreError::Config {
                at: format!("captured tensor env {}: step", self.env.id()),
                reason: format!(
                    "the step was recorded for {:?} actions of shape {:?}, got {:?} of shape {:?}; \
                     record another for these",
                    expected.1, expected.0, got.1, got.0
                ),
            });
        }
        B::copy_into(&self.actions, actions)?;
        self.graph.replay()?;
        Ok(&self.out)
    }

    /// Starts a new episode in every copy; returns the observations.
    pub fn reset(&mut self) -> Result<B::Tensor> {
        let observation = self.env.reset()?;
        self.repin()?;
        Ok(observation)
    }

    /// Where every copy stands now, on the host.
    pub fn snapshot(&mut self) -> Result<TensorEnvSnapshot> {
        self.env.snapshot()
    }

    /// Puts every copy back where `snapshot` says it stood; returns the observations.
    pub fn restore(&mut self, snapshot: &TensorEnvSnapshot) -> Result<B::Tensor> {
        let observation = self.env.restore(snapshot)?;
        self.repin()?;
        Ok(observation)
    }

    /// The environment inside.
    pub fn env(&self) -> &Batched<B, D> {
        &self.env
    }

    /// Moves what an uncaptured call left in new tensors into the ones the recording uses.
    fn repin(&mut self) -> Result<()> {
        for (dst, src) in self.pinned.iter().zip(self.env.step_parts()) {
            B::copy_into(dst, &src)?;
        }
        self.env.set_step_parts(self.pinned.clone());
        Ok(())
    }
}

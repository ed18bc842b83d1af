//! `OneKernel`: a tensor environment whose whole step is one kernel launch.

use rlgraph_core::spaces::Space;
use rlgraph_core::{CoreError, DType, Device, HostTensor, KernelArg, Result, RuntimeKernels};

use crate::batched::{Batched, Dynamics};
use crate::tensor_env::{TensorEnv, TensorEnvSnapshot, TensorStep};

/// The copies of a [`Batched`] environment stepped by one kernel compiled at run time from the
/// environment's [`Dynamics::cuda_step`]: the dynamics, the step clock and the restarts in
/// one pass over the copies instead of one launch per op, with the tensor path's numbers.
///
/// The kernel's parameters, in order: `int n`, `const RLGRAPH_ACTION* actions` (`[n]`; the
/// source is compiled twice, with the macro `long long` and `float`, and the actions of other
/// dtypes are cast to `float` first),
/// `const float* state` (`[n, width]`), `float* next_state`, `float* elapsed` (`[n]`, updated
/// in place), `long long* cursor` (`[n]`, each copy's next row of the start-state pool,
/// updated in place), `const float* pool` (`[rows, width]`), `long long rows`, `float limit`
/// (the time limit, infinity for none), `float* reward`, `unsigned char* terminated`,
/// `unsigned char* truncated` (`[n]` each). With Philox restarts ([`crate::Restarts`]) the
/// source is compiled with `RLGRAPH_PHILOX` defined, `cursor` counts each copy's restarts,
/// `pool` is the start box (`[2, width]`: lows, then spans) and `rows` the 64-bit key.
pub struct OneKernel<B: RuntimeKernels, D: Dynamics<B>> {
    env: Batched<B, D>,
    /// The step for I64 actions and for F32 ones.
    kernels: (B::Kernel, B::Kernel),
    limit: f32,
    /// The kernel's `pool` and `rows` arguments (see above).
    restarts: (B::Tensor, i64),
}

impl<B: RuntimeKernels, D: Dynamics<B>> OneKernel<B, D> {
    /// Compiles `env`'s step for its device; an environment without a CUDA step, or a device
    /// the backend cannot compile for, is an error that says so.
    pub fn new(mut env: Batched<B, D>) -> Result<Self> {
        let Some(step) = env.dynamics.cuda_step() else {
            return Err(CoreError::Config {
                at: format!("tensor env {}", env.dynamics.id()),
                reason: "this environment has no one-kernel CUDA step; step it as tensor ops (Batched)".into(),
            });
        };
        if i32::try_from(env.n).is_err() {
            return Err(CoreError::Config {
                at: format!("tensor env {}", env.dynamics.id()),
                reason: format!("{} copies are more than one kernel launch indexes (2^31 - 1)", env.n),
            });
        }
        env.set_fused(false)?;
        let device = env.device();
        // The kernel's `pool` and `rows`: the start-state pool and its rows, or for Philox
        // restarts (drawn by the kernel itself) the start box and the key.
        let (restarts, prefix) = match (env.stream.philox_box(), env.stream.pool()) {
            (Some(start), _) => {
                let bounds = [start.low.clone(), start.span.clone()].concat();
                let width = start.low.len();
                let bounds = B::from_host(&HostTensor::f32([2, width], bounds)?, device)?;
                let key = i64::from(start.key[0]) | (i64::from(start.key[1]) << 32);
                ((bounds, key), "#define RLGRAPH_PHILOX\n")
            }
            (None, Some((pool, rows))) => ((pool.clone(), rows as i64), ""),
            (None, None) => {
                return Err(CoreError::Config {
                    at: format!("tensor env {}", env.dynamics.id()),
                    reason: "the one-kernel step needs a start-state pool or Philox restarts".into(),
                })
            }
        };
        let kernels = (
            B::compile(device, &format!("{prefix}{}", step.source), step.name)?,
            B::compile(
                device,
                &format!("{prefix}#define RLGRAPH_ACTION float\n{}", step.source),
                step.name,
            )?,
        );
        let limit = env.dynamics.limit().map_or(f32::INFINITY, |l| l as f32);
        Ok(OneKernel {
            env,
            kernels,
            limit,
            restarts,
        })
    }
}

impl<B: RuntimeKernels, D: Dynamics<B>> TensorEnv<B> for OneKernel<B, D> {
    fn id(&self) -> &str {
        self.env.id()
    }

    fn num_envs(&self) -> usize {
        self.env.num_envs()
    }

    fn device(&self) -> Device {
        self.env.device()
    }

    fn state_space(&self) -> &Space {
        self.env.state_space()
    }

    fn action_space(&self) -> &Space {
        self.env.action_space()
    }

    fn reset(&mut self) -> Result<B::Tensor> {
        self.env.reset()
    }

    fn step(&mut self, actions: &B::Tensor) -> Result<TensorStep<B>> {
        let (n, device) = (self.env.n, self.env.device());
        // One continuous action per copy may come as a column (a Gaussian policy's `[n, 1]`),
        // as the tensor path takes it; discrete actions stay `[n]`, as there.
        let column = B::shape(actions) == [n, 1] && matches!(self.env.action_space(), Space::Float(_));
        let flat;
        let actions = if column {
            flat = B::reshape(actions, &[n])?;
            &flat
        } else {
            actions
        };
        if B::device(actions) != device || B::shape(actions) != [n] {
            // The tensor path's checks name what is wrong.
            self.env.dynamics.actions(actions, n)?;
            return Err(CoreError::Config {
                at: format!("tensor env {}: step", self.id()),
                reason: format!(
                    "expected one action per copy, shape [{n}] on {device}, got {:?} on {}",
                    B::shape(actions),
                    B::device(actions)
                ),
            });
        }
        let (kernel, actions) = match B::dtype(actions) {
            DType::I64 => (&self.kernels.0, actions.clone()),
            DType::F32 => (&self.kernels.1, actions.clone()),
            _ => (&self.kernels.1, B::cast(actions, DType::F32)?),
        };
        let width = self.env.dynamics.width();
        let next = B::empty(&[n, width], DType::F32, device)?;
        let reward = B::empty(&[n], DType::F32, device)?;
        let terminated = B::empty(&[n], DType::U8, device)?;
        let truncated = B::empty(&[n], DType::U8, device)?;
        let stream = &self.env.stream;
        let (pool, rows) = (&self.restarts.0, self.restarts.1);
        B::launch(
            kernel,
            n,
            &[
                // `new` checked that the count fits.
                KernelArg::I32(n as i32),
                KernelArg::Tensor(&actions),
                KernelArg::Tensor(&self.env.state),
                KernelArg::Tensor(&next),
                KernelArg::Tensor(&self.env.elapsed),
                KernelArg::Tensor(stream.cursor()),
                KernelArg::Tensor(pool),
                KernelArg::I64(rows),
                KernelArg::F32(self.limit),
                KernelArg::Tensor(&reward),
                KernelArg::Tensor(&terminated),
                KernelArg::Tensor(&truncated),
            ],
        )?;
        self.env.state = next;
        Ok(TensorStep {
            observation: self.env.dynamics.observe(&self.env.state)?,
            reward,
            terminated,
            truncated,
        })
    }

    fn final_observation(&mut self) -> Result<B::Tensor> {
        // The kernel restarts ended copies in place and keeps no other state: keeping one
        // would cost every step a second state write that training does not read.
        Err(CoreError::Config {
            at: format!("tensor env {}: final_observation", self.id()),
            reason: "the one-kernel step keeps no final observations; use the copies `make` builds".into(),
        })
    }

    fn set_state(&mut self, state: &HostTensor, elapsed: &[usize]) -> Result<B::Tensor> {
        self.env.set_state(state, elapsed)
    }

    fn snapshot(&mut self) -> Result<TensorEnvSnapshot> {
        self.env.snapshot()
    }

    fn restore(&mut self, snapshot: &TensorEnvSnapshot) -> Result<B::Tensor> {
        self.env.restore(snapshot)
    }
}

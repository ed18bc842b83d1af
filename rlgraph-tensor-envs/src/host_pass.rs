//! The fused CPU step: where the copies live in host memory anyway (the CPU device) and the
//! dynamics can step one copy in plain Rust, one pass over the copies replaces the fifty-odd
//! tensor ops of a step (each a kernel call and an allocation), clocks and restarts included.
//! It computes in f32 in the tensor ops' order, so it gives candle's tensor path to the bit.

use rlgraph_core::{Backend, HostData, HostTensor, Result};

use crate::reset_stream::{HostRestarts, ResetStream};

/// Every copy's state, step count and restart cursor on the host.
pub(crate) struct HostCopies {
    /// `[n * width]`, row-major.
    pub(crate) state: Vec<f32>,
    /// Steps since each copy's episode began.
    pub(crate) elapsed: Vec<u32>,
    /// Where restarts come from, and each copy's cursor (its next row of a pool, or its
    /// count of Philox restarts).
    restarts: HostRestarts,
    cursor: Vec<usize>,
    width: usize,
}

/// What one fused step hands back, ready to upload.
pub(crate) struct HostStep {
    pub(crate) reward: Vec<f32>,
    pub(crate) terminated: Vec<u8>,
    pub(crate) truncated: Vec<u8>,
    /// The copies that ended, each with the row its episode ended on (before the restart).
    pub(crate) finals: Vec<(usize, Vec<f32>)>,
}

impl HostCopies {
    /// Host copies of the tensors that hold the copies' state, step counts and restart stream.
    pub(crate) fn download<B: Backend>(
        state: &B::Tensor,
        elapsed: &B::Tensor,
        stream: &ResetStream<B>,
    ) -> Result<Self> {
        let width = B::shape(state).get(1).copied().unwrap_or(1);
        let (restarts, cursor) = (stream.host_restarts()?, stream.cursors()?);
        Ok(HostCopies {
            state: floats(B::to_host(state)?),
            elapsed: B::to_host(elapsed)?
                .data
                .to_f64()
                .into_iter()
                .map(|e| e as u32)
                .collect(),
            restarts,
            cursor,
            width,
        })
    }

    /// One step of every copy: `advance` moves copy `i`'s row given its action and says its
    /// reward and termination; then the clocks tick, the time `limit` truncates, and ended
    /// copies restart, by `restart` where it makes the start (and says so) or else from their
    /// next start state, as the tensor path does.
    pub(crate) fn step(
        &mut self,
        actions: &[f64],
        limit: Option<usize>,
        mut advance: impl FnMut(usize, &mut [f32], f64) -> Result<(f32, bool)>,
        mut restart: impl FnMut(usize, &mut [f32]) -> Result<bool>,
    ) -> Result<HostStep> {
        let n = self.elapsed.len();
        let (mut reward, mut terminated, mut truncated) = (vec![0.0; n], vec![0u8; n], vec![0u8; n]);
        let mut finals = vec![];
        for (i, row) in self.state.chunks_exact_mut(self.width).enumerate() {
            let (r, ended) = advance(i, row, actions[i])?;
            reward[i] = r;
            self.elapsed[i] += 1;
            let cut = !ended && limit.is_some_and(|l| self.elapsed[i] as usize >= l);
            (terminated[i], truncated[i]) = (u8::from(ended), u8::from(cut));
            if ended || cut {
                finals.push((i, row.to_vec()));
                self.elapsed[i] = 0;
                if restart(i, row)? {
                    continue;
                }
                match &self.restarts {
                    HostRestarts::Pool { pool, rows } => {
                        let from = self.cursor[i] * self.width;
                        row.copy_from_slice(&pool[from..from + self.width]);
                        self.cursor[i] = (self.cursor[i] + n) % rows.max(&1);
                    }
                    HostRestarts::Philox(start) => {
                        start.draw(i, self.cursor[i] as u64, row);
                        self.cursor[i] += 1;
                    }
                }
            }
        }
        Ok(HostStep {
            reward,
            terminated,
            truncated,
            finals,
        })
    }

    /// The step counts and restart cursors back into their tensors (before the tensor path
    /// takes over again).
    pub(crate) fn upload<B: Backend>(&self, stream: &mut ResetStream<B>) -> Result<B::Tensor> {
        stream.set_cursor(&self.cursor)?;
        let counts = self.elapsed.iter().map(|&e| e as f32).collect();
        B::from_host(&HostTensor::f32([self.elapsed.len()], counts)?, stream.device())
    }
}

/// A host tensor's elements as f32.
fn floats(t: HostTensor) -> Vec<f32> {
    match t.data {
        HostData::F32(v) => v,
        other => other.to_f64().into_iter().map(|x| x as f32).collect(),
    }
}

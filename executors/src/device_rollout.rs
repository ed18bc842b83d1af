//! One on-policy rollout of device-resident copies, taken op by op or replayed from a
//! recording (CUDA graphs on tch): every acting step (the policy's forward pass and sampling),
//! environment step and return tally of a rollout then goes to the device as one launch.

use agents::{TensorAgent, TensorRollout};
use rlgraph_core::{capture, Backend, DType, Replay, Result};
use rlgraph_tensor_envs::TensorEnv;

/// A rollout and, per step, which copies' episodes ended and their returns so far.
#[derive(Clone)]
pub(crate) struct Rolled<B: Backend> {
    pub(crate) rollout: TensorRollout<B>,
    /// U8 `[N]` per step: 1 where the copy's episode ended at the step.
    pub(crate) ended: Vec<B::Tensor>,
    /// F32 `[N]` per step: each copy's return up to and including the step.
    pub(crate) returns: Vec<B::Tensor>,
}

/// Where the worker's rollouts stand with recording.
pub(crate) enum RolloutRecording<B: Backend> {
    /// No rollout yet: the first runs op by op, which warms the backend up.
    NotYet,
    /// Warmed up: the next rollout records.
    WarmedUp,
    /// Recorded: each replay reads and then overwrites `obs` and `running` (and the
    /// environment's moving parts, pinned the same way), and writes `out`.
    Ready {
        graph: Box<dyn Replay>,
        obs: B::Tensor,
        running: B::Tensor,
        out: Rolled<B>,
    },
    /// Rollouts run op by op (why).
    Off(String),
}

/// `horizon` steps of every copy from observations `obs` and partial returns `running`, op by
/// op; the rollout, and the observations and partial returns after it.
pub(crate) fn roll<B: Backend>(
    agent: &mut dyn TensorAgent<B>,
    envs: &mut dyn TensorEnv<B>,
    obs: &B::Tensor,
    running: &B::Tensor,
    horizon: usize,
) -> Result<(Rolled<B>, B::Tensor, B::Tensor)> {
    let zero = B::scalar(0.0, DType::F32, envs.device())?;
    let mut rollout = TensorRollout {
        states: Vec::with_capacity(horizon),
        actions: Vec::with_capacity(horizon),
        rewards: Vec::with_capacity(horizon),
        terminated: Vec::with_capacity(horizon),
        truncated: Vec::with_capacity(horizon),
        next_states: obs.clone(),
    };
    let (mut ended, mut returns) = (Vec::with_capacity(horizon), Vec::with_capacity(horizon));
    // A copy: a recording writes the last observations back into `obs`, which the first
    // state must not share.
    let mut obs = B::concat(std::slice::from_ref(obs), 0)?;
    let mut running = running.clone();
    for _ in 0..horizon {
        let actions = agent.act_tensors(&obs, true)?;
        let step = envs.step(&actions)?;
        running = B::add(&running, &step.reward)?;
        let done = B::maximum(&step.terminated, &step.truncated)?;
        returns.push(running.clone());
        running = B::where_cond(&done, &zero, &running)?;
        ended.push(done);
        rollout.states.push(std::mem::replace(&mut obs, step.observation));
        rollout.actions.push(actions);
        rollout.rewards.push(step.reward);
        rollout.terminated.push(step.terminated);
        rollout.truncated.push(step.truncated);
    }
    rollout.next_states = obs.clone();
    Ok((
        Rolled {
            rollout,
            ended,
            returns,
        },
        obs,
        running,
    ))
}

impl<B: Backend> RolloutRecording<B> {
    /// The next rollout from `obs` and `running`: replayed, recorded and replayed, or op by
    /// op, as the recording stands; with the observations and partial returns after it.
    pub(crate) fn next(
        &mut self,
        agent: &mut dyn TensorAgent<B>,
        envs: &mut dyn TensorEnv<B>,
        obs: B::Tensor,
        running: B::Tensor,
        horizon: usize,
    ) -> Result<(Rolled<B>, B::Tensor, B::Tensor)> {
        let device = envs.device();
        match self {
            RolloutRecording::NotYet => {
                *self = match (B::can_record(device), B::draws_on_device(device), envs.moving_parts()) {
                    (true, true, Some(_)) => RolloutRecording::WarmedUp,
                    (false, _, _) => RolloutRecording::Off(format!("{} records no kernel graphs on {device}", B::NAME)),
                    (_, false, _) => RolloutRecording::Off(format!("random draws on {device} come from the host")),
                    (_, _, None) => RolloutRecording::Off(format!("{}'s steps are not recorded", envs.id())),
                };
                roll(agent, envs, &obs, &running, horizon)
            }
            RolloutRecording::Off(_) => roll(agent, envs, &obs, &running, horizon),
            RolloutRecording::Ready {
                graph,
                obs: pinned_obs,
                running: pinned_running,
                out,
            } if B::shape(pinned_obs) == B::shape(&obs) => {
                // The observations and returns the recording reads: its own from the last
                // replay (a copy onto itself), or new ones after a resume.
                B::copy_into(pinned_obs, &obs)?;
                B::copy_into(pinned_running, &running)?;
                graph.replay()?;
                let rolled = out.clone();
                Ok((rolled, pinned_obs.clone(), pinned_running.clone()))
            }
            RolloutRecording::Ready { .. } => {
                *self = RolloutRecording::Off("the observations changed shape".into());
                roll(agent, envs, &obs, &running, horizon)
            }
            RolloutRecording::WarmedUp => match record(agent, envs, obs.clone(), running.clone(), horizon) {
                Ok(ready) => {
                    *self = ready;
                    self.next(agent, envs, obs, running, horizon)
                }
                Err(e) => {
                    *self = RolloutRecording::Off(format!("recording the rollout failed: {e}"));
                    roll(agent, envs, &obs, &running, horizon)
                }
            },
        }
    }

    /// Whether rollouts replay a recording; otherwise why not (`None` while undecided).
    pub(crate) fn state(&self) -> Option<std::result::Result<(), String>> {
        match self {
            RolloutRecording::Ready { .. } => Some(Ok(())),
            RolloutRecording::Off(why) => Some(Err(why.clone())),
            RolloutRecording::NotYet | RolloutRecording::WarmedUp => None,
        }
    }

    /// Forgets the recording after the copies were moved outside it (a restore): the
    /// environment's moving parts are new tensors the recording does not read.
    pub(crate) fn forget(&mut self) {
        if let RolloutRecording::Ready { .. } = self {
            *self = RolloutRecording::WarmedUp;
        }
    }
}

/// Records one rollout from copies of `obs` and `running` (and of the environment's moving
/// parts, which the environment takes over): nothing runs until the first replay.
fn record<B: Backend>(
    agent: &mut dyn TensorAgent<B>,
    envs: &mut dyn TensorEnv<B>,
    obs: B::Tensor,
    running: B::Tensor,
    horizon: usize,
) -> Result<RolloutRecording<B>> {
    let device = envs.device();
    let fresh = |t: &B::Tensor| B::concat(std::slice::from_ref(t), 0);
    let parts = envs
        .moving_parts()
        .ok_or_else(|| rlgraph_core::CoreError::Config {
            at: format!("tensor env {}", envs.id()),
            reason: "its steps are not recorded".into(),
        })?
        .iter()
        .map(fresh)
        .collect::<Result<Vec<_>>>()?;
    envs.set_moving_parts(parts.clone())?;
    let (obs, running) = (fresh(&obs)?, fresh(&running)?);
    let recorded = capture::<B, _>(device, || {
        let (out, last_obs, last_running) = roll(agent, envs, &obs, &running, horizon)?;
        B::copy_into(&obs, &last_obs)?;
        B::copy_into(&running, &last_running)?;
        let moved = envs.moving_parts().unwrap_or_default();
        for (pinned, new) in parts.iter().zip(&moved) {
            B::copy_into(pinned, new)?;
        }
        envs.set_moving_parts(parts.clone())?;
        Ok(out)
    });
    let (graph, out) = match recorded {
        Ok(recorded) => recorded,
        Err(e) => {
            // Nothing recorded ran: the pinned copies still hold where the copies stand.
            envs.set_moving_parts(parts)?;
            return Err(e);
        }
    };
    Ok(RolloutRecording::Ready {
        graph,
        obs,
        running,
        out,
    })
}

//! PPO's update from a rollout that never left the device, run op by op or replayed from a
//! recording (CUDA graphs on tch) where the backend records: the whole update (evaluation,
//! GAE, every minibatch's forward, backward and Adam step) is then one launch.
//!
//! A recording replays the same kernels on the same memory, so everything that changes from
//! update to update is a tensor the update reads: the rollout, and the schedules' values
//! (`knobs`) filled on the device. The minibatch indices are drawn inside the update
//! ([`RandomOps::sample_indices`]), on the device when the run moved its draws there
//! (`GraphCapture::draw_on_device`), and nothing is read back but the mean loss.

use rlgraph_components::helpers::gae_time_major;
use rlgraph_core::backend::prelude::*;
use rlgraph_core::{capture, CoreError, DType, Device, Result, Tree};

use super::config::PgAlgorithm;
use super::learner::PgLearner;
use super::recorded_update::{Recorded, UpdateInputs};
use crate::tensor_rollouts::TensorRollout;

impl<B: Backend> PgLearner<B> {
    /// Turns recording of device updates on (the default where the backend records on the
    /// learner's device) or off; off, every update runs op by op.
    pub fn set_recording(&mut self, on: bool) {
        self.recorded = match on {
            true => Recorded::NotYet,
            false => Recorded::Off("recording was turned off".into()),
        };
    }

    /// Whether device updates replay a recording; otherwise why not (`None` before the second
    /// update, which records).
    pub fn recording(&self) -> Option<std::result::Result<(), String>> {
        match &self.recorded {
            Recorded::Ready { .. } => Some(Ok(())),
            Recorded::Off(why) => Some(Err(why.clone())),
            Recorded::NotYet | Recorded::WarmedUp(_) => None,
        }
    }

    /// A PPO update from a rollout on the device: old log-likelihoods and values in one
    /// evaluation, GAE over the time axis as backend ops ([`gae_time_major`]), then
    /// `num_iterations` minibatch steps of `sample_size` records picked by index on the
    /// device. Only the mean loss comes down. Where the backend records on this device, the
    /// first update runs op by op, the second records the whole update and every later one
    /// replays it (see the module's comment). Actor-critic is refused: its loss computes
    /// advantages on the host.
    pub fn update_from_tensors(&mut self, rollout: &TensorRollout<B>, time_percentage: f64) -> Result<f64> {
        let bad = |reason: String| CoreError::Config {
            at: "pg-learner/update_from_tensors".into(),
            reason,
        };
        let PgAlgorithm::Ppo { clip_ratio, .. } = &self.config.algorithm else {
            return Err(bad(
                "device-resident rollouts train PPO; actor-critic's loss computes its advantages on the host".into(),
            ));
        };
        if self.config.recurrence.is_some() {
            return Err(bad(
                "device-resident rollouts train memoryless policies; a recurrent policy learns through the single-threaded worker".into(),
            ));
        }
        let steps = rollout.rewards.len();
        let lengths = [
            rollout.states.len(),
            rollout.actions.len(),
            rollout.terminated.len(),
            rollout.truncated.len(),
        ];
        if steps == 0 || lengths.iter().any(|&l| l != steps) {
            return Err(bad(format!(
                "states, actions, terminated and truncated need one tensor per reward step ({steps}), got {lengths:?}"
            )));
        }
        let copies = rollout.copies();
        let t = time_percentage.clamp(0.0, 1.0);
        let device = B::device(&rollout.next_states);
        let time_major = |ts: &[B::Tensor]| -> Result<B::Tensor> { B::reshape(&B::concat(ts, 0)?, &[steps, copies]) };
        // Filled on the device (no upload), so a replay reads them without a wait.
        let knob = |v: f64| B::full(&[1], v, DType::F32, device);
        let inputs = UpdateInputs {
            states: B::concat(&rollout.states, 0)?,
            actions: B::concat(&rollout.actions, 0)?,
            // Copies: a recording keeps reading these tensors, which must not be the worker's.
            next_states: B::concat(std::slice::from_ref(&rollout.next_states), 0)?,
            last_actions: B::concat(&rollout.actions[steps - 1..], 0)?,
            rewards: time_major(&rollout.rewards)?,
            terminated: time_major(&rollout.terminated)?,
            truncated: time_major(&rollout.truncated)?,
            knobs: B::concat(
                &[
                    knob(clip_ratio.value(t))?,
                    knob(self.config.weight_entropy.value(t))?,
                    knob(t)?,
                ],
                0,
            )?,
        };
        let loss_sum = self.recorded_or_direct(inputs, device)?;
        self.graph.counters.updates += 1;
        let sum = B::to_host(&loss_sum)?.data.to_f64();
        Ok(sum.first().copied().unwrap_or(f64::NAN) / self.config.update.num_iterations.max(1) as f64)
    }

    /// The update's loss sum: replayed, recorded then replayed, or op by op, as
    /// [`Recorded`] stands.
    fn recorded_or_direct(&mut self, inputs: UpdateInputs<B::Tensor>, device: Device) -> Result<B::Tensor> {
        let shapes: Vec<Vec<usize>> = inputs.parts().iter().map(|t| B::shape(t)).collect();
        if let Recorded::NotYet = self.recorded {
            self.recorded = match (B::can_record(device), B::draws_on_device(device)) {
                (true, true) => Recorded::WarmedUp(shapes),
                (false, _) => Recorded::Off(format!("{} records no kernel graphs on {device}", B::NAME)),
                (true, false) => Recorded::Off(format!(
                    "random draws on {device} come from the host, which no recording can hold; the worker moves them \
                     to the device (GraphCapture::draw_on_device)"
                )),
            };
            return self.update_on_device(&inputs);
        }
        if let Recorded::Ready {
            graph,
            inputs: recorded,
            loss_sum,
        } = &self.recorded
        {
            let fits = recorded.parts().iter().zip(&shapes).all(|(r, s)| B::shape(r) == *s)
                && recorded
                    .parts()
                    .iter()
                    .zip(inputs.parts())
                    .all(|(r, i)| B::dtype(r) == B::dtype(i));
            if fits {
                for (dst, src) in recorded.parts().into_iter().zip(inputs.parts()) {
                    B::copy_into(dst, src)?;
                }
                graph.replay()?;
                return Ok(loss_sum.clone());
            }
            // Another rollout length: warm up and record anew.
            self.recorded = Recorded::WarmedUp(shapes);
            return self.update_on_device(&inputs);
        }
        match &self.recorded {
            Recorded::WarmedUp(warmed) if *warmed == shapes => {}
            Recorded::WarmedUp(_) => {
                self.recorded = Recorded::WarmedUp(shapes);
                return self.update_on_device(&inputs);
            }
            _ => return self.update_on_device(&inputs),
        }
        // This update's own input tensors become the ones every replay reads.
        match capture::<B, _>(device, || self.update_on_device(&inputs)) {
            Ok((graph, loss_sum)) => {
                graph.replay()?;
                self.recorded = Recorded::Ready {
                    graph,
                    inputs,
                    loss_sum: loss_sum.clone(),
                };
                Ok(loss_sum)
            }
            Err(e) => {
                self.recorded = Recorded::Off(format!("recording the update failed: {e}"));
                self.update_on_device(&inputs)
            }
        }
    }

    /// The update itself, op by op on the device; the sum of the minibatches' losses.
    fn update_on_device(&mut self, x: &UpdateInputs<B::Tensor>) -> Result<B::Tensor> {
        let bad = |reason: &str| CoreError::Config {
            at: "pg-learner/update_from_tensors".into(),
            reason: reason.into(),
        };
        let (steps, copies) = match B::shape(&x.rewards)[..] {
            [steps, copies] => (steps, copies),
            _ => return Err(bad("rewards must be [steps, copies]")),
        };
        let total = steps * copies;
        let device = B::device(&x.rewards);
        let all_states = B::concat(&[x.states.clone(), x.next_states.clone()], 0)?;
        let all_actions = B::concat(&[x.actions.clone(), x.last_actions.clone()], 0)?;
        let out = self
            .graph
            .exec
            .execute_tensors("evaluate", [Tree::Leaf(all_states), Tree::Leaf(all_actions)])?;
        let leaf = |i: usize| -> Result<B::Tensor> {
            out.get(i)
                .and_then(Tree::as_leaf)
                .map(B::detach)
                .ok_or_else(|| bad("evaluate returned no tensors"))
        };
        let log_probs = B::narrow(&B::reshape(&leaf(0)?, &[total + copies])?, 0, 0, total)?;
        let values = B::reshape(&leaf(1)?, &[steps + 1, copies])?;
        let advantages = gae_time_major::<B>(
            &values,
            &x.rewards,
            &x.terminated,
            &x.truncated,
            self.config.discount,
            self.config.gae_lambda,
        )?;
        let advantages = B::reshape(&advantages, &[total])?;
        let prev_values = B::narrow(&B::reshape(&values, &[total + copies])?, 0, 0, total)?;
        let m = self.config.update.sample_size.unwrap_or(total).min(total);
        let knob = |i: usize| B::reshape(&B::narrow(&x.knobs, 0, i, 1)?, &[]);
        let (clip, weight_entropy, time) = (knob(0)?, knob(1)?, knob(2)?);
        let iterations = self.config.update.num_iterations;
        // Every minibatch's indices in one draw where they fit: from the host up to a million
        // indices at a time (each upload to a GPU waits for what is queued there); on the
        // device each row sorts `total` keys, so up to four million keys at a time.
        let per_draw = match B::draws_on_device(device) {
            true => ((1usize << 22) / total.max(1)).max(1),
            false => ((1usize << 20) / m.max(1)).max(1),
        };
        let (mut ahead, mut at) = (None, 0usize);
        let mut loss_sum: Option<B::Tensor> = None;
        for i in 0..iterations as usize {
            if i % per_draw == 0 {
                let rows = per_draw.min(iterations as usize - i);
                ahead = Some(B::sample_indices(total, m, rows, device, &mut self.graph.counters.rng)?);
                at = 0;
            }
            let idx = match &ahead {
                Some(all) => B::narrow(all, 0, at * m, m)?,
                None => return Err(bad("no minibatch indices drawn")),
            };
            at += 1;
            let pick = |x: &B::Tensor| -> Result<Tree<B::Tensor>> { Ok(Tree::Leaf(B::index_select(x, 0, &idx)?)) };
            let inputs = [
                pick(&x.states)?,
                pick(&x.actions)?,
                pick(&log_probs)?,
                pick(&prev_values)?,
                pick(&advantages)?,
                Tree::Leaf(clip.clone()),
                Tree::Leaf(weight_entropy.clone()),
                Tree::Leaf(time.clone()),
            ];
            let out = self.graph.exec.execute_tensors("update", inputs)?;
            let loss = out
                .first()
                .and_then(Tree::as_leaf)
                .map(|l| B::detach(l))
                .ok_or_else(|| bad("update returned no loss"))?;
            loss_sum = Some(match loss_sum {
                Some(sum) => B::add(&sum, &loss)?,
                None => loss,
            });
        }
        match loss_sum {
            Some(sum) => Ok(sum),
            None => B::scalar(0.0, DType::F32, device),
        }
    }
}

//! An actor that streams rollouts (as IMPALA's do): steps its own environments with a local
//! acting graph that samples actions and returns their behaviour log-likelihoods, cuts
//! fixed-length rollouts, and streams each to the learner tagged with the weight version that
//! acted. It takes the learner's newest weights before every rollout and waits while the
//! learner's queue is full: that is how the learner pushes back.

use std::collections::VecDeque;

use agents::{Actor, CarriedMemory, DistributedAlgorithm, RolloutAdder, RolloutFeed};
use rlgraph_core::spaces::Value;
use rlgraph_core::Backend;

use super::access::Access;
use super::actor_env::ActorEnvs;
use super::actor_options::{ActorOptions, ActorSummary};
use super::cluster::ClusterSpec;
use super::error::DistributedError;
use super::learner_link::{LearnerLink, Pushed};
use super::proto::RolloutRequest;
use super::wire::encode_value;

/// Runs actor `options.index` of a run of `algorithm`, whose actors stream rollouts as `feed`
/// says, until the learner ends the run (or stays silent for `options.give_up`).
pub(crate) fn run_rollout_actor<B: Backend>(
    algorithm: &dyn DistributedAlgorithm<B>,
    feed: &RolloutFeed,
    cluster: &ClusterSpec,
    access: &Access,
    options: &ActorOptions,
) -> Result<ActorSummary, DistributedError> {
    let mut envs = ActorEnvs::new(&options.env, options.num_envs, options.seed, options.index)?;
    let (s, a) = envs.spaces.clone();
    let mut actor = algorithm.actor(&s, &a, envs.seed)?;
    let mut adder = RolloutAdder::new(feed.length, &s, &a, feed.memory_units)?;
    // A recurrent policy's memory per environment copy; the learner unrolls each rollout from
    // the memory its first step was acted from.
    let mut memory = feed.memory_units.map(CarriedMemory::new);
    let mut link = LearnerLink::new(cluster, access, options.index, options.give_up)?;
    let tag = link.tag.clone();

    let mut summary = link.first_weights(&mut actor, options.index)?;

    let mut outbox: VecDeque<RolloutRequest> = VecDeque::new();
    let mut time_percentage = 0.0;
    loop {
        let acted = match &mut memory {
            Some(m) => m.act(&mut actor, envs.states(), true)?,
            None => actor.act(envs.states(), true, time_percentage)?,
        };
        let log_probs = match acted.extras.get("behaviour_log_probs") {
            Some(Value::Float32(l)) => l.data().to_vec(),
            other => {
                return Err(DistributedError::Setup(format!(
                    "{tag}: the actor's graph gave no behaviour log-likelihoods ({other:?})"
                )))
            }
        };
        let mut finished_rollout = false;
        for (i, (t, log_prob)) in envs.step(acted.actions)?.into_iter().zip(log_probs).enumerate() {
            let acted_from = match &mut memory {
                Some(m) => Some(m.observed(i, &t)?),
                None => None,
            };
            if let Some(rollout) = adder.push(i, t, f64::from(log_prob), acted_from)? {
                summary.records_made += 1;
                outbox.push_back(RolloutRequest {
                    actor: options.index,
                    weight_version: summary.version,
                    rollout: Some(encode_value(&rollout)?),
                });
                finished_rollout = true;
            }
        }
        while outbox.len() > options.outbox_limit {
            outbox.pop_front();
            summary.records_dropped += 1;
        }
        // Send what is finished; while the queue is full, wait (and keep reporting).
        while let Some(request) = outbox.front() {
            match link.push_rollout(request.clone())? {
                Pushed::Taken => {
                    outbox.pop_front();
                    summary.records_sent += 1;
                }
                Pushed::QueueFull => {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    if link.report_progress(
                        &mut envs,
                        &mut summary,
                        options,
                        true,
                        &mut time_percentage,
                        &mut |_| Ok(()),
                    )? {
                        summary.records_unsent = outbox.len() as u64;
                        return Ok(summary);
                    }
                }
                Pushed::Unanswered => break,
                Pushed::Refused(e) => {
                    super::log(&format!("{tag}: dropped a rollout: {e}"));
                    outbox.pop_front();
                    summary.records_dropped += 1;
                }
            }
        }
        if finished_rollout {
            link.sync(&mut actor, &mut summary, options.index)?;
        }
        if link.report_progress(
            &mut envs,
            &mut summary,
            options,
            false,
            &mut time_percentage,
            &mut |_| Ok(()),
        )? {
            summary.records_unsent = outbox.len() as u64;
            return Ok(summary);
        }
    }
}

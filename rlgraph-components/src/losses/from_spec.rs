//! Loss functions and sequence helpers from their RLgraph specs
//! (`{"type": "dqn-loss-function", "double_q": true, "discount": 0.9}`).

use serde_json::Value as Json;

use rlgraph_core::{Backend, Component, Result};

use super::{
    actor_critic_loss, cross_entropy_loss, dqn_loss, euclidean_distance_loss, impala_loss, ppo_loss, sac_loss,
    ActorCriticLossSpec, ContainerLoss, DqnLossSpec, ImpalaLossSpec, PpoLossSpec, SacLossSpec,
};
use crate::helpers::{gae, sequence_helper, v_trace};
use crate::spec::{normalize_type, Spec};
use crate::spec_keys;

/// The spec type names this module builds (RLgraph spellings, normalized).
pub const LOSS_TYPES: &[&str] = &[
    "dqn-loss-function",
    "actor-critic-loss-function",
    "ppo-loss-function",
    "impala-loss-function",
    "sac-loss-function",
    "categorical-cross-entropy-loss",
    "euclidian-distance-loss",
    "generalized-advantage-estimation",
    "sequence-helper",
    "v-trace",
];

/// A loss or helper from `spec` if `kind` names one, else `None`.
pub fn loss_from_spec<B: Backend>(kind: &str, spec: &Json, at: &str) -> Option<Result<Component<B>>> {
    let kind = normalize_type(kind);
    let kind = kind.trim_end_matches("function").to_string();
    let build = move || -> Result<Option<Component<B>>> {
        let s = Spec::new(spec, at)?;
        let scope = |d: &'static str| s.str_or("scope", d);
        Ok(Some(match kind.as_str() {
            "dqnloss" => {
                s.only(spec_keys::DQN_LOSS.keys)?;
                let d = DqnLossSpec::default();
                let container_loss = ContainerLoss::parse(
                    s.str_or("container_actions_loss", "average_td")?,
                    &s.at("container_actions_loss"),
                )?;
                dqn_loss(
                    scope("dqn-loss-function")?,
                    DqnLossSpec {
                        discount: s.f64_or("discount", d.discount)?,
                        double_q: s.bool_or("double_q", d.double_q)?,
                        huber_loss: s.bool_or("huber_loss", d.huber_loss)?,
                        importance_weights: s.bool_or("importance_weights", d.importance_weights)?,
                        n_step: s.usize_or("n_step", 1)? as u32,
                        container_loss,
                        shared_container_action_target: s
                            .bool_or("shared_container_action_target", d.shared_container_action_target)?,
                    },
                )
            }
            "actorcriticloss" => {
                s.only(spec_keys::ACTOR_CRITIC_LOSS.keys)?;
                let d = ActorCriticLossSpec::default();
                actor_critic_loss(
                    scope("actor-critic-loss-function")?,
                    ActorCriticLossSpec {
                        discount: s.f64_or("discount", d.discount)?,
                        gae_lambda: s.f64_or("gae_lambda", d.gae_lambda)?,
                        weight_pg: s.f64_or("weight_pg", d.weight_pg)?,
                        weight_vf: s.f64_or("weight_vf", d.weight_vf)?,
                        weight_entropy: s.f64_or("weight_entropy", d.weight_entropy)?,
                    },
                )
            }
            "ppoloss" => {
                s.only(spec_keys::PPO_LOSS.keys)?;
                let d = PpoLossSpec::default();
                let clipping = match s.get("value_function_clipping") {
                    None | Some(Json::Null) => None,
                    Some(_) => Some(s.f64_or("value_function_clipping", 0.0)?),
                };
                ppo_loss(
                    scope("ppo-loss-function")?,
                    PpoLossSpec {
                        clip_ratio: s.f64_or("clip_ratio", d.clip_ratio)?,
                        value_function_clipping: clipping,
                        standardize_advantages: s.bool_or("standardize_advantages", d.standardize_advantages)?,
                        weight_vf: s.f64_or("weight_vf", d.weight_vf)?,
                        weight_entropy: s.f64_or("weight_entropy", d.weight_entropy)?,
                    },
                )
            }
            "impalaloss" => {
                s.only(spec_keys::IMPALA_LOSS.keys)?;
                let d = ImpalaLossSpec::default();
                let reward_clipping =
                    crate::losses::RewardClipping::parse(s.get("reward_clipping"), &s.at("reward_clipping"))?;
                impala_loss(
                    scope("impala-loss-function")?,
                    ImpalaLossSpec {
                        discount: s.f64_or("discount", d.discount)?,
                        rho_bar: s.f64_or("rho_bar", d.rho_bar)?,
                        c_bar: s.f64_or("c_bar", d.c_bar)?,
                        pg_rho_bar: s.f64_or("pg_rho_bar", d.pg_rho_bar)?,
                        weight_pg: s.f64_or("weight_pg", d.weight_pg)?,
                        weight_vf: s.f64_or("weight_vf", d.weight_vf)?,
                        weight_entropy: s.f64_or("weight_entropy", d.weight_entropy)?,
                        reward_clipping,
                    },
                )
            }
            "sacloss" => {
                s.only(spec_keys::SAC_LOSS.keys)?;
                let d = SacLossSpec::default();
                sac_loss(
                    scope("sac-loss-function")?,
                    SacLossSpec {
                        discount: s.f64_or("discount", d.discount)?,
                        initial_alpha: s.f64_or("initial_alpha", d.initial_alpha)?,
                        // null and absent both mean RLgraph's None: alpha stays fixed.
                        target_entropy: match s.get("target_entropy") {
                            None | Some(serde_json::Value::Null) => d.target_entropy,
                            Some(_) => Some(s.f64_or("target_entropy", 0.0)?),
                        },
                    },
                )
            }
            "categoricalcrossentropyloss" | "crossentropyloss" => {
                s.only(spec_keys::CROSS_ENTROPY_LOSS.keys)?;
                cross_entropy_loss(scope("cross-entropy-loss")?)
            }
            "euclidiandistanceloss" | "euclideandistanceloss" => {
                s.only(spec_keys::EUCLIDEAN_DISTANCE_LOSS.keys)?;
                euclidean_distance_loss(scope("euclidean-distance-loss")?)
            }
            "gae" | "generalizedadvantageestimation" => {
                s.only(spec_keys::GAE.keys)?;
                gae(
                    scope("generalized-advantage-estimation")?,
                    s.f64_or("discount", 0.99)?,
                    s.f64_or("gae_lambda", 1.0)?,
                )
            }
            "sequencehelper" => {
                s.only(spec_keys::SEQUENCE_HELPER.keys)?;
                sequence_helper(scope("sequence-helper")?, s.f64_or("decay", 1.0)?)
            }
            "vtrace" => {
                s.only(spec_keys::V_TRACE.keys)?;
                v_trace(
                    scope("v-trace")?,
                    s.f64_or("rho_bar", 1.0)?,
                    s.f64_or("c_bar", 1.0)?,
                    s.f64_or("pg_rho_bar", 1.0)?,
                )
            }
            _ => return Ok(None),
        }))
    };
    build().transpose()
}

//! Recurrent policies: a `network_spec` with an `lstm` layer, split into the layers before the
//! LSTM (run on each step), the LSTM the agent carries from step to step, and the layers after
//! it (the policy's and value head's trunk).

use rlgraph_components::lstm_spec;
use rlgraph_core::{CoreError, Result};
use serde_json::Value as Json;

use crate::preprocessing::preprocessor_kind;

/// A `network_spec` split around its LSTM layer.
#[derive(Clone, Debug, PartialEq)]
pub struct Recurrence {
    /// The layers before the LSTM.
    pub pre: Vec<Json>,
    /// The LSTM's hidden units (the size of `c` and of `h`).
    pub units: usize,
    /// Added to the forget gate's pre-activation.
    pub forget_bias: f64,
    /// The layers after the LSTM.
    pub post: Vec<Json>,
    /// The LSTM's place in `network_spec` (the layers after it are numbered on from there).
    pub index: usize,
}

fn is_lstm(layer: &Json) -> bool {
    is_lstm_kind(&preprocessor_kind(layer))
}

/// Whether a layer of this normalized kind is an LSTM.
pub(crate) fn is_lstm_kind(kind: &str) -> bool {
    matches!(kind, "lstm" | "lstmlayer")
}

/// The split of `network` (the config's `network_spec`, named `at` in messages) around its
/// LSTM layer, or `None` when it has none. One LSTM at most, returning every step's output and
/// keeping no state of its own: the agent carries the memory of each environment copy.
pub(crate) fn recurrence(network: &[Json], at: &str) -> Result<Option<Recurrence>> {
    let found: Vec<usize> = network
        .iter()
        .enumerate()
        .filter(|(_, l)| is_lstm(l))
        .map(|(i, _)| i)
        .collect();
    let &[i] = found.as_slice() else {
        return match found.len() {
            0 => Ok(None),
            _ => Err(CoreError::Config {
                at: format!("{at}[{}]", found[1]),
                reason: "a policy network may have one LSTM layer; stack the others as dense layers".into(),
            }),
        };
    };
    let here = format!("{at}[{i}]");
    let spec = lstm_spec(&network[i], &here)?;
    let refuse = |key: &str, why: &str| CoreError::Config {
        at: format!("{here}.{key}"),
        reason: why.into(),
    };
    if !spec.return_sequences {
        return Err(refuse(
            "return_sequences",
            "an agent's LSTM gives an output at every step; drop return_sequences: false",
        ));
    }
    if spec.stateful_batch.is_some() {
        return Err(refuse(
            "stateful_batch_size",
            "the agent carries each environment copy's LSTM memory itself; drop stateful_batch_size",
        ));
    }
    if spec.time_major.is_some() {
        return Err(refuse(
            "time_major",
            "the agent lays its sequences out itself; drop time_major",
        ));
    }
    Ok(Some(Recurrence {
        pre: network[..i].to_vec(),
        units: spec.units,
        forget_bias: spec.forget_bias,
        post: network[i + 1..].to_vec(),
        index: i,
    }))
}

/// Refuses a `network` (named `at`) with an LSTM layer, for an agent (`agent`) that cannot
/// carry its memory.
pub(crate) fn refuse_recurrence(network: &[Json], at: &str, agent: &str) -> Result<()> {
    match network.iter().position(is_lstm) {
        Some(i) => Err(CoreError::Config {
            at: format!("{at}[{i}]"),
            reason: format!(
                "{agent} cannot carry an LSTM's memory from step to step (PPO and actor-critic can); \
                 use dense layers, or stack frames with a sequence preprocessor"
            ),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_spec_splits_around_its_lstm() {
        let net = [
            json!({"type": "dense", "units": 8}),
            json!({"type": "lstm", "units": 16, "forget_bias": 0.5}),
            json!({"type": "dense", "units": 4}),
        ];
        let r = recurrence(&net, "config.network_spec").unwrap().unwrap();
        assert_eq!((r.pre.len(), r.units, r.forget_bias, r.post.len()), (1, 16, 0.5, 1));
        assert_eq!(recurrence(&net[..1], "n").unwrap(), None);
    }

    #[test]
    fn settings_the_agent_owns_are_refused_by_name() {
        let two = [
            json!({"type": "lstm", "units": 4}),
            json!({"type": "LSTMLayer", "units": 4}),
        ];
        let err = recurrence(&two, "config.network_spec").unwrap_err().to_string();
        assert!(
            err.contains("config.network_spec[1]") && err.contains("one LSTM"),
            "{err}"
        );
        for (key, value) in [
            ("return_sequences", json!(false)),
            ("stateful_batch_size", json!(2)),
            ("time_major", json!(true)),
        ] {
            let mut layer = json!({"type": "lstm", "units": 4});
            layer[key] = value;
            let err = recurrence(&[layer], "config.network_spec").unwrap_err().to_string();
            assert!(err.contains(&format!("config.network_spec[0].{key}")), "{err}");
        }
        let err = refuse_recurrence(&two, "config.network_spec", "DQN")
            .unwrap_err()
            .to_string();
        assert!(err.contains("config.network_spec[0]") && err.contains("DQN"), "{err}");
    }
}

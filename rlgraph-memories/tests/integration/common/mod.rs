#![allow(dead_code)] // Each test file uses a different part.

//! Record spaces and batches shared by the memory tests.

use std::collections::BTreeMap;

use rlgraph_core::spaces::{Array, BoolBox, FloatBox, IntBox, Space, Value};

/// A DQN transition: Dict of states (itself a Dict, to exercise container states),
/// actions, rewards, terminals and next_states.
pub fn transition_space() -> Space {
    let state = || {
        Space::dict([
            ("pos", Space::from(FloatBox::new([2]))),
            ("id", Space::from(IntBox::new(100).unwrap())),
        ])
        .unwrap()
    };
    Space::dict([
        ("states", state()),
        ("actions", Space::from(IntBox::new(2).unwrap())),
        ("rewards", Space::from(FloatBox::new(Vec::<usize>::new()))),
        ("terminals", Space::from(BoolBox::new(Vec::<usize>::new()))),
        ("next_states", state()),
    ])
    .unwrap()
}

/// `n` transitions numbered from `first`: record `k` has state id `k % 100`, pos
/// `[k, -k]`, action `k % 2`, reward `k`, terminal when `k % 5 == 4`, next id `(k+1) % 100`.
pub fn transitions(first: usize, n: usize) -> Value {
    let ks: Vec<usize> = (first..first + n).collect();
    let state = |offset: usize| {
        Value::Dict(BTreeMap::from([
            (
                "pos".to_string(),
                Value::Float32(
                    Array::new(
                        [n, 2],
                        ks.iter()
                            .flat_map(|&k| [(k + offset) as f32, -((k + offset) as f32)])
                            .collect(),
                    )
                    .unwrap(),
                ),
            ),
            (
                "id".to_string(),
                Value::Int32(Array::new([n], ks.iter().map(|&k| ((k + offset) % 100) as i32).collect()).unwrap()),
            ),
        ]))
    };
    Value::Dict(BTreeMap::from([
        ("states".to_string(), state(0)),
        (
            "actions".to_string(),
            Value::Int32(Array::new([n], ks.iter().map(|&k| (k % 2) as i32).collect()).unwrap()),
        ),
        (
            "rewards".to_string(),
            Value::Float32(Array::new([n], ks.iter().map(|&k| k as f32).collect()).unwrap()),
        ),
        (
            "terminals".to_string(),
            Value::Bool(Array::new([n], ks.iter().map(|&k| k % 5 == 4).collect()).unwrap()),
        ),
        ("next_states".to_string(), state(1)),
    ]))
}

/// The rewards of a batch of transitions (each record's number).
pub fn rewards(batch: &Value) -> Vec<f32> {
    match batch {
        Value::Dict(d) => match &d["rewards"] {
            Value::Float32(a) => a.data().to_vec(),
            other => panic!("rewards are {other:?}"),
        },
        other => panic!("not a Dict: {other:?}"),
    }
}

/// The flat leaf at `key` as f64s.
pub fn leaf_f64(batch: &Value, key: &str) -> Vec<f64> {
    let (_, leaf) = batch
        .flatten()
        .into_iter()
        .find(|(k, _)| k.trim_start_matches('/') == key)
        .unwrap_or_else(|| panic!("no {key}"));
    match leaf {
        Value::Float32(a) => a.data().iter().map(|&x| x as f64).collect(),
        Value::Int32(a) => a.data().iter().map(|&x| x as f64).collect(),
        Value::Bool(a) => a.data().iter().map(|&x| x as u8 as f64).collect(),
        other => panic!("{other:?}"),
    }
}

//! Hostile configs never panic: every config this project ships, and RLgraph's own, mutated
//! at a random place (a type swapped, 0, -1, 1e12, huge or tiny floats, a key removed, deep
//! nesting), is either refused with an error or builds an agent that acts. Runs on stable in
//! every CI run; the cargo-fuzz targets in `fuzz/` explore further.

use agents::build_agent;
use backend_candle::Candle;
use proptest::prelude::*;
use rlgraph_core::spaces::{FloatBox, IntBox, Space, Value};
use serde_json::{json, Value as Json};

/// Every JSON config under `configs/` (RLgraph's under `configs/rlgraph/` too).
fn configs() -> Vec<(String, Json)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
    let mut out = vec![];
    for dir in [root.clone(), root.join("rlgraph")] {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "json") {
                let text = std::fs::read_to_string(&path).unwrap();
                if let Ok(json) = serde_json::from_str(&text) {
                    out.push((path.display().to_string(), json));
                }
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Every place in `json` (objects' keys and arrays' items), as paths of segments.
fn places(json: &Json, at: &mut Vec<Json>, out: &mut Vec<Vec<Json>>) {
    out.push(at.clone());
    match json {
        Json::Object(m) => {
            for (k, v) in m {
                at.push(Json::String(k.clone()));
                places(v, at, out);
                at.pop();
            }
        }
        Json::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                at.push(json!(i));
                places(v, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

/// The replacements tried at a place; `None` removes it.
fn replacement(choice: usize, old: &Json) -> Option<Json> {
    let nested =
        |depth: usize, leaf: Json| (0..depth).fold(leaf, |v, i| if i % 2 == 0 { json!([v]) } else { json!({"a": v}) });
    Some(match choice {
        0 => json!(0),
        1 => json!(-1),
        2 => json!(1e12),
        3 => json!(1e308),
        4 => json!(-1e308),
        5 => json!(1e-300),
        6 => json!("NaN"),
        7 => json!("x"),
        8 => json!(true),
        9 => Json::Null,
        10 => json!([]),
        11 => json!({}),
        12 => json!([old.clone(), old.clone()]),
        13 => nested(100, old.clone()),
        14 => json!(u64::MAX),
        15 => json!(i64::MIN),
        16 => json!(0.5),
        _ => return None,
    })
}

fn mutate(json: &mut Json, path: &[Json], choice: usize) {
    let Some((last, parents)) = path.split_last() else {
        if let Some(new) = replacement(choice, json) {
            *json = new;
        }
        return;
    };
    let mut here = &mut *json;
    for seg in parents {
        here = match (here, seg) {
            (Json::Object(m), Json::String(k)) => m.get_mut(k).unwrap(),
            (Json::Array(a), Json::Number(i)) => &mut a[i.as_u64().unwrap() as usize],
            _ => unreachable!("paths come from places()"),
        };
    }
    match (here, last) {
        (Json::Object(m), Json::String(k)) => match replacement(choice, &m[k]) {
            Some(new) => {
                m.insert(k.clone(), new);
            }
            None => {
                m.remove(k);
            }
        },
        (Json::Array(a), Json::Number(i)) => {
            let i = i.as_u64().unwrap() as usize;
            match replacement(choice, &a[i]) {
                Some(new) => a[i] = new,
                None => {
                    a.remove(i);
                }
            }
        }
        _ => unreachable!("paths come from places()"),
    }
}

/// Builds the agent for CartPole's spaces (or Pendulum's for continuous configs) and, when it
/// builds, asks it for one action. Either may fail; neither may panic.
fn try_config(config: &Json) {
    let states = Space::from(FloatBox::new([4]));
    let discrete = Space::from(IntBox::new(2).unwrap());
    let continuous = Space::from(FloatBox::bounded([1], -2.0, 2.0).unwrap());
    for actions in [discrete, continuous] {
        if let Ok(mut agent) = build_agent::<Candle>(config, &states, &actions, 0) {
            let state = Value::Float32(rlgraph_core::spaces::Array::new([4], vec![0.01, -0.02, 0.03, 0.0]).unwrap());
            let _ = agent.get_actions(&[state], true, 0.5);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_configs_are_refused_or_build_never_panic(which in any::<prop::sample::Index>(), place in any::<prop::sample::Index>(), choice in 0usize..18, second in proptest::option::of((any::<prop::sample::Index>(), 0usize..18))) {
        let all = configs();
        prop_assume!(!all.is_empty());
        let (_, base) = &all[which.index(all.len())];
        let mut config = base.clone();
        let mut spots = vec![];
        places(&config, &mut vec![], &mut spots);
        mutate(&mut config, &spots[place.index(spots.len())], choice);
        // Sometimes a second mutation, at a place of the mutated config.
        if let Some((place, choice)) = second {
            let mut spots = vec![];
            places(&config, &mut vec![], &mut spots);
            mutate(&mut config, &spots[place.index(spots.len())], choice);
        }
        try_config(&config);
    }
}

#[test]
fn the_unmutated_configs_build() {
    // The mutator starts from configs that work, so a refusal above is the mutation's.
    let all = configs();
    assert!(all.len() >= 10, "{} configs found", all.len());
    let states = Space::from(FloatBox::new([4]));
    let discrete = Space::from(IntBox::new(2).unwrap());
    let continuous = Space::from(FloatBox::bounded([1], -2.0, 2.0).unwrap());
    let built = all
        .iter()
        .filter(|(_, c)| {
            build_agent::<Candle>(c, &states, &discrete, 0).is_ok()
                || build_agent::<Candle>(c, &states, &continuous, 0).is_ok()
        })
        .count();
    assert!(built * 2 >= all.len(), "only {built} of {} configs build", all.len());
}

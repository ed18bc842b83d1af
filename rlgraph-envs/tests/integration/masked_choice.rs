//! `MaskedChoice-v0`, the action-mask test environment: its masks, rewards, refusals and
//! episode length, against its documented rules.

use rlgraph_envs::make;
use rlgraph_spaces::Value;

/// The mask of a MaskedChoice observation.
fn mask(observation: &Value) -> Vec<bool> {
    let Value::Dict(d) = observation else {
        panic!("{observation:?}")
    };
    let Some(Value::Uint8(m)) = d.get("action_mask") else {
        panic!("{d:?}")
    };
    let Some(Value::Float32(o)) = d.get("observation") else {
        panic!("{d:?}")
    };
    // The observation shows the mask.
    assert_eq!(
        o.data().iter().map(|&x| x == 1.0).collect::<Vec<_>>(),
        m.data().iter().map(|&x| x == 1).collect::<Vec<_>>()
    );
    m.data().iter().map(|&x| x == 1).collect()
}

#[test]
fn valid_actions_earn_their_rank_and_invalid_ones_are_refused() {
    let mut env = make("MaskedChoice-v0", 5).unwrap();
    let mut state = env.reset(Some(5)).unwrap();
    assert!(env.state_space().contains(&state));
    let (mut valid_counts, mut steps, mut episodes) = ([0usize; 4], 0, 0);
    while episodes < 200 {
        let m = mask(&state);
        assert!(m.contains(&true), "a mask with no valid action");
        for (c, &v) in valid_counts.iter_mut().zip(&m) {
            *c += usize::from(v);
        }
        // An invalid action is refused and changes nothing: the valid step still follows.
        if let Some(bad) = m.iter().position(|&v| !v) {
            let err = env.step(&Value::i32(bad as i32)).unwrap_err().to_string();
            assert!(err.contains("action mask") && err.contains(&bad.to_string()), "{err}");
        }
        let best = m.iter().rposition(|&v| v).unwrap();
        let step = env.step(&Value::i32(best as i32)).unwrap();
        assert_eq!(step.reward, (best + 1) as f64 / 4.0);
        steps += 1;
        state = step.observation;
        if step.terminated {
            assert_eq!(steps % 8, 0, "episodes last 8 steps");
            episodes += 1;
            state = env.reset(None).unwrap();
        }
    }
    // Each action is valid in 8 of the 15 masks that allow something: 1,600 draws give
    // 853 +- 20 (one standard deviation); four either side.
    for c in valid_counts {
        assert!((773..=933).contains(&c), "{valid_counts:?}");
    }
    // The same seed draws the same masks.
    let first: Vec<Vec<bool>> = (0..2)
        .map(|_| mask(&make("MaskedChoice-v0", 9).unwrap().reset(Some(9)).unwrap()))
        .collect();
    assert_eq!(first[0], first[1]);
}

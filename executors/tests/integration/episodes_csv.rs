//! `episodes.csv` gives each episode the step it ended at. CartPole pays 1 per step, so an
//! episode's return is its length, and one copy's episodes, run back to back, end at the
//! running sum of their returns: the expected column needs no code under test.

use backend_candle::Candle;
use executors::{drive, DriveOptions, RunLength, SingleThreadedWorker};
use rlgraph_envs::{make, Stepping, VectorEnv};

/// The rows of `episodes.csv` left by a random agent's run of `steps` on `copies` CartPoles.
fn rows(copies: usize, steps: u64) -> Vec<(u64, u64, f64)> {
    let out = std::env::temp_dir().join(format!("rlgraph-episodes-csv-{}-{copies}", std::process::id()));
    let envs = (0..copies)
        .map(|i| make("CartPole-v1", 7 + i as u64).expect("env"))
        .collect();
    let envs = VectorEnv::new(envs, Stepping::Sequential).expect("copies");
    let config = serde_json::json!({"type": "random"});
    let agent = agents::build_agent::<Candle>(&config, envs.state_space(), envs.action_space(), 7).expect("agent");
    let mut worker = SingleThreadedWorker::new(agent, envs, 7);
    let length = RunLength {
        timesteps: steps,
        episodes: None,
        pause_at: None,
    };
    let options = DriveOptions {
        out: Some(out.clone()),
        ..DriveOptions::new(length)
    };
    drive(&mut worker, &options, &mut |_| {}).expect("runs");
    let csv = std::fs::read_to_string(out.join("episodes.csv")).expect("episodes.csv");
    let _ = std::fs::remove_dir_all(&out);
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("episode,timestep,return"));
    lines
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            (
                cells[0].parse().unwrap(),
                cells[1].parse().unwrap(),
                cells[2].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn one_copys_episodes_end_at_the_running_sum_of_their_lengths() {
    let rows = rows(1, 600);
    assert!(rows.len() > 10, "random CartPole episodes last some 20 steps: {rows:?}");
    let mut sum = 0.0;
    for (i, (episode, at, ret)) in rows.iter().enumerate() {
        sum += ret;
        assert_eq!((*episode, *at), (i as u64 + 1, sum as u64), "row {i}: {rows:?}");
    }
}

#[test]
fn copies_episodes_end_on_a_vector_step_after_their_own_length() {
    let rows = rows(3, 600);
    for w in rows.windows(2) {
        assert!(w[0].1 <= w[1].1, "in the order they ended: {w:?}");
    }
    for (episode, at, ret) in &rows {
        // Three steps per vector step; an episode of length L took at least L of them.
        assert!(
            at % 3 == 0 && *at as f64 >= 3.0 * ret && *at <= 600,
            "episode {episode}: {rows:?}"
        );
    }
}

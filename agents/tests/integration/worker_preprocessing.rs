//! Stateful preprocessing on the acting side: each environment copy has its own frame stack,
//! reset when its episode ends; the agent inside acts on and stores stacked states, and a
//! state observed as a next state is not pushed a second time. A spy agent records what it
//! receives; the expected stacks are written out by hand.

use std::path::Path;
use std::sync::{Arc, Mutex};

use agents::{Agent, PreprocessedAgent, Transition, UpdateSpec};
use backend_candle::Candle;
use rlgraph_core::spaces::{FloatBox, Space, Value};
use rlgraph_core::{ErasedExecutor, HostState, Result, SavedState};
use serde_json::json;

#[derive(Default)]
struct Seen {
    acted: Vec<Vec<Vec<f32>>>,
    observed: Vec<(usize, Vec<f32>, Vec<f32>)>,
    /// The host states a checkpoint would hold, by name.
    saved: Vec<(String, SavedState)>,
}

struct Spy(Arc<Mutex<Seen>>, UpdateSpec);

fn floats(v: &Value) -> Vec<f32> {
    match v {
        Value::Float32(a) => a.data().to_vec(),
        other => panic!("expected float32, got {}", other.kind_name()),
    }
}

impl Agent for Spy {
    fn get_actions(&mut self, states: &[Value], _: bool, _: f64) -> Result<Vec<Value>> {
        self.0.lock().unwrap().acted.push(states.iter().map(floats).collect());
        Ok(states.iter().map(|_| Value::i32(0)).collect())
    }
    fn observe(&mut self, env_id: usize, t: Transition) -> Result<()> {
        self.0
            .lock()
            .unwrap()
            .observed
            .push((env_id, floats(&t.state), floats(&t.next_state)));
        Ok(())
    }
    fn update(&mut self, _: f64) -> Result<Option<f64>> {
        Ok(None)
    }
    fn update_spec(&self) -> &UpdateSpec {
        &self.1
    }
    fn save_checkpoint_with(&self, _: &Path, extra: &[(&str, &dyn HostState)]) -> Result<()> {
        let saved = extra
            .iter()
            .map(|(n, s)| Ok((n.to_string(), s.save_state()?)))
            .collect::<Result<_>>()?;
        self.0.lock().unwrap().saved = saved;
        Ok(())
    }
    fn restore_checkpoint_with(&mut self, _: &Path, extra: &mut [(&str, &mut dyn HostState)]) -> Result<()> {
        let saved = self.0.lock().unwrap().saved.clone();
        for (name, target) in extra.iter_mut() {
            let (_, state) = saved.iter().find(|(n, _)| n == name).expect("saved under its name");
            target.check_state(state)?;
            target.load_state(state.clone())?;
        }
        Ok(())
    }
    fn graph(&self) -> Option<&dyn ErasedExecutor> {
        None
    }
    fn graph_mut(&mut self) -> Option<&mut dyn ErasedExecutor> {
        None
    }
}

fn x(v: f32) -> Value {
    Value::Float32(rlgraph_core::spaces::Array::new(vec![1], vec![v]).unwrap())
}

fn step(state: f32, next: f32, end: bool) -> Transition {
    Transition {
        state: x(state),
        action: Value::i32(0),
        reward: 0.0,
        terminated: end,
        truncated: false,
        next_state: x(next),
    }
}

#[test]
fn each_copy_stacks_its_own_frames_and_restarts_them_after_its_episode() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let spy = seen.clone();
    let raw = Space::from(FloatBox::new([1]));
    // RLgraph's sequence with batch_size 1 (one stream): here one stack per copy.
    let specs = vec![json!({"type": "sequence", "sequence_length": 2, "batch_size": 1, "add_rank": false})];
    let mut inner_space = None;
    let mut agent = PreprocessedAgent::<Candle>::new(specs, &raw, 0, |s| {
        inner_space = Some(s.clone());
        Ok(Box::new(Spy(spy, UpdateSpec::default())))
    })
    .unwrap();
    assert_eq!(
        inner_space.unwrap(),
        Space::from(FloatBox::new([2])),
        "two frames side by side"
    );

    agent.get_actions(&[x(1.0), x(5.0)], true, 0.0).unwrap();
    agent.observe(0, step(1.0, 2.0, false)).unwrap();
    agent.observe(1, step(5.0, 6.0, true)).unwrap();
    // Copy 1 starts a new episode at 7; copy 0 goes on from 2, already pushed.
    agent.get_actions(&[x(2.0), x(7.0)], true, 0.0).unwrap();
    agent.observe(0, step(2.0, 3.0, false)).unwrap();
    agent.observe(1, step(7.0, 8.0, false)).unwrap();
    agent.get_actions(&[x(3.0), x(8.0)], true, 0.0).unwrap();
    // Acting twice without observing (evaluation) pushes each new state.
    agent.get_actions(&[x(4.0), x(9.0)], false, 0.0).unwrap();

    let seen = seen.lock().unwrap();
    let acted: Vec<Vec<Vec<f32>>> = vec![
        vec![vec![1.0, 1.0], vec![5.0, 5.0]],
        vec![vec![1.0, 2.0], vec![7.0, 7.0]],
        vec![vec![2.0, 3.0], vec![7.0, 8.0]],
        vec![vec![3.0, 4.0], vec![8.0, 9.0]],
    ];
    assert_eq!(seen.acted, acted);
    let observed = vec![
        (0, vec![1.0, 1.0], vec![1.0, 2.0]),
        (1, vec![5.0, 5.0], vec![5.0, 6.0]),
        (0, vec![1.0, 2.0], vec![2.0, 3.0]),
        (1, vec![7.0, 7.0], vec![7.0, 8.0]),
    ];
    assert_eq!(seen.observed, observed);
}

#[test]
fn build_agent_runs_stateful_stacks_per_copy_and_plain_constructors_refuse_them() {
    let config = json!({
        "type": "dqn",
        "preprocessing_spec": [{"type": "sequence", "sequence_length": 4, "batch_size": 1, "add_rank": false}],
        "network_spec": [{"type": "dense", "units": 8}],
        "memory_spec": {"type": "replay", "capacity": 64},
        "update_spec": {"batch_size": 4, "steps_before_update": 4}
    });
    let raw = Space::from(FloatBox::new([3]));
    let actions = Space::from_json(&json!({"type": "int-box", "high": 2})).unwrap();
    let mut agent = agents::build_agent::<Candle>(&config, &raw, &actions, 0).unwrap();
    let s = Value::Float32(rlgraph_core::spaces::Array::new(vec![3], vec![0.1, 0.2, 0.3]).unwrap());
    for t in 0..8 {
        let a = agent.get_actions(std::slice::from_ref(&s), true, 0.0).unwrap();
        agent
            .observe(
                0,
                Transition {
                    state: s.clone(),
                    action: a[0].clone(),
                    reward: 1.0,
                    terminated: t % 3 == 2,
                    truncated: false,
                    next_state: s.clone(),
                },
            )
            .unwrap();
    }
    assert!(
        agent.update(0.5).unwrap().is_some_and(f64::is_finite),
        "learns from stacked states"
    );
    let err = agents::DqnAgent::<Candle>::new(agents::DqnConfig::parse(&config).unwrap(), &raw, &actions, 0)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("preprocessing_spec[0]") && err.contains("build_agent"),
        "{err}"
    );
}

#[test]
fn a_checkpoint_carries_every_copys_frame_stack() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let raw = Space::from(FloatBox::new([1]));
    let specs = vec![json!({"type": "sequence", "sequence_length": 3, "add_rank": false})];
    let spy = |seen: &Arc<Mutex<Seen>>| {
        let seen = seen.clone();
        move |_: &Space| -> Result<Box<dyn Agent + Send>> { Ok(Box::new(Spy(seen, UpdateSpec::default()))) }
    };
    let mut first = PreprocessedAgent::<Candle>::new(specs.clone(), &raw, 0, spy(&seen)).unwrap();
    first.get_actions(&[x(1.0), x(5.0)], true, 0.0).unwrap();
    first.observe(0, step(1.0, 2.0, false)).unwrap();
    first.observe(1, step(5.0, 6.0, false)).unwrap();
    first.save_checkpoint(Path::new("unused")).unwrap();
    // A fresh agent restored from it goes on where the first stopped: copy 0's stack holds
    // [1, 1, 2] and 2 is already pushed; copy 1's holds [5, 5, 6].
    let mut second = PreprocessedAgent::<Candle>::new(specs, &raw, 0, spy(&seen)).unwrap();
    second.restore_checkpoint(Path::new("unused")).unwrap();
    seen.lock().unwrap().acted.clear();
    second.get_actions(&[x(2.0), x(6.0)], true, 0.0).unwrap();
    second.observe(0, step(2.0, 3.0, false)).unwrap();
    second.get_actions(&[x(3.0), x(7.0)], true, 0.0).unwrap();
    let acted: Vec<Vec<Vec<f32>>> = vec![
        vec![vec![1.0, 1.0, 2.0], vec![5.0, 5.0, 6.0]],
        vec![vec![1.0, 2.0, 3.0], vec![5.0, 6.0, 7.0]],
    ];
    assert_eq!(seen.lock().unwrap().acted, acted);

    // A stack section that does not fit the stacks (a frame buffer of another shape) is
    // refused by name before anything is restored.
    {
        let mut seen = seen.lock().unwrap();
        let (_, state) = seen
            .saved
            .iter_mut()
            .find(|(n, _)| n == "worker_preprocessing")
            .unwrap();
        let (_, frames) = state.tensors.iter_mut().find(|(k, _)| k.starts_with("0/var/")).unwrap();
        frames.shape.push(1);
    }
    let err = second.restore_checkpoint(Path::new("unused")).unwrap_err().to_string();
    assert!(err.contains("worker_preprocessing") && err.contains("0/var/"), "{err}");
}

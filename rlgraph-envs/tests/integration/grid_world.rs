//! GridWorld against RLgraph's semantics: state numbering, rewards, walls, jumps, and the
//! state representations.

use rlgraph_envs::{make, ActionType, Env, GridWorld, StateRepresentation};
use rlgraph_spaces::Value;

fn discrete(v: &Value) -> i32 {
    match v {
        Value::Int32(a) => a.data()[0],
        other => panic!("{other:?}"),
    }
}

const UP: i32 = 0;
const RIGHT: i32 = 1;
const DOWN: i32 = 2;
const LEFT: i32 = 3;

#[test]
fn two_by_two_from_rlgraphs_tests() {
    let mut env = make("GridWorld-2x2", 0).unwrap();
    assert_eq!(discrete(&env.reset(None).unwrap()), 0);
    let step = env.step(&Value::i32(DOWN)).unwrap();
    assert_eq!(
        (discrete(&step.observation), step.reward, step.terminated),
        (1, -0.1, false)
    );
    let step = env.step(&Value::i32(RIGHT)).unwrap();
    assert_eq!(
        (discrete(&step.observation), step.reward, step.terminated),
        (3, 1.0, true)
    );
    env.reset(None).unwrap();
    let step = env.step(&Value::i32(RIGHT)).unwrap();
    assert_eq!(
        (discrete(&step.observation), step.reward, step.terminated),
        (2, -5.0, true)
    );
    // Walking into the border keeps the state, at the step cost.
    env.reset(None).unwrap();
    for a in [UP, LEFT] {
        let step = env.step(&Value::i32(a)).unwrap();
        assert_eq!(
            (discrete(&step.observation), step.reward, step.terminated),
            (0, -0.1, false)
        );
    }
}

#[test]
fn walls_block_and_fire_burns() {
    // "S W" / " FG": the wall at x=2,y=0; fire at x=1,y=1.
    let mut env = GridWorld::from_rows("t", &["S W", " FG"], ActionType::Udlr, StateRepresentation::Xy).unwrap();
    env.reset(None).unwrap();
    let xy = |v: &Value| match v {
        Value::Int32(a) => a.data().to_vec(),
        other => panic!("{other:?}"),
    };
    assert_eq!(xy(&env.step(&Value::i32(RIGHT)).unwrap().observation), vec![1, 0]);
    let blocked = env.step(&Value::i32(RIGHT)).unwrap();
    assert_eq!((xy(&blocked.observation), blocked.reward), (vec![1, 0], -0.1));
    let fire = env.step(&Value::i32(DOWN)).unwrap();
    assert_eq!(
        (xy(&fire.observation), fire.reward, fire.terminated),
        (vec![1, 1], -3.0, false)
    );
    let goal = env.step(&Value::i32(RIGHT)).unwrap();
    assert_eq!((goal.reward, goal.terminated), (1.0, true));
}

#[test]
fn discrete_numbering_runs_down_each_column() {
    // 4x4: field (x, y) is x * 4 + y. The goal at the bottom right is 15, the hole at
    // x=1, y=1 is 5.
    let mut env = make("GridWorld-4x4", 0).unwrap();
    env.reset(None).unwrap();
    env.set_state(&[1.0, 0.0]).unwrap();
    let step = env.step(&Value::i32(DOWN)).unwrap();
    assert_eq!(
        (discrete(&step.observation), step.reward, step.terminated),
        (5, -5.0, true)
    );
    // Field 11 is x=2, y=3 (bottom row, free): down is the border, right is the goal.
    env.set_state(&[11.0]).unwrap();
    let step = env.step(&Value::i32(DOWN)).unwrap();
    assert_eq!(
        (discrete(&step.observation), step.reward, step.terminated),
        (11, -0.1, false)
    );
    let step = env.step(&Value::i32(RIGHT)).unwrap();
    assert_eq!(
        (discrete(&step.observation), step.reward, step.terminated),
        (15, 1.0, true)
    );
    // Field 14 (x=3, y=2) is a hole.
    env.set_state(&[14.0]).unwrap();
    let step = env.step(&Value::i32(LEFT)).unwrap();
    assert_eq!(
        (discrete(&step.observation), step.reward, step.terminated),
        (14, -5.0, true),
        "a hole holds the agent"
    );
    assert!(env.set_state(&[16.0]).is_err());
    assert!(env.set_state(&[0.5]).is_err());
}

#[test]
fn forward_turn_jump_actions() {
    // Facing up at the start of the 2x2 world. Turn right (2) and move forward (2): right,
    // into the hole.
    let mut env = make("GridWorld-2x2-ftj-xy+orientation", 0).unwrap();
    env.reset(None).unwrap();
    let action = |forward: i32, turn: i32, jump: i32| {
        Value::Dict(
            [("forward", forward), ("turn", turn), ("jump", jump)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), Value::i32(v)))
                .collect(),
        )
    };
    let step = env.step(&action(2, 2, 0)).unwrap();
    let obs = match &step.observation {
        Value::Int32(a) => a.data().to_vec(),
        other => panic!("{other:?}"),
    };
    assert_eq!(obs, vec![1, 0, 1, 0], "at x=1, y=0 facing right");
    assert_eq!((step.reward, step.terminated), (-5.0, true));
    // Turn right to face down... by jumping from the start over the field below the start
    // in a taller world: "S" / " " / "G" facing down (two right turns) lands on the goal.
    let mut tall =
        GridWorld::from_rows("tall", &["S", "H", "G"], ActionType::Ftj, StateRepresentation::Discrete).unwrap();
    tall.reset(None).unwrap();
    tall.step(&action(1, 2, 0)).unwrap();
    let step = tall.step(&action(1, 2, 1)).unwrap();
    assert_eq!(
        (discrete(&step.observation), step.reward, step.terminated),
        (2, 1.0, true)
    );
    // The bundled form: 17 = turn 2, forward 2, jump 1.
    let mut bundled = make("GridWorld-4x4-ftjb", 0).unwrap();
    bundled.reset(None).unwrap();
    assert!(bundled.step(&Value::i32(17)).is_ok());
    assert!(bundled.step(&Value::i32(18)).is_err());
}

#[test]
fn camera_marks_fields_and_the_agent() {
    let mut env = make("GridWorld-2x2-camera", 0).unwrap();
    let obs = env.reset(None).unwrap();
    assert!(env.state_space().contains(&obs));
    let Value::Uint8(a) = obs else { panic!() };
    assert_eq!(a.shape(), &[2, 2, 3]);
    // Row 0: S (agent: channel 2), H (channel 0 = 255); row 1: space, G (channel 1 = 255).
    assert_eq!(a.data(), &[0, 0, 255, 255, 0, 0, 0, 0, 0, 0, 255, 0]);
}

#[test]
fn every_map_builds_and_unknown_ones_are_named() {
    for (map, _) in rlgraph_envs::MAPS {
        let mut env = make(&format!("GridWorld-{map}"), 0).unwrap();
        let obs = env.reset(None).unwrap();
        assert!(env.state_space().contains(&obs), "{map}");
    }
    let err = make("GridWorld-3x3", 0).err().unwrap().to_string();
    assert!(err.contains("3x3") && err.contains("4x4"), "{err}");
}

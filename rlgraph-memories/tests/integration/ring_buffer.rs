//! The ring buffer's episode tracking.

use crate::common;

use std::collections::BTreeMap;

use common::{leaf_f64, rewards, transition_space, transitions};
use rlgraph_core::spaces::{Array, BoolBox, FloatBox, Space, Value};
use rlgraph_core::HostState;
use rlgraph_memories::{MemoryError, RingBuffer};

fn space() -> Space {
    Space::dict([
        ("states", Space::from(FloatBox::new([1]))),
        ("terminals", Space::from(BoolBox::new(Vec::<usize>::new()))),
    ])
    .unwrap()
}

fn step(x: f32, terminal: bool) -> Value {
    Value::Dict(BTreeMap::from([
        (
            "states".to_string(),
            Value::Float32(Array::new([1, 1], vec![x]).unwrap()),
        ),
        (
            "terminals".to_string(),
            Value::Bool(Array::new([1], vec![terminal]).unwrap()),
        ),
    ]))
}

#[test]
fn two_steps_and_a_terminal_make_one_episode() {
    let mut buffer = RingBuffer::new("ring-buffer", &space(), 10).unwrap();
    buffer.insert_records(&step(0.0, false)).unwrap();
    buffer.insert_records(&step(1.0, false)).unwrap();
    assert_eq!(buffer.num_episodes(), 0);
    buffer.insert_records(&step(2.0, true)).unwrap();
    assert_eq!(buffer.num_episodes(), 1);
    assert_eq!(buffer.episode_indices(), vec![2]);
    let episodes = buffer.get_episodes(2);
    assert_eq!(leaf_f64(&episodes, "terminals"), vec![0.0, 0.0, 1.0]);
    assert_eq!(leaf_f64(&episodes, "states"), vec![0.0, 1.0, 2.0]);
}

#[test]
fn an_unfinished_episode_is_not_returned() {
    let mut buffer = RingBuffer::new("ring-buffer", &transition_space(), 20).unwrap();
    // Records 0..12: episodes end at 4 and 9; 10 and 11 are unfinished.
    buffer.insert_records(&transitions(0, 12)).unwrap();
    assert_eq!(buffer.num_episodes(), 2);
    assert_eq!(rewards(&buffer.get_episodes(1)), vec![5.0, 6.0, 7.0, 8.0, 9.0]);
    assert_eq!(
        rewards(&buffer.get_episodes(5)),
        (0..10).map(|k| k as f32).collect::<Vec<_>>()
    );
    assert_eq!(rewards(&buffer.get_records(3).unwrap()), vec![9.0, 10.0, 11.0]);
}

#[test]
fn overwritten_episodes_are_dropped_and_survivors_read_across_the_wrap() {
    let mut buffer = RingBuffer::new("ring-buffer", &transition_space(), 8).unwrap();
    // Records 0..13 into 8 slots: 5..13 are held. Episode 0..=4 lost its records; episode
    // 5..=9 is whole (slots 5, 6, 7, 0, 1); 10..12 is unfinished.
    buffer.insert_records(&transitions(0, 13)).unwrap();
    assert_eq!(buffer.num_episodes(), 1);
    assert_eq!(buffer.episode_indices(), vec![1]);
    assert_eq!(rewards(&buffer.get_episodes(3)), vec![5.0, 6.0, 7.0, 8.0, 9.0]);
    // Two more records overwrite record 5: that episode is no longer whole.
    buffer.insert_records(&transitions(13, 2)).unwrap();
    assert_eq!(buffer.num_episodes(), 1, "episode 10..=14 ended");
    assert_eq!(rewards(&buffer.get_episodes(3)), vec![10.0, 11.0, 12.0, 13.0, 14.0]);
}

#[test]
fn an_episode_longer_than_the_buffer_never_counts() {
    let mut buffer = RingBuffer::new("ring-buffer", &space(), 3).unwrap();
    for i in 0..5 {
        buffer.insert_records(&step(i as f32, i == 4)).unwrap();
    }
    assert_eq!(buffer.num_episodes(), 0);
    buffer.insert_records(&step(5.0, true)).unwrap();
    assert_eq!(buffer.num_episodes(), 1);
    assert_eq!(leaf_f64(&buffer.get_episodes(1), "states"), vec![5.0]);
}

#[test]
fn bad_spaces_and_records_are_refused() {
    let no_terminals = Space::dict([("states", Space::from(FloatBox::new([1])))]).unwrap();
    let err = RingBuffer::new("ring-buffer", &no_terminals, 4)
        .unwrap_err()
        .to_string();
    assert!(err.contains("terminals"), "{err}");
    let mut buffer = RingBuffer::new("ring-buffer", &space(), 4).unwrap();
    buffer.insert_records(&step(1.0, true)).unwrap();
    let err = buffer.insert_records(&Value::f32(1.0)).unwrap_err();
    assert!(matches!(err, MemoryError::RecordMismatch { .. }));
    assert_eq!((buffer.size(), buffer.num_episodes()), (1, 1));
    assert!(matches!(
        buffer.get_records(2),
        Err(MemoryError::NotEnoughRecords { .. })
    ));
}

#[test]
fn state_round_trips_episodes() {
    let mut buffer = RingBuffer::new("ring-buffer", &transition_space(), 8).unwrap();
    buffer.insert_records(&transitions(0, 13)).unwrap();
    let mut copy = RingBuffer::new("ring-buffer", &transition_space(), 8).unwrap();
    copy.load_state(buffer.save_state().unwrap()).unwrap();
    assert_eq!(copy.episode_indices(), buffer.episode_indices());
    buffer.insert_records(&transitions(13, 2)).unwrap();
    copy.insert_records(&transitions(13, 2)).unwrap();
    assert_eq!(copy.get_episodes(2), buffer.get_episodes(2));
}

//! Uniform replay: ring arithmetic, sampled content, bad inputs and state round trips.

use crate::common;

use common::{leaf_f64, rewards, transition_space, transitions};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_core::HostState;
use rlgraph_memories::{MemoryError, ReplayMemory};

#[test]
fn capacity_plus_one_inserts_wrap_the_index_to_one() {
    let capacity = 10;
    let mut memory = ReplayMemory::new("replay", &transition_space(), capacity).unwrap();
    for k in 0..capacity + 1 {
        memory.insert_records(&transitions(k, 1)).unwrap();
    }
    assert_eq!(memory.size(), capacity);
    assert_eq!(memory.index(), 1);
    // Slot 0 now holds record 10, which overwrote record 0; slot 1 still holds record 1.
    assert_eq!(rewards(&memory.records_at(&[0, 1]).unwrap()), vec![10.0, 1.0]);
}

#[test]
fn batch_inserts_wrap_like_single_inserts() {
    let mut memory = ReplayMemory::new("replay", &transition_space(), 7).unwrap();
    memory.insert_records(&transitions(0, 5)).unwrap();
    memory.insert_records(&transitions(5, 5)).unwrap();
    assert_eq!((memory.size(), memory.index()), (7, 3));
    // Record k sits in slot k % 7; the newest 7 are records 3..10.
    let all = rewards(&memory.records_at(&[0, 1, 2, 3, 4, 5, 6]).unwrap());
    assert_eq!(all, vec![7.0, 8.0, 9.0, 3.0, 4.0, 5.0, 6.0]);
    // A batch larger than the capacity keeps only its last `capacity` records.
    memory.insert_records(&transitions(100, 16)).unwrap();
    let mut kept = rewards(&memory.records_at(&[0, 1, 2, 3, 4, 5, 6]).unwrap());
    kept.sort_by(f32::total_cmp);
    assert_eq!(kept, (109..116).map(|k| k as f32).collect::<Vec<_>>());
}

#[test]
fn get_records_returns_n_whole_records_with_next_states() {
    let mut memory = ReplayMemory::new("replay", &transition_space(), 50).unwrap();
    memory.insert_records(&transitions(0, 30)).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let batch = memory.get_records(16, &mut rng).unwrap();
    transition_space().with_batch_rank(true).check(&batch).unwrap();
    let ks = rewards(&batch);
    assert_eq!(ks.len(), 16);
    // Every field of a sampled record belongs to the same inserted transition.
    let next_pos = leaf_f64(&batch, "next_states/pos");
    let next_id = leaf_f64(&batch, "next_states/id");
    let actions = leaf_f64(&batch, "actions");
    for (i, &k) in ks.iter().enumerate() {
        let k = k as f64;
        assert!((0.0..30.0).contains(&k));
        assert_eq!(next_pos[2 * i], k + 1.0);
        assert_eq!(next_pos[2 * i + 1], -(k + 1.0));
        assert_eq!(next_id[i], (k + 1.0) % 100.0);
        assert_eq!(actions[i], k % 2.0);
    }
}

#[test]
fn the_same_seed_draws_the_same_records() {
    let mut memory = ReplayMemory::new("replay", &transition_space(), 50).unwrap();
    memory.insert_records(&transitions(0, 40)).unwrap();
    let a = memory.get_records(8, &mut ChaCha8Rng::seed_from_u64(9)).unwrap();
    let b = memory.get_records(8, &mut ChaCha8Rng::seed_from_u64(9)).unwrap();
    assert_eq!(a, b);
}

#[test]
fn uniform_sampling_is_uniform() {
    // 8 records, 16,000 draws: each count should be near 2,000. Chi-square with 7 degrees
    // of freedom; the critical value at significance 0.001 is 24.32.
    let mut memory = ReplayMemory::new("replay", &transition_space(), 8).unwrap();
    memory.insert_records(&transitions(0, 8)).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut counts = [0f64; 8];
    for _ in 0..2_000 {
        for i in memory.sample_indices(8, &mut rng).unwrap() {
            counts[i] += 1.0;
        }
    }
    let chi2: f64 = counts.iter().map(|c| (c - 2000.0).powi(2) / 2000.0).sum();
    assert!(chi2 < 24.32, "chi-square {chi2} for {counts:?}");
}

#[test]
fn a_record_that_does_not_fit_is_refused_and_nothing_is_lost() {
    let mut memory = ReplayMemory::new("replay", &transition_space(), 10).unwrap();
    memory.insert_records(&transitions(0, 4)).unwrap();
    let before = memory.records_at(&[0, 1, 2, 3]).unwrap();
    // An action of 7 is outside IntBox(2).
    let bad = transitions(4, 3).map(|key, leaf| {
        if key.ends_with("actions") {
            rlgraph_core::spaces::Value::Int32(rlgraph_core::spaces::Array::new([3], vec![0, 7, 1]).unwrap())
        } else {
            leaf.clone()
        }
    });
    let err = memory.insert_records(&bad).unwrap_err().to_string();
    assert!(
        err.contains("replay") && err.contains("actions") && err.contains('7'),
        "{err}"
    );
    // The wrong structure: a bare float instead of the Dict.
    let err = memory
        .insert_records(&rlgraph_core::spaces::Value::f32(1.0))
        .unwrap_err();
    assert!(matches!(err, MemoryError::RecordMismatch { .. }), "{err}");
    assert_eq!((memory.size(), memory.index()), (4, 4));
    assert_eq!(memory.records_at(&[0, 1, 2, 3]).unwrap(), before);
}

#[test]
fn asking_for_more_than_is_held_or_for_a_missing_index_is_an_error() {
    let mut memory = ReplayMemory::new("replay", &transition_space(), 10).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    assert!(matches!(
        memory.get_records(1, &mut rng),
        Err(MemoryError::NotEnoughRecords {
            requested: 1,
            available: 0,
            ..
        })
    ));
    memory.insert_records(&transitions(0, 3)).unwrap();
    let err = memory.get_records(4, &mut rng).unwrap_err().to_string();
    assert!(err.contains("asked for 4") && err.contains("holds 3"), "{err}");
    assert!(matches!(
        memory.records_at(&[0, 3]),
        Err(MemoryError::IndexOutOfRange { index: 3, size: 3, .. })
    ));
}

#[test]
fn state_round_trips_and_a_bad_state_changes_nothing() {
    let mut memory = ReplayMemory::new("replay", &transition_space(), 6).unwrap();
    memory.insert_records(&transitions(0, 9)).unwrap();
    let saved = memory.save_state().unwrap();
    let mut copy = ReplayMemory::new("replay", &transition_space(), 6).unwrap();
    copy.check_state(&saved).unwrap();
    copy.load_state(saved.clone()).unwrap();
    assert_eq!((copy.size(), copy.index()), (6, 3));
    let slots = [0, 1, 2, 3, 4, 5];
    assert_eq!(copy.records_at(&slots).unwrap(), memory.records_at(&slots).unwrap());
    // Inserting after the restore continues the ring where it was.
    copy.insert_records(&transitions(9, 1)).unwrap();
    memory.insert_records(&transitions(9, 1)).unwrap();
    assert_eq!(copy.records_at(&slots).unwrap(), memory.records_at(&slots).unwrap());

    let mut broken = saved.clone();
    broken.tensors.remove("records/rewards");
    let err = copy.load_state(broken).unwrap_err().to_string();
    assert!(err.contains("records/rewards"), "{err}");
    let mut wrong_capacity = ReplayMemory::new("replay", &transition_space(), 7).unwrap();
    assert!(wrong_capacity.check_state(&saved).is_err());
    assert!(wrong_capacity.load_state(saved).is_err());
    assert_eq!(wrong_capacity.size(), 0);
    assert_eq!(copy.size(), 6);
}

#[test]
fn a_full_memory_draws_batches_larger_than_itself_with_replacement() {
    // RLgraph samples indices uniformly with replacement: 8 draws from a full memory of 4.
    let mut m = ReplayMemory::new("replay", &transition_space(), 4).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    m.insert_records(&transitions(0, 3)).unwrap();
    // Not full: 4 records are more than the 3 it holds.
    assert!(matches!(
        m.get_records(4, &mut rng),
        Err(MemoryError::NotEnoughRecords {
            requested: 4,
            available: 3,
            ..
        })
    ));
    m.insert_records(&transitions(3, 1)).unwrap();
    let indices = m.sample_indices(8, &mut rng).unwrap();
    assert_eq!(indices.len(), 8);
    assert!(indices.iter().all(|i| *i < 4), "{indices:?}");
}

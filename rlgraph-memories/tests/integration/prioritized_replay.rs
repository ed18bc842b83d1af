//! Prioritized replay: segment trees against brute force, the proportional sampler against
//! a chi-square test, importance weights against the formula, and bad inputs.

use crate::common;

use common::{rewards, transition_space, transitions};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_core::HostState;
use rlgraph_memories::{MemoryError, PrioritizedReplay, Reduce, SegmentTree};

fn memory(capacity: usize, alpha: f64, beta: f64) -> PrioritizedReplay {
    PrioritizedReplay::new("prioritized-replay", &transition_space(), capacity, alpha, beta).unwrap()
}

#[test]
fn trees_are_sized_to_the_next_power_of_two() {
    let m = memory(5, 1.0, 0.0);
    assert_eq!(m.sum_tree().capacity(), 8);
    assert_eq!(m.min_tree().capacity(), 8);
    assert_eq!(SegmentTree::new(8, Reduce::Sum).capacity(), 8);
    assert_eq!(SegmentTree::new(1_000_000, Reduce::Sum).capacity(), 1 << 20);
}

#[test]
fn new_records_get_the_maximum_priority_in_both_trees() {
    let mut m = memory(8, 0.5, 0.0);
    m.insert_records(&transitions(0, 3)).unwrap();
    // Nothing updated yet: max priority 1, and 1^0.5 = 1.
    for i in 0..3 {
        assert_eq!(m.tree_priority(i), (1.0, 1.0));
    }
    m.update_records(&[0, 1], &[4.0, 0.25]).unwrap();
    assert_eq!(m.tree_priority(0), (2.0, 2.0));
    assert_eq!(m.tree_priority(1), (0.5, 0.5));
    assert_eq!(m.max_priority(), 4.0);
    m.insert_records(&transitions(3, 1)).unwrap();
    assert_eq!(m.tree_priority(3), (2.0, 2.0));
    // Sum 2 + 0.5 + 1 + 2, min 0.5.
    assert_eq!(m.sum_tree().root(), 5.5);
    assert_eq!(m.min_tree().root(), 0.5);
}

#[test]
fn records_inserted_with_their_own_priorities_enter_the_trees_at_them() {
    // Alpha 0.5: the trees hold sqrt(p). Capacity 4 and 5 records: the first is overwritten
    // by the fifth, which lands in slot 0.
    let mut m = memory(4, 0.5, 0.0);
    m.insert_records_with(&transitions(0, 2), &[4.0, 9.0]).unwrap();
    assert_eq!((m.tree_priority(0), m.tree_priority(1)), ((2.0, 2.0), (3.0, 3.0)));
    assert_eq!(m.max_priority(), 9.0);
    m.insert_records_with(&transitions(2, 3), &[0.25, 1.0, 16.0]).unwrap();
    assert_eq!(m.tree_priority(0), (4.0, 4.0));
    assert_eq!(m.tree_priority(2), (0.5, 0.5));
    assert_eq!(m.sum_tree().root(), 4.0 + 3.0 + 0.5 + 1.0);
    assert_eq!(m.max_priority(), 16.0);
    // A count that does not match, or a negative or NaN priority, stores nothing.
    let before = (m.size(), m.index(), m.sum_tree().root());
    for bad in [vec![1.0], vec![1.0, -1.0], vec![f64::NAN, 1.0]] {
        let err = m.insert_records_with(&transitions(5, 2), &bad).unwrap_err().to_string();
        assert!(err.contains("insert_records_with"), "{err}");
        assert_eq!((m.size(), m.index(), m.sum_tree().root()), before);
    }
}

proptest! {
    #[test]
    fn trees_match_brute_force_after_any_updates(
        updates in prop::collection::vec((0usize..13, 0.0f64..10.0), 1..60),
        start in 0usize..13,
        len in 0usize..14,
    ) {
        let mut sum = SegmentTree::new(13, Reduce::Sum);
        let mut min = SegmentTree::new(13, Reduce::Min);
        let mut plain = vec![None::<f64>; 13];
        for (i, v) in updates {
            sum.set(i, v);
            min.set(i, v);
            plain[i] = Some(v);
        }
        let end = (start + len).min(13);
        let values: Vec<f64> = plain[start..end].iter().flatten().copied().collect();
        let brute_sum: f64 = values.iter().sum();
        let brute_min = values.iter().copied().fold(f64::INFINITY, f64::min);
        prop_assert!((sum.reduce(start, end) - brute_sum).abs() < 1e-9);
        prop_assert_eq!(min.reduce(start, end), brute_min);
        let all: Vec<f64> = plain.iter().flatten().copied().collect();
        prop_assert!((sum.root() - all.iter().sum::<f64>()).abs() < 1e-9);
        prop_assert_eq!(min.root(), all.iter().copied().fold(f64::INFINITY, f64::min));
    }

    #[test]
    fn a_batch_update_matches_the_brute_force_sum_and_min_and_the_same_updates_one_by_one(
        capacity in 1usize..5000,
        batches in prop::collection::vec(prop::collection::vec((any::<prop::sample::Index>(), 0.0f64..10.0), 0..300), 1..4),
    ) {
        // Batches with repeats, in any order, over trees of one to four levels and more;
        // sizes straddle the point where a level is recomputed whole.
        let mut batch = (SegmentTree::new(capacity, Reduce::Sum), SegmentTree::new(capacity, Reduce::Min));
        let mut single = batch.clone();
        let mut plain = vec![None::<f64>; capacity];
        for updates in batches {
            let indices: Vec<usize> = updates.iter().map(|(i, _)| i.index(capacity)).collect();
            let values: Vec<f64> = updates.iter().map(|(_, v)| *v).collect();
            batch.0.set_many(&indices, &values);
            batch.1.set_many(&indices, &values);
            for (&i, &v) in indices.iter().zip(&values) {
                single.0.set(i, v);
                single.1.set(i, v);
                plain[i] = Some(v);
            }
        }
        // Every node, not only the root: interior values are a function of the leaves.
        prop_assert!(batch == single);
        let all: Vec<f64> = plain.iter().flatten().copied().collect();
        prop_assert!((batch.0.root() - all.iter().sum::<f64>()).abs() < 1e-9);
        prop_assert_eq!(batch.1.root(), all.iter().copied().fold(f64::INFINITY, f64::min));
    }

    #[test]
    fn prefix_sum_search_matches_a_linear_scan(
        priorities in prop::collection::vec(0.0f64..5.0, 1..40),
        fraction in 0.0f64..1.0,
    ) {
        let mut tree = SegmentTree::new(priorities.len(), Reduce::Sum);
        for (i, &p) in priorities.iter().enumerate() {
            tree.set(i, p);
        }
        let total: f64 = priorities.iter().sum();
        prop_assume!(total > 0.0);
        let prefix = fraction * tree.root();
        // The first index whose running sum exceeds the prefix.
        let mut running = 0.0;
        let mut expected = priorities.len() - 1;
        for (i, &p) in priorities.iter().enumerate() {
            running += p;
            if running > prefix {
                expected = i;
                break;
            }
        }
        let got = tree.find_prefix_sum(prefix);
        prop_assert_eq!(tree.find_prefix_sums(&[prefix, prefix]), vec![got, got]);
        // Summation order can differ at an exact boundary; then both neighbours are right.
        let boundary = (running - prefix).abs() < 1e-9;
        prop_assert!(got == expected || boundary, "got {} expected {}", got, expected);
        prop_assert!(priorities[got] > 0.0);
    }
}

#[test]
fn sampling_frequencies_follow_priority_to_the_alpha() {
    // Priorities 1..=8 with alpha 0.7: P(i) = i^0.7 / sum_k k^0.7. 40,000 draws; chi-square
    // with 7 degrees of freedom, critical value 24.32 at significance 0.001.
    let alpha = 0.7;
    let mut m = memory(8, alpha, 0.0);
    m.insert_records(&transitions(0, 8)).unwrap();
    let priorities: Vec<f64> = (1..=8).map(|i| i as f64).collect();
    m.update_records(&(0..8).collect::<Vec<_>>(), &priorities).unwrap();
    let weights: Vec<f64> = priorities.iter().map(|p| p.powf(alpha)).collect();
    let total: f64 = weights.iter().sum();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut counts = [0f64; 8];
    let draws = 40_000;
    for _ in 0..draws / 8 {
        for i in m.get_records(8, &mut rng).unwrap().indices {
            counts[i] += 1.0;
        }
    }
    let chi2: f64 = counts
        .iter()
        .zip(&weights)
        .map(|(c, w)| {
            let expected = draws as f64 * w / total;
            (c - expected).powi(2) / expected
        })
        .sum();
    assert!(chi2 < 24.32, "chi-square {chi2} for {counts:?}");
}

#[test]
fn sampled_records_are_the_ones_at_their_indices() {
    let mut m = memory(16, 1.0, 0.0);
    m.insert_records(&transitions(0, 16)).unwrap();
    let sample = m.get_records(10, &mut ChaCha8Rng::seed_from_u64(1)).unwrap();
    let ks = rewards(&sample.records);
    for (k, i) in ks.iter().zip(&sample.indices) {
        assert_eq!(*k as usize, *i);
    }
}

#[test]
fn importance_weights_match_the_formula() {
    // Hand calculation: priorities 1, 2, 4, 8 with alpha 1 and beta 0.5, N = 4, total 15.
    // w_i = (N p_i / total)^-beta / (N p_min / total)^-beta = (p_i / p_min)^-0.5.
    let mut m = memory(4, 1.0, 0.5);
    m.insert_records(&transitions(0, 4)).unwrap();
    m.update_records(&[0, 1, 2, 3], &[1.0, 2.0, 4.0, 8.0]).unwrap();
    let w = m.weights(&[0, 1, 2, 3]);
    let expected = [1.0, 2f64.powf(-0.5), 0.5, 8f64.powf(-0.5)];
    for (a, b) in w.iter().zip(expected) {
        assert!((a - b).abs() < 1e-12, "{w:?}");
    }
    // Beta 0 gives weights of 1.
    m.set_beta(0.0);
    assert_eq!(m.weights(&[0, 3]), vec![1.0, 1.0]);
}

#[test]
fn bad_updates_change_nothing() {
    let mut m = memory(8, 1.0, 0.0);
    m.insert_records(&transitions(0, 4)).unwrap();
    m.update_records(&[0, 1, 2, 3], &[1.0, 2.0, 3.0, 4.0]).unwrap();
    let before = (m.sum_tree().clone(), m.min_tree().clone(), m.max_priority());
    for (indices, priorities) in [
        (vec![0, 1], vec![5.0, -1.0]),
        (vec![0, 1], vec![5.0, f64::NAN]),
        (vec![0, 1], vec![f64::INFINITY, 1.0]),
        (vec![0, 4], vec![5.0, 1.0]),
        (vec![0], vec![5.0, 1.0]),
    ] {
        let err = m.update_records(&indices, &priorities).unwrap_err();
        assert!(
            matches!(
                err,
                MemoryError::BadPriority { .. }
                    | MemoryError::IndexOutOfRange { .. }
                    | MemoryError::BadArguments { .. }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("prioritized-replay"), "{err}");
    }
    assert_eq!((m.sum_tree().clone(), m.min_tree().clone(), m.max_priority()), before);
    let err = m.update_records(&[1], &[-0.5]).unwrap_err().to_string();
    assert!(err.contains("-0.5") && err.contains("index 1"), "{err}");
    assert!(matches!(
        m.get_records(5, &mut ChaCha8Rng::seed_from_u64(0)),
        Err(MemoryError::NotEnoughRecords { .. })
    ));
}

#[test]
fn state_round_trips_priorities_and_records() {
    let mut m = memory(8, 0.6, 0.4);
    m.insert_records(&transitions(0, 11)).unwrap();
    m.update_records(&[1, 5], &[3.0, 0.5]).unwrap();
    let saved = m.save_state().unwrap();
    let mut copy = memory(8, 0.6, 0.4);
    copy.load_state(saved).unwrap();
    assert_eq!(copy.sum_tree(), m.sum_tree());
    assert_eq!(copy.min_tree(), m.min_tree());
    assert_eq!(copy.max_priority(), 3.0);
    let a = m.get_records(6, &mut ChaCha8Rng::seed_from_u64(2)).unwrap();
    let b = copy.get_records(6, &mut ChaCha8Rng::seed_from_u64(2)).unwrap();
    assert_eq!(a, b);
}

#[test]
fn capacities_beyond_any_machine_are_refused_before_allocating() {
    // 1e19 used to wrap `next_power_of_two` to 0; 1e12 allocated its trees up front.
    for capacity in [10_000_000_000_000_000_000usize, 1_000_000_000_000, (1 << 26) + 1] {
        let err = PrioritizedReplay::new("per", &transition_space(), capacity, 1.0, 0.0)
            .err()
            .unwrap();
        assert!(matches!(err, MemoryError::BadArguments { .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("per") && text.contains(&capacity.to_string()) && text.contains("GiB"),
            "{text}"
        );
    }
    let err = rlgraph_memories::ReplayMemory::new("replay", &transition_space(), usize::MAX)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("replay") && err.contains("1073741824"), "{err}");
}

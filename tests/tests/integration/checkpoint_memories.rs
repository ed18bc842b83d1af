//! Replay memories take part in the executor's checkpoints: saved beside the variables in
//! one file, restored together, and a checkpoint that does not fit changes neither.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{ComponentTest, HostState};
use rlgraph_memories::{PrioritizedReplay, ReplayMemory};
use rlgraph_tests::both_backends;
use rlgraph_tests::dummies::mlp;

fn record_space() -> Space {
    Space::dict([
        ("states", Space::from(FloatBox::new([3]))),
        ("rewards", Space::from(FloatBox::new(Vec::<usize>::new()))),
    ])
    .unwrap()
}

both_backends! {
    fn memories_round_trip_through_executor_checkpoints<B>() {
        let x = Space::from(FloatBox::new([4])).with_batch_rank(true);
        let mut t = ComponentTest::<B>::new(mlp::<B>("mlp", &[3, 2]), [("x", x)], 5).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut replay = ReplayMemory::new("replay", &record_space(), 8).unwrap();
        let mut per = PrioritizedReplay::new("per", &record_space(), 8, 0.6, 0.4).unwrap();
        let batch = record_space().with_batch_rank(true).sample(Some(11), &mut rng);
        replay.insert_records(&batch).unwrap();
        per.insert_records(&batch).unwrap();
        per.update_records(&[2, 5], &[4.0, 0.5]).unwrap();

        let dir = std::env::temp_dir().join(format!("rlgraph-mem-ckpt-{}-{}", B::NAME, std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("agent.safetensors");
        t.executor().save_with(&file, &[("replay", &replay), ("per", &per)]).unwrap();
        let weights = t.executor().variables().unwrap();
        let replay_state = replay.save_state().unwrap();
        let per_state = per.save_state().unwrap();

        // Change everything, then restore.
        let more = record_space().with_batch_rank(true).sample(Some(3), &mut rng);
        replay.insert_records(&more).unwrap();
        per.insert_records(&more).unwrap();
        per.update_records(&[0], &[9.0]).unwrap();
        let zeros = weights.iter().map(|(k, v)| (k.clone(), rlgraph_core::HostTensor::new(v.shape.clone(), rlgraph_core::HostData::from_f64(&vec![0.0; v.data.len()], v.dtype())).unwrap())).collect();
        t.executor().set_variables(&zeros).unwrap();
        t.executor().restore_with(&file, &mut [("replay", &mut replay), ("per", &mut per)]).unwrap();
        assert_eq!(t.executor().variables().unwrap(), weights);
        assert_eq!(replay.save_state().unwrap(), replay_state);
        assert_eq!(per.save_state().unwrap(), per_state);
        let a = per.get_records(4, &mut ChaCha8Rng::seed_from_u64(3)).unwrap();
        assert_eq!(a.indices.len(), 4);

        // A memory of another capacity does not fit: nothing changes, weights included.
        t.executor().set_variables(&zeros).unwrap();
        let mut small = ReplayMemory::new("replay", &record_space(), 4).unwrap();
        let err = t.executor().restore_with(&file, &mut [("replay", &mut small)]).unwrap_err().to_string();
        assert!(err.contains("capacity"), "{err}");
        assert_eq!(small.size(), 0);
        assert_eq!(t.executor().variables().unwrap(), zeros);
        // A name that was never saved is an error too.
        let err = t.executor().restore_with(&file, &mut [("other", &mut small)]).unwrap_err().to_string();
        assert!(err.contains("other"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
    }
}

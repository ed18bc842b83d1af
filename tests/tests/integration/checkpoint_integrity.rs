//! A checkpoint is checked whole before anything is restored: any flipped bit, a diverged
//! (NaN) model, or replay records outside their spaces are refused by name, and the executor
//! and memories keep what they held.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_core::spaces::{BoolBox, FloatBox, IntBox, Space};
use rlgraph_core::{ComponentTest, HostData, HostState, HostTensor};
use rlgraph_memories::{PrioritizedReplay, ReplayMemory};
use rlgraph_tests::both_backends;
use rlgraph_tests::dummies::mlp;

fn record_space() -> Space {
    Space::dict([
        ("states", Space::from(FloatBox::new([2]))),
        ("actions", Space::from(IntBox::new(3).unwrap())),
        ("terminals", Space::from(BoolBox::new(Vec::<usize>::new()))),
    ])
    .unwrap()
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("rlgraph-integrity-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

both_backends! {
    fn every_single_bit_flip_is_refused_and_changes_nothing<B>() {
        let x = Space::from(FloatBox::new([2])).with_batch_rank(true);
        let mut t = ComponentTest::<B>::new(mlp::<B>("mlp", &[2]), [("x", x)], 5).unwrap();
        let mut replay = ReplayMemory::new("replay", &record_space(), 4).unwrap();
        let batch = record_space().with_batch_rank(true).sample(Some(3), &mut ChaCha8Rng::seed_from_u64(1));
        replay.insert_records(&batch).unwrap();
        let dir = scratch(&format!("flip-{}", B::NAME));
        let file = dir.join("good.safetensors");
        t.executor().save_with(&file, &[("replay", &replay)]).unwrap();
        let good = std::fs::read(&file).unwrap();
        let weights = t.executor().variables().unwrap();
        let held = replay.save_state().unwrap();
        let mut fresh = ReplayMemory::new("replay", &record_space(), 4).unwrap();
        let flipped = dir.join("flipped.safetensors");
        // CRC-32C catches every single-bit error in the bytes it covers; the header's own
        // bytes are caught by the parse or by the checksum of what they describe. Try one
        // flip at every byte of the file, cycling through the bit positions.
        for i in 0..good.len() {
            let mut bytes = good.clone();
            bytes[i] ^= 1 << (i % 8);
            std::fs::write(&flipped, &bytes).unwrap();
            let result = t.executor().restore_with(&flipped, &mut [("replay", &mut fresh)]);
            assert!(result.is_err(), "a flip of bit {} at byte {i} of {} loaded", i % 8, good.len());
        }
        assert_eq!(fresh.size(), 0);
        assert_eq!(t.executor().variables().unwrap(), weights);
        // The unflipped file still loads, and holds what was saved.
        t.executor().restore_with(&file, &mut [("replay", &mut fresh)]).unwrap();
        assert_eq!(fresh.save_state().unwrap(), held);
        let err = {
            let mut bytes = good.clone();
            let last = bytes.len() - 1;
            bytes[last] ^= 0x10;
            std::fs::write(&flipped, &bytes).unwrap();
            t.executor().restore(&flipped).unwrap_err().to_string()
        };
        assert!(err.contains("checksum mismatch"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
    }

    fn a_diverged_model_is_refused_by_variable_name<B>() {
        let x = Space::from(FloatBox::new([2])).with_batch_rank(true);
        let mut t = ComponentTest::<B>::new(mlp::<B>("mlp", &[2]), [("x", x)], 5).unwrap();
        let before = t.executor().variables().unwrap();
        let mut nan = before.clone();
        let (path, w) = nan.iter_mut().next().map(|(k, v)| (k.clone(), v)).unwrap();
        *w = HostTensor::new(w.shape.clone(), HostData::from_f64(&vec![f64::NAN; w.data.len()], w.dtype())).unwrap();
        t.executor().set_variables(&nan).unwrap();
        let dir = scratch(&format!("nan-{}", B::NAME));
        let file = dir.join("nan.safetensors");
        t.executor().save(&file).unwrap();
        t.executor().set_variables(&before).unwrap();
        let err = t.executor().restore(&file).unwrap_err().to_string();
        assert!(err.contains(&format!("variable '{path}' holds NaN")), "{err}");
        assert_eq!(t.executor().variables().unwrap(), before);
        std::fs::remove_dir_all(&dir).ok();
    }
}

/// The saved state of a replay holding three records, with `edit` applied to the tensor
/// named `key`.
fn tampered(key: &str, edit: impl Fn(&mut HostData)) -> (ReplayMemory, rlgraph_core::SavedState) {
    let mut replay = ReplayMemory::new("replay", &record_space(), 4).unwrap();
    let batch = record_space()
        .with_batch_rank(true)
        .sample(Some(3), &mut ChaCha8Rng::seed_from_u64(2));
    replay.insert_records(&batch).unwrap();
    let mut state = replay.save_state().unwrap();
    let names: Vec<String> = state.tensors.keys().cloned().collect();
    let t = state
        .tensors
        .get_mut(key)
        .unwrap_or_else(|| panic!("{key} not in {names:?}"));
    edit(&mut t.data);
    (replay, state)
}

#[test]
fn restored_records_must_lie_in_the_record_space() {
    // An action of 2^62 used to come back as 0 through `as i32`; 3 is outside IntBox(3).
    for (action, says) in [(1i64 << 62, "beyond int32"), (3, "not in the record space")] {
        let (replay, state) = tampered("records/actions", |d| {
            if let HostData::I64(v) = d {
                v[1] = action;
            }
        });
        let err = replay.check_state(&state).unwrap_err().to_string();
        assert!(err.contains(says) && err.contains("actions"), "{err}");
    }
    let (replay, state) = tampered("records/terminals", |d| {
        if let HostData::U8(v) = d {
            v[0] = 2;
        }
    });
    let err = replay.check_state(&state).unwrap_err().to_string();
    assert!(err.contains("not a flag"), "{err}");
    // The untouched state passes, so the refusals above are the edits'.
    let (replay, state) = tampered("records/actions", |_| {});
    replay.check_state(&state).unwrap();
}

#[test]
fn restored_priorities_must_be_finite_and_not_negative() {
    let mut per = PrioritizedReplay::new("per", &record_space(), 4, 0.6, 0.4).unwrap();
    let batch = record_space()
        .with_batch_rank(true)
        .sample(Some(3), &mut ChaCha8Rng::seed_from_u64(3));
    per.insert_records(&batch).unwrap();
    let good = per.save_state().unwrap();
    per.check_state(&good).unwrap();
    for bad in [f64::NAN, f64::INFINITY, -1.0] {
        let mut state = good.clone();
        if let Some(HostData::F64(p)) = state.tensors.get_mut("priorities").map(|t| &mut t.data) {
            p[2] = bad;
        }
        let err = per.check_state(&state).unwrap_err().to_string();
        assert!(err.contains("priority 2"), "{err}");
    }
    let mut state = good.clone();
    state.meta["max_priority"] = serde_json::json!(-1.0);
    assert!(per
        .check_state(&state)
        .unwrap_err()
        .to_string()
        .contains("max_priority"));
}

//! Frame stacks stored once: a memory with `FrameStacks` returns exactly what a plain memory
//! returns for the same records (episode starts, several copies, n-step next states, ring
//! wrap-around, oversized batches), on uniform and prioritized replay; it holds each frame
//! once (bytes counted by the allocator); its checkpoints round-trip, take a plain memory's
//! whole stacks, and refuse what does not fit, by name.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlgraph_core::spaces::{Array, BoolBox, Dtype, FloatBox, IntBox, Space, Value};
use rlgraph_core::{HostData, HostState};
use rlgraph_memories::{FrameStack, FrameStacks, MemoryError, PrioritizedReplay, ReplayMemory};

use crate::counting_alloc;

/// A recorded transition: state stack, reward, terminal, next state stack.
type Record = (Vec<u8>, f32, bool, Vec<u8>);

/// A recorded run of `copies` environment copies whose frames are `[h, w, c]` random bytes,
/// stacked `k` deep as RLgraph's `sequence` stacks them (concatenated along the channels,
/// oldest first; right after a reset the first frame fills every slot), turned into n-step
/// transitions. Episodes end at random, after 1 to 11 steps unless `longest` says otherwise.
struct Recorded {
    shape: [usize; 3],
    k: usize,
    n_step: usize,
    /// Per copy: its episode's frames so far (frame 0 from the reset), its step, its length.
    episodes: Vec<(Vec<Vec<u8>>, usize, usize)>,
    /// Episodes last 1 to `longest` steps.
    longest: usize,
    rng: ChaCha8Rng,
}

impl Recorded {
    fn new(shape: [usize; 3], k: usize, n_step: usize, copies: usize, seed: u64) -> Self {
        let mut run = Recorded {
            shape,
            k,
            n_step,
            episodes: vec![],
            longest: 11,
            rng: ChaCha8Rng::seed_from_u64(seed),
        };
        run.episodes = (0..copies).map(|_| run.new_episode()).collect();
        run
    }

    fn frame(&mut self) -> Vec<u8> {
        let len = self.shape.iter().product();
        (0..len).map(|_| self.rng.random()).collect()
    }

    fn new_episode(&mut self) -> (Vec<Vec<u8>>, usize, usize) {
        let length = self.rng.random_range(1..=self.longest);
        (vec![self.frame()], 0, length)
    }

    /// The stack ending at frame `t` of an episode's `frames`: slot `j` holds frame
    /// `max(t + 1 + j - k, 0)`.
    fn stack(&self, frames: &[Vec<u8>], t: usize) -> Vec<u8> {
        let c = self.shape[2];
        let window: Vec<&Vec<u8>> = (0..self.k)
            .map(|j| &frames[(t + 1 + j).saturating_sub(self.k)])
            .collect();
        let pixels = self.shape[0] * self.shape[1];
        let mut out = Vec::with_capacity(pixels * c * self.k);
        for p in 0..pixels {
            for f in &window {
                out.extend_from_slice(&f[p * c..(p + 1) * c]);
            }
        }
        out
    }

    /// The next `n` records, one step of each copy in turn; each is `(state stack, reward,
    /// terminal, next state stack)`, the next state `n_step` frames on or the episode's last.
    fn records(&mut self, n: usize) -> Vec<Record> {
        let mut out = vec![];
        let mut copy = 0;
        while out.len() < n {
            copy = (copy + 1) % self.episodes.len();
            let (mut frames, t, length) = std::mem::take(&mut self.episodes[copy]);
            let next = (t + self.n_step).min(length);
            while frames.len() <= next {
                let f = self.frame();
                frames.push(f);
            }
            out.push((
                self.stack(&frames, t),
                out.len() as f32,
                next == length,
                self.stack(&frames, next),
            ));
            self.episodes[copy] = if t + 1 == length {
                self.new_episode()
            } else {
                (frames, t + 1, length)
            };
        }
        out
    }
}

fn stack_space(shape: [usize; 3], k: usize, dtype: Dtype) -> Space {
    let item = vec![shape[0], shape[1], shape[2] * k];
    match dtype {
        Dtype::Float32 => Space::from(FloatBox::new(item)),
        _ => Space::from(
            IntBox::new(256)
                .unwrap()
                .with_dtype(Dtype::Uint8)
                .unwrap()
                .with_shape(item),
        ),
    }
}

fn record_space(shape: [usize; 3], k: usize, dtype: Dtype) -> Space {
    Space::dict([
        ("states", stack_space(shape, k, dtype)),
        ("actions", Space::from(IntBox::new(6).unwrap())),
        ("rewards", Space::from(FloatBox::new(Vec::<usize>::new()))),
        ("terminals", Space::from(BoolBox::new(Vec::<usize>::new()))),
        ("next_states", stack_space(shape, k, dtype)),
    ])
    .unwrap()
}

/// The records as one batch; `float` stores each byte `b` as `b / 255`, as today's float
/// pipeline did.
fn batch(shape: [usize; 3], k: usize, records: &[Record], float: bool) -> Value {
    let n = records.len();
    let dims = [n, shape[0], shape[1], shape[2] * k];
    let stacks = |pick: fn(&Record) -> &Vec<u8>| {
        let bytes: Vec<u8> = records.iter().flat_map(|r| pick(r).iter().copied()).collect();
        if float {
            Value::Float32(Array::new(dims, bytes.iter().map(|&b| b as f32 / 255.0).collect()).unwrap())
        } else {
            Value::Uint8(Array::new(dims, bytes).unwrap())
        }
    };
    Value::Dict(BTreeMap::from([
        ("states".to_string(), stacks(|r| &r.0)),
        ("next_states".to_string(), stacks(|r| &r.3)),
        (
            "actions".to_string(),
            Value::Int32(Array::new([n], (0..n).map(|i| (i % 6) as i32).collect()).unwrap()),
        ),
        (
            "rewards".to_string(),
            Value::Float32(Array::new([n], records.iter().map(|r| r.1).collect()).unwrap()),
        ),
        (
            "terminals".to_string(),
            Value::Bool(Array::new([n], records.iter().map(|r| r.2).collect()).unwrap()),
        ),
    ]))
}

fn stacks_of(k: usize, c: usize) -> FrameStacks {
    FrameStacks {
        stack: FrameStack { frames: k, group: c },
        keys: vec!["states".into(), "/next_states".into()],
    }
}

#[test]
fn a_frame_memory_returns_exactly_what_a_plain_memory_returns() {
    for (shape, k, n_step, copies) in [([6, 5, 1], 4, 1, 1), ([4, 4, 3], 4, 3, 3), ([3, 2, 2], 2, 1, 4)] {
        let space = record_space(shape, k, Dtype::Uint8);
        let capacity = 37;
        let mut plain = ReplayMemory::new("plain", &space, capacity).unwrap();
        let mut framed = ReplayMemory::with_frames("framed", &space, capacity, Some(&stacks_of(k, shape[2]))).unwrap();
        let mut plain_p = PrioritizedReplay::new("plain-p", &space, capacity, 0.6, 0.4).unwrap();
        let mut framed_p =
            PrioritizedReplay::with_frames("framed-p", &space, capacity, 0.6, 0.4, Some(&stacks_of(k, shape[2])))
                .unwrap();
        let mut run = Recorded::new(shape, k, n_step, copies, 7);
        // Batches of every size, one larger than the memory, wrapping the ring many times.
        for size in [1, 5, 3, capacity + 4, 11, 2, 30, 9, 1, 17] {
            let records = batch(shape, k, &run.records(size), false);
            plain.insert_records(&records).unwrap();
            framed.insert_records(&records).unwrap();
            plain_p.insert_records(&records).unwrap();
            framed_p.insert_records(&records).unwrap();
            let all: Vec<usize> = (0..plain.size()).collect();
            assert_eq!(
                framed.records_at(&all).unwrap(),
                plain.records_at(&all).unwrap(),
                "{shape:?} after {size}"
            );
            assert_eq!(framed_p.records_at(&all).unwrap(), plain_p.records_at(&all).unwrap());
            let mut a = ChaCha8Rng::seed_from_u64(size as u64);
            let mut b = a.clone();
            let n = plain.size().min(8);
            assert_eq!(
                framed_p.get_records(n, &mut a).unwrap(),
                plain_p.get_records(n, &mut b).unwrap()
            );
        }
    }
}

#[test]
fn float_stacks_with_a_new_rank_are_stored_once_too() {
    // add_rank: [H, W, C, k], one element of each frame per group.
    let item = vec![3, 3, 2, 4];
    let stack = Space::from(FloatBox::new(item.clone()));
    let space = Space::dict([("states", stack.clone()), ("next_states", stack)]).unwrap();
    let frames = FrameStacks {
        stack: FrameStack { frames: 4, group: 1 },
        keys: vec!["states".into(), "next_states".into()],
    };
    let mut plain = ReplayMemory::new("plain", &space, 5).unwrap();
    let mut framed = ReplayMemory::with_frames("framed", &space, 5, Some(&frames)).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for _ in 0..4 {
        let mut leaf =
            || Value::Float32(Array::new([2, 3, 3, 2, 4], (0..144).map(|_| rng.random::<f32>()).collect()).unwrap());
        let v = Value::Dict(BTreeMap::from([
            ("states".into(), leaf()),
            ("next_states".into(), leaf()),
        ]));
        plain.insert_records(&v).unwrap();
        framed.insert_records(&v).unwrap();
    }
    assert_eq!(
        framed.records_at(&[0, 1, 2, 3, 4]).unwrap(),
        plain.records_at(&[0, 1, 2, 3, 4]).unwrap()
    );
}

/// Net bytes a memory of `capacity` records holds once filled by a recorded run of `[h, w]`
/// grayscale frames stacked 4 deep, counted by the allocator.
fn bytes_per_record(h: usize, w: usize, capacity: usize, framed: bool) -> f64 {
    let (shape, k) = ([h, w, 1], 4);
    let dtype = if framed { Dtype::Uint8 } else { Dtype::Float32 };
    let space = record_space(shape, k, dtype);
    let mut run = Recorded::new(shape, k, 1, 2, 11);
    // Atari's episodes are long: one frame per episode (its last) is no record's state.
    run.longest = 400;
    // Twice the capacity: frames of overwritten records must be freed, not kept. The batches
    // are made first, so that only the memory's own allocations are counted.
    let batches: Vec<Value> = (0..(2 * capacity).div_ceil(50))
        .map(|_| batch(shape, k, &run.records(50), !framed))
        .collect();
    let before = counting_alloc::net_bytes();
    let mut memory = if framed {
        ReplayMemory::with_frames("framed", &space, capacity, Some(&stacks_of(k, 1))).unwrap()
    } else {
        ReplayMemory::new("today", &space, capacity).unwrap()
    };
    for records in &batches {
        memory.insert_records(records).unwrap();
    }
    let held = counting_alloc::net_bytes() - before;
    assert_eq!(memory.size(), capacity);
    drop(memory);
    held as f64 / capacity as f64
}

#[test]
fn a_transition_of_uint8_frames_stored_once_costs_a_twentieth_of_todays_float_stacks() {
    for (h, w) in [(80, 80), (84, 84)] {
        let today = bytes_per_record(h, w, 400, false);
        let framed = bytes_per_record(h, w, 400, true);
        // Today: two float32 stacks of 4 frames per record.
        assert!(today >= (2 * 4 * 4 * h * w) as f64, "{h}x{w}: today {today}");
        assert!(
            framed * 20.0 <= today,
            "{h}x{w}: {framed:.0} bytes per record stored once against {today:.0} today"
        );
        // About one new frame per record, and little else.
        assert!(
            framed <= (h * w) as f64 * 1.3,
            "{h}x{w}: {framed:.0} bytes for {} byte frames",
            h * w
        );
    }
}

#[test]
fn checkpoints_round_trip_and_take_a_plain_memorys_whole_stacks() {
    let (shape, k) = ([5, 4, 1], 4);
    let space = record_space(shape, k, Dtype::Uint8);
    let mut run = Recorded::new(shape, k, 3, 2, 5);
    let mut framed = PrioritizedReplay::with_frames("framed", &space, 20, 1.0, 0.0, Some(&stacks_of(k, 1))).unwrap();
    let mut plain = PrioritizedReplay::new("plain", &space, 20, 1.0, 0.0).unwrap();
    for size in [13, 9, 4] {
        let records = batch(shape, k, &run.records(size), false);
        framed.insert_records(&records).unwrap();
        plain.insert_records(&records).unwrap();
    }
    let all: Vec<usize> = (0..20).collect();
    let want = plain.records_at(&all).unwrap();

    let saved = framed.save_state().unwrap();
    assert!(
        saved.tensors.contains_key("records#frames"),
        "{:?}",
        saved.tensors.keys()
    );
    assert!(
        !saved.tensors.contains_key("records/states"),
        "stacks are saved as frame ids"
    );
    let mut back = PrioritizedReplay::with_frames("back", &space, 20, 1.0, 0.0, Some(&stacks_of(k, 1))).unwrap();
    back.check_state(&saved).unwrap();
    back.load_state(saved.clone()).unwrap();
    assert_eq!(back.records_at(&all).unwrap(), want);

    // A plain memory's checkpoint (whole stacks) is split into frames on load.
    let mut converted = PrioritizedReplay::with_frames("conv", &space, 20, 1.0, 0.0, Some(&stacks_of(k, 1))).unwrap();
    converted.load_state(plain.save_state().unwrap()).unwrap();
    assert_eq!(converted.records_at(&all).unwrap(), want);
    // And goes on storing: the next records equal the plain memory's.
    let next = batch(shape, k, &run.records(6), false);
    converted.insert_records(&next).unwrap();
    plain.insert_records(&next).unwrap();
    assert_eq!(converted.records_at(&all).unwrap(), plain.records_at(&all).unwrap());

    // A frame id beyond the saved frames is refused by name, and nothing changes.
    let mut bad = saved.clone();
    let ids = bad.tensors.get_mut("records/states#frame_ids").unwrap();
    if let HostData::I64(d) = &mut ids.data {
        d[3] = 1 << 20;
    }
    let err = back.check_state(&bad).unwrap_err().to_string();
    assert!(err.contains("records/states#frame_ids"), "{err}");
    assert!(back.load_state(bad).is_err());
    assert_eq!(back.records_at(&all).unwrap(), want);
}

#[test]
fn a_checkpoint_of_float_stacks_is_refused_by_a_memory_of_uint8_frames() {
    // Today's float32 stacks cannot be read as this memory's bytes: refused, naming both.
    let (shape, k) = ([4, 4, 1], 4);
    let mut run = Recorded::new(shape, k, 1, 1, 2);
    let mut old = ReplayMemory::new("old", &record_space(shape, k, Dtype::Float32), 8).unwrap();
    old.insert_records(&batch(shape, k, &run.records(8), true)).unwrap();
    let space = record_space(shape, k, Dtype::Uint8);
    let mut framed = ReplayMemory::with_frames("framed", &space, 8, Some(&stacks_of(k, 1))).unwrap();
    let err = framed.load_state(old.save_state().unwrap()).unwrap_err().to_string();
    assert!(
        err.contains("states") && err.contains("F32") && err.contains("Uint8"),
        "{err}"
    );
    assert_eq!(framed.size(), 0);
}

#[test]
fn stacks_that_do_not_split_as_asked_are_refused_by_key_and_shape() {
    let space = record_space([80, 80, 1], 3, Dtype::Uint8);
    let err = ReplayMemory::with_frames("m", &space, 4, Some(&stacks_of(4, 1))).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, MemoryError::UnsupportedSpace { .. }), "{text}");
    assert!(
        text.contains("states:") && text.contains("[80, 80, 3]") && text.contains("4 frames"),
        "{text}"
    );

    let mut wrong_key = stacks_of(3, 1);
    wrong_key.keys = vec!["observations".into()];
    let text = ReplayMemory::with_frames("m", &space, 4, Some(&wrong_key))
        .unwrap_err()
        .to_string();
    assert!(text.contains("observations") && text.contains("/states"), "{text}");

    let flags = Space::dict([("states", Space::from(BoolBox::new([2, 2, 4])))]).unwrap();
    let text = ReplayMemory::with_frames("m", &flags, 4, Some(&stacks_of(4, 1)))
        .unwrap_err()
        .to_string();
    assert!(text.contains("Bool"), "{text}");
}

//! RLgraph's memories as components (replay, prioritized replay, ring buffer, FIFO queue),
//! driven through their API methods as `rlgraph call` drives them, on candle and on tch.

use rlgraph_components::from_spec;
use rlgraph_core::spaces::{Array, Space, Value};
use rlgraph_core::ComponentTest;
use rlgraph_tests::both_backends;
use serde_json::json;

/// Records `{"a": [x], "b": 10 x}` for each x, batched.
fn records(xs: &[f32]) -> Value {
    Value::Dict(
        [
            (
                "a".to_string(),
                Value::Float32(Array::new([xs.len(), 1], xs.to_vec()).unwrap()),
            ),
            (
                "b".to_string(),
                Value::Int32(Array::new([xs.len()], xs.iter().map(|x| (x * 10.0) as i32).collect()).unwrap()),
            ),
        ]
        .into(),
    )
}

fn record_space() -> Space {
    Space::from_json_str(r#"{"a": {"type": "float-box", "shape": [1]}, "b": {"type": "int-box", "high": 100}}"#)
        .unwrap()
        .with_batch_rank(true)
}

fn count() -> Space {
    Space::from_json_str(r#"{"type": "int-box"}"#).unwrap()
}

fn n(k: i32) -> Value {
    Value::Int32(Array::scalar(k))
}

/// The `a` column and the `b` column of batched records.
fn columns(v: &Value) -> (Vec<f32>, Vec<i64>) {
    let Value::Dict(d) = v else { panic!("{v:?}") };
    let a = match &d["a"] {
        Value::Float32(a) => a.data().to_vec(),
        other => panic!("{other:?}"),
    };
    let b = match &d["b"] {
        Value::Int32(b) => b.data().iter().map(|&x| x as i64).collect(),
        Value::Int64(b) => b.data().to_vec(),
        other => panic!("{other:?}"),
    };
    (a, b)
}

fn size(v: &[Value]) -> i64 {
    match &v[0] {
        Value::Int64(a) => a.data()[0],
        Value::Int32(a) => a.data()[0] as i64,
        other => panic!("{other:?}"),
    }
}

both_backends! {
    fn replay_memory_keeps_the_newest_records_and_samples_whole_ones<B>() {
        let spec = json!({"type": "replay-memory", "capacity": 3});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "memory").unwrap(), [("records", record_space()), ("num_records", count())], 3).unwrap();
        assert_eq!(size(&t.call("insert_records", &[records(&[1.0, 2.0])]).unwrap()), 2);
        // Capacity 3: the fourth record overwrites the first.
        assert_eq!(size(&t.call("insert_records", &[records(&[3.0, 4.0])]).unwrap()), 3);
        assert_eq!(size(&t.call("get_size", &[]).unwrap()), 3);
        // Draws (with replacement) of at most what is held; 17 calls of 3 make 51.
        let (mut a, mut b) = (vec![], vec![]);
        for _ in 0..17 {
            let (x, y) = columns(&t.call("get_records", &[n(3)]).unwrap()[0]);
            a.extend(x);
            b.extend(y);
        }
        assert_eq!(a.len(), 51);
        assert!(a.iter().all(|x| [2.0, 3.0, 4.0].contains(x)), "{a:?}");
        assert!(a.iter().zip(&b).all(|(x, y)| (*x * 10.0) as i64 == *y), "rows stay whole");
        for x in [2.0, 3.0, 4.0] {
            assert!(a.contains(&x), "51 uniform draws of 3 records miss {x}");
        }
    }

    fn prioritized_replay_samples_by_priority_and_updates<B>() {
        let spec = json!({"type": "prioritized-replay", "capacity": 4, "alpha": 1.0, "beta": 0.0});
        let spaces = [("records", record_space()), ("num_records", count()), ("indices", Space::from_json_str(r#"{"type": "int-box", "add_batch_rank": true}"#).unwrap()), ("update", Space::from_json_str(r#"{"type": "float-box", "add_batch_rank": true}"#).unwrap())];
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "memory").unwrap(), spaces, 5).unwrap();
        t.call("insert_records", &[records(&[1.0, 2.0])]).unwrap();
        // Priorities 1e-9 and 1: with alpha 1, record 1 is drawn with probability 1 - 1e-9.
        let err = t.call("get_records", &[n(3)]).err().unwrap().to_string();
        assert!(err.contains("holds 2"), "{err}");
        let indices = Value::Int32(Array::new([2], vec![0, 1]).unwrap());
        let update = Value::Float32(Array::new([2], vec![1e-9, 1.0]).unwrap());
        t.call("update_records", &[indices, update]).unwrap();
        let out = t.call("get_records", &[n(2)]).unwrap();
        assert_eq!(out.len(), 3, "records, indices, weights");
        let (a, _) = columns(&out[0]);
        assert!(a.iter().all(|&x| x == 2.0), "{a:?}");
        let idx: Vec<i64> = match &out[1] {
            Value::Int32(a) => a.data().iter().map(|&i| i as i64).collect(),
            Value::Int64(a) => a.data().to_vec(),
            other => panic!("{other:?}"),
        };
        assert_eq!(idx, [1, 1]);
        // beta 0: every importance weight is (N P)^0 / max = 1.
        let Value::Float32(w) = &out[2] else { panic!("{:?}", out[2]) };
        assert!(w.data().iter().all(|&x| (x - 1.0).abs() < 1e-6), "{w:?}");
    }

    fn ring_buffer_gives_the_last_records_and_whole_episodes<B>() {
        let space = Space::from_json_str(r#"{"a": {"type": "float-box", "shape": [1]}, "terminals": "bool"}"#).unwrap().with_batch_rank(true);
        let batch = |xs: &[f32], ends: &[bool]| Value::Dict([
            ("a".to_string(), Value::Float32(Array::new([xs.len(), 1], xs.to_vec()).unwrap())),
            ("terminals".to_string(), Value::Bool(Array::new([ends.len()], ends.to_vec()).unwrap())),
        ].into());
        let spec = json!({"type": "ring-buffer", "capacity": 4});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "memory").unwrap(), [("records", space), ("num_records", count()), ("num_episodes", count())], 0).unwrap();
        t.call("insert_records", &[batch(&[1.0, 2.0, 3.0], &[false, true, false])]).unwrap();
        let last_two = t.call("get_records", &[n(2)]).unwrap();
        assert_eq!(last_two[0], batch(&[2.0, 3.0], &[true, false]));
        // One whole episode is held: records 1 and 2 (the third has not ended).
        let episodes = t.call("get_episodes", &[n(5)]).unwrap();
        assert_eq!(episodes[0], batch(&[1.0, 2.0], &[false, true]));
    }

    fn fifo_queue_is_first_in_first_out_and_refuses_when_full<B>() {
        let spec = json!({"type": "fifo-queue", "capacity": 2});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "memory").unwrap(), [("records", record_space()), ("num_records", count())], 0).unwrap();
        t.call("insert_records", &[records(&[1.0, 2.0])]).unwrap();
        let err = t.call("insert_records", &[records(&[3.0])]).err().unwrap().to_string();
        assert!(err.contains("full"), "{err}");
        assert_eq!(columns(&t.call("get_records", &[n(1)]).unwrap()[0]), (vec![1.0], vec![10]));
        t.call("insert_records", &[records(&[3.0])]).unwrap();
        assert_eq!(columns(&t.call("get_records", &[n(2)]).unwrap()[0]), (vec![2.0, 3.0], vec![20, 30]));
        let err = t.call("get_records", &[n(1)]).err().unwrap().to_string();
        assert!(err.contains("holds 0 records"), "{err}");
    }

    fn memory_specs_and_inputs_are_checked_by_name<B>() {
        let err = from_spec::<B>(&json!({"type": "replay-memory", "capacity": 0}), "memory").err().unwrap().to_string();
        assert!(err.contains("memory.capacity"), "{err}");
        let err = from_spec::<B>(&json!({"type": "ring-buffer", "alpha": 0.5}), "memory").err().unwrap().to_string();
        assert!(err.contains("alpha"), "{err}");
        let m = from_spec::<B>(&json!({"type": "replay-memory"}), "memory").unwrap();
        let err = ComponentTest::<B>::new(m, [("num_records", count())], 0).err().unwrap().to_string();
        assert!(err.contains("insert_records"), "{err}");
    }
}

//! The FIFO queue under concurrent producers and consumers, and the staging area.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use rlgraph_core::spaces::{Array, IntBox, Space, Value};
use rlgraph_memories::{FifoQueue, MemoryError, StagingArea};

fn space() -> Space {
    Space::from(IntBox::with_bounds(0, 1_000_000).unwrap())
}

fn record(x: i32) -> Value {
    Value::Int32(Array::scalar(x))
}

fn number(v: &Value) -> i32 {
    match v {
        Value::Int32(a) => a.data()[0],
        other => panic!("{other:?}"),
    }
}

#[test]
fn concurrent_producers_and_consumers_lose_and_duplicate_nothing() {
    let queue = Arc::new(FifoQueue::new("learner-queue", &space(), 16).unwrap());
    let (producers, per_producer, consumers) = (4, 2_500, 3);
    let mut handles = vec![];
    for p in 0..producers {
        let q = Arc::clone(&queue);
        handles.push(thread::spawn(move || {
            for i in 0..per_producer {
                q.enqueue(record(p * per_producer + i)).unwrap();
            }
        }));
    }
    let mut takers = vec![];
    for _ in 0..consumers {
        let q = Arc::clone(&queue);
        takers.push(thread::spawn(move || {
            let mut got = vec![];
            while let Ok(v) = q.dequeue() {
                got.push(number(&v));
            }
            got
        }));
    }
    for h in handles {
        h.join().unwrap();
    }
    // Consumers drain what is left after close, then stop.
    while queue.size() > 0 {
        thread::sleep(Duration::from_millis(1));
    }
    queue.close();
    let mut all: Vec<i32> = takers.into_iter().flat_map(|t| t.join().unwrap()).collect();
    let n = all.len();
    let unique: BTreeSet<i32> = all.drain(..).collect();
    assert_eq!(n, (producers * per_producer) as usize, "nothing lost or duplicated");
    assert_eq!(unique.len(), n);
    assert_eq!(unique, (0..producers * per_producer).collect());
}

#[test]
fn each_producers_records_come_out_in_order() {
    let queue = FifoQueue::new("q", &space(), 4).unwrap();
    for i in 0..4 {
        queue.try_enqueue(record(i)).unwrap();
    }
    assert_eq!(
        queue.dequeue_many(3).unwrap().iter().map(number).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    assert_eq!(number(&queue.try_dequeue().unwrap()), 3);
}

#[test]
fn non_blocking_calls_report_full_and_empty_without_losing_the_record() {
    let queue = FifoQueue::new("q", &space(), 1).unwrap();
    assert!(matches!(queue.try_dequeue(), Err(MemoryError::Empty { .. })));
    assert!(matches!(
        queue.dequeue_timeout(Duration::from_millis(5)),
        Err(MemoryError::Empty { .. })
    ));
    queue.try_enqueue(record(1)).unwrap();
    match queue.try_enqueue(record(2)) {
        Err(MemoryError::Full {
            record: back,
            capacity: 1,
            ..
        }) => assert_eq!(number(&back), 2),
        other => panic!("{other:?}"),
    }
    assert_eq!(queue.size(), 1);
}

#[test]
fn a_record_outside_the_space_is_refused() {
    let queue = FifoQueue::new("learner-queue", &space(), 2).unwrap();
    let err = queue.enqueue(Value::f32(1.0)).unwrap_err().to_string();
    assert!(err.contains("learner-queue") && err.contains("int32"), "{err}");
    assert_eq!(queue.size(), 0);
}

#[test]
fn close_releases_a_blocked_consumer() {
    let queue = Arc::new(FifoQueue::new("q", &space(), 2).unwrap());
    let q = Arc::clone(&queue);
    let waiter = thread::spawn(move || q.dequeue());
    thread::sleep(Duration::from_millis(20));
    queue.close();
    assert!(matches!(waiter.join().unwrap(), Err(MemoryError::Closed { .. })));
    assert!(matches!(queue.enqueue(record(1)), Err(MemoryError::Closed { .. })));
}

#[test]
fn staging_area_hands_over_one_item_and_never_drops_one() {
    let mut area = StagingArea::new("staging");
    assert!(matches!(area.unstage(), Err(MemoryError::Empty { .. })));
    assert_eq!(area.stage(1), None);
    assert!(area.is_staged());
    assert_eq!(area.stage(2), Some(1));
    assert_eq!(area.unstage().unwrap(), 2);
    assert!(!area.is_staged());
}

//! RLgraph's own space tests (rlgraph/tests/core/test_spaces.py), re-expressed.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_spaces::{BoolBox, Dtype, FloatBox, IntBox, Ranks, Space, TextBox};

fn rng() -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(10)
}

fn all_rank_combinations() -> Vec<Ranks> {
    let mut out = vec![];
    for batch in [false, true] {
        for time in [false, true] {
            for time_major in [false, true] {
                if time_major && !time {
                    continue;
                }
                out.push(Ranks {
                    batch,
                    time,
                    time_major,
                });
            }
        }
    }
    out
}

fn primitive_spaces() -> Vec<Space> {
    vec![
        BoolBox::new([]).into(),
        BoolBox::new([2, 3]).into(),
        TextBox::new([2]).into(),
        IntBox::new(4).unwrap().into(),
        IntBox::with_bounds(-3, 3).unwrap().with_shape([2]).into(),
        IntBox::new(256)
            .unwrap()
            .with_dtype(Dtype::Uint8)
            .unwrap()
            .with_shape([2, 2])
            .into(),
        IntBox::with_bounds(-(1 << 40), 1 << 40)
            .unwrap()
            .with_dtype(Dtype::Int64)
            .unwrap()
            .into(),
        IntBox::unbounded().with_shape([3]).into(),
        // No bounds, scalar bounds, per-dimension bounds and 2-D per-element bounds.
        FloatBox::new([]).into(),
        FloatBox::new([3]).with_dtype(Dtype::Float64).unwrap().into(),
        FloatBox::bounded([], -1.0, 1.0).unwrap().into(),
        FloatBox::bounded([2], 0.1, 0.1).unwrap().into(),
        FloatBox::bounded([4], -2.5, 0.1).unwrap().into(),
        FloatBox::per_element([3], vec![-1.0, 0.0, 10.0], vec![1.0, 0.5, 12.0])
            .unwrap()
            .into(),
        FloatBox::per_element([2, 2], vec![-1.0, -2.0, -3.0, -4.0], vec![1.0, 2.0, 3.0, 4.0])
            .unwrap()
            .into(),
        FloatBox::per_element([2], vec![0.0, f64::NEG_INFINITY], vec![f64::INFINITY, 5.0])
            .unwrap()
            .into(),
    ]
}

#[test]
fn every_sample_of_every_primitive_space_is_contained() {
    let mut rng = rng();
    for base in primitive_spaces() {
        for ranks in all_rank_combinations() {
            let space = base.with_ranks(ranks);
            for size in [None, Some(1), Some(5)] {
                if size.is_some() && !ranks.batch {
                    continue; // numpy-style stacking adds an axis the space does not have
                }
                for _ in 0..20 {
                    let s = space.sample(size, &mut rng);
                    assert!(space.contains(&s), "{space}: {:?}", space.check(&s));
                }
            }
            let seq = space.sample_sequence(3, 4, &mut rng);
            assert!(space.contains(&seq), "{space}: {:?}", space.check(&seq));
            assert!(space.contains(&space.zeros(None)) || !zero_in_bounds(&space), "{space}");
        }
    }
}

fn zero_in_bounds(space: &Space) -> bool {
    match space {
        Space::Float(f) => (0..space.flat_dim()).all(|i| {
            let (l, h) = f.bounds_of(i);
            l <= 0.0 && 0.0 <= h
        }),
        Space::Int(i) => i.low().is_none_or(|l| l <= 0) && i.high().is_none_or(|h| h > 0),
        _ => true,
    }
}

#[test]
fn sample_shapes_follow_batch_and_time_ranks() {
    let mut rng = rng();
    let base: Space = FloatBox::new([3]).into();
    let shape = |s: &Space, v: rlgraph_spaces::Value| (s.contains(&v), v.shape().unwrap().to_vec());
    let batch = base.with_batch_rank(true);
    assert_eq!(shape(&batch, batch.sample(Some(5), &mut rng)), (true, vec![5, 3]));
    assert_eq!(shape(&batch, batch.sample(None, &mut rng)), (true, vec![1, 3]));
    let batch_time = batch.with_time_rank(true, false);
    assert_eq!(
        shape(&batch_time, batch_time.sample_sequence(2, 7, &mut rng)),
        (true, vec![2, 7, 3])
    );
    let time_major = batch.with_time_rank(true, true);
    assert_eq!(
        shape(&time_major, time_major.sample_sequence(2, 7, &mut rng)),
        (true, vec![7, 2, 3])
    );
    // Without a batch rank, `size` stacks samples along a new axis, as numpy's `size=` does.
    assert_eq!(base.sample(Some(4), &mut rng).shape().unwrap(), &[4, 3]);
    assert!(!base.contains(&base.sample(Some(4), &mut rng)));
}

#[test]
fn hundred_horizontal_samples_of_a_nested_dict_with_a_tuple_are_contained() {
    // RLgraph's test_complex_space_sampling_and_check_via_contains.
    let space = Space::dict([
        ("a", Space::from(FloatBox::new([2, 3]))),
        (
            "b",
            Space::tuple(vec![
                BoolBox::new([]).into(),
                IntBox::new(2).unwrap().into(),
                Space::dict([("ba", Space::from(FloatBox::bounded([2], -1.0, 1.0).unwrap()))]).unwrap(),
            ]),
        ),
        ("c", Space::from(IntBox::new(5).unwrap().with_shape([3]))),
    ])
    .unwrap();
    let samples = space.sample_horizontal(100, &mut rng());
    assert_eq!(samples.len(), 100);
    for s in &samples {
        assert!(space.contains(s), "{:?}", space.check(s));
    }
}

#[test]
fn flattening_maps_each_leaf_to_its_flat_dim_in_rlgraph_order() {
    // Tuple(Dict(a=bool, b=int(4), c=Dict(d=float)), bool, int(2), float(shape=(3,2)), Tuple(bool, bool))
    let space = Space::tuple(vec![
        Space::dict([
            ("a", Space::from(BoolBox::new([]))),
            ("b", IntBox::new(4).unwrap().into()),
            ("c", Space::dict([("d", Space::from(FloatBox::new([])))]).unwrap()),
        ])
        .unwrap(),
        BoolBox::new([]).into(),
        IntBox::new(2).unwrap().into(),
        FloatBox::new([3, 2]).into(),
        Space::tuple(vec![BoolBox::new([]).into(), BoolBox::new([]).into()]),
    ]);
    let mut out = String::new();
    for (key, leaf) in space.flatten() {
        out += &format!("{}:{},", key.strip_prefix('/').unwrap(), leaf.flat_dim());
    }
    assert_eq!(
        out,
        "_T0_/a:1,_T0_/b:1,_T0_/c/d:1,_T1_:1,_T2_:1,_T3_:6,_T4_/_T0_:1,_T4_/_T1_:1,"
    );
    // 7 scalar leaves and one 3x2 leaf.
    assert_eq!(space.flat_dim(), 13);
}

#[test]
fn int_box_high_is_exclusive_in_contains() {
    // RLgraph 0.5.5's IntBox.contains accepted `high` itself; here it does not.
    let space: Space = IntBox::new(3).unwrap().into();
    for (x, inside) in [(-1, false), (0, true), (2, true), (3, false)] {
        assert_eq!(space.contains(&rlgraph_spaces::Value::i32(x)), inside, "{x}");
    }
    let err = space.check(&rlgraph_spaces::Value::i32(3)).unwrap_err().to_string();
    assert!(err.contains("not below high 3"), "{err}");
}

#[test]
fn shapes_ranks_and_categories() {
    let space: Space = IntBox::new(4).unwrap().with_shape([2, 3]).into();
    let with = space.with_batch_rank(true).with_time_rank(true, true);
    assert_eq!(with.get_shape(true, true).unwrap(), vec![None, None, Some(2), Some(3)]);
    assert_eq!(with.get_shape(false, false).unwrap(), vec![Some(2), Some(3)]);
    assert_eq!(with.get_shape(true, false).unwrap(), vec![None, Some(2), Some(3)]);
    assert!(with.has_batch_rank() && with.has_time_rank() && with.is_time_major());
    assert!(!space.has_batch_rank());
    assert_eq!(with.rank(), Some(2));
    assert_eq!(with.flat_dim(), 6);
    assert_eq!(with.num_categories(), Some(4));
    let one_hot = with.one_hot_space().unwrap();
    assert_eq!(one_hot.shape().unwrap(), &[2, 3, 4]);
    assert_eq!(one_hot.dtype(), Some(Dtype::Float32));
    assert_eq!(one_hot.ranks(), with.ranks());
    assert!(Space::from(FloatBox::new([2])).one_hot_space().is_err());
    assert_eq!(Space::from(FloatBox::new([2])).num_categories(), None);
}

#[test]
fn contains_names_the_flat_key_the_element_and_the_bound() {
    let space = Space::from_json_str(
        r#"{"pos": {"type": "float-box", "shape": [2, 2], "low": -1, "high": 1}, "t": [{"type": "int-box", "high": 5}, "bool"]}"#,
    )
    .unwrap();
    let cases = [
        (
            r#"{"pos": [[0, 0], [0, 1.5]], "t": [1, true]}"#,
            ["/pos", "element [1, 1] = 1.5 is above high 1"],
        ),
        (
            r#"{"pos": [[0, 0], [0, 0]], "t": [-2, true]}"#,
            ["/t/_T0_", "is below low 0"],
        ),
        (
            r#"{"pos": [[0, 0]], "t": [1, true]}"#,
            ["/pos", "expected shape [2, 2], got [1, 2]"],
        ),
        (
            r#"{"pos": [[0, 0], [0, 0]], "t": [1]}"#,
            ["/t", "expected a Tuple of 2 entries, got 1"],
        ),
        (
            r#"{"pos": [[0, 0], [0, 0]], "t": [1, 1]}"#,
            ["/t/_T1_", "expected a bool"],
        ),
    ];
    for (json, [key, reason]) in cases {
        let err = space
            .value_from_json(&serde_json::from_str(json).unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains(key) && err.contains(reason), "{json}: {err}");
    }
}

#[test]
fn seeded_sampling_is_deterministic() {
    let space =
        Space::from_json_str(r#"[{"type": "float-box", "shape": [3]}, {"type": "int-box", "high": 9}, "text"]"#)
            .unwrap();
    let a = space.sample(Some(4), &mut ChaCha8Rng::seed_from_u64(3));
    let b = space.sample(Some(4), &mut ChaCha8Rng::seed_from_u64(3));
    let c = space.sample(Some(4), &mut ChaCha8Rng::seed_from_u64(4));
    assert_eq!(a, b);
    assert_ne!(a, c);
}

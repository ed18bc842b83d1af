//! Property tests: samples are contained, flatten/unflatten is the identity, JSON round-trips.

use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_spaces::{BoolBox, Dtype, FloatBox, IntBox, Ranks, Space, TextBox, Value};

fn shape() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..4, 0..3)
}

fn ranks() -> impl Strategy<Value = Ranks> {
    (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(batch, time, tm)| Ranks {
        batch,
        time,
        time_major: time && tm,
    })
}

fn primitive() -> impl Strategy<Value = Space> {
    let float_bounds = prop_oneof![
        Just(None),
        (-10.0f64..10.0, 0.0f64..5.0).prop_map(|(l, w)| Some((l, l + w))),
    ];
    prop_oneof![
        shape().prop_map(|s| Space::from(BoolBox::new(s))),
        shape().prop_map(|s| Space::from(TextBox::new(s))),
        (
            shape(),
            -50i64..50,
            1i64..50,
            prop_oneof![Just(Dtype::Int32), Just(Dtype::Int64)]
        )
            .prop_map(|(s, low, n, d)| Space::from(
                IntBox::with_bounds(low, low + n)
                    .unwrap()
                    .with_shape(s)
                    .with_dtype(d)
                    .unwrap()
            )),
        (shape(), 1i64..256)
            .prop_map(|(s, n)| Space::from(IntBox::new(n).unwrap().with_shape(s).with_dtype(Dtype::Uint8).unwrap())),
        (shape(), float_bounds.clone(), any::<bool>()).prop_map(|(s, b, f64_)| {
            let b = match b {
                None => FloatBox::new(s),
                Some((l, h)) => FloatBox::bounded(s, l, h).unwrap(),
            };
            Space::from(
                b.with_dtype(if f64_ { Dtype::Float64 } else { Dtype::Float32 })
                    .unwrap(),
            )
        }),
        (prop::collection::vec(1usize..3, 1..3), -5.0f64..5.0)
            .prop_flat_map(|(s, base)| {
                let n: usize = s.iter().product();
                (Just(s), prop::collection::vec((base - 3.0..base, 0.0f64..2.0), n))
            })
            .prop_map(|(s, lw)| {
                let (low, width): (Vec<f64>, Vec<f64>) = lw.into_iter().unzip();
                let high = low.iter().zip(&width).map(|(l, w)| l + w).collect();
                Space::from(FloatBox::per_element(s, low, high).unwrap())
            }),
    ]
    .prop_flat_map(|s| ranks().prop_map(move |r| s.with_ranks(r)))
}

fn space() -> impl Strategy<Value = Space> {
    primitive().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::btree_map("[a-z]{1,3}", inner.clone(), 1..4).prop_map(|m| Space::dict(m).unwrap()),
            prop::collection::vec(inner, 1..4).prop_map(Space::tuple),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn samples_are_contained(space in space(), seed in any::<u64>(), batch in 1usize..4, time in 1usize..4) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let one = space.sample(None, &mut rng);
        prop_assert!(space.contains(&one), "{:?}", space.check(&one));
        let seq = space.sample_sequence(batch, time, &mut rng);
        prop_assert!(space.contains(&seq), "{:?}", space.check(&seq));
    }

    #[test]
    fn unflatten_of_flatten_is_identity(space in space(), seed in any::<u64>()) {
        let value = space.sample(None, &mut ChaCha8Rng::seed_from_u64(seed));
        let pairs: Vec<(String, Value)> = value.flatten().into_iter().map(|(k, v)| (k, v.clone())).collect();
        // leaf_values walks the same leaves in the same order, without keys.
        let leaves_in_order: Vec<&Value> = pairs.iter().map(|(_, v)| v).collect();
        prop_assert_eq!(value.leaf_values(), leaves_in_order);
        prop_assert_eq!(Value::unflatten(pairs).unwrap(), value);
        let leaves: Vec<(String, Space)> = space.flatten().into_iter().map(|(k, s)| (k, s.clone())).collect();
        prop_assert_eq!(Space::unflatten(leaves).unwrap(), space.clone());
        // `map` with the identity keeps the space, and visits leaves in flatten order.
        let mut seen = vec![];
        prop_assert_eq!(space.map(|k, s| { seen.push(k.to_string()); s.clone() }), space.clone());
        let keys: Vec<String> = space.flatten().into_iter().map(|(k, _)| k).collect();
        prop_assert_eq!(seen, keys);
    }

    #[test]
    fn leaf_at_finds_exactly_the_flattened_leaves(space in space(), seed in any::<u64>()) {
        use rlgraph_spaces::flat_key::Nest;
        let value = space.sample(None, &mut ChaCha8Rng::seed_from_u64(seed));
        for (key, leaf) in space.flatten() {
            prop_assert_eq!(space.leaf_at(&key), Some(leaf));
        }
        for (key, leaf) in value.flatten() {
            prop_assert_eq!(value.leaf_at(&key), Some(leaf));
        }
        // A key of no leaf finds nothing, and a container's own key names no leaf.
        prop_assert_eq!(space.leaf_at("/no-such-key"), None);
        if space.is_container() {
            prop_assert_eq!(space.leaf_at(""), None);
        }
    }

    #[test]
    fn spaces_and_values_survive_a_json_round_trip(space in space(), seed in any::<u64>(), batch in 1usize..3) {
        let text = serde_json::to_string(&space).unwrap();
        let back = Space::from_json_str(&text).unwrap();
        prop_assert_eq!(&back, &space);
        let value = space.sample_sequence(batch, 2, &mut ChaCha8Rng::seed_from_u64(seed));
        let json_text = serde_json::to_string(&value.to_json()).unwrap();
        let json: serde_json::Value = serde_json::from_str(&json_text).unwrap();
        prop_assert_eq!(space.value_from_json(&json).unwrap(), value);
    }
}

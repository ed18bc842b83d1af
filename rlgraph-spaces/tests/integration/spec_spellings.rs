//! RLgraph's spellings of space specs parse to the spaces they mean.

use rlgraph_spaces::{BoolBox, Dtype, FloatBounds, FloatBox, IntBox, Ranks, Space, TextBox};

fn parse(text: &str) -> Space {
    Space::from_json_str(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn short_names_are_scalar_primitives() {
    assert_eq!(parse(r#""float""#), FloatBox::new([]).into());
    assert_eq!(
        parse(r#""float64""#),
        FloatBox::new([]).with_dtype(Dtype::Float64).unwrap().into()
    );
    assert_eq!(parse(r#""int""#), IntBox::unbounded().into());
    assert_eq!(parse(r#""bool""#), BoolBox::new([]).into());
    assert_eq!(parse(r#""text""#), TextBox::new([]).into());
}

#[test]
fn typed_objects_with_any_spelling_of_the_type() {
    let want: Space = FloatBox::bounded([4], -1.0, 1.0).unwrap().into();
    let want = want.with_batch_rank(true);
    for t in ["float-box", "float_box", "FloatBox", "floatbox", "float"] {
        let text = format!(r#"{{"type": "{t}", "shape": [4], "low": -1.0, "high": 1.0, "add_batch_rank": true}}"#);
        assert_eq!(parse(&text), want, "{t}");
    }
    assert_eq!(
        parse(r#"{"type": "int-box", "high": 3}"#),
        IntBox::new(3).unwrap().into()
    );
    // RLgraph's IntBox(n) puts n in `low`.
    assert_eq!(parse(r#"{"type": "IntBox", "low": 3}"#), IntBox::new(3).unwrap().into());
    assert_eq!(
        parse(r#"{"type": "int-box", "num_categories": 6, "shape": 2}"#),
        IntBox::new(6).unwrap().with_shape([2]).into()
    );
    assert_eq!(
        parse(r#"{"type": "int-box", "low": 0, "high": 256, "dtype": "uint8", "shape": [84, 84, 4]}"#),
        IntBox::new(256)
            .unwrap()
            .with_dtype(Dtype::Uint8)
            .unwrap()
            .with_shape([84, 84, 4])
            .into()
    );
}

#[test]
fn array_bounds_give_per_element_bounds_and_the_shape() {
    let s = parse(r#"{"type": "float-box", "low": [[-1, -2], [-3, "-inf"]], "high": 4}"#);
    let Space::Float(b) = &s else { panic!("{s}") };
    assert_eq!(s.shape().unwrap(), &[2, 2]);
    assert_eq!(
        b.bounds(),
        &FloatBounds::PerElement {
            low: vec![-1.0, -2.0, -3.0, f64::NEG_INFINITY],
            high: vec![4.0; 4]
        }
    );
}

#[test]
fn containers_from_plain_json_and_from_typed_forms() {
    let a = parse(r#"{"a": "float", "b": ["bool", {"type": "int-box", "high": 2}]}"#);
    let b = parse(
        r#"{"type": "dict", "spec": {"b": {"type": "tuple", "spec": ["bool", {"type": "int-box", "high": 2}]}, "a": "float"}}"#,
    );
    let c = parse(r#"{"type": "dict", "a": "float", "b": ["bool", {"type": "int-box", "high": 2}]}"#);
    assert_eq!(a, b);
    assert_eq!(a, c);
    let keys: Vec<String> = a.flatten().into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["/a", "/b/_T0_", "/b/_T1_"]);
}

#[test]
fn container_ranks_reach_every_leaf() {
    let s = parse(
        r#"{"type": "dict", "spec": {"x": "float", "y": ["bool"]}, "add_batch_rank": true, "add_time_rank": true, "time_major": true}"#,
    );
    for (key, leaf) in s.flatten() {
        assert_eq!(
            leaf.ranks(),
            Some(Ranks {
                batch: true,
                time: true,
                time_major: true
            }),
            "{key}"
        );
    }
}

#[test]
fn canonical_json_reads_back_equal() {
    let s = parse(
        r#"{"obs": {"type": "float-box", "shape": [2], "low": [0, "-inf"], "high": ["inf", 1], "dtype": "float64", "add_time_rank": true}, "act": {"type": "int-box", "high": 4, "add_batch_rank": true}}"#,
    );
    let text = serde_json::to_string(&s).unwrap();
    let back: Space = serde_json::from_str(&text).unwrap();
    assert_eq!(back, s, "{text}");
}

//! Bad space specs give a `SpaceError` that names the problem and the place, never a panic.

use rlgraph_spaces::{Space, SpaceError};

fn parse(text: &str) -> SpaceError {
    Space::from_json_str(text).expect_err(text)
}

#[test]
fn unknown_type_is_named() {
    let err = parse(r#"{"obs": {"type": "float-bx", "shape": [2]}}"#);
    assert_eq!(
        err,
        SpaceError::UnknownType {
            at: "/obs".into(),
            type_name: "float-bx".into()
        }
    );
    assert!(err.to_string().contains("known types"), "{err}");
    assert!(matches!(parse(r#""quaternion""#), SpaceError::UnknownType { .. }));
}

#[test]
fn low_greater_than_high_is_rejected() {
    let err = parse(r#"{"type": "float-box", "shape": [2], "low": 1.0, "high": -1.0}"#);
    assert!(
        matches!(&err, SpaceError::InvalidBounds { at, reason } if at == "(root)" && reason.contains("low (1) is greater than high (-1)")),
        "{err}"
    );
    let err = parse(r#"[{"type": "float-box", "low": [0.0, 2.0], "high": [1.0, 1.0]}]"#);
    assert!(
        matches!(&err, SpaceError::InvalidBounds { at, reason } if at == "/_T0_" && reason.contains("element 1")),
        "{err}"
    );
    let err = parse(r#"{"type": "int-box", "low": 5, "high": 5}"#);
    assert!(
        matches!(&err, SpaceError::InvalidBounds { reason, .. } if reason.contains("exclusive")),
        "{err}"
    );
}

#[test]
fn negative_or_non_integer_shapes_are_rejected() {
    let err = parse(r#"{"a": {"type": "float-box", "shape": [2, -3]}}"#);
    assert!(
        matches!(&err, SpaceError::InvalidShape { at, reason } if at == "/a" && reason.contains("-3 is negative")),
        "{err}"
    );
    let err = parse(r#"{"type": "bool-box", "shape": [2.5]}"#);
    assert!(
        matches!(&err, SpaceError::InvalidShape { reason, .. } if reason.contains("2.5 is not an integer")),
        "{err}"
    );
    let err = parse(r#"{"type": "int-box", "high": 3, "shape": "big"}"#);
    assert!(matches!(err, SpaceError::InvalidShape { .. }), "{err}");
    let err = parse(r#"{"type": "float-box", "shape": [3], "low": [0, 0], "high": 1}"#);
    assert!(
        matches!(&err, SpaceError::InvalidShape { reason, .. } if reason.contains("3 elements")),
        "{err}"
    );
}

#[test]
fn non_string_dict_keys_are_rejected() {
    // JSON itself only has string keys; a bare number as key is the mistake users make.
    let err = parse(r#"{"type": "dict", "spec": {1: "float"}}"#);
    assert!(matches!(err, SpaceError::NonStringKey { line: 1, .. }), "{err}");
    // Keys that would make flat keys ambiguous are refused too.
    let err = parse(r#"{"a/b": "float"}"#);
    assert!(
        matches!(&err, SpaceError::InvalidKey { key, .. } if key == "a/b"),
        "{err}"
    );
    let err = parse(r#"{"x": {"_T0_": "float"}}"#);
    assert!(
        matches!(&err, SpaceError::InvalidKey { at, key, .. } if at == "/x" && key == "_T0_"),
        "{err}"
    );
}

#[test]
fn malformed_json_is_reported_with_its_position() {
    let err = parse("{\"a\": \"float\",\n \"b\": }");
    assert!(matches!(err, SpaceError::MalformedJson { line: 2, .. }), "{err}");
    assert!(matches!(parse(""), SpaceError::MalformedJson { .. }));
}

#[test]
fn unknown_keys_and_wrong_json_kinds_are_errors_not_silence() {
    let err = parse(r#"{"type": "float-box", "shape": [2], "hihg": 1.0}"#);
    assert!(
        matches!(&err, SpaceError::UnknownKey { key, allowed, .. } if key == "hihg" && allowed.contains("high")),
        "{err}"
    );
    let err = parse(r#"{"type": "float-box", "add_batch_rank": "yes"}"#);
    assert!(
        matches!(&err, SpaceError::WrongJson { field, .. } if field == "add_batch_rank"),
        "{err}"
    );
    let err = parse(r#"{"type": "int-box", "high": 2.5}"#);
    assert!(
        matches!(&err, SpaceError::WrongJson { field, .. } if field == "high"),
        "{err}"
    );
    let err = parse(r#"{"type": "float-box", "dtype": "int32"}"#);
    assert!(
        matches!(&err, SpaceError::WrongJson { field, .. } if field == "dtype"),
        "{err}"
    );
    assert!(matches!(parse("3"), SpaceError::WrongJson { .. }));
    assert!(matches!(parse(r#"{"type": 3}"#), SpaceError::WrongJson { .. }));
}

#[test]
fn values_that_do_not_fit_are_errors_not_panics() {
    let space = Space::from_json_str(r#"{"type": "int-box", "high": 4, "shape": [2]}"#).unwrap();
    for json in [
        "[1, 2, 3]",
        "[[1], [2]]",
        "[1, [2]]",
        "[1, 2.5]",
        "[1, \"x\"]",
        "{\"a\": 1}",
        "[3000000000, 1]",
    ] {
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        assert!(space.value_from_json(&v).is_err(), "{json}");
    }
}

#[test]
fn shapes_beyond_any_machine_are_refused_before_anything_is_allocated() {
    // 2^63 x 2 overflows usize; 10^12 floats would be 4 TB. Both name the shape and the limit.
    for text in [
        r#"{"type": "float-box", "shape": [9223372036854775808, 2]}"#,
        r#"{"type": "float-box", "shape": [1000000000000]}"#,
        r#"{"a": {"type": "int-box", "high": 3, "shape": [65536, 65536]}}"#,
    ] {
        let err = parse(text);
        assert!(
            matches!(&err, SpaceError::InvalidShape { reason, .. } if reason.contains("elements per item") && reason.contains("268435456")),
            "{text}: {err}"
        );
    }
    // The limit itself is fine to parse (nothing is allocated by a space).
    assert!(Space::from_json_str(r#"{"type": "float-box", "shape": [16384, 16384]}"#).is_ok());
}

#[test]
fn bounds_near_f64s_limits_sample_inside_them_and_float32_refuses_what_it_cannot_hold() {
    use rand::SeedableRng;
    // high - low overflows to infinity here, which a uniform range cannot take.
    let wide =
        Space::from_json_str(r#"{"type": "float-box", "low": -1e308, "high": 1e308, "dtype": "float64"}"#).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let samples = wide.sample(Some(1000), &mut rng);
    let rlgraph_spaces::Value::Float64(a) = &samples else {
        panic!("{samples:?}")
    };
    assert!(a.data().iter().all(|x| x.is_finite() && (-1e308..=1e308).contains(x)));
    assert!(
        a.data().iter().any(|x| *x < -1e300) && a.data().iter().any(|x| *x > 1e300),
        "spread over the range"
    );
    let err = parse(r#"{"type": "float-box", "low": -1e308, "high": 1e308}"#);
    assert!(
        matches!(&err, SpaceError::InvalidBounds { reason, .. } if reason.contains("float32") && reason.contains("float64")),
        "{err}"
    );
}

#[test]
fn float32_values_beyond_float32s_range_are_refused_not_made_infinite() {
    let space = Space::from_json_str(r#"{"type": "float-box", "shape": [2]}"#).unwrap();
    let err = space
        .value_from_json(&serde_json::json!([1.0, 1e39]))
        .unwrap_err()
        .to_string();
    assert!(err.contains("element 1") && err.contains("float32's range"), "{err}");
    assert!(space.value_from_json(&serde_json::json!([-3.4e38, 3.4e38])).is_ok());
    // float64 holds it.
    let wide = Space::from_json_str(r#"{"type": "float-box", "shape": [2], "dtype": "float64"}"#).unwrap();
    assert!(wide.value_from_json(&serde_json::json!([1.0, 1e39])).is_ok());
}

//! The spec readers' tables and helpers: initializer specs, the key table that the readers and
//! the config schema share, and the schema's spelling of type names.

mod initializers {
    use rlgraph_components::initializer_spec::parse_initializer;
    use rlgraph_core::{FanMode, Initializer, Result, ScalingDistribution};
    use serde_json::{json, Value as Json};

    fn parse(spec: Json) -> Result<Initializer> {
        parse_initializer(Some(&spec), Initializer::Zeros, "root/dense/weights_spec")
    }

    #[test]
    fn names_and_objects_give_their_definitions() {
        let torch =
            parse(json!({"type": "variance_scaling", "scale": 0.5, "mode": "fan_avg", "distribution": "uniform"}));
        assert_eq!(
            torch.unwrap(),
            Initializer::VarianceScaling {
                scale: 0.5,
                mode: FanMode::FanAvg,
                distribution: ScalingDistribution::Uniform
            }
        );
        // TensorFlow's defaults: fan-in, truncated normal, scale 1 (LeCun normal).
        assert_eq!(
            parse(json!({"type": "variance_scaling"})).unwrap(),
            parse(json!("lecun_normal")).unwrap()
        );
        assert_eq!(
            parse(json!("he_uniform")).unwrap(),
            Initializer::VarianceScaling {
                scale: 2.0,
                mode: FanMode::FanIn,
                distribution: ScalingDistribution::Uniform
            }
        );
        assert_eq!(
            parse(json!({"type": "random_uniform", "minval": -0.5, "maxval": 0.25})).unwrap(),
            Initializer::Uniform { low: -0.5, high: 0.25 }
        );
        assert_eq!(
            parse(json!({"type": "truncated_normal", "stddev": 0.5})).unwrap(),
            Initializer::TruncatedNormal { mean: 0.0, std: 0.5 }
        );
    }

    #[test]
    fn rlgraphs_bare_truncated_normal_cuts_at_two_over_root_fan_in() {
        // RLgraph: stddev 1 / sqrt(shape[0]), cut at two of them: 2 / sqrt(100) = 0.2 for [100, 10].
        let init = parse(json!("truncated_normal")).unwrap();
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(0);
        let v = rlgraph_core::VarDecl::new("w", [100, 10], init)
            .initial_value(&mut rng)
            .unwrap()
            .data
            .to_f64();
        let max = v.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        assert!(max <= 0.2 + 1e-12 && max > 0.19, "{max}");
    }

    #[test]
    fn bad_parameters_are_refused_by_key() {
        let message = |spec: Json| parse(spec).unwrap_err().to_string();
        let m = message(json!({"type": "random_uniform", "minval": 1, "maxval": 1}));
        assert!(
            m.contains("root/dense/weights_spec") && m.contains("minval (1) must be below maxval (1)"),
            "{m}"
        );
        let m = message(json!({"type": "variance_scaling", "mode": "fan_sideways"}));
        assert!(m.contains("unknown mode \"fan_sideways\""), "{m}");
        let m = message(json!({"type": "variance_scaling", "scale": -1}));
        assert!(m.contains("scale must be above 0, got -1"), "{m}");
        let m = message(json!({"type": "variance_scaling", "distribuiton": "uniform"}));
        assert!(
            m.contains("\"variance_scaling\" takes no key \"distribuiton\"; it takes scale, mode, distribution"),
            "{m}"
        );
        let m = message(json!({"type": "he_uniform", "scale": 2}));
        assert!(m.contains("takes no key \"scale\"; it has no parameters"), "{m}");
        let m = message(json!({"type": "normal", "std": -1}));
        assert!(m.contains("std must be above 0, got -1"), "{m}");
        let m = message(json!({"type": "normal", "stddev": "wide"}));
        assert!(m.contains("stddev must be a finite number, got \"wide\""), "{m}");
        let m = message(json!("Kaiming_Uniform"));
        assert!(
            m.contains("unknown initializer \"Kaiming_Uniform\"") && m.contains("variance_scaling"),
            "{m}"
        );
    }
}

mod spec_keys {
    use rlgraph_components::spec_keys::{SpecKeys, ACTION_ADAPTER, ALL};
    use rlgraph_core::{CoreError, SpecOnly};
    use serde_json::{json, Value as Json};

    /// What the reader says of `probe`'s unknown key `zz_probe`, if that is what it refuses.
    fn refused_keys(result: rlgraph_core::Result<()>) -> Vec<String> {
        match result {
            Err(CoreError::Config { at, reason }) if at == "at.zz_probe" => {
                let (_, listed) = reason
                    .split_once("this spec takes: type, ")
                    .unwrap_or_else(|| panic!("not the unknown-key error: {reason}"));
                listed.split(", ").map(str::to_string).collect()
            }
            other => panic!("expected zz_probe refused, got {other:?}"),
        }
    }

    fn probe(entry: &SpecKeys, name: &str) -> Json {
        let mut spec = json!({"type": name, "zz_probe": 1});
        if let Some(selector) = entry.selector {
            spec[selector] = json!(true);
        }
        spec
    }

    // The readers decide which key list a type gets; each entry must be the list its types
    // actually get, so the schema made from this table refuses what the readers refuse.
    #[test]
    fn every_type_name_is_read_with_exactly_its_entrys_keys() {
        for entry in ALL {
            let want: Vec<String> = entry.keys.iter().map(|k| k.to_string()).collect();
            for name in entry.names {
                let spec = probe(entry, name);
                let got = match entry.group {
                    "optimizer" => refused_keys(rlgraph_components::OptimizerSpec::parse(&spec, "at").map(drop)),
                    "schedule" => refused_keys(rlgraph_components::TimeDependent::parse(&spec, "at").map(drop)),
                    _ => refused_keys(rlgraph_components::from_spec::<SpecOnly>(&spec, "at").map(drop)),
                };
                assert_eq!(got, want, "{name}");
                // Optimizers may also stand in a network's layer list.
                if entry.group == "optimizer" {
                    assert_eq!(
                        refused_keys(rlgraph_components::from_spec::<SpecOnly>(&spec, "at").map(drop)),
                        want,
                        "{name} as a component"
                    );
                }
            }
        }
        let adapter = rlgraph_components::AdapterSpec {
            spec: json!({"scope": "a", "zz_probe": 1}),
            at: "at".into(),
        };
        assert_eq!(
            refused_keys(adapter.check()),
            ACTION_ADAPTER.keys.iter().map(|k| k.to_string()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn the_table_names_each_type_once_per_group_and_variant() {
        let mut seen = std::collections::BTreeSet::new();
        for entry in ALL {
            for name in entry.names {
                assert!(
                    seen.insert((entry.group, entry.selector, *name)),
                    "{name} twice in {}",
                    entry.group
                );
                assert_eq!(
                    rlgraph_components::spec::normalize_type(name),
                    *name,
                    "names are kept normalized"
                );
            }
        }
    }
}

mod type_patterns {
    use rlgraph_components::spec_schema::type_pattern;

    #[test]
    fn type_patterns_spell_names_as_rlgraph_does() {
        let p = type_pattern(&["denselayer", "dense"]);
        assert_eq!(
            p,
            "^[-_]*(?:[dD][-_]*[eE][-_]*[nN][-_]*[sS][-_]*[eE][-_]*[lL][-_]*[aA][-_]*[yY][-_]*[eE][-_]*[rR]|[dD][-_]*[eE][-_]*[nN][-_]*[sS][-_]*[eE])[-_]*$"
        );
        assert_eq!(
            type_pattern(&["conv2d"]),
            "^[-_]*(?:[cC][-_]*[oO][-_]*[nN][-_]*[vV][-_]*2[-_]*[dD])[-_]*$"
        );
    }
}

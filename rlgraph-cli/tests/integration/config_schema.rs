//! The config schema (`docs/config.schema.json`, what `rlgraph schema` prints) against the
//! config reader: over every shipped config and a set of broken ones, the schema, checked by
//! Python's `jsonschema` (an implementation of its own), refuses exactly the configs
//! `executors::check_config` refuses, and for the same key. Skipped without the test venv's
//! Python (an error where `RLGRAPH_REQUIRE_GYM` is set).

use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// Every `.json` under `configs/` but the benchmark suites (which list runs, not agents).
fn shipped_configs() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("configs/ lists") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "json") {
                out.push(path);
            }
        }
    }
    let mut all = vec![];
    walk(&Path::new(ROOT).join("configs"), &mut all);
    let suites = Path::new(ROOT).join("configs/benchmarks");
    all.retain(|p| p.parent() != Some(suites.as_path()));
    all.sort();
    all
}

fn read(path: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(path).expect("readable")).expect("JSON")
}

fn config(name: &str) -> Json {
    read(&Path::new(ROOT).join("configs").join(name))
}

/// `base` with the value at each JSON pointer replaced or added.
fn with(mut base: Json, edits: &[(&str, Json)]) -> Json {
    for (pointer, value) in edits {
        let (parent, key) = pointer.rsplit_once('/').expect("a pointer");
        let target = base
            .pointer_mut(parent)
            .unwrap_or_else(|| panic!("{parent} in the base"));
        match target {
            Json::Object(map) => {
                map.insert(key.to_string(), value.clone());
            }
            Json::Array(items) => items[key.parse::<usize>().expect("an index")] = value.clone(),
            _ => panic!("{parent} holds no keys"),
        }
    }
    base
}

/// Broken (and a few unusual but valid) configs, each with the key the reader and the schema
/// should both refuse (`None`: both accept it).
fn cases() -> Vec<(&'static str, Json, Option<&'static str>)> {
    let dqn = || config("dqn-cartpole.json");
    let ppo = || config("ppo-cartpole.json");
    let ac = || config("actor-critic-cartpole.json");
    vec![
        (
            "a top-level typo",
            with(dqn(), &[("/discont", json!(0.9))]),
            Some("discont"),
        ),
        (
            "an update_spec typo",
            with(dqn(), &[("/update_spec/batchsize", json!(8))]),
            Some("batchsize"),
        ),
        (
            "a gpu_spec typo",
            with(dqn(), &[("/execution_spec", json!({"gpu_spec": {"gpus": true}}))]),
            Some("gpus"),
        ),
        (
            "a layer typo",
            with(dqn(), &[("/network_spec/0/unit", json!(8))]),
            Some("unit"),
        ),
        (
            "an unknown layer type",
            with(dqn(), &[("/network_spec/0/type", json!("dnese"))]),
            Some("type"),
        ),
        (
            "RLgraph's spelling of a layer type",
            with(dqn(), &[("/network_spec/0/type", json!("Dense_Layer"))]),
            None,
        ),
        (
            "an optimizer key of another optimizer",
            with(dqn(), &[("/optimizer_spec/momentum", json!(0.9))]),
            Some("momentum"),
        ),
        (
            "a preprocessor typo",
            with(
                dqn(),
                &[("/preprocessing_spec", json!([{"type": "divide", "divsor": 2}]))],
            ),
            Some("divsor"),
        ),
        (
            "a schedule typo",
            with(
                dqn(),
                &[(
                    "/exploration_spec/epsilon_spec/decay_spec",
                    json!({"type": "linear", "form": 1.0}),
                )],
            ),
            Some("form"),
        ),
        (
            "a reshape mixing variants",
            with(
                dqn(),
                &[(
                    "/network_spec/0",
                    json!({"type": "reshape", "fold_time_rank": true, "flatten": true}),
                )],
            ),
            Some("flatten"),
        ),
        (
            "a reshape folding the time rank",
            with(
                dqn(),
                &[(
                    "/network_spec",
                    json!([{"type": "reshape", "fold_time_rank": true}, {"type": "dense", "units": 4}]),
                )],
            ),
            None,
        ),
        (
            "an action adapter typo",
            with(
                ppo(),
                &[("/policy_spec", json!({"action_adapter_spec": {"activaton": "tanh"}}))],
            ),
            Some("activaton"),
        ),
        (
            "n-step returns for PPO",
            with(ppo(), &[("/observe_spec", json!({"n_step": 3}))]),
            Some("n_step"),
        ),
        (
            "n-step returns for DQN",
            with(dqn(), &[("/observe_spec/n_step", json!(3))]),
            None,
        ),
        (
            "a PPO key for actor-critic",
            with(ac(), &[("/clip_ratio", json!(0.2))]),
            Some("clip_ratio"),
        ),
        (
            "a network for the random agent",
            with(config("random-cartpole.json"), &[("/network_spec", json!([]))]),
            Some("network_spec"),
        ),
        (
            "a normalize_spec typo",
            with(ppo(), &[("/normalize_spec", json!({"clip_obs": 5.0}))]),
            Some("clip_obs"),
        ),
        (
            "an optimizer without a type (gradient descent)",
            with(dqn(), &[("/optimizer_spec", json!({"learning_rate": 0.01}))]),
            None,
        ),
        (
            "an Adam key for an optimizer without a type",
            with(
                dqn(),
                &[("/optimizer_spec", json!({"learning_rate": 0.01, "beta1": 0.9}))],
            ),
            Some("beta1"),
        ),
        (
            "networks in a layer list, as a list and as RLgraph's layers object",
            with(
                dqn(),
                &[(
                    "/network_spec",
                    json!([[{"type": "dense", "units": 4}], {"layers": [{"type": "dense", "units": 4}]}]),
                )],
            ),
            None,
        ),
        (
            "a typo in a network inside a layer list",
            with(
                dqn(),
                &[("/network_spec", json!([{"layers": [{"type": "dense", "unit": 4}]}]))],
            ),
            Some("unit"),
        ),
        (
            "a typo in a residual unit",
            with(
                dqn(),
                &[(
                    "/network_spec",
                    json!([{"type": "residual", "residual_unit": {"type": "dense", "unitz": 4}}]),
                )],
            ),
            Some("unitz"),
        ),
        (
            "actor-critic's weight for PPO",
            with(ppo(), &[("/weight_pg", json!(1.0))]),
            Some("weight_pg"),
        ),
        (
            "priorities for PPO's memory",
            with(ppo(), &[("/memory_spec/alpha", json!(0.6))]),
            Some("alpha"),
        ),
        (
            "a power for a linear schedule",
            with(
                dqn(),
                &[(
                    "/exploration_spec/epsilon_spec/decay_spec",
                    json!({"type": "linear", "from": 1.0, "to": 0.1, "power": 2.0}),
                )],
            ),
            Some("power"),
        ),
        (
            "a power for a polynomial schedule",
            with(
                dqn(),
                &[(
                    "/exploration_spec/epsilon_spec/decay_spec",
                    json!({"type": "polynomial_decay", "from": 1.0, "to": 0.1, "power": 2.0}),
                )],
            ),
            None,
        ),
        (
            "normalization for the random agent",
            with(config("random-cartpole.json"), &[("/normalize_spec", json!({}))]),
            Some("normalize_spec"),
        ),
        (
            "a GA3C setting's typo",
            with(dqn(), &[("/execution_spec", json!({"ga3c_spec": {"num_agent": 2}}))]),
            Some("num_agent"),
        ),
        (
            "GA3C settings",
            with(
                dqn(),
                &[(
                    "/execution_spec",
                    json!({"executor": "ga3c", "ga3c_spec": {"num_agents": 2, "t_max": 8}}),
                )],
            ),
            None,
        ),
        (
            "an unknown agent type",
            with(dqn(), &[("/type", json!("dqn2"))]),
            Some("type"),
        ),
        (
            "the schema named",
            with(dqn(), &[("/$schema", json!("../docs/config.schema.json"))]),
            None,
        ),
    ]
}

/// The schema's verdicts on `configs` from Python's `jsonschema`.
fn schema_verdicts(python: &str, configs: &[Json]) -> Vec<Json> {
    verdicts_of(python, "docs/config.schema.json", configs)
}

/// The verdicts of the schema at `schema` (from the repository's root) on `files`.
fn verdicts_of(python: &str, schema: &str, configs: &[Json]) -> Vec<Json> {
    use std::io::Write;
    let mut child = std::process::Command::new(python)
        .args(["scripts/check_config_schema.py", schema])
        .current_dir(ROOT)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python runs");
    let input = serde_json::to_vec(configs).expect("JSON");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&input)
        .expect("write the configs");
    let out = child.wait_with_output().expect("the validator ends");
    assert!(out.status.success(), "the validator failed");
    serde_json::from_slice(&out.stdout).expect("the validator's JSON")
}

/// Asserts that the reader and the schema agree on a config `what` (and, where `key` is the
/// broken key, that both errors name it); returns whether the schema took it.
fn agree(what: &str, reader: Result<(), String>, key: Option<&str>, verdict: &Json) -> bool {
    let schema_ok = verdict["valid"] == json!(true);
    assert_eq!(
        reader.is_ok(),
        schema_ok,
        "{what}: the reader says {reader:?}; the schema says {verdict}"
    );
    if let (Some(key), Err(e)) = (key, &reader) {
        assert!(e.contains(key), "{what}: the reader's error names {key}: {e}");
        assert!(
            verdict.to_string().contains(key),
            "{what}: the schema's errors name {key}: {verdict}"
        );
    }
    schema_ok
}

fn python() -> Option<String> {
    crate::common::python()
}

#[test]
fn the_schema_refuses_exactly_what_the_reader_refuses() {
    let Some(python) = python() else { return };
    let shipped = shipped_configs();
    assert!(shipped.len() > 30, "configs/ lists {} agent configs", shipped.len());
    let mut named: Vec<(String, Json, Option<&str>)> = shipped
        .iter()
        .map(|p| (p.display().to_string(), read(p), None))
        .collect();
    named.extend(cases().into_iter().map(|(what, c, key)| (what.to_string(), c, key)));
    let configs: Vec<Json> = named.iter().map(|(_, c, _)| c.clone()).collect();
    let verdicts = schema_verdicts(&python, &configs);
    let mut refused = vec![];
    for ((what, config, key), verdict) in named.iter().zip(&verdicts) {
        let reader = executors::check_config(config).map_err(|e| e.to_string());
        if !agree(what, reader, *key, verdict) && key.is_none() {
            refused.push(what.rsplit('/').next().unwrap_or(what).to_string());
        }
    }
    // Of RLgraph's own configs, a cluster spec and a network spec are not agent configs, and
    // the IMPALA one steps a Gym environment inside the agent; every other shipped config
    // is read.
    assert_eq!(
        refused,
        [
            "impala_agent_for_cartpole.json",
            "impala_distributed_clusterspec.json",
            "test_lstm_nn.json"
        ]
    );
}

/// The project's own configs (not RLgraph's copies) name the schema, so an editor checks them
/// as they are typed.
#[test]
fn the_projects_configs_name_the_schema() {
    for path in shipped_configs() {
        if path.components().any(|c| c.as_os_str() == "rlgraph") {
            continue;
        }
        let json = read(&path);
        let named = json["$schema"]
            .as_str()
            .unwrap_or_else(|| panic!("{} names no $schema", path.display()));
        let target = path.parent().expect("a folder").join(named);
        assert!(
            target.canonicalize().ok() == Path::new(ROOT).join("docs/config.schema.json").canonicalize().ok(),
            "{}: $schema {named} is not docs/config.schema.json",
            path.display()
        );
    }
}

/// The shipped benchmark suites.
fn shipped_suites() -> Vec<PathBuf> {
    let dir = Path::new(ROOT).join("configs/benchmarks");
    let mut suites: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the suites' folder lists")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    suites.sort();
    suites
}

/// The suite schema (`docs/suite.schema.json`) against the suite reader's keys, as above.
#[test]
fn the_suite_schema_refuses_exactly_what_the_suite_reader_refuses() {
    let Some(python) = python() else { return };
    let tiny = || read(&Path::new(ROOT).join("configs/benchmarks/tiny.json"));
    let mut cases: Vec<(String, Json, Option<&str>)> = shipped_suites()
        .iter()
        .map(|p| (p.display().to_string(), read(p), None))
        .collect();
    assert!(cases.len() >= 5, "{} suites", cases.len());
    cases.extend([
        (
            "a suite typo".to_string(),
            with(tiny(), &[("/descripton", json!("x"))]),
            Some("descripton"),
        ),
        (
            "a row typo".to_string(),
            with(tiny(), &[("/rows/0/seed", json!([1]))]),
            Some("seed"),
        ),
        (
            "a published typo".to_string(),
            with(
                tiny(),
                &[("/rows/0/published", json!({"mean": 1.0, "stdev": 0.0, "source": "s"}))],
            ),
            Some("stdev"),
        ),
        (
            "an unknown measure".to_string(),
            with(tiny(), &[("/rows/0/measure", json!("best"))]),
            Some("best"),
        ),
        (
            "the training measure".to_string(),
            with(tiny(), &[("/rows/0/measure", json!("training"))]),
            None,
        ),
    ]);
    let suites: Vec<Json> = cases.iter().map(|(_, c, _)| c.clone()).collect();
    let verdicts = verdicts_of(&python, "docs/suite.schema.json", &suites);
    for ((what, suite, key), verdict) in cases.iter().zip(&verdicts) {
        let reader = serde_json::from_value::<rlgraph_bench::suite::Suite>(suite.clone()).map(drop);
        let schema_ok = agree(what, reader.map_err(|e| e.to_string()), *key, verdict);
        assert!(key.is_some() || schema_ok, "{what} is refused: {verdict}");
    }
    for path in shipped_suites() {
        assert_eq!(
            read(&path)["$schema"],
            json!("../../docs/suite.schema.json"),
            "{} names the suite schema",
            path.display()
        );
    }
}

//! A benchmark suite: named rows of (config, environment, budget, seeds), each with the
//! published result it is held against, read from `configs/benchmarks/<suite>.json`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Where the shipped suites live, relative to the working directory.
pub const SUITES_DIR: &str = "configs/benchmarks";

/// A suite as its file describes it.
#[derive(Clone, Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    /// The suite schema, for editors (`docs/suite.schema.json`).
    #[serde(rename = "$schema", default)]
    pub schema: Option<String>,
    /// The suite's name.
    pub name: String,
    /// What the suite is for, shown in the report.
    #[serde(default)]
    pub description: String,
    /// The rows, in the report's order.
    pub rows: Vec<Row>,
}

/// One row: a config trained on an environment for a budget, once per seed.
#[derive(Clone, Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// The row's name (unique in its suite; names the run directories).
    pub name: String,
    /// The agent config (RLgraph's JSON format). A relative path is looked up beside the
    /// suite file first, then from the working directory (the shipped suites name paths from
    /// the repository's root); [`Suite::load`] leaves the path that exists.
    pub config: PathBuf,
    /// The environment id.
    pub env: String,
    /// The environment the greedy rounds play, where it differs from the training one (Atari
    /// trains with a life lost ending the episode and clipped rewards, and is scored on whole
    /// games); it must have the same spaces.
    #[serde(default)]
    pub eval_env: Option<String>,
    /// Environment steps per run.
    pub timesteps: u64,
    /// One run per seed.
    pub seeds: Vec<u64>,
    /// Parallel environment copies.
    #[serde(default = "one")]
    pub num_envs: usize,
    /// Steps between greedy evaluation rounds (the learning curve's points).
    pub eval_every: u64,
    /// Episodes per evaluation round.
    #[serde(default = "twenty")]
    pub eval_episodes: usize,
    /// The return a run must reach (its first evaluation at or above it counts as solved).
    pub threshold: Option<f64>,
    /// The published result this row is held against.
    pub published: Option<Published>,
    /// Which return `threshold` and `published` are in.
    #[serde(default)]
    pub measure: Measure,
}

/// Which return a row is held against.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Measure {
    /// The greedy evaluation rounds' mean return.
    #[default]
    Greedy,
    /// The mean return of the last 100 training episodes at each round: the measure of
    /// papers that publish training curves (MinAtar's among them).
    Training,
}

impl Row {
    /// The environment the greedy rounds play.
    pub fn eval_env(&self) -> &str {
        self.eval_env.as_deref().unwrap_or(&self.env)
    }
}

/// A published result: the mean and standard deviation of the return, and where it is from.
#[derive(Clone, Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Published {
    /// The mean return.
    pub mean: f64,
    /// Its standard deviation.
    pub std: f64,
    /// Where it is published (repository and file, with the budget it was reached at).
    pub source: String,
}

fn one() -> usize {
    1
}

fn twenty() -> usize {
    20
}

impl Suite {
    /// Keeps each row's first `n` seeds (`rlgraph bench --seeds N`).
    pub fn first_seeds(&mut self, n: u64) {
        for row in &mut self.rows {
            row.seeds.truncate(usize::try_from(n).unwrap_or(usize::MAX));
        }
    }

    /// Keeps only `seed` in every row, to spread a suite's seeds over processes or machines;
    /// refused, naming the row, where a row does not list it.
    pub fn only_seed(&mut self, seed: u64) -> Result<(), String> {
        if let Some(row) = self.rows.iter().find(|r| !r.seeds.contains(&seed)) {
            return Err(format!(
                "--seed {seed}: row {} runs seeds {:?}, not {seed}",
                row.name, row.seeds
            ));
        }
        for row in &mut self.rows {
            row.seeds = vec![seed];
        }
        Ok(())
    }

    /// The suite `name` (a shipped suite's name, or a path to a suite file), with only the
    /// rows named in `only` when given; unknown suites and rows are named with what exists.
    pub fn load(name: &str, only: Option<&[String]>) -> Result<Suite, String> {
        let path = match Path::new(name).is_file() {
            true => PathBuf::from(name),
            false => Path::new(SUITES_DIR).join(format!("{name}.json")),
        };
        let text = std::fs::read_to_string(&path).map_err(|_| {
            format!(
                "no suite {name:?}: the shipped suites are {} (in {SUITES_DIR}/), or give a suite file's path",
                shipped().join(", ")
            )
        })?;
        let mut suite: Suite =
            serde_json::from_str(&text).map_err(|e| format!("{}: not a benchmark suite: {e}", path.display()))?;
        suite.check(&path)?;
        suite.find_configs(&path)?;
        if let Some(only) = only {
            let names: Vec<&str> = suite.rows.iter().map(|r| r.name.as_str()).collect();
            if let Some(unknown) = only.iter().find(|n| !names.contains(&n.as_str())) {
                return Err(format!(
                    "--rows: suite {} has no row {unknown:?}; its rows are {}",
                    suite.name,
                    names.join(", ")
                ));
            }
            suite.rows.retain(|r| only.contains(&r.name));
        }
        Ok(suite)
    }

    /// Points each row's relative config path at the file beside the suite, where there is
    /// one, else at the working directory's; a row whose config is in neither is refused.
    fn find_configs(&mut self, path: &Path) -> Result<(), String> {
        let folder = path.parent().unwrap_or(Path::new(""));
        for (i, r) in self.rows.iter_mut().enumerate() {
            let beside = folder.join(&r.config);
            if r.config.is_relative() && beside.is_file() {
                r.config = beside;
            } else if !r.config.is_file() {
                let places = match r.config.is_relative() {
                    true => format!("beside the suite ({}) nor in the working directory", beside.display()),
                    false => "there".to_string(),
                };
                return Err(format!(
                    "{}: rows[{i}].config: no file {} {places}",
                    path.display(),
                    r.config.display()
                ));
            }
        }
        Ok(())
    }

    pub(crate) fn check(&self, path: &Path) -> Result<(), String> {
        let at = |i: usize, key: &str| format!("{}: rows[{i}].{key}", path.display());
        if self.rows.is_empty() {
            return Err(format!("{}: rows: a suite needs at least one row", path.display()));
        }
        for (i, r) in self.rows.iter().enumerate() {
            if self.rows[..i].iter().any(|o| o.name == r.name) {
                return Err(format!(
                    "{}: the name {:?} is taken by an earlier row",
                    at(i, "name"),
                    r.name
                ));
            }
            let safe = !r.name.is_empty() && r.name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
            if !safe || r.name.starts_with('.') {
                return Err(format!(
                    "{}: {:?} names a directory: use letters, digits, '-', '_' and '.'",
                    at(i, "name"),
                    r.name
                ));
            }
            if r.seeds.is_empty() {
                return Err(format!("{}: give at least one seed", at(i, "seeds")));
            }
            if let Some(s) = r
                .seeds
                .iter()
                .enumerate()
                .find_map(|(k, s)| r.seeds[..k].contains(s).then_some(s))
            {
                return Err(format!("{}: seed {s} is given twice", at(i, "seeds")));
            }
            if r.timesteps == 0 || r.eval_every == 0 || r.num_envs == 0 || r.eval_episodes == 0 {
                return Err(format!(
                    "{}: timesteps, eval_every, num_envs and eval_episodes must be at least 1",
                    at(i, "")
                ));
            }
            if r.timesteps % r.eval_every != 0 {
                return Err(format!(
                    "{}: {} steps are not whole intervals of {}: the last evaluation round must be at the end",
                    at(i, "eval_every"),
                    r.timesteps,
                    r.eval_every
                ));
            }
        }
        Ok(())
    }
}

/// Where the suite schema says it lives, for editors that follow `$id`.
pub const SUITE_SCHEMA_ID: &str = "https://rlgraph-rs.dev/suite.schema.json";

/// The JSON Schema (draft 2020-12) of a suite file, made from [`Suite`].
pub fn suite_schema() -> serde_json::Value {
    let generator = schemars::SchemaGenerator::new(schemars::generate::SchemaSettings::draft2020_12());
    let mut schema = generator.into_root_schema_for::<Suite>().to_value();
    schema["$id"] = SUITE_SCHEMA_ID.into();
    schema["title"] = "rlgraph-rs benchmark suite".into();
    schema
}

/// The names of the shipped suites.
pub fn shipped() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(SUITES_DIR)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            name.strip_suffix(".json").map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rows_config_is_found_beside_its_suite_then_in_the_working_directory() {
        let dir = std::env::temp_dir().join(format!("rlgraph-suite-paths-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("mine")).unwrap();
        std::fs::write(dir.join("mine/dqn.json"), "{}").unwrap();
        let row = |name: &str, config: &str| {
            format!(
                r#"{{"name": "{name}", "config": "{config}", "env": "CartPole-v1", "timesteps": 10, "seeds": [0], "eval_every": 10, "threshold": null, "published": null}}"#
            )
        };
        // The tests run in the crate's folder: the working directory's configs are its
        // parent's (the repository root).
        let shipped = "../configs/benchmarks/classic/dqn-cartpole.json";
        let suite = dir.join("suite.json");
        let write = |rows: &[String]| {
            std::fs::write(
                &suite,
                format!(r#"{{"name": "s", "description": "", "rows": [{}]}}"#, rows.join(",")),
            )
            .unwrap()
        };
        write(&[row("beside", "mine/dqn.json"), row("cwd", shipped)]);
        let loaded = Suite::load(suite.to_str().unwrap(), None).unwrap();
        assert_eq!(loaded.rows[0].config, dir.join("mine/dqn.json"));
        assert_eq!(loaded.rows[1].config, PathBuf::from(shipped));
        write(&[row("missing", "mine/nope.json")]);
        let err = Suite::load(suite.to_str().unwrap(), None).unwrap_err();
        assert!(
            err.contains("rows[0].config: no file mine/nope.json beside the suite")
                && err.contains("mine/nope.json) nor in the working directory"),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

//! Running a suite: every row once per seed, each run's curve and summary written as it goes,
//! and the report at the end. Every row is checked (its config builds for its environment)
//! before any run starts; a run that fails is reported as failed and the others go on. A suite
//! too long for one sitting runs in pieces: with a pause mark each run checkpoints and stops,
//! and a resumed suite continues every unfinished run and keeps the finished ones.

use std::path::{Path, PathBuf};

use agents::Agent;
use executors::{ConfigFile, DriveOptions, Evaluation, RunLength, RunProgress, SingleThreadedWorker};
use rlgraph_core::spaces::Space;
use rlgraph_core::{write_atomically, Backend};
use rlgraph_envs::VectorEnv;
use serde_json::{json, Value as Json};

use crate::report::{html, row_plots, summarize, Context, CurvePoint, RunResult};
use crate::suite::{Row, Suite};

/// A paused run's checkpoint, in its run directory.
const CHECKPOINT: &str = "checkpoint.safetensors";

/// How a suite runs: where, how much of each row, and whether it continues an earlier sitting.
#[derive(Clone, Debug, Default)]
pub struct SuiteOptions {
    /// Where the runs (`<row>/seed-<s>/`), the plots, the report and `summary.json` go.
    pub out: PathBuf,
    /// Run this share of each row's steps (0 < share <= 1); the report then says its results
    /// are not comparable with the published ones.
    pub budget: Option<f64>,
    /// Pause every run at this step: checkpoint, curve and summary written, the next run starts.
    pub pause_at: Option<u64>,
    /// Continue the suite in `out`: finished runs kept, paused ones resumed, the rest started.
    pub resume: bool,
    /// Python processes for each run's bridged Gymnasium copies (default: one per core).
    pub bridge_processes: Option<usize>,
}

/// What the person running a suite sees of it; the suite itself writes only files.
pub trait SuiteObserver {
    /// A line to show: a run starting, resuming, kept, failing, or a note on a config.
    fn say(&mut self, line: &str);
    /// A run's progress: `step` of `steps`, and the mean return of an evaluation round that
    /// has just ended.
    fn progress(&mut self, step: u64, steps: u64, eval: Option<f64>);
    /// The current run has ended (its progress display can go).
    fn run_ended(&mut self) {}
}

/// Runs every row of `suite` on its seeds into `options.out`, writes each row's plots, the
/// report (`report.html`) and `summary.json`, and returns that summary. A config that does
/// not build for its row's environment stops the suite before its first run.
pub fn run_suite<B: Backend>(
    suite: &Suite,
    options: &SuiteOptions,
    observer: &mut dyn SuiteObserver,
) -> Result<Json, String> {
    // A suite made in code rather than loaded is held to the file's rules too: row names are
    // directories under `out`, and seeds must be there and distinct.
    suite.check(Path::new(&suite.name))?;
    if let Some(b) = options.budget.filter(|b| !(*b > 0.0 && *b <= 1.0)) {
        return Err(format!("budget {b}: a share above 0 and at most 1"));
    }
    if options.out.as_os_str().is_empty() {
        return Err("SuiteOptions.out: name the directory the runs and the report go to".into());
    }
    let mut problems = vec![];
    for row in &suite.rows {
        match preflight::<B>(row) {
            Ok(notes) => notes.iter().for_each(|note| observer.say(note)),
            Err(e) => problems.push(format!("row {}: {e}", row.name)),
        }
    }
    if !problems.is_empty() {
        return Err(format!("the suite cannot run:\n  {}", problems.join("\n  ")));
    }
    let out = &options.out;
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let total: usize = suite.rows.iter().map(|r| r.seeds.len()).sum();
    let mut done = 0;
    let mut results = vec![];
    for row in &suite.rows {
        let mut runs = vec![];
        for &seed in &row.seeds {
            done += 1;
            let (steps, _) = scaled(row, options.budget);
            let name = format!("[{done}/{total}] {} seed {seed}", row.name);
            observer.say(&format!(
                "[{done}/{total}] {} on {}, seed {seed}, {steps} steps",
                row.name, row.env
            ));
            let dir = out.join(&row.name).join(format!("seed-{seed}"));
            let earlier = match options.resume {
                true => Earlier::read(&dir, steps),
                false => Earlier::None,
            };
            let (outcome, paused_at) = match earlier {
                Earlier::Finished(curve) => {
                    observer.say(&format!("{name}: finished earlier, kept"));
                    (Ok(curve), None)
                }
                earlier => {
                    if let Earlier::Paused(_, _, at) = &earlier {
                        observer.say(&format!("{name}: resuming from its checkpoint at step {at}"));
                    }
                    let run = run_one::<B>(row, seed, options, &dir, earlier, observer);
                    observer.run_ended();
                    match run {
                        Ok((curve, paused_at)) => (Ok(curve), paused_at),
                        Err(e) => {
                            observer.say(&format!("{name} failed: {e}"));
                            (Err(e), None)
                        }
                    }
                }
            };
            runs.push(RunResult {
                seed,
                steps,
                outcome,
                paused_at,
            });
        }
        let [by_steps, by_seconds] = row_plots(row, &runs);
        write_file(out, &format!("{}-steps.svg", row.name), by_steps.as_bytes())?;
        write_file(out, &format!("{}-seconds.svg", row.name), by_seconds.as_bytes())?;
        results.push(runs);
    }
    let context = Context {
        machine: machine(),
        date: today(),
        backend: B::NAME.into(),
        budget: options.budget.filter(|&b| b < 1.0),
    };
    write_file(out, "report.html", html(suite, &results, &context).as_bytes())?;
    let summary = json!({
        "suite": suite.name,
        "report": out.join("report.html").display().to_string(),
        "backend": B::NAME,
        "budget": options.budget,
        "rows": suite.rows.iter().zip(&results).map(|(row, runs)| row_summary(row, runs, options.budget)).collect::<Vec<_>>(),
    });
    write_file(out, "summary.json", summary.to_string().as_bytes())?;
    Ok(summary)
}

/// One row's line of `summary.json`.
fn row_summary(row: &Row, runs: &[RunResult], budget: Option<f64>) -> Json {
    let m = summarize(row, runs, budget.is_none());
    json!({
        "row": row.name,
        "env": row.env,
        "runs": m.finished.1,
        "steps": runs.first().map_or(row.timesteps, |r| r.steps),
        "finished": m.finished.0,
        "paused": m.paused,
        "final_return": m.final_return.map(|(mean, std)| json!({"mean": mean, "sample_std": std})),
        "reached_threshold": m.solved.map(|(k, steps, seconds)| match k {
            0 => json!({"seeds": 0}),
            _ => json!({"seeds": k, "mean_steps": steps, "mean_seconds": seconds}),
        }),
        "published": row.published.as_ref().map(|p| json!({"mean": p.mean, "std": p.std, "source": p.source})),
        "matches": m.matches,
    })
}

/// A row's steps and evaluation interval under the budget share. A quick look keeps at most
/// ten evaluation rounds (at a small share the rounds would cost more than the training),
/// and its steps are whole intervals, so the last round is at the end.
fn scaled(row: &Row, budget: Option<f64>) -> (u64, u64) {
    let Some(b) = budget else {
        return (row.timesteps, row.eval_every);
    };
    let steps = ((row.timesteps as f64 * b).round() as u64).max(1);
    let every = ((row.eval_every as f64 * b).round() as u64)
        .max(steps / 10)
        .clamp(1, steps);
    ((steps / every).max(1) * every, every)
}

/// `row`'s config, read and checked (executors' settings included).
fn row_config(row: &Row) -> Result<ConfigFile, String> {
    executors::read_config_file(&row.config, None)
}

/// The agent of `row`'s config for these spaces, errors naming the config file.
fn row_agent<B: Backend>(
    row: &Row,
    json: &Json,
    spaces: (&Space, &Space),
    seed: u64,
) -> Result<Box<dyn Agent + Send>, String> {
    agents::build_agent::<B>(json, spaces.0, spaces.1, seed).map_err(|e| format!("{}: {e}", row.config.display()))
}

/// Builds `row`'s agent for its environment once, so that a config that does not fit its
/// environment (or an environment that cannot be made) is found before any run; returns the
/// config's notes (keys accepted and not used).
fn preflight<B: Backend>(row: &Row) -> Result<Vec<String>, String> {
    let ConfigFile { json, notes } = row_config(row)?;
    let seed = row.seeds.first().copied().unwrap_or(0);
    // One training environment serves both checks: a bridged one is a Python process.
    let made = |id: &str| rlgraph_envs::make(id, seed).map_err(|e| e.to_string());
    let train = made(&row.env)?;
    row_agent::<B>(row, &json, (train.state_space(), train.action_space()), seed)?;
    if let Some(eval) = &row.eval_env {
        let made = made(eval)?;
        if (train.state_space(), train.action_space()) != (made.state_space(), made.action_space()) {
            return Err(format!(
                "eval_env {eval:?} has other spaces than env {:?}: states {} against {}, actions {} against {}",
                row.env,
                made.state_space(),
                train.state_space(),
                made.action_space(),
                train.action_space()
            ));
        }
    }
    Ok(notes)
}

/// What an earlier sitting left in a run's directory.
enum Earlier {
    /// Nothing usable: the run starts afresh.
    None,
    /// A finished run's curve.
    Finished(Vec<CurvePoint>),
    /// A paused run: its curve so far, the wall seconds its legs took and the step it
    /// paused at.
    Paused(Vec<CurvePoint>, f64, u64),
}

impl Earlier {
    /// What `dir` holds for a run of `steps` steps. A run counts as finished when its summary
    /// reached `steps` without pausing, and as paused when its checkpoint is there too.
    fn read(dir: &Path, steps: u64) -> Earlier {
        let summary: Option<Json> = std::fs::read_to_string(dir.join("summary.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        let curve = std::fs::read_to_string(dir.join("curve.csv"))
            .ok()
            .and_then(|t| read_curve(&t));
        let (Some(summary), Some(mut curve)) = (summary, curve) else {
            return Earlier::None;
        };
        let done = summary["timesteps_executed"].as_u64().unwrap_or(0);
        let reached = done >= steps;
        // A leg killed after its last pause may have written rounds its checkpoint lacks.
        curve.retain(|p| p.step <= done);
        match (
            summary["paused_at_timestep"].is_null() && reached,
            dir.join(CHECKPOINT).is_file(),
        ) {
            (true, _) => Earlier::Finished(curve),
            (false, true) => Earlier::Paused(curve, summary["run_seconds"].as_f64().unwrap_or(0.0), done),
            (false, false) => Earlier::None,
        }
    }
}

/// `curve` as `curve.csv` holds it.
fn curve_csv(curve: &[CurvePoint]) -> String {
    let mut csv = String::from("step,seconds,train_return,eval_return\n");
    for p in curve {
        csv.push_str(&format!(
            "{},{:.3},{},{}\n",
            p.step, p.seconds, p.train_return, p.eval_return
        ));
    }
    csv
}

/// The points of a `curve.csv` as [`curve_csv`] writes it; `None` if any line is not one.
fn read_curve(text: &str) -> Option<Vec<CurvePoint>> {
    text.lines()
        .skip(1)
        .map(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            match cells[..] {
                [step, seconds, train, eval] => Some(CurvePoint {
                    step: step.parse().ok()?,
                    seconds: seconds.parse().ok()?,
                    train_return: train.parse().ok()?,
                    eval_return: eval.parse().ok()?,
                }),
                _ => None,
            }
        })
        .collect()
}

/// Trains `row` from `seed` (continuing a paused run where `earlier` is one), with a greedy
/// evaluation round every `eval_every` steps; writes `curve.csv` and `summary.json` into
/// `dir`, and the checkpoint where the run pauses; returns the curve and where it paused.
fn run_one<B: Backend>(
    row: &Row,
    seed: u64,
    options: &SuiteOptions,
    dir: &Path,
    earlier: Earlier,
    observer: &mut dyn SuiteObserver,
) -> Result<(Vec<CurvePoint>, Option<u64>), String> {
    let (steps, every) = scaled(row, options.budget);
    let json = row_config(row)?.json;
    let make = |id: &str, copies: usize| {
        VectorEnv::make(id, copies, seed, options.bridge_processes).map_err(|e| e.to_string())
    };
    let envs = make(&row.env, row.num_envs)?;
    let agent = row_agent::<B>(row, &json, (envs.state_space(), envs.action_space()), seed)?;
    let eval_envs = make(row.eval_env(), row.eval_episodes)?;
    let mut worker = SingleThreadedWorker::new(agent, envs, seed).with_evaluation(Evaluation::new(every, eval_envs));
    let (mut curve, seconds_before, resume) = match earlier {
        Earlier::Paused(curve, seconds, _) => (curve, seconds, Some(dir.join(CHECKPOINT))),
        _ => (vec![], 0.0, None),
    };
    let pause_at = options.pause_at.filter(|&p| p < steps);
    let drive_options = DriveOptions {
        length: RunLength {
            timesteps: steps,
            episodes: None,
            pause_at,
        },
        resume,
        out: None,
        checkpoint: pause_at.map(|_| dir.join(CHECKPOINT)),
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut write_error = None;
    let mut progress = |r: &RunProgress<'_>| {
        let p = r.leg;
        let before = curve.len();
        // The checkpoint's rounds come first: a resumed run's curve continues its own.
        for e in p.evaluations.get(curve.len()..).unwrap_or_default() {
            // The last 100 episodes: the moving average papers plot for training returns.
            let recent = &p.episode_rewards[p.episode_rewards.len().saturating_sub(100)..];
            let train_return = match recent.len() {
                0 => f64::NAN,
                n => recent.iter().sum::<f64>() / n as f64,
            };
            curve.push(CurvePoint {
                step: e.timestep,
                seconds: seconds_before + p.elapsed,
                train_return,
                eval_return: e.mean_return,
            });
        }
        // Each round goes to disk as it comes: a run killed hours in keeps its curve.
        if curve.len() > before {
            if let Err(e) = write_file(dir, "curve.csv", curve_csv(&curve).as_bytes()) {
                write_error.get_or_insert(e);
            }
        }
        let round = (curve.len() > before)
            .then(|| curve.last().map(|p| p.eval_return))
            .flatten();
        observer.progress(r.step, steps, round);
    };
    let driven = executors::drive(&mut worker, &drive_options, &mut progress).map_err(|e| e.to_string())?;
    if let Some(e) = write_error {
        return Err(e);
    }
    let mut summary = driven.summary();
    // A budget share below the agent's first update gives a curve of the untrained policy,
    // which the report would otherwise show like any other.
    if driven.paused_at.is_none() && summary["updates"].as_u64() == Some(0) {
        let warning = format!(
            "{} seed {seed} made no update in its {steps} steps, so its curve is the untrained \
             policy's; a larger --budget leaves room for the config's first update",
            row.name
        );
        observer.say(&format!("warning: {warning}"));
        summary["warning"] = warning.into();
    }
    summary["run_seconds"] = (seconds_before + driven.leg.runtime_seconds).into();
    summary["row"] = row.name.clone().into();
    summary["seed"] = seed.into();
    summary["env"] = row.env.clone().into();
    summary["backend"] = B::NAME.into();
    write_file(dir, "curve.csv", curve_csv(&curve).as_bytes())?;
    write_file(dir, "summary.json", summary.to_string().as_bytes())?;
    if driven.paused_at.is_none() {
        // A finished run needs no checkpoint: a later resume keeps it as it is.
        let _ = std::fs::remove_file(dir.join(CHECKPOINT));
    }
    Ok((curve, driven.paused_at))
}

/// Writes `bytes` to `dir/name` atomically, so a suite killed at any moment leaves whole files.
fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), String> {
    let path = dir.join(name);
    write_atomically(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The machine in words: CPU model, the CPUs this process may use, the OS.
fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "an unknown CPU".into());
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!(
        "{model}, {cpus} CPUs available, {} {}",
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

/// Today's date (UTC), as `YYYY-MM-DD`.
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The proleptic Gregorian date of `days` since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_by_hand() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        // 2000-03-01 is day 11,017; 2026-11-26 is day 20,783.
        assert_eq!(civil_from_days(11_017), (2000, 3, 1));
        assert_eq!(civil_from_days(20_783), (2026, 11, 26));
    }

    #[test]
    fn a_curve_reads_back_as_written_and_a_torn_line_reads_as_none() {
        let curve = vec![
            CurvePoint {
                step: 1000,
                seconds: 1.5,
                train_return: 9.25,
                eval_return: 10.0,
            },
            CurvePoint {
                step: 2000,
                seconds: 3.0,
                train_return: f64::NAN,
                eval_return: 12.5,
            },
        ];
        let back = read_curve(&curve_csv(&curve)).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!((back[0].step, back[0].seconds, back[0].train_return), (1000, 1.5, 9.25));
        assert!(back[1].train_return.is_nan() && back[1].eval_return == 12.5);
        assert!(read_curve("step,seconds,train_return,eval_return\n1000,1.5,9.25\n").is_none());
    }

    /// Says nothing; the refusals below come before any run.
    struct Quiet;

    impl SuiteObserver for Quiet {
        fn say(&mut self, _: &str) {}
        fn progress(&mut self, _: u64, _: u64, _: Option<f64>) {}
    }

    #[test]
    fn a_suite_made_in_code_is_held_to_the_files_rules() {
        let suite = |name: &str, seeds: Json| -> Suite {
            serde_json::from_value(json!({"name": "mine", "rows": [{
                "name": name, "config": "c.json", "env": "CartPole-v1", "timesteps": 1000,
                "seeds": seeds, "eval_every": 100
            }]}))
            .unwrap()
        };
        let out = std::env::temp_dir().join(format!("rlgraph-runner-refusals-{}", std::process::id()));
        let options = SuiteOptions {
            out: out.clone(),
            ..SuiteOptions::default()
        };
        let refused = |s: &Suite, o: &SuiteOptions| run_suite::<rlgraph_core::SpecOnly>(s, o, &mut Quiet).unwrap_err();
        let e = refused(&suite("../escape", json!([1])), &options);
        assert!(e.contains("names a directory"), "{e}");
        let e = refused(&suite("ok", json!([1, 1])), &options);
        assert!(e.contains("seed 1 is given twice"), "{e}");
        let e = refused(&suite("ok", json!([])), &options);
        assert!(e.contains("at least one seed"), "{e}");
        let e = refused(
            &suite("ok", json!([1])),
            &SuiteOptions {
                budget: Some(1.5),
                ..options.clone()
            },
        );
        assert!(e.contains("budget 1.5"), "{e}");
        let e = refused(&suite("ok", json!([1])), &SuiteOptions::default());
        assert!(e.contains("SuiteOptions.out"), "{e}");
        // Refused before anything was written.
        assert!(!out.exists());
    }

    #[test]
    fn a_budget_keeps_whole_rounds_and_at_most_ten() {
        let row: Row = serde_json::from_value(json!({
            "name": "r", "config": "c.json", "env": "CartPole-v1", "timesteps": 100_000,
            "seeds": [1], "eval_every": 1_000
        }))
        .unwrap();
        assert_eq!(scaled(&row, None), (100_000, 1_000));
        // 10% of 100k is 10k; 10% of 1k is 100, raised to a tenth of the steps: 1k.
        assert_eq!(scaled(&row, Some(0.1)), (10_000, 1_000));
        // 0.15% is 150 steps; a round every 15 steps (a tenth), so 150 = ten whole rounds.
        assert_eq!(scaled(&row, Some(0.0015)), (150, 15));
    }
}

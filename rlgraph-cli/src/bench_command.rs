//! `rlgraph bench SUITE`: trains every row of a benchmark suite once per seed, writes each
//! run's learning curve and summary, and a report (HTML and SVG) of the suite against the
//! published results. Every row is checked (its config builds for its environment) before
//! any run starts; a run that fails is reported as failed and the others go on. A suite too
//! long for one sitting runs in pieces: `--pause-at` checkpoints each run and stops it,
//! `--resume` continues every unfinished run from its checkpoint and keeps the finished ones.

use std::path::{Path, PathBuf};

use clap::Args;
use executors::{DriveOptions, Evaluation, RunLength, SingleThreadedWorker};
use rlgraph_core::Backend;
use serde_json::{json, Value as Json};

use crate::backend_choice::{on_backend, OnBackend};
use crate::output_files::{stderr_line, write_file};
use rlgraph_bench::report::{html, row_plots, summarize, Context, CurvePoint, RunResult};
use rlgraph_bench::suite::{Row, Suite};

/// Arguments of `rlgraph bench`.
#[derive(Args, Clone)]
pub struct BenchArgs {
    /// The suite: a shipped suite's name (`tiny`, `classic`; see `configs/benchmarks/`) or a
    /// suite file.
    suite: String,
    /// Where the runs and the report go (default `bench/<suite>`).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Run only these rows (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    rows: Option<Vec<String>>,
    /// Run only each row's first N seeds.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    seeds: Option<u64>,
    /// Run only this seed of each row (every row must list it): to spread a suite's seeds
    /// over processes or machines, each with the same `--out`; `--resume` then reports them
    /// together.
    #[arg(long, conflicts_with = "seeds")]
    seed: Option<u64>,
    /// Run this share of each row's steps (0 < share <= 1) for a quick look; the report then
    /// says the results are not comparable with the published ones.
    #[arg(long, value_parser = share)]
    budget: Option<f64>,
    /// The backend: candle (default) or tch (needs the `tch` feature).
    #[arg(long, default_value = "candle")]
    backend: String,
    /// Python processes for each run's bridged Gymnasium copies (`gym:` ids), each stepping
    /// its share with one message (default: one per core, at most one per copy).
    #[arg(long, value_parser = crate::train_args::env_count)]
    bridge_processes: Option<usize>,
    /// Pause every run once it reaches this many steps: its checkpoint, curve and summary are
    /// written and the next run starts; `--resume` continues them (a suite too long for one
    /// sitting, or a machine lent for minutes, runs in pieces).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pause_at: Option<u64>,
    /// Continue the suite in `--out`: finished runs are kept as they are, paused ones resume
    /// from their checkpoints, the rest start.
    #[arg(long)]
    resume: bool,
}

/// A paused run's checkpoint, in its run directory.
const CHECKPOINT: &str = "checkpoint.safetensors";

fn share(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x > 0.0 && x <= 1.0 => Ok(x),
        _ => Err("expected a share above 0 and at most 1 (0.1 runs a tenth of each row's steps)".into()),
    }
}

/// Runs the suite and returns a JSON summary of the table (the report's path in it).
pub fn run(args: &BenchArgs) -> Result<String, String> {
    on_backend(&args.backend, args)
}

impl OnBackend for BenchArgs {
    type Output = String;
    fn run<B: Backend>(&self) -> Result<String, String> {
        bench::<B>(self)
    }
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

fn bench<B: Backend>(args: &BenchArgs) -> Result<String, String> {
    let mut suite = Suite::load(&args.suite, args.rows.as_deref())?;
    if let Some(n) = args.seeds {
        for row in &mut suite.rows {
            row.seeds.truncate(usize::try_from(n).unwrap_or(usize::MAX));
        }
    }
    if let Some(seed) = args.seed {
        for row in &mut suite.rows {
            if !row.seeds.contains(&seed) {
                return Err(format!(
                    "--seed {seed}: row {} runs seeds {:?}, not {seed}",
                    row.name, row.seeds
                ));
            }
            row.seeds = vec![seed];
        }
    }
    // Every row must build before the first run: a bad config or a missing Python package
    // stops the suite here, not hours into it.
    let problems: Vec<String> = suite
        .rows
        .iter()
        .filter_map(|row| preflight::<B>(row).err().map(|e| format!("row {}: {e}", row.name)))
        .collect();
    if !problems.is_empty() {
        return Err(format!("the suite cannot run:\n  {}", problems.join("\n  ")));
    }
    let out = args.out.clone().unwrap_or_else(|| Path::new("bench").join(&suite.name));
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let total: usize = suite.rows.iter().map(|r| r.seeds.len()).sum();
    let mut done = 0;
    let mut results = vec![];
    for row in &suite.rows {
        let mut runs = vec![];
        for &seed in &row.seeds {
            done += 1;
            let (steps, _) = scaled(row, args.budget);
            stderr_line(&format!(
                "[{done}/{total}] {} on {}, seed {seed}, {steps} steps",
                row.name, row.env
            ));
            let dir = out.join(&row.name).join(format!("seed-{seed}"));
            let earlier = match args.resume {
                true => Earlier::read(&dir, steps),
                false => Earlier::None,
            };
            if let Earlier::Paused(_, _, at) = &earlier {
                stderr_line(&format!(
                    "[{done}/{total}] {} seed {seed}: resuming from its checkpoint at step {at}",
                    row.name
                ));
            }
            let (outcome, paused_at) = match earlier {
                Earlier::Finished(curve) => {
                    stderr_line(&format!(
                        "[{done}/{total}] {} seed {seed}: finished earlier, kept",
                        row.name
                    ));
                    (Ok(curve), None)
                }
                earlier => match run_one::<B>(row, seed, args, &dir, earlier) {
                    Ok((curve, paused_at)) => (Ok(curve), paused_at),
                    Err(e) => {
                        stderr_line(&format!("[{done}/{total}] {} seed {seed} failed: {e}", row.name));
                        (Err(e), None)
                    }
                },
            };
            runs.push(RunResult {
                seed,
                steps,
                outcome,
                paused_at,
            });
        }
        let [by_steps, by_seconds] = row_plots(row, &runs);
        write_file(&out, &format!("{}-steps.svg", row.name), by_steps.as_bytes())?;
        write_file(&out, &format!("{}-seconds.svg", row.name), by_seconds.as_bytes())?;
        results.push(runs);
    }
    let context = Context {
        machine: machine(),
        date: today(),
        backend: B::NAME.into(),
        budget: args.budget.filter(|&b| b < 1.0),
    };
    let report = out.join("report.html");
    write_file(&out, "report.html", html(&suite, &results, &context).as_bytes())?;
    let rows: Vec<Json> = suite
        .rows
        .iter()
        .zip(&results)
        .map(|(row, runs)| {
            let m = summarize(row, runs, args.budget.is_none());
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
        })
        .collect();
    let summary = json!({
        "suite": suite.name,
        "report": report.display().to_string(),
        "backend": B::NAME,
        "budget": args.budget,
        "rows": rows,
    });
    write_file(&out, "summary.json", summary.to_string().as_bytes())?;
    Ok(summary.to_string())
}

/// Builds `row`'s agent for its environment once, so that a config that does not fit its
/// environment (or an environment that cannot be made) is found before any run.
fn preflight<B: Backend>(row: &Row) -> Result<(), String> {
    let json = crate::agent_commands::read_config(&row.config, None)?;
    let seed = row.seeds.first().copied().unwrap_or(0);
    let made = |id: &str| rlgraph_envs::make(id, seed).map_err(|e| e.to_string());
    // One training environment serves both checks: a bridged one is a Python process.
    let train = made(&row.env)?;
    crate::agent_commands::build_agent_for::<B>(&json, &row.config, train.state_space(), train.action_space(), seed)?;
    if let Some(eval) = &row.eval_env {
        let eval_made = made(eval)?;
        if (train.state_space(), train.action_space()) != (eval_made.state_space(), eval_made.action_space()) {
            return Err(format!(
                "eval_env {eval:?} has other spaces than env {:?}: states {} against {}, actions {} against {}",
                row.env,
                eval_made.state_space(),
                train.state_space(),
                eval_made.action_space(),
                train.action_space()
            ));
        }
    }
    Ok(())
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

/// The points of a `curve.csv` as [`run_one`] writes it; `None` if any line is not one.
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
    args: &BenchArgs,
    dir: &Path,
    earlier: Earlier,
) -> Result<(Vec<CurvePoint>, Option<u64>), String> {
    let (steps, every) = scaled(row, args.budget);
    let json = crate::agent_commands::read_config(&row.config, None)?;
    let envs = crate::run_outputs::vector_env(&row.env, row.num_envs, seed, args.bridge_processes)?;
    let agent =
        crate::agent_commands::build_agent_for::<B>(&json, &row.config, envs.state_space(), envs.action_space(), seed)?;
    let eval_envs = crate::run_outputs::vector_env(row.eval_env(), row.eval_episodes, seed, args.bridge_processes)?;
    let mut worker = SingleThreadedWorker::new(agent, envs, seed).with_evaluation(Evaluation::new(every, eval_envs));
    let (mut curve, seconds_before, resume) = match earlier {
        Earlier::Paused(curve, seconds, _) => (curve, seconds, Some(dir.join(CHECKPOINT))),
        _ => (vec![], 0.0, None),
    };
    let pause_at = args.pause_at.filter(|&p| p < steps);
    let options = DriveOptions {
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
    let bar = crate::run_outputs::progress_bar(steps);
    let mut write_error = None;
    let mut progress = |r: &executors::RunProgress<'_>| {
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
            bar.set_message(format!("| eval {:.1}", e.mean_return));
        }
        // Each round goes to disk as it comes: a run killed hours in keeps its curve.
        if curve.len() > before {
            if let Err(e) = write_file(dir, "curve.csv", curve_csv(&curve).as_bytes()) {
                write_error.get_or_insert(e);
            }
        }
        bar.set_position(r.step);
    };
    let driven = executors::drive(&mut worker, &options, &mut progress);
    bar.finish_and_clear();
    let driven = driven.map_err(|e| e.to_string())?;
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
        stderr_line(&format!("warning: {warning}"));
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
        // A finished run needs no checkpoint: a later `--resume` keeps it as it is.
        let _ = std::fs::remove_file(dir.join(CHECKPOINT));
    }
    Ok((curve, driven.paused_at))
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
}

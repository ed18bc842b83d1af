//! `rlgraph bench SUITE`: the flags as a [`SuiteOptions`] for [`run_suite`], which trains
//! every row of a benchmark suite once per seed and writes the runs and the report; here only
//! the progress bar and the lines on stderr.

use std::path::{Path, PathBuf};

use clap::Args;
use indicatif::ProgressBar;
use rlgraph_core::Backend;

use crate::backend_choice::{on_backend, OnBackend};
use crate::output_files::stderr_line;
use rlgraph_bench::runner::{run_suite, SuiteObserver, SuiteOptions};
use rlgraph_bench::suite::Suite;

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
        let mut suite = Suite::load(&self.suite, self.rows.as_deref())?;
        if let Some(n) = self.seeds {
            suite.first_seeds(n);
        }
        if let Some(seed) = self.seed {
            suite.only_seed(seed)?;
        }
        let options = SuiteOptions {
            out: self.out.clone().unwrap_or_else(|| Path::new("bench").join(&suite.name)),
            budget: self.budget,
            pause_at: self.pause_at,
            resume: self.resume,
            bridge_processes: self.bridge_processes,
        };
        let summary = run_suite::<B>(&suite, &options, &mut Shown { bar: None })?;
        Ok(summary.to_string())
    }
}

/// A suite's progress on stderr: its lines, and a bar per run.
struct Shown {
    bar: Option<ProgressBar>,
}

impl SuiteObserver for Shown {
    fn say(&mut self, line: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| stderr_line(line)),
            None => stderr_line(line),
        }
    }

    fn progress(&mut self, step: u64, steps: u64, eval: Option<f64>) {
        let bar = self.bar.get_or_insert_with(|| crate::run_outputs::progress_bar(steps));
        if let Some(eval) = eval {
            bar.set_message(format!("| eval {eval:.1}"));
        }
        bar.set_position(step);
    }

    fn run_ended(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

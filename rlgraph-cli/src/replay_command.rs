//! `rlgraph replay DIR`: a distributed learner run again in this process from the input log
//! its `--record DIR` wrote, ending with the checkpoint the live learner wrote.

use std::path::PathBuf;

use clap::Args;
use executors::input_log::{first_header, replay_log, ReplayOptions};
use rlgraph_core::Backend;
use serde_json::{json, Value as Json};

use crate::backend_choice::{on_backend, OnBackend};
use crate::output_files::stderr_line;
use crate::run_outputs::{CHECKPOINT_FILE, GA3C_CHECKPOINT_FILE};

/// Arguments of `rlgraph replay`.
#[derive(Args, Clone, Debug)]
pub struct ReplayArgs {
    /// The learner input log (`rlgraph launch --record DIR` or `serve --role learner --record DIR`).
    pub log: PathBuf,
    /// A new folder, where the replay writes the checkpoint (`checkpoint.safetensors`, GA3C's
    /// `ga3c-checkpoint.safetensors`) and TensorBoard events of every update's loss; one
    /// that holds a run's files is refused.
    #[arg(long)]
    pub out: PathBuf,
    /// Stop after this update and leave the checkpoint there (to inspect the learner just
    /// before a divergence).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub until: Option<u64>,
    /// Compare every published weight version with the live run's (by checksum) and every
    /// loss, and fail at the first update where one differs.
    #[arg(long, conflicts_with = "config")]
    pub check: bool,
    /// Replay the same experience through another learner config (learning rate, loss,
    /// clipping): the off-policy "what if". Nothing is compared with the live run then.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Replay a log another program version wrote (which may learn differently).
    #[arg(long)]
    pub allow_other_version: bool,
}

/// This program's version as a learner input log records it: the crate's version and the
/// commit it was built from.
pub fn code_version() -> String {
    format!("rlgraph {} ({})", env!("CARGO_PKG_VERSION"), env!("RLGRAPH_COMMIT"))
}

/// Runs `rlgraph replay`.
pub fn run(args: &ReplayArgs) -> Result<String, String> {
    let header = first_header(&args.log).map_err(|e| e.to_string())?;
    // On the backend the run learned on: another rounds differently.
    let backend = header.backend;
    // The file the layout's own run writes, so `--resume` takes the replay's checkpoint.
    let file = match header.layout.as_str() {
        "ga3c" => GA3C_CHECKPOINT_FILE,
        _ => CHECKPOINT_FILE,
    };
    on_backend(&backend, &ReplayTask(args.clone(), file))
}

/// A replay, ending with the layout's checkpoint file.
pub(crate) struct ReplayTask(ReplayArgs, &'static str);

impl OnBackend for ReplayTask {
    type Output = String;
    fn run<B: Backend>(&self) -> Result<String, String> {
        self.0.replay::<B>(self.1)
    }
}

impl ReplayArgs {
    fn replay<B: Backend>(&self, file: &str) -> Result<String, String> {
        let config = match &self.config {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                Some(serde_json::from_str::<Json>(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?)
            }
            None => None,
        };
        std::fs::create_dir_all(&self.out).map_err(|e| format!("cannot create {}: {e}", self.out.display()))?;
        let checkpoint = self.out.join(file);
        let options = ReplayOptions {
            checkpoint: checkpoint.clone(),
            until: self.until,
            check: self.check,
            config,
            code_version: code_version(),
            allow_other_version: self.allow_other_version,
        };
        let outcome = replay_log::<B>(&self.log, &options).map_err(|e| e.to_string())?;
        for note in &outcome.notes {
            stderr_line(&format!("note: {note}"));
        }
        if let Some(update) = outcome.first_loss_difference {
            stderr_line(&format!(
                "warning: the replay's loss differs from the live run's from update {update} on (--check stops there)"
            ));
        }
        if let Some(until) = self.until.filter(|u| outcome.updates < *u) {
            stderr_line(&format!(
                "note: --until {until}: the log ends at update {}",
                outcome.updates
            ));
        }
        Ok(json!({
            "log": self.log,
            "checkpoint": checkpoint,
            "backend": B::NAME,
            "records": outcome.records,
            "processes": outcome.processes,
            "updates": outcome.updates,
            "frames": outcome.frames,
            "publications": outcome.publications,
            "publications_checked": outcome.publications_checked,
            "first_loss_difference": outcome.first_loss_difference,
            "last_loss": outcome.losses.last(),
            "notes": outcome.notes,
        })
        .to_string())
    }
}

//! `replay_log`: a distributed learner run again in one process from its input log, with no
//! actors, shards or network. Each record does to the replayed learner what it recorded the
//! live one doing: a new process makes a fresh learner, a resume restores the replay's own
//! checkpoint of that update, an update learns on the logged batch, a publication bumps the
//! version, reports and rounds fill the run's counters. The end is the checkpoint the live
//! learner wrote last, byte for byte.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use rlgraph_core::spaces::Space;
use rlgraph_core::Backend;
use serde_json::Value as Json;

use super::record::{weights_crc, LogHeader, LogRecord, LOG_FORMAT};
use super::replayed_learner::ReplayedLearner;
use super::segments::{at_first_record, check_same_run, first_header, log_error, visit_log, Logged};
use crate::distributed::DistributedError;
use crate::tensorboard::EventWriter;

/// How a log is replayed.
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// The checkpoint the replay ends with (its folder also takes the TensorBoard events and
    /// the replay's own interim checkpoints while it runs).
    pub checkpoint: PathBuf,
    /// Stop after this update and leave the checkpoint there.
    pub until: Option<u64>,
    /// Compare every publication's weights with the live run's and stop at the first update
    /// where they, or the loss, differ.
    pub check: bool,
    /// Replay the experience through this learner config instead of the logged one (nothing
    /// is compared then: it is meant to differ).
    pub config: Option<Json>,
    /// This program's version, compared with the log's.
    pub code_version: String,
    /// Replay a log another program version wrote.
    pub allow_other_version: bool,
}

/// What a replay did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReplayOutcome {
    /// Records read.
    pub records: u64,
    /// Learner processes the log holds (one more per restart).
    pub processes: u64,
    /// The replayed learner's updates at the end.
    pub updates: u64,
    /// Publications replayed.
    pub publications: u64,
    /// Publications whose weights were compared with the live run's (`check`).
    pub publications_checked: u64,
    /// The first update whose loss differs from the live run's, if one does.
    pub first_loss_difference: Option<u64>,
    /// The run's frames when the replay ended.
    pub frames: u64,
    /// Every replayed update's loss, in order.
    pub losses: Vec<f64>,
    /// What the reader noted (torn records dropped, another program version allowed).
    pub notes: Vec<String>,
}

/// The replay's interim checkpoints kept for a restart to resume from.
const SNAPSHOTS_KEPT: usize = 4;

/// Replays the learner input log in `dir` on backend `B` (see the module's docs).
pub fn replay_log<B: Backend>(dir: &Path, options: &ReplayOptions) -> Result<ReplayOutcome, DistributedError> {
    let first = first_header(dir)?;
    let at_start = |reason: String| at_first_record(dir, reason);
    if first.format > LOG_FORMAT {
        return Err(at_start(format!(
            "a log of format {}; this program reads format {LOG_FORMAT} and older",
            first.format
        )));
    }
    if first.backend != B::NAME {
        return Err(at_start(format!(
            "the run learned on {}; another backend rounds differently, so the replay runs there too",
            first.backend
        )));
    }
    let out_dir = options.checkpoint.parent().unwrap_or(Path::new(".")).to_path_buf();
    refuse_used_folder(&out_dir, &options.checkpoint)?;
    let config = options.config.as_ref().unwrap_or(&first.config);
    let space = |json: &Json, what: &str| {
        serde_json::from_value::<Space>(json.clone())
            .map_err(|e| at_start(format!("the {what} space does not read: {e}")))
    };
    let (state_space, action_space) = (
        space(&first.state_space, "state")?,
        space(&first.action_space, "action")?,
    );
    let fresh = || {
        ReplayedLearner::<B>::new(&first.layout, config, &state_space, &action_space, first.seed).map_err(|e| {
            let whose = if options.config.is_some() {
                "--config"
            } else {
                "the log's config"
            };
            at_start(format!("cannot build the learner from {whose}: {e}"))
        })
    };
    let compare = options.config.is_none();
    let snapshot_dir = out_dir.join("replay-snapshots");
    let mut events = EventWriter::create(&out_dir).map_err(DistributedError::Setup)?;

    let mut learner = fresh()?;
    let mut snapshots: BTreeMap<u64, PathBuf> = BTreeMap::new();
    let mut outcome = ReplayOutcome::default();
    let mut notes = Vec::new();
    let read_notes = visit_log(
        dir,
        |Logged {
             segment,
             offset,
             record,
         }| {
            let at = |reason: String| log_error(&segment, offset, reason);
            outcome.records += 1;
            learner.count(&record).map_err(|e| at(e.to_string()))?;
            match &record {
                LogRecord::Started(header) => {
                    if let Some(why) = check_same_run(&first, header) {
                        return Err(at(why));
                    }
                    check_version(header, options, &mut notes).map_err(at)?;
                    outcome.processes += 1;
                    if outcome.processes > 1 {
                        learner = fresh()?;
                    }
                }
                LogRecord::Resumed { updates } => {
                    let Some(snapshot) = snapshots.get(updates) else {
                        return Err(at(format!(
                        "the learner resumed from its checkpoint of update {updates}, which the log does not record \
                         being saved"
                    )));
                    };
                    learner.restore(snapshot)?;
                }
                LogRecord::Learned {
                    time_percentage,
                    loss,
                    updates,
                    batch,
                } => {
                    let replayed = learner.learn(batch, *time_percentage).map_err(|e| at(e.to_string()))?;
                    let n = learner.updates();
                    if compare && n != *updates {
                        return Err(at(format!(
                            "the live learner had {updates} updates here, the replay {n}"
                        )));
                    }
                    if compare && replayed.to_bits() != loss.to_bits() && outcome.first_loss_difference.is_none() {
                        if options.check {
                            return Err(at(format!(
                                "update {n}: the replayed loss {replayed} differs from the live run's {loss}"
                            )));
                        }
                        outcome.first_loss_difference = Some(n);
                    }
                    events
                        .scalar("train/loss", n, replayed)
                        .map_err(DistributedError::Setup)?;
                    outcome.losses.push(replayed);
                    if options.until == Some(n) {
                        return Ok(ControlFlow::Break(()));
                    }
                }
                LogRecord::Published {
                    version,
                    weights_crc: crc,
                } => {
                    let snapshot = learner.publish()?;
                    outcome.publications += 1;
                    if compare && snapshot.version != *version {
                        return Err(at(format!(
                            "the live learner published version {version} here, the replay {}",
                            snapshot.version
                        )));
                    }
                    if compare && options.check {
                        if weights_crc(&snapshot) != *crc {
                            return Err(at(format!(
                                "update {}: the weights of version {version} differ from the live run's",
                                learner.updates()
                            )));
                        }
                        outcome.publications_checked += 1;
                    }
                }
                LogRecord::Checkpointed { updates, .. } => {
                    std::fs::create_dir_all(&snapshot_dir).map_err(|e| {
                        DistributedError::Setup(format!("cannot create {}: {e}", snapshot_dir.display()))
                    })?;
                    let file = snapshot_dir.join(format!("update-{updates}.safetensors"));
                    learner.save(&file)?;
                    snapshots.insert(*updates, file);
                    while snapshots.len() > SNAPSHOTS_KEPT {
                        if let Some((_, old)) = snapshots.pop_first() {
                            let _ = std::fs::remove_file(old);
                        }
                    }
                }
                LogRecord::Reported { .. } | LogRecord::Evaluated { .. } | LogRecord::ActedWith { .. } => {}
            }
            Ok(ControlFlow::Continue(()))
        },
    )?;
    learner.save(&options.checkpoint)?;
    let _ = std::fs::remove_dir_all(&snapshot_dir);
    events.flush().map_err(DistributedError::Setup)?;
    outcome.updates = learner.updates();
    outcome.frames = learner.frames();
    outcome.notes = [read_notes, notes].concat();
    Ok(outcome)
}

/// Refuses a folder that already holds a checkpoint or TensorBoard events: a replay never
/// overwrites a run's files (the live learner's own folder, an earlier replay).
fn refuse_used_folder(dir: &Path, checkpoint: &Path) -> Result<(), DistributedError> {
    let used = checkpoint.exists()
        || dir.join("replay-snapshots").exists()
        || std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .any(|e| e.file_name().to_string_lossy().starts_with("events.out.tfevents."))
            })
            .unwrap_or(false);
    match used {
        true => Err(DistributedError::Setup(format!(
            "{} already holds a run's files (a checkpoint or TensorBoard events); replay into a new folder",
            dir.display()
        ))),
        false => Ok(()),
    }
}

/// Refuses a log another program wrote, unless allowed (then notes it).
fn check_version(header: &LogHeader, options: &ReplayOptions, notes: &mut Vec<String>) -> Result<(), String> {
    if header.code_version == options.code_version {
        return Ok(());
    }
    let what = format!(
        "written by {}, and this is {}",
        header.code_version, options.code_version
    );
    if options.allow_other_version {
        notes.push(format!("replayed a log {what} (allowed)"));
        Ok(())
    } else {
        Err(format!(
            "{what}: another program may learn differently; replay with --allow-other-version to go on"
        ))
    }
}

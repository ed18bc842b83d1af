//! A replay shard's life as `rlgraph serve --role replay` runs it: made from the algorithm's config,
//! resumed from its file where one exists, saved periodically, served until a peer stops it.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agents::{transition_space, DistributedAlgorithm};
use rlgraph_core::spaces::Space;
use rlgraph_core::Backend;

use super::access::Access;
use super::error::DistributedError;
use super::metrics::{MetricsBoard, MetricsServer};
use super::peers::serve_replay;
use super::replay_shard::ReplayShard;

/// Where a shard keeps its memory between runs.
#[derive(Clone, Debug, Default)]
pub struct ShardFiles {
    /// A directory of an earlier run to resume the shard's memory from.
    pub resume: Option<PathBuf>,
    /// The run's output directory, where the shard saves its memory.
    pub out: Option<PathBuf>,
    /// How often it saves there.
    pub every: Duration,
}

/// The file of shard `index` in a run directory.
pub fn shard_file(dir: &Path, index: usize) -> PathBuf {
    dir.join(format!("replay-{index}.safetensors"))
}

/// Runs replay shard `index` of a run of `algorithm` on `addr`: the memory it asks for, over
/// transitions of these spaces, sampling from `seed` (offset by the index); resumed and saved
/// as `files` says, its metrics on `metrics` where given; until a peer calls `Stop` or the
/// process gets SIGTERM (or Ctrl-C), then drained and saved.
#[allow(clippy::too_many_arguments)] // Each is one setting of the role, as the command line gives them.
pub fn run_replay_shard<B: Backend>(
    algorithm: &dyn DistributedAlgorithm<B>,
    state_space: &Space,
    action_space: &Space,
    index: usize,
    seed: u64,
    files: &ShardFiles,
    addr: SocketAddr,
    access: &Access,
    metrics: Option<SocketAddr>,
) -> Result<(), DistributedError> {
    let replay = algorithm.replay(state_space, action_space)?;
    let records = transition_space(state_space, action_space)?;
    // A new generation per start, so peers can tell a restarted shard from the one they knew.
    let generation = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    let name = format!("replay shard {index}");
    let mut shard = ReplayShard::new(
        &name,
        replay,
        &records,
        seed.wrapping_add(0x5eed + index as u64),
        generation,
    );
    if let Some(dir) = &files.resume {
        let path = shard_file(dir, index);
        if shard.restore(&path)? {
            super::log(&format!(
                "{name}: resumed {} records ({} inserted so far) from {}",
                shard.size(),
                shard.records_inserted(),
                path.display()
            ));
        }
    }
    if let Some(dir) = &files.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| DistributedError::Setup(format!("cannot create {}: {e}", dir.display())))?;
        shard = shard.with_checkpoints(shard_file(dir, index), files.every);
    }
    // Started before the shard serves, so a taken metrics port stops it at once.
    let _metrics = match metrics {
        Some(at) => {
            let board = MetricsBoard::new(&[("role", "replay"), ("index", &index.to_string())]);
            shard = shard.with_metrics(board.clone());
            Some(MetricsServer::start(at, board)?)
        }
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| DistributedError::Setup(format!("cannot start the shard's runtime: {e}")))?;
    runtime.block_on(serve_replay(shard, addr, access, super::role_health::termination()))
}

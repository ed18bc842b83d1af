//! What every role of a distributed run shares on its command line (`RunOptions`), and the
//! `rlgraph serve` words for one role: what `launch` starts and the Slurm script and
//! Kubernetes manifests (`executors::distributed`'s emitters) run.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;

use clap::Args;
use executors::distributed::RoleFiles;

use crate::train_args::finite;

/// Options every role shares.
#[derive(Args, Clone, Debug)]
pub struct RunOptions {
    /// The agent config (RLgraph's JSON format; Ape-X or DQN).
    pub config: PathBuf,
    /// The environment id (`CartPole-v1`, `gym:...`).
    #[arg(long)]
    pub env: String,
    /// The backend: candle (default) or tch (needs the `tch` feature).
    #[arg(long, default_value = "candle")]
    pub backend: String,
    /// The run's seed; each role derives its own from it.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The run's environment frames over all actors (schedules see the share done).
    #[arg(long, default_value_t = 20_000)]
    pub timesteps: u64,
    /// Stop once the mean return of the last 100 episodes reaches this.
    #[arg(long, value_parser = finite)]
    pub target_return: Option<f64>,
    /// The learner writes `summary.json`, `episodes.csv`, TensorBoard events and
    /// `checkpoint.safetensors` here; replay shard I writes `replay-I.safetensors`.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The learner resumes from `checkpoint.safetensors` in this directory, and replay
    /// shard I from `replay-I.safetensors`.
    #[arg(long)]
    pub resume: Option<PathBuf>,
    /// Resume from `--out` where this role's file is already there (a restarted pod, a
    /// requeued job, a killed process started again) and start afresh where it is not: the
    /// learner from `checkpoint.safetensors`, replay shard I from `replay-I.safetensors`.
    #[arg(long, requires = "out", conflicts_with = "resume")]
    pub resume_if_present: bool,
    /// Replay shards save their memory every this many seconds (with `--out`), and when
    /// stopped.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub shard_checkpoint_secs: u64,
    /// The learner saves its checkpoint every this many updates (with `--out`).
    #[arg(long, default_value_t = 200)]
    pub checkpoint_every: u64,
    /// Every this many of the run's frames, the learner plays `--eval-episodes` greedy
    /// episodes between two updates (with a greedy actor and environment copies of its own)
    /// and reports their mean in the summary's `evaluations` and TensorBoard's
    /// `eval/return`; `--target-return` then applies to that mean. Not with a
    /// preprocessing_spec that keeps state (the actors' frame stacks).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub eval_every: Option<u64>,
    /// Episodes per evaluation round, with `--eval-every`.
    #[arg(long, default_value_t = 10, requires = "eval_every", value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub eval_episodes: u64,
    /// How many frames the actors may run ahead of the config's replay ratio before they wait
    /// for the learner (0: no limit, as RLgraph's Ape-X on Ray).
    #[arg(long, default_value_t = 1000)]
    pub max_frames_ahead: u64,
    /// Batches the Ape-X learner asks of a replay shard in one call (one round trip for
    /// several updates; fewer while the shard holds too few records).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub sample_batches: u64,
    /// A file holding the cluster's shared token; required to serve on a non-loopback address.
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// Milliseconds one call may take before it fails.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub deadline_ms: u64,
    /// Serve this role's metrics in Prometheus' text format on `GET /metrics` at this address
    /// (for example 0.0.0.0:9100); no token is asked. Learner and replay shards only.
    #[arg(long)]
    pub metrics_addr: Option<SocketAddr>,
    /// Seconds a serving role keeps answering after it is told to stop (a shard: SIGTERM or a
    /// peer's Stop; the learner: the run's end), its gRPC health NOT_SERVING, so probes and
    /// peers see it leave.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=600))]
    pub drain_secs: u64,
    /// When standard error is not a terminal (a log file, a launcher), the learner writes
    /// its progress as one line every this many seconds instead of a progress bar.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub log_every_secs: u64,
    /// This role's TLS certificate (PEM); with `--tls-key` and `--tls-ca`, every connection
    /// is mutual TLS (`rlgraph certs` makes the three files).
    #[arg(long, requires_all = ["tls_key", "tls_ca"])]
    pub tls_cert: Option<PathBuf>,
    /// The private key of `--tls-cert` (PEM).
    #[arg(long, requires_all = ["tls_cert", "tls_ca"])]
    pub tls_key: Option<PathBuf>,
    /// The CA certificate (PEM) that signed every role's certificate; peers it did not sign
    /// are refused.
    #[arg(long, requires_all = ["tls_cert", "tls_key"])]
    pub tls_ca: Option<PathBuf>,
    /// The name servers' certificates must carry (default: the address dialed, so the
    /// certificate names the hosts' IP addresses).
    #[arg(long, requires = "tls_cert")]
    pub tls_server_name: Option<String>,
    /// The largest message a role sends or accepts, in MiB.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=2047))]
    pub max_message_mib: u64,
    /// The learner logs everything that decides its next state here (each batch it learns
    /// on, its publications, the actors' reports, its checkpoints), for `rlgraph replay`. A
    /// restarted learner appends to the same log.
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// The learner input log's segments roll over past this many MiB.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub record_segment_mib: u64,
}

impl RunOptions {
    /// The files these options name.
    pub(crate) fn files(&self) -> RoleFiles {
        RoleFiles {
            config: self.config.clone(),
            token_file: self.token_file.clone(),
            tls_cert: self.tls_cert.clone(),
            tls_key: self.tls_key.clone(),
            tls_ca: self.tls_ca.clone(),
            out: self.out.clone(),
            resume: self.resume.clone(),
            resume_if_present: self.resume_if_present,
            record: self.record.clone(),
        }
    }

    /// [`serve_args`] of these options with `files` in place of their own: the words a
    /// cluster emitter writes for each role.
    pub(crate) fn serve_words(&self, files: &RoleFiles, role: &str, index: Option<usize>) -> Vec<std::ffi::OsString> {
        let mut run = self.clone();
        run.config.clone_from(&files.config);
        run.token_file.clone_from(&files.token_file);
        run.tls_cert.clone_from(&files.tls_cert);
        run.tls_key.clone_from(&files.tls_key);
        run.tls_ca.clone_from(&files.tls_ca);
        run.out.clone_from(&files.out);
        run.resume.clone_from(&files.resume);
        run.resume_if_present = files.resume_if_present;
        run.record.clone_from(&files.record);
        serve_args(&run, role, index)
    }
}

/// The words after the program of `rlgraph serve` for `role` of `run` (number `index`, where
/// given), all but `--cluster`: what `launch` starts and the emitted scripts and manifests run.
pub(crate) fn serve_args(run: &RunOptions, role: &str, index: Option<usize>) -> Vec<std::ffi::OsString> {
    let mut cmd = Command::new("rlgraph");
    cmd.arg("serve").arg(&run.config).args(["--role", role]);
    if let Some(i) = index {
        cmd.args(["--index", &i.to_string()]);
    }
    pass_run_options(&mut cmd, run, role);
    cmd.get_args().map(|a| a.to_os_string()).collect()
}

/// The options of `run` on a `serve` command line for `role` (each role gets its own).
fn pass_run_options(cmd: &mut Command, run: &RunOptions, role: &str) {
    cmd.args(["--env", &run.env, "--backend", &run.backend])
        .args(["--seed", &run.seed.to_string()])
        .args(["--timesteps", &run.timesteps.to_string()])
        .args(["--deadline-ms", &run.deadline_ms.to_string()])
        .args(["--drain-secs", &run.drain_secs.to_string()])
        .args(["--max-message-mib", &run.max_message_mib.to_string()]);
    for (flag, path) in [
        ("--token-file", &run.token_file),
        ("--tls-cert", &run.tls_cert),
        ("--tls-key", &run.tls_key),
        ("--tls-ca", &run.tls_ca),
    ] {
        if let Some(p) = path {
            cmd.arg(flag).arg(p);
        }
    }
    if let Some(name) = &run.tls_server_name {
        cmd.args(["--tls-server-name", name]);
    }
    if role != "actor" {
        for (flag, path) in [("--out", &run.out), ("--resume", &run.resume)] {
            if let Some(p) = path {
                cmd.arg(flag).arg(p);
            }
        }
        if run.resume_if_present {
            cmd.arg("--resume-if-present");
        }
        cmd.args(["--shard-checkpoint-secs", &run.shard_checkpoint_secs.to_string()]);
    }
    if role == "learner" {
        if let Some(dir) = &run.record {
            cmd.arg("--record").arg(dir);
            cmd.args(["--record-segment-mib", &run.record_segment_mib.to_string()]);
        }
        cmd.args(["--checkpoint-every", &run.checkpoint_every.to_string()])
            .args(["--max-frames-ahead", &run.max_frames_ahead.to_string()])
            .args(["--sample-batches", &run.sample_batches.to_string()])
            .args(["--log-every-secs", &run.log_every_secs.to_string()]);
        if let Some(t) = run.target_return {
            cmd.args(["--target-return", &t.to_string()]);
        }
        if let Some(every) = run.eval_every {
            cmd.args(["--eval-every", &every.to_string()])
                .args(["--eval-episodes", &run.eval_episodes.to_string()]);
        }
    }
}

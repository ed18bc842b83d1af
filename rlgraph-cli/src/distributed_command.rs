//! `rlgraph serve` runs one role of a distributed run (learner, replay shard or actor) from a
//! cluster spec; `rlgraph launch` starts every role as a process on this machine and
//! ends with the learner's JSON summary.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agents::{DistributedAlgorithm, Experience};
use clap::Args;
use executors::distributed::{
    distributed_algorithm, run_actor, run_replay_shard, Access, ActorOptions, ClusterSpec, LearnerOptions,
    LearnerWorker, MetricsBoard, MetricsServer, RaySpec, Role, ShardFiles, Tls,
};
use executors::input_log::Recording;
use executors::{DriveOptions, RunLength, RunProgress};
use rlgraph_core::Backend;
use serde_json::{json, Value as Json};

use crate::backend_choice::{on_backend, OnBackend};
use crate::output_files::{stderr_line, write_file};
use crate::run_outputs::CHECKPOINT_FILE;
use crate::serve_options::{serve_args, RunOptions};

/// Arguments of `rlgraph serve`.
#[derive(Args, Clone, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    pub run: RunOptions,
    /// The role to run: learner, replay or actor.
    #[arg(long, value_parser = role)]
    pub role: Role,
    /// The cluster spec (JSON): `{"learner": ["HOST:PORT"], "replay": [...], "actor": [...]}`.
    #[arg(long)]
    pub cluster: PathBuf,
    /// Which of the role's entries in the cluster spec this process is (from
    /// `RLGRAPH_INDEX` when not given: a Kubernetes pod's ordinal).
    #[arg(long, env = "RLGRAPH_INDEX", default_value_t = 0)]
    pub index: usize,
    /// The learner leaves the replay shards running at the end (they serve other runs).
    #[arg(long)]
    pub keep_shards: bool,
}

/// The program `launch` starts its roles with, and the arguments before the subcommand:
/// `RLGRAPH_PROGRAM` (a JSON array, such as `["python", "-m", "rlgraph"]`, which the Python
/// package sets), else this very program.
fn role_program() -> Result<(PathBuf, Vec<String>), String> {
    match std::env::var("RLGRAPH_PROGRAM") {
        Ok(text) if !text.trim().is_empty() => {
            let words: Vec<String> = serde_json::from_str(&text)
                .map_err(|e| format!("RLGRAPH_PROGRAM: expected a JSON array of strings, got {text:?} ({e})"))?;
            let (first, rest) = words
                .split_first()
                .ok_or_else(|| "RLGRAPH_PROGRAM: an empty array names no program".to_string())?;
            Ok((PathBuf::from(first), rest.to_vec()))
        }
        _ => std::env::current_exe()
            .map(|exe| (exe, vec![]))
            .map_err(|e| format!("cannot find the rlgraph program: {e}")),
    }
}

/// Arguments of `rlgraph launch`.
#[derive(Args, Clone, Debug)]
pub struct LaunchArgs {
    #[command(flatten)]
    pub run: RunOptions,
    /// Actor processes (default: the config's `num_sample_workers`, else 2).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub actors: Option<u64>,
    /// Replay shard processes (default: the config's `num_replay_workers`, else 1).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub replay_shards: Option<u64>,
    /// The learner's port; shards take the ports after it (default: free ports; 7100 in an
    /// emitted script).
    #[arg(long)]
    pub base_port: Option<u16>,
    /// Print what runs the roles under a cluster manager instead of starting them here:
    /// `slurm` (a batch script for sbatch) or `kubernetes` (manifests for kubectl apply).
    #[arg(long, value_enum)]
    pub emit: Option<Emit>,
    /// The container image of every role in emitted Kubernetes manifests (it must have
    /// `rlgraph` on its PATH).
    #[arg(long, default_value = "rlgraph:latest")]
    pub image: String,
}

/// What `rlgraph launch --emit` writes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    /// A Slurm batch script.
    Slurm,
    /// Kubernetes manifests.
    Kubernetes,
}

fn role(text: &str) -> Result<Role, String> {
    match text {
        "learner" => Ok(Role::Learner),
        "replay" => Ok(Role::Replay),
        "actor" => Ok(Role::Actor),
        _ => Err("expected learner, replay or actor".into()),
    }
}

impl RunOptions {
    /// The directory a role resumes from: `--resume`, or `--out` with `--resume-if-present`.
    fn resume_dir(&self) -> Option<PathBuf> {
        match (&self.resume, self.resume_if_present) {
            (Some(dir), _) => Some(dir.clone()),
            (None, true) => self.out.clone(),
            (None, false) => None,
        }
    }

    fn access(&self) -> Result<Access, String> {
        let token = match &self.token_file {
            Some(path) => Some(Access::token_from_file(path).map_err(|e| e.to_string())?),
            None => None,
        };
        let tls = match (&self.tls_cert, &self.tls_key, &self.tls_ca) {
            (Some(cert), Some(key), Some(ca)) => {
                Some(Tls::from_files(cert, key, ca, self.tls_server_name.clone()).map_err(|e| e.to_string())?)
            }
            _ => None,
        };
        Ok(Access {
            token,
            max_message_bytes: (self.max_message_mib as usize) << 20,
            deadline: Duration::from_millis(self.deadline_ms),
            tls,
            drain: Duration::from_secs(self.drain_secs),
        })
    }

    /// The config as JSON.
    fn read_config(&self) -> Result<Json, String> {
        let path = &self.config;
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))
    }

    /// The config as JSON, with notes on the keys it does not use.
    fn config(&self) -> Result<Json, String> {
        let json = self.read_config()?;
        self.note_unused(&json);
        Ok(json)
    }

    /// Notes on stderr each key of the config `json` that this run does not use.
    fn note_unused(&self, json: &Json) {
        for (key, why) in agents::unused_keys(json) {
            // The settings of ray_spec that mean something here are read (RaySpec).
            if !key.contains("ray_spec") {
                stderr_line(&format!(
                    "note: {}: {key}: accepted and not used ({why})",
                    self.config.display()
                ));
            }
        }
    }

    /// How the algorithm `json` configures runs across processes on `B`.
    fn algorithm<B: Backend>(&self, json: &Json) -> Result<Box<dyn DistributedAlgorithm<B>>, String> {
        distributed_algorithm::<B>(json).map_err(|e| format!("{}: {e}", self.config.display()))
    }
}

/// Runs `rlgraph serve`.
pub fn serve(args: &ServeArgs) -> Result<String, String> {
    on_backend(&args.run.backend, args)
}

impl OnBackend for ServeArgs {
    type Output = String;
    fn run<B: Backend>(&self) -> Result<String, String> {
        serve_role::<B>(self)
    }
}

/// What a role needs of the config when its preprocessing keeps state (a frame stack): the
/// actors run that part per environment copy, and every role builds its graphs, replay and
/// wire format for the states it makes. `None` when the preprocessing keeps no state.
struct RoleLayout<B: Backend> {
    algorithm: Box<dyn DistributedAlgorithm<B>>,
    /// The config the roles' algorithm is parsed from (the agent's, without the actors' part).
    inner_spec: Json,
    state_space: rlgraph_core::spaces::Space,
    action_space: rlgraph_core::spaces::Space,
    worker_specs: Vec<Json>,
}

/// The layout of `json` for the environment `run.env` (probed once), if its preprocessing
/// keeps state.
fn role_layout<B: Backend>(json: &Json, run: &RunOptions) -> Result<Option<RoleLayout<B>>, String> {
    let stateful = json
        .get("preprocessing_spec")
        .and_then(Json::as_array)
        .is_some_and(|specs| specs.iter().any(agents::is_stateful));
    if !stateful {
        return Ok(None);
    }
    let probe = rlgraph_envs::make(&run.env, run.seed).map_err(|e| e.to_string())?;
    let at = |e: rlgraph_core::CoreError| format!("{}: {e}", run.config.display());
    let Some(layout) = agents::WorkerLayout::plan::<B>(json, probe.state_space(), run.seed).map_err(at)? else {
        return Ok(None);
    };
    let algorithm = run.algorithm::<B>(&layout.inner_spec)?;
    if !matches!(algorithm.experience(), Experience::Replay(_)) {
        return Err(format!(
            "{}: config.preprocessing_spec: preprocessing that keeps state (sequence, moving_standardize) runs \
             on actors that feed replay shards; actors that stream rollouts to the learner take preprocessing \
             without state",
            run.config.display()
        ));
    }
    Ok(Some(RoleLayout {
        inner_spec: layout.inner_spec,
        algorithm,
        state_space: layout.state_space,
        action_space: probe.action_space().clone(),
        worker_specs: layout.worker_specs,
    }))
}

fn serve_role<B: Backend>(args: &ServeArgs) -> Result<String, String> {
    let cluster_text =
        std::fs::read_to_string(&args.cluster).map_err(|e| format!("cannot read {}: {e}", args.cluster.display()))?;
    let cluster = ClusterSpec::parse(&cluster_text).map_err(|e| format!("{}: {e}", args.cluster.display()))?;
    let run = &args.run;
    let access = run.access()?;
    let json = run.config()?;
    let layout = role_layout::<B>(&json, run)?;
    // Replay shards and the learner see the states the actors make; unless the actors
    // preprocess, those are the environment's.
    let (algorithm, laid_out, worker_specs, learner_json) = match layout {
        Some(l) => (
            l.algorithm,
            Some((l.state_space, l.action_space)),
            Some(l.worker_specs),
            l.inner_spec,
        ),
        None => (run.algorithm::<B>(&json)?, None, None, json.clone()),
    };
    let spaces = || -> Result<(rlgraph_core::spaces::Space, rlgraph_core::spaces::Space), String> {
        match &laid_out {
            Some(spaces) => Ok(spaces.clone()),
            None => {
                let probe = rlgraph_envs::make(&run.env, run.seed).map_err(|e| e.to_string())?;
                Ok((probe.state_space().clone(), probe.action_space().clone()))
            }
        }
    };
    let ray = RaySpec::from_config(&json).map_err(|e| e.to_string())?;
    let index = u32::try_from(args.index).map_err(|_| format!("--index {} is too large", args.index))?;
    match args.role {
        Role::Actor => {
            if run.metrics_addr.is_some() {
                return Err(
                    "--metrics-addr: actors serve nothing, metrics neither; their frames, episodes \
                            and returns reach the learner's metrics"
                        .into(),
                );
            }
            if args.index >= cluster.actors().max(1) {
                return Err(format!(
                    "--index {}: the cluster spec has {} actor(s)",
                    args.index,
                    cluster.actors()
                ));
            }
            let options = ActorOptions {
                num_envs: ray.envs_per_actor,
                weight_sync_steps: ray.weight_sync_steps,
                records_per_insert: ray.records_per_insert,
                worker_specs,
                ..ActorOptions::new(index, &run.env, run.seed)
            };
            let s = run_actor(algorithm.as_ref(), &cluster, &access, &options).map_err(|e| e.to_string())?;
            Ok(json!({
                "role": "actor", "index": index, "frames": s.frames, "records_made": s.records_made, "records_sent": s.records_sent,
                "records_dropped": s.records_dropped, "records_unsent": s.records_unsent, "weight_loads": s.weight_loads, "first_version": s.first_version, "version": s.version, "reconnects": s.reconnects,
            })
            .to_string())
        }
        Role::Replay => {
            if !matches!(algorithm.experience(), Experience::Replay(_)) {
                return Err(no_shards(run, "--role replay"));
            }
            let addr = cluster.address(Role::Replay, args.index).map_err(|e| e.to_string())?;
            let (s, a) = spaces()?;
            let files = ShardFiles {
                resume: run.resume_dir(),
                out: run.out.clone(),
                every: Duration::from_secs(run.shard_checkpoint_secs),
            };
            run_replay_shard(
                algorithm.as_ref(),
                &s,
                &a,
                args.index,
                run.seed,
                &files,
                addr,
                &access,
                run.metrics_addr,
            )
            .map_err(|e| e.to_string())?;
            Ok(json!({"role": "replay", "index": index, "address": addr.to_string()}).to_string())
        }
        Role::Learner => {
            let (s, a) = spaces()?;
            let checkpoint = run.out.as_ref().map(|d| d.join(CHECKPOINT_FILE));
            let evaluation = match (run.eval_every, &worker_specs) {
                (Some(_), Some(_)) => {
                    return Err(format!(
                        "{}: --eval-every: the learner plays its rounds on plain environment copies, and this \
                         config's preprocessing_spec keeps state that the actors run per copy (a frame stack); \
                         evaluate the checkpoint with rlgraph evaluate instead",
                        run.config.display()
                    ))
                }
                (Some(every), None) => Some(executors::distributed::LearnerEvaluation {
                    every,
                    episodes: run.eval_episodes as usize,
                    env: run.env.clone(),
                }),
                (None, _) => None,
            };
            let options = LearnerOptions {
                evaluation,
                target_return: run.target_return,
                checkpoint: checkpoint.clone(),
                checkpoint_every: run.checkpoint_every,
                prefetch_depth: ray.prefetch_depth,
                sample_batches: run.sample_batches as usize,
                stop_shards: !args.keep_shards,
                max_frames_ahead: run.max_frames_ahead,
                record: run.record.as_ref().map(|dir| Recording {
                    dir: dir.clone(),
                    segment_bytes: run.record_segment_mib << 20,
                    config: learner_json,
                    code_version: crate::replay_command::code_version(),
                }),
                ..LearnerOptions::new(run.seed)
            };
            let mut learner =
                LearnerWorker::<B>::new(algorithm, &s, &a, cluster, access, options).map_err(|e| e.to_string())?;
            if let Some(dir) = &run.out {
                std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            }
            let resume = run.resume_dir().map(|d| d.join(CHECKPOINT_FILE));
            let resume = match resume {
                Some(path) if run.resume_if_present && !path.exists() => {
                    stderr_line(&format!(
                        "learner: no checkpoint at {} yet: starting the run",
                        path.display()
                    ));
                    None
                }
                other => other,
            };
            let drive = DriveOptions {
                resume,
                out: run.out.clone(),
                checkpoint,
                ..DriveOptions::new(RunLength {
                    timesteps: run.timesteps,
                    episodes: None,
                    pause_at: None,
                })
            };
            let board = MetricsBoard::new(&[("role", "learner"), ("index", "0")]);
            let _metrics = match run.metrics_addr {
                Some(at) => Some(MetricsServer::start(at, board.clone()).map_err(|e| e.to_string())?),
                None => None,
            };
            let bar = crate::run_outputs::progress_bar(run.timesteps);
            let to_terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
            let mut last_line: Option<Instant> = None;
            let mut show = |r: &RunProgress<'_>| {
                board.show_progress(r);
                let figures = crate::run_outputs::progress_message(r);
                if to_terminal {
                    bar.set_position(r.step);
                    bar.set_message(figures);
                } else if last_line.is_none_or(|t| t.elapsed().as_secs() >= run.log_every_secs) {
                    last_line = Some(Instant::now());
                    stderr_line(&format!("learner: frames {}/{} {figures}", r.step, run.timesteps));
                }
            };
            let driven = executors::drive(&mut learner, &drive, &mut show);
            bar.finish_and_clear();
            let driven = driven.map_err(|e| e.to_string())?;
            let mut summary = driven.summary();
            if let Some(stats) = learner.last_stats() {
                summary["distributed"] = stats.to_json()["distributed"].take();
            }
            if run.record.is_some() {
                summary["distributed"]["log_bytes"] = learner.log_bytes().into();
            }
            summary["env"] = run.env.clone().into();
            summary["backend"] = B::NAME.into();
            if let Some(dir) = &run.out {
                write_file(dir, "summary.json", summary.to_string().as_bytes())?;
            }
            Ok(summary.to_string())
        }
    }
}

/// Child processes that are killed if the launch ends early, so none outlives it.
struct Children(Vec<(String, Child)>);

impl Drop for Children {
    fn drop(&mut self) {
        for (_, child) in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Has the kernel send the role SIGTERM when the launcher dies, however it dies: a SIGKILL
/// skips `Children`'s drop, and roles left behind would run on (and hold their cores) with
/// nobody to end them. SIGTERM rather than SIGKILL, so they save and end as under a scheduler.
#[cfg(target_os = "linux")]
fn ends_with_the_launcher(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    let launcher = std::process::id();
    // SAFETY: between fork and exec the closure makes only async-signal-safe calls (prctl,
    // getppid) and allocates nothing.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The launcher may have died before the request took effect (ESRCH: no such process).
            if libc::getppid() as u32 != launcher {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// Elsewhere the launcher's drop is all that ends the roles.
#[cfg(not(target_os = "linux"))]
fn ends_with_the_launcher(_: &mut Command) {}

/// Free loopback ports, asked of the OS (they are released before the roles bind them).
fn free_ports(n: usize) -> Result<Vec<u16>, String> {
    let listeners = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").map_err(|e| format!("cannot find a free port: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.port()).map_err(|e| e.to_string()))
        .collect()
}

/// Why a run of `run.config`'s algorithm takes no replay shards (`what` asked for some).
fn no_shards(run: &RunOptions, what: &str) -> String {
    format!(
        "{what}: {}: this algorithm's actors stream rollouts to the learner; it has no replay shards",
        run.config.display()
    )
}

/// Where the actors of the algorithm of the run's config (as JSON) send what they gather, on
/// the run's backend.
pub(crate) struct ExperienceOf(RunOptions, Json);

impl OnBackend for ExperienceOf {
    type Output = Experience;
    fn run<B: Backend>(&self) -> Result<Experience, String> {
        Ok(self.0.algorithm::<B>(&self.1)?.experience())
    }
}

/// Runs `rlgraph launch`.
pub fn launch(args: &LaunchArgs) -> Result<String, String> {
    let run = &args.run;
    let json = run.read_config()?;
    // Before the notes: on tch this process may hand itself over to rlgraph-tch here, which
    // notes the config's unused keys itself.
    let experience = on_backend(&run.backend, &ExperienceOf(run.clone(), json.clone()))?;
    run.note_unused(&json);
    run.access()?;
    if run.metrics_addr.is_some() {
        return Err("--metrics-addr: the roles of one launch would share one port; \
                    give each role its own with `rlgraph serve --metrics-addr`"
            .into());
    }
    let ray = RaySpec::from_config(&json).map_err(|e| e.to_string())?;
    let actors = args.actors.map_or(ray.actors, |n| n as usize);
    let shards = match experience {
        Experience::Replay(_) => args.replay_shards.map_or(ray.shards, |n| n as usize),
        Experience::Rollouts(_) if args.replay_shards.is_some() => return Err(no_shards(run, "--replay-shards")),
        Experience::Rollouts(_) => 0,
    };
    match args.emit {
        Some(Emit::Slurm) => {
            let serve = |files: &_, role: &_, index| run.serve_words(files, role, index);
            let port = args.base_port.unwrap_or(7100);
            return executors::distributed::slurm_script::slurm_script(&run.files(), &serve, (actors, shards), port);
        }
        Some(Emit::Kubernetes) => {
            let text = std::fs::read_to_string(&run.config)
                .map_err(|e| format!("cannot read {}: {e}", run.config.display()))?;
            let serve = |files: &_, role: &_, index| run.serve_words(files, role, index);
            return executors::distributed::kubernetes_manifests::kubernetes_manifests(
                &run.files(),
                &serve,
                &text,
                (actors, shards),
                (&args.image, run.drain_secs + 60),
            );
        }
        None => {}
    }
    let cluster = match args.base_port {
        Some(port) => ClusterSpec::local(port, shards, actors).map_err(|e| e.to_string())?,
        None => {
            let ports = free_ports(1 + shards)?;
            ClusterSpec {
                learner: vec![format!("127.0.0.1:{}", ports[0])],
                replay: ports[1..].iter().map(|p| format!("127.0.0.1:{p}")).collect(),
                actor: (0..actors).map(|i| format!("actor-{i}")).collect(),
            }
        }
    };
    // Without `--out`, the cluster file lives in a folder of its own that goes when the
    // launch ends, however it ends.
    let (dir, scratch) = match &run.out {
        Some(dir) => (dir.clone(), None),
        None => {
            let scratch = tempfile::Builder::new()
                .prefix("rlgraph-launch-")
                .tempdir()
                .map_err(|e| format!("cannot create a folder for the cluster file: {e}"))?;
            (scratch.path().to_path_buf(), Some(scratch))
        }
    };
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let cluster_path = dir.join("cluster.json");
    crate::output_files::write_json(&cluster_path, &cluster)?;

    let (program, leading) = role_program()?;
    let spawn = |role: &str, index: usize, stdout: Stdio| -> Result<Child, String> {
        let mut command = Command::new(&program);
        ends_with_the_launcher(&mut command);
        command
            .args(&leading)
            .args(serve_args(run, role, Some(index)))
            .arg("--cluster")
            .arg(&cluster_path)
            .stdout(stdout)
            .stderr(Stdio::inherit())
            .stdin(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start the {role} {index}: {e}"))
    };
    let mut children = Children(Vec::new());
    for i in 0..shards {
        children
            .0
            .push((format!("replay shard {i}"), spawn("replay", i, Stdio::null())?));
    }
    let learner = spawn("learner", 0, Stdio::piped())?;
    for i in 0..actors {
        children
            .0
            .push((format!("actor {i}"), spawn("actor", i, Stdio::null())?));
    }
    let output = learner
        .wait_with_output()
        .map_err(|e| format!("the learner could not be waited on: {e}"))?;
    if !output.status.success() {
        return Err(format!("the learner failed ({}); its error is above", output.status));
    }
    let mut summary: Json =
        serde_json::from_slice(&output.stdout).map_err(|e| format!("the learner's summary is not JSON: {e}"))?;
    if summary["distributed"]["preempted"] == true {
        return Err(format!(
            "the learner was asked to end (SIGTERM or Ctrl-C) before the run was over; it saved its \
             checkpoint{}: launch again with --resume-if-present and the same --out to go on",
            run.out
                .as_ref()
                .map(|d| format!(" in {}", d.display()))
                .unwrap_or_default()
        ));
    }
    // The actors and shards end when the learner tells them; give them a moment, then stop
    // any that did not.
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut exits = serde_json::Map::new();
    for (name, child) in &mut children.0 {
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status.to_string(),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                _ => {
                    let _ = child.kill();
                    break "stopped by the launcher".to_string();
                }
            }
        };
        exits.insert(name.clone(), status.into());
    }
    summary["launch"] = json!({"actors": actors, "replay_shards": shards, "exits": exits, "cluster": cluster});
    if scratch.is_none() {
        summary["launch"]["cluster_file"] = json!(cluster_path);
    }
    Ok(summary.to_string())
}

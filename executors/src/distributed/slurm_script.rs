//! `rlgraph launch --emit slurm`: a batch script that runs a distributed Ape-X or IMPALA run
//! under Slurm. The learner and the replay shards run on the job's first node, in the batch
//! step; the actors run as one `srun` step across the allocation, each taking its index from
//! `SLURM_PROCID`. The cluster spec is written when the job starts, with the first node's
//! name as the node list gives it (the learner and shards listen on every interface of that
//! node; peers resolve the name), and every role runs the same `rlgraph serve`.

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::path::Path;

use super::{RoleFiles, ServeWords};

/// The script, for `actors` actors and `shards` replay shards, the learner on `base_port`
/// of the first node and the shards on the ports after it; every role runs `serve`'s words
/// with `files` made absolute, as the other nodes see them.
pub fn slurm_script(
    files: &RoleFiles,
    serve: ServeWords<'_>,
    (actors, shards): (usize, usize),
    base_port: u16,
) -> Result<String, String> {
    if files.token_file.is_none() {
        return Err(
            "--emit slurm: the roles listen on the first node's address, which other nodes reach; \
                    give --token-file FILE (on a file system every node shares)"
                .into(),
        );
    }
    let last_port = usize::from(base_port) + shards;
    if last_port > usize::from(u16::MAX) {
        return Err(format!(
            "--base-port {base_port}: the shards' ports would run past 65535"
        ));
    }
    let absolute = |p: &Path| std::path::absolute(p).map_err(|e| format!("{}: {e}", p.display()));
    let config = absolute(&files.config)?;
    // Every path a role reads or writes, as the other nodes see them.
    let mut files = files.clone();
    files.config.clone_from(&config);
    for path in [
        &mut files.token_file,
        &mut files.out,
        &mut files.resume,
        &mut files.record,
        &mut files.tls_cert,
        &mut files.tls_key,
        &mut files.tls_ca,
    ]
    .into_iter()
    .flatten()
    {
        *path = absolute(path)?;
    }
    // The words of `rlgraph serve` after the program, with `--index` where given.
    let serve = |role: &str, index: Option<usize>| -> String {
        let words: Vec<String> = serve(&files, role, index).iter().map(|w| quote(w)).collect();
        format!("{} --cluster \"$cluster\"", words.join(" "))
    };
    let address = |port: usize| format!("\\\"$head_node:{port}\\\"");
    let replay: Vec<String> = (1..=shards).map(|i| address(usize::from(base_port) + i)).collect();
    let actor_names: Vec<String> = (0..actors).map(|i| format!("\\\"actor-{i}\\\"")).collect();

    let mut s = String::new();
    let _ = writeln!(s, "#!/usr/bin/env bash");
    let _ = writeln!(
        s,
        "# A distributed run of {} under Slurm, written by `rlgraph launch --emit slurm`.",
        config.display()
    );
    let _ = writeln!(
        s,
        "# The learner and {shards} replay shard(s) run on the job's first node; {actors} actor(s) run as one srun"
    );
    let _ = writeln!(
        s,
        "# step, SLURM_PROCID being each actor's index. Submit it with sbatch; set RLGRAPH to the"
    );
    let _ = writeln!(
        s,
        "# program where `rlgraph` is not on the PATH. Give the first node cores for the learner."
    );
    let _ = writeln!(s, "#SBATCH --job-name=rlgraph");
    let _ = writeln!(s, "#SBATCH --ntasks={actors}");
    let _ = writeln!(s, "#SBATCH --cpus-per-task=1");
    let _ = writeln!(s, "set -euo pipefail");
    let _ = writeln!(s, "rlgraph=\"${{RLGRAPH:-rlgraph}}\"");
    let _ = writeln!(
        s,
        "head_node=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\""
    );
    let _ = writeln!(
        s,
        "[[ -n \"$head_node\" ]] || {{ echo \"no node in SLURM_JOB_NODELIST\" >&2; exit 1; }}"
    );
    let _ = writeln!(
        s,
        "cluster=\"${{SLURM_SUBMIT_DIR:-$PWD}}/rlgraph-cluster-${{SLURM_JOB_ID:-0}}.json\""
    );
    let _ = writeln!(
        s,
        "printf '%s\\n' \"{{\\\"learner\\\": [{}], \\\"replay\\\": [{}], \\\"actor\\\": [{}]}}\" > \"$cluster\"",
        address(usize::from(base_port)),
        replay.join(", "),
        actor_names.join(", ")
    );
    let _ = writeln!(
        s,
        "# The learner's summary is the job's standard output; the other roles write to its errors."
    );
    let _ = writeln!(s, "pids=()");
    let _ = writeln!(
        s,
        "# Whatever ends the job (the learner done, a failure, scancel) ends every role."
    );
    let _ = writeln!(s, "trap 'kill \"${{pids[@]}}\" 2>/dev/null || true' EXIT");
    for i in 0..shards {
        let _ = writeln!(s, "\"$rlgraph\" {} >&2 &", serve("replay", Some(i)));
        let _ = writeln!(s, "pids+=($!)");
    }
    let _ = writeln!(s, "\"$rlgraph\" {} &", serve("learner", Some(0)));
    let _ = writeln!(s, "learner=$!");
    let _ = writeln!(
        s,
        "srun --ntasks={actors} bash -c 'exec \"$0\" \"$@\" --index \"$SLURM_PROCID\"' \"$rlgraph\" {} >&2 &",
        serve("actor", None)
    );
    let _ = writeln!(s, "pids+=($!)");
    let _ = writeln!(s, "wait \"$learner\"");
    Ok(s)
}

/// `arg` as one shell word.
fn quote(arg: &OsStr) -> String {
    let text = arg.to_string_lossy();
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+".contains(c))
    {
        return text.into_owned();
    }
    format!("'{}'", text.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(files: &RoleFiles, role: &str, index: Option<usize>) -> Vec<std::ffi::OsString> {
        // The config, the index where given, then the other files.
        let given = files.given();
        let mut words = vec!["serve".into(), role.into(), given[0].into()];
        words.extend(index.map(|i| i.to_string().into()));
        words.extend(given[1..].iter().map(|p| p.into()));
        words
    }

    #[test]
    fn every_role_runs_the_callers_words_with_absolute_files() {
        let relative = [
            "secrets/token",
            "tls/cert.pem",
            "tls/key.pem",
            "tls/ca.pem",
            "run",
            "old-run",
            "run/inputs",
        ];
        let files = RoleFiles {
            config: "apex.json".into(),
            token_file: Some(relative[0].into()),
            tls_cert: Some(relative[1].into()),
            tls_key: Some(relative[2].into()),
            tls_ca: Some(relative[3].into()),
            out: Some(relative[4].into()),
            resume: Some(relative[5].into()),
            resume_if_present: false,
            record: Some(relative[6].into()),
        };
        let script = slurm_script(&files, &words, (3, 2), 7100).unwrap();
        let here = std::env::current_dir().unwrap();
        let absolute: Vec<String> = relative.iter().map(|p| here.join(p).display().to_string()).collect();
        let config = here.join("apex.json");
        let line = |role: &str, index: &str| {
            format!(
                "serve {role} {}{index} {} --cluster",
                config.display(),
                absolute.join(" ")
            )
        };
        for (role, index) in [("replay", " 0"), ("replay", " 1"), ("learner", " 0"), ("actor", "")] {
            assert!(script.contains(&line(role, index)), "{role}{index} in:\n{script}");
        }
        assert!(script.contains("#SBATCH --ntasks=3"));
        // The learner on the base port, the two shards on the next two.
        assert!(script.contains("$head_node:7100") && script.contains("$head_node:7102"));
    }

    #[test]
    fn refusals_name_the_flag() {
        let e = slurm_script(&RoleFiles::default(), &words, (1, 1), 7100).unwrap_err();
        assert!(e.contains("--token-file FILE"), "{e}");
        let files = RoleFiles {
            token_file: Some("t".into()),
            ..RoleFiles::default()
        };
        let e = slurm_script(&files, &words, (1, 2), 65_534).unwrap_err();
        assert!(e.contains("--base-port 65534") && e.contains("65535"), "{e}");
    }
}

//! The `rlgraph` program starts without libtorch and hands a command on tch to
//! `rlgraph-tch`, which has it in its process.

/// The stderr of `rlgraph ARGS` with glibc's loader naming every library it opens
/// (`LD_DEBUG=files`), after asserting that the run succeeded; and its stdout.
#[cfg(all(feature = "tch", target_os = "linux"))]
fn loaded(args: &[&str]) -> (String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rlgraph"))
        .args(args)
        .current_dir(crate::ROOT)
        .env("LD_DEBUG", "files")
        .output()
        .expect("the rlgraph binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (stderr, String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(all(feature = "tch", target_os = "linux"))]
#[test]
fn runs_on_candle_never_load_libtorch_and_a_run_on_tch_does_in_rlgraph_tch() {
    let train = |backend: &'static str| {
        loaded(&[
            "train",
            "configs/ppo-cartpole.json",
            "--env",
            "CartPole-v1",
            "--timesteps",
            "300",
            "--backend",
            backend,
        ])
    };
    let (space, _) = loaded(&["space", r#"{"type": "float", "shape": [2]}"#]);
    let (candle, _) = train("candle");
    for stderr in [&space, &candle] {
        assert!(
            stderr.contains("file=libc.so.6"),
            "the loader's report is there: {stderr}"
        );
        assert!(!stderr.contains("libtorch_cpu.so"), "{stderr}");
    }
    // On tch the same program loads it: in rlgraph-tch, which took the process over.
    let (tch, stdout) = train("tch");
    assert!(tch.contains("file=libtorch_cpu.so"), "{tch}");
    let summary: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(summary["backend"], "tch", "{summary}");
    assert!(
        summary["threads"]["libtorch"].as_u64().is_some_and(|n| n >= 1),
        "{summary}"
    );
}

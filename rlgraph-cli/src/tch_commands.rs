//! The program's commands on libtorch: the table [`enable_tch`] installs. Only a process that
//! calls it (`rlgraph-tch`, [`crate::main`], the Python package) names libtorch, so the
//! `rlgraph` binary, which never does, neither links nor loads it (see
//! [`crate::backend_choice`]). A new command that runs on a backend adds its entry here.

/// Lets the program's commands run on tch in this process (libtorch starts with it); does
/// nothing in a build without the `tch` feature.
pub fn enable_tch() {
    #[cfg(feature = "tch")]
    crate::backend_choice::install_tch(entries());
}

/// One entry per command type that `on_backend` runs.
#[cfg(feature = "tch")]
fn entries() -> Vec<crate::backend_choice::TchEntry> {
    use crate::backend_choice::TchEntry;
    vec![
        TchEntry::of::<crate::train_args::TrainArgs>(),
        TchEntry::of::<crate::agent_commands::EvaluateArgs>(),
        TchEntry::of::<crate::agent_commands::GraphArgs>(),
        TchEntry::of::<crate::act_command::ActArgs>(),
        TchEntry::of::<crate::export_command::ExportArgs>(),
        TchEntry::of::<crate::bench_command::BenchArgs>(),
        TchEntry::of::<crate::profile_command::CalibrateArgs>(),
        TchEntry::of::<crate::distributed_command::ServeArgs>(),
        TchEntry::of::<crate::distributed_command::ExperienceOf>(),
        TchEntry::of::<crate::replay_command::ReplayTask>(),
        TchEntry::of::<crate::call_command::CallTask>(),
    ]
}

#[cfg(all(test, feature = "tch"))]
mod tests {
    /// Every command type of this crate has its entry: a missing one would only show when
    /// that command ran on tch.
    #[test]
    fn every_command_on_a_backend_has_an_entry() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut commands = Vec::new();
        for entry in std::fs::read_dir(&src).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            // Test modules' own commands (backend_choice's) are not the program's.
            let text = text.split("#[cfg(test)]").next().unwrap();
            for line in text.lines().filter(|l| l.starts_with("impl OnBackend for ")) {
                commands.push(
                    line.trim_start_matches("impl OnBackend for ")
                        .trim_end_matches(" {")
                        .to_string(),
                );
            }
        }
        commands.sort();
        let table = include_str!("tch_commands.rs");
        let missing: Vec<_> = commands
            .iter()
            .filter(|c| !table.contains(&format!("::{c}>()")))
            .collect();
        assert!(missing.is_empty(), "no entry for {missing:?}");
        assert_eq!(commands.len(), super::entries().len(), "{commands:?}");
    }
}

//! Atomic file writes: a reader (or a run killed mid-write) sees either the old file or the
//! new one, never a torn one.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes `bytes` to `path` atomically: into a temporary file beside it, flushed to disk,
/// then renamed over `path`. The temporary name carries the process id and a counter, so two
/// runs (or two threads) writing to one directory never share a temporary file.
pub fn write_atomically(path: impl AsRef<Path>, bytes: &[u8]) -> std::io::Result<()> {
    write_through(path.as_ref(), bytes, |tmp| std::fs::File::create(tmp))
}

/// Writes a secret (a private key) as [`write_atomically`] does, readable and writable by its
/// owner only (mode 0600 on Unix) from the moment the file exists.
pub fn write_private_atomically(path: impl AsRef<Path>, bytes: &[u8]) -> std::io::Result<()> {
    write_through(path.as_ref(), bytes, |tmp| {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        options.open(tmp)
    })
}

/// Writes through a temporary file that `create` opens.
fn write_through(
    path: &Path,
    bytes: &[u8],
    create: impl FnOnce(&Path) -> std::io::Result<std::fs::File>,
) -> std::io::Result<()> {
    let tmp = temporary_name(path);
    let written = (|| {
        let mut file = create(&tmp)?;
        file.write_all(bytes)?;
        // Without the fsync, a crash after the rename could leave the new name on disk with
        // data that never reached it.
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        // Best effort: the error that matters is the write's.
        let _ = std::fs::remove_file(&tmp);
        return written;
    }
    sync_directory(path);
    Ok(())
}

/// `.NAME.PID.N.tmp` in the directory of `path`.
fn temporary_name(path: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = path.file_name().map_or("file".into(), |n| n.to_string_lossy());
    path.with_file_name(format!(".{name}.{}.{n}.tmp", std::process::id()))
}

/// Flushes the directory entry of the rename, where the platform allows opening a directory.
fn sync_directory(path: &Path) {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if let Ok(d) = std::fs::File::open(dir) {
        // A directory that cannot be synced (some file systems) still holds the renamed file.
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary_behind() {
        let dir = std::env::temp_dir().join(format!("rlgraph-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.json");
        write_atomically(&path, b"old").unwrap();
        write_atomically(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.json")]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_write_keeps_the_old_file() {
        let dir = std::env::temp_dir().join(format!("rlgraph-atomic-fail-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("taken")).unwrap();
        std::fs::write(dir.join("taken").join("inside"), b"x").unwrap();
        // Renaming a file over a non-empty directory fails; the directory must survive.
        assert!(write_atomically(dir.join("taken"), b"new").is_err());
        assert_eq!(std::fs::read(dir.join("taken").join("inside")).unwrap(), b"x");
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("taken")]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_private_file_is_for_its_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("rlgraph-atomic-private-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("key.pem");
        write_private_atomically(&path, b"secret").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"secret");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(mode, 0o600, "mode {mode:o}");
    }

    #[test]
    fn temporary_names_differ_per_call() {
        let p = Path::new("/x/checkpoint.safetensors");
        assert_ne!(temporary_name(p), temporary_name(p));
        assert!(temporary_name(p).starts_with("/x"));
    }
}

//! One Python process that runs `bridge.py`: start it, send a request, read the reply.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::Value as Json;

/// The bridge's Python side, run with `python -c` (and imported as a module by the Python
/// package, for environments in its own process).
pub const BRIDGE: &str = include_str!("bridge.py");

/// How much of Python's stderr an error quotes (its last lines: the traceback's end).
const STDERR_TAIL: usize = 2000;

/// The largest observation a reply may carry (1 GiB): a corrupt length fails cleanly
/// instead of allocating without bound.
const MAX_PAYLOAD: usize = 1 << 30;

/// The Python interpreter the bridge runs: `$RLGRAPH_PYTHON`, else `python3` on the `PATH`.
pub fn python() -> String {
    std::env::var("RLGRAPH_PYTHON")
        .ok()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| "python3".into())
}

/// The Python the bridge's tests use: `$RLGRAPH_PYTHON`, else this checkout's `.gym-venv/`
/// (which `scripts/install-gym.sh` makes), else `None`: such tests skip. With
/// `RLGRAPH_REQUIRE_GYM` set (the README's test command sets it), skipping is an error.
pub fn python_for_tests() -> std::result::Result<Option<String>, String> {
    let venv = concat!(env!("CARGO_MANIFEST_DIR"), "/../.gym-venv/bin/python");
    let python = std::env::var("RLGRAPH_PYTHON")
        .ok()
        .filter(|p| !p.trim().is_empty())
        .or_else(|| std::path::Path::new(venv).exists().then(|| venv.to_string()));
    match python {
        None if std::env::var_os("RLGRAPH_REQUIRE_GYM").is_some() => {
            Err("RLGRAPH_REQUIRE_GYM is set but there is no Python for the bridge: run scripts/install-gym.sh".into())
        }
        None => {
            eprintln!("skipped: no Python with gymnasium (run scripts/install-gym.sh)");
            Ok(None)
        }
        some => Ok(some),
    }
}

/// A reply: its JSON line and the raw bytes that followed it.
pub(crate) struct Reply {
    pub(crate) header: Json,
    pub(crate) payload: Vec<u8>,
}

/// A running `bridge.py`; dropping it ends the process.
pub(crate) struct Process {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    python: String,
}

impl Process {
    /// Starts the bridge for `args` (`{"id": ..., "kwargs": {...}}`) and reads its first
    /// reply, which declares the spaces.
    pub(crate) fn start(python: &str, args: &Json) -> Result<(Process, Json), String> {
        let python = python.to_string();
        let mut child = Command::new(&python)
            .arg("-u")
            .arg("-c")
            .arg(BRIDGE)
            .arg(args.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start Python ({python}): {e}; set RLGRAPH_PYTHON to a Python with gymnasium \
                     installed (./scripts/install-gym.sh makes one in .gym-venv/)"
                )
            })?;
        let (Some(stdin), Some(stdout), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            return Err("the Python process has no pipes".into());
        };
        // Python's warnings and tracebacks are kept (the tail only) for error messages; a
        // thread drains them so that a chatty environment never blocks on a full pipe.
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let sink = Arc::clone(&tail);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if let Ok(mut t) = sink.lock() {
                    t.extend(&buf[..n]);
                    let excess = t.len().saturating_sub(STDERR_TAIL);
                    t.drain(..excess);
                }
            }
        });
        let mut process = Process {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            stderr: tail,
            python,
        };
        let first = process.read_reply()?;
        Ok((process, first.header))
    }

    /// Sends `request` and reads the reply; a reply with `"ok": false` is an error carrying
    /// Python's message.
    pub(crate) fn call(&mut self, request: &Json) -> Result<Reply, String> {
        let mut line = request.to_string();
        line.push('\n');
        if let Err(e) = self.stdin.write_all(line.as_bytes()).and_then(|_| self.stdin.flush()) {
            return Err(self.died(&format!("cannot send the request: {e}")));
        }
        self.read_reply()
    }

    fn read_reply(&mut self) -> Result<Reply, String> {
        let mut line = String::new();
        match self.stdout.read_line(&mut line) {
            Ok(0) => return Err(self.died("it closed its output")),
            Ok(_) => {}
            Err(e) => return Err(self.died(&format!("cannot read its reply: {e}"))),
        }
        let header: Json = serde_json::from_str(&line)
            .map_err(|e| format!("the bridge replied with a line that is not JSON ({e})"))?;
        if header.get("ok") != Some(&Json::Bool(true)) {
            let error = header.get("error").and_then(Json::as_str).unwrap_or("no reason given");
            return Err(error.to_string());
        }
        let n = match header.get("nbytes") {
            None => 0,
            Some(n) => n
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .filter(|&n| n <= MAX_PAYLOAD)
                .ok_or_else(|| format!("the bridge announced a payload of {n} bytes"))?,
        };
        let mut payload = vec![0u8; n];
        if let Err(e) = self.stdout.read_exact(&mut payload) {
            return Err(self.died(&format!("its reply ended early: {e}")));
        }
        Ok(Reply { header, payload })
    }

    /// An error for a process that stopped answering, with how it ended and its last words.
    fn died(&mut self, what: &str) -> String {
        // Give a crashing interpreter a moment to finish writing its traceback.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let status = match self.child.try_wait() {
            Ok(Some(status)) => format!(" and exited ({status})"),
            _ => String::new(),
        };
        let tail = self
            .stderr
            .lock()
            .map(|t| String::from_utf8_lossy(&t.iter().copied().collect::<Vec<u8>>()).into_owned())
            .unwrap_or_default();
        let tail = tail.trim();
        let said = if tail.is_empty() {
            String::new()
        } else {
            format!("; its stderr ends with:\n{tail}")
        };
        format!("the bridge's Python ({}) {what}{status}{said}", self.python)
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.stdin.write_all(b"{\"op\": \"close\"}\n");
        let _ = self.stdin.flush();
        // A process that does not close at once (a hung environment) is killed.
        for _ in 0..20 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

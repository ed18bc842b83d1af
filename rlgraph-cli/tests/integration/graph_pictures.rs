//! The pictures `rlgraph graph` draws, as people see them: the DOT rendered by Graphviz, and
//! the `--format html` page opened in headless Chromium, driven over the DevTools protocol
//! with real mouse and keyboard input (a click on a scope's title bar collapses it, hovering
//! a box shows its spaces and device, the search box finds components). The expected
//! counts come from the `--format json` view of the same agent, not from the page's script.
//!
//! The README's test command installs Debian's `chromium` and `graphviz` when they are
//! missing and sets `RLGRAPH_REQUIRE_TOOLS=1`, so under it a missing tool fails these tests;
//! a plain `cargo test` without them skips them with a message.

use crate::common;

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use base64::Engine;
use common::rlgraph;
use serde_json::{json, Value};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

const CONFIG: &str = "configs/double-dueling-dqn-cartpole.json";
const SCOPE: &str = "dqn-agent/policy";
const WAIT: Duration = Duration::from_secs(30);

/// Skips a test whose tool is missing, unless the test command promised the tool.
fn skip(tool: &str) {
    assert!(
        std::env::var_os("RLGRAPH_REQUIRE_TOOLS").is_none(),
        "RLGRAPH_REQUIRE_TOOLS is set but there is no {tool}: run scripts/install-test-tools.sh"
    );
    eprintln!("skipped: no {tool} (scripts/install-test-tools.sh installs it)");
}

fn chromium() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("RLGRAPH_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

/// Kills the browser however the test ends.
struct Browser(Child);

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts headless Chromium on `page` and returns it with its DevTools WebSocket address.
fn launch(binary: &Path, page: &Path, profile: &Path) -> (Browser, String) {
    // The flags keep Chromium off the network this machine does not have (it would retry
    // refused connections at every start) and out of the user's profile.
    let mut child = Command::new(binary)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1600,1000",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let stderr = child.stderr.take().expect("stderr is piped");
    let browser = Browser(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("DevTools listening on ") {
                let _ = tx.send(url.trim().to_string());
            }
        }
    });
    let url = rx.recv_timeout(WAIT).expect("chromium prints its DevTools address");
    (browser, url)
}

/// One DevTools session on the page.
struct Devtools {
    socket: WebSocket<MaybeTlsStream<TcpStream>>,
    session: String,
    next_id: u64,
}

impl Devtools {
    fn connect(url: &str) -> Devtools {
        let (socket, _) = tungstenite::connect(url).expect("the DevTools socket opens");
        if let MaybeTlsStream::Plain(tcp) = socket.get_ref() {
            tcp.set_read_timeout(Some(WAIT)).expect("a read timeout can be set");
        }
        let mut tools = Devtools {
            socket,
            session: String::new(),
            next_id: 0,
        };
        let targets = tools.call("Target.getTargets", json!({}));
        let page = targets["targetInfos"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["type"] == "page"))
            .expect("the browser shows a page")["targetId"]
            .clone();
        let attached = tools.call("Target.attachToTarget", json!({"targetId": page, "flatten": true}));
        tools.session = attached["sessionId"].as_str().expect("a session id").to_string();
        tools
    }

    /// Sends one command (to the page's session once attached) and waits for its answer.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let mut message = json!({"id": self.next_id, "method": method, "params": params});
        if !self.session.is_empty() {
            message["sessionId"] = json!(self.session);
        }
        self.socket
            .send(Message::text(message.to_string()))
            .expect("the command is sent");
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            let Message::Text(text) = self.socket.read().expect("the browser answers") else {
                continue;
            };
            let reply: Value = serde_json::from_str(&text).expect("DevTools speaks JSON");
            if reply["id"] == json!(self.next_id) {
                assert!(reply.get("error").is_none(), "{method}: {}", reply["error"]);
                return reply["result"].clone();
            }
        }
        panic!("{method}: no answer within {WAIT:?}");
    }

    /// The value of a JavaScript expression evaluated in the page.
    fn eval(&mut self, expression: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        assert!(
            result.get("exceptionDetails").is_none(),
            "{expression}: {}",
            result["exceptionDetails"]
        );
        result["result"]["value"].clone()
    }

    /// The centre of the first element `selector` matches, scrolled into view.
    fn centre(&mut self, selector: &str) -> (f64, f64) {
        let at = self.eval(&format!(
            "(() => {{ const e = document.querySelector({selector:?}); e.scrollIntoView({{block: 'center', inline: 'center'}}); \
             const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
        ));
        (at[0].as_f64().expect("x"), at[1].as_f64().expect("y"))
    }

    fn mouse(&mut self, kind: &str, (x, y): (f64, f64)) {
        let mut params = json!({"type": kind, "x": x, "y": y});
        if kind != "mouseMoved" {
            params["button"] = json!("left");
            params["clickCount"] = json!(1);
        }
        self.call("Input.dispatchMouseEvent", params);
    }

    fn click(&mut self, selector: &str) {
        let at = self.centre(selector);
        self.mouse("mouseMoved", at);
        self.mouse("mousePressed", at);
        self.mouse("mouseReleased", at);
    }

    fn shown(&mut self) -> usize {
        let n = self.eval("document.getElementById('graph').dataset.shown");
        n.as_str()
            .and_then(|s| s.parse().ok())
            .expect("the page counts the boxes it shows")
    }
}

#[test]
fn the_page_collapses_a_scope_on_a_click_shows_spaces_on_hover_and_finds_components() {
    let Some(binary) = chromium() else {
        skip("Chromium (or set RLGRAPH_CHROMIUM)");
        return;
    };
    let (code, html, err) = rlgraph(&["graph", CONFIG, "--env", "CartPole-v1", "--format", "html"]);
    assert_eq!(code, 0, "{err}");
    let (code, view, err) = rlgraph(&["graph", CONFIG, "--env", "CartPole-v1", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let view: Value = serde_json::from_str(&view).expect("the view is JSON");
    let paths: Vec<&str> = view["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| n["path"].as_str().expect("a path"))
        .collect();
    let inside = paths.iter().filter(|p| p.starts_with(&format!("{SCOPE}/"))).count();
    assert!(inside >= 3, "the policy scope holds its network: {paths:?}");

    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("graph_page");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let page = dir.join("dqn.html");
    std::fs::write(&page, html).expect("the page is written");
    let (_browser, url) = launch(&binary, &page, &dir.join("profile"));
    let mut tools = Devtools::connect(&url);
    // The tab starts on a blank document that is already "complete"; wait for our page's
    // script to have drawn (it sets the count of boxes shown).
    let deadline = Instant::now() + WAIT;
    let drawn = "document.readyState === 'complete' && !!document.getElementById('graph') && document.getElementById('graph').dataset.shown !== undefined";
    while tools.eval(drawn) != json!(true) {
        assert!(Instant::now() < deadline, "the page did not load");
        std::thread::sleep(Duration::from_millis(50));
    }

    assert_eq!(tools.shown(), paths.len(), "every component is shown at first");
    let title = format!("g.cluster[data-path=\"{SCOPE}\"] .title");
    tools.click(&title);
    assert_eq!(
        tools.shown(),
        paths.len() - inside,
        "collapsing {SCOPE} hides the {inside} boxes under it"
    );
    let hidden = tools.eval(&format!(
        "getComputedStyle(document.querySelector('g.node[data-path=\"{SCOPE}/neural-network\"]')).display"
    ));
    assert_eq!(hidden, json!("none"));
    let screenshot = tools.call("Page.captureScreenshot", json!({"format": "png"}));
    let png = base64::engine::general_purpose::STANDARD
        .decode(screenshot["data"].as_str().expect("image data"))
        .expect("base64");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    std::fs::write(dir.join("collapsed.png"), png).expect("the screenshot is saved");
    // The collapsed scope's own box expands it again.
    tools.click(&format!("g.node[data-path=\"{SCOPE}\"] rect"));
    assert_eq!(tools.shown(), paths.len(), "a second click expands the scope");

    // Hover: the optimizer's `step` and its device.
    let leaf = "dqn-agent/optimizer";
    let at = tools.centre(&format!("g.node[data-path=\"{leaf}\"] rect"));
    tools.mouse("mouseMoved", at);
    let tip = tools.eval("document.getElementById('tip').hidden ? '' : document.getElementById('tip').textContent");
    let tip = tip.as_str().expect("tip text");
    assert!(tip.starts_with(leaf), "{tip}");
    assert!(
        tip.contains("step(") && tip.contains("FloatBox") && tip.contains("device: cpu"),
        "{tip}"
    );

    // Search: typed into the box, it finds every path that contains the text.
    tools.click("#search");
    tools.call("Input.insertText", json!({"text": "state-value"}));
    let expected = paths.iter().filter(|p| p.contains("state-value")).count();
    assert_eq!(
        tools.eval("document.getElementById('found').textContent"),
        json!(format!("{expected} found"))
    );
    assert_eq!(
        tools.eval("document.querySelectorAll('g.node.hit').length"),
        json!(expected)
    );
}

#[test]
fn the_page_needs_nothing_from_the_network() {
    let (code, html, err) = rlgraph(&["graph", CONFIG, "--env", "CartPole-v1", "--format", "html"]);
    assert_eq!(code, 0, "{err}");
    // The one URL is the SVG namespace, an identifier no browser fetches.
    let urls: Vec<&str> = html
        .match_indices("http")
        .map(|(i, _)| &html[i..(i + 30).min(html.len())])
        .collect();
    assert!(
        urls.iter().all(|u| u.starts_with("http://www.w3.org/2000/svg")),
        "{urls:?}"
    );
    assert!(
        !html.contains("<link") && !html.contains(" src="),
        "no external styles or scripts"
    );
    let boxes = html.matches("<g class=\"node\"").count();
    let (_, view, _) = rlgraph(&["graph", CONFIG, "--env", "CartPole-v1", "--format", "json"]);
    let view: Value = serde_json::from_str(&view).expect("the view is JSON");
    assert_eq!(
        boxes,
        view["nodes"].as_array().map_or(0, Vec::len),
        "one box per component"
    );
    let (code, _, err) = rlgraph(&[
        "graph",
        CONFIG,
        "--env",
        "CartPole-v1",
        "--format",
        "html",
        "--view",
        "calls",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("--format html draws the components view"), "{err}");
}

#[test]
fn graphviz_draws_the_component_view_of_the_dqn_no_wider_than_3000_pixels() {
    let Ok(dot) = Command::new("dot").arg("-V").output() else {
        skip("Graphviz dot");
        return;
    };
    assert!(dot.status.success());
    let (code, source, err) = rlgraph(&["graph", CONFIG, "--env", "CartPole-v1"]);
    assert_eq!(code, 0, "{err}");
    let mut render = Command::new("dot")
        .arg("-Tpng")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("dot starts");
    std::io::Write::write_all(&mut render.stdin.take().expect("stdin"), source.as_bytes()).expect("dot reads the DOT");
    let png = render.wait_with_output().expect("dot renders");
    assert!(png.status.success(), "{}", String::from_utf8_lossy(&png.stderr));
    // A PNG's IHDR chunk holds the width and height, big-endian, at bytes 16..24.
    let png = png.stdout;
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let width = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
    let height = u32::from_be_bytes([png[20], png[21], png[22], png[23]]);
    assert!(width <= 3000, "{width}x{height} pixels");
    // Every component is named on it.
    let (_, view, _) = rlgraph(&["graph", CONFIG, "--env", "CartPole-v1", "--format", "json"]);
    let view: Value = serde_json::from_str(&view).expect("the view is JSON");
    for node in view["nodes"].as_array().expect("nodes") {
        let path = node["path"].as_str().expect("a path");
        let name = path.rsplit('/').next().unwrap_or(path);
        assert!(
            source.contains(&format!("label=\"{name}")),
            "{name} is not named in the DOT"
        );
    }
}

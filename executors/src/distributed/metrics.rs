//! A role's metrics in Prometheus' text format (0.0.4), served on `GET /metrics` at a
//! flag-chosen address (`rlgraph serve --metrics-addr`) for a cluster's monitoring to scrape:
//! the shard's records, inserts, samples, refusals and sampling time; the learner's frames,
//! episodes, updates, rates, weight lag and queue depth.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::fmt::Write as _;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

use super::error::DistributedError;

/// Whether a metric only grows (a counter) or moves both ways (a gauge).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricKind {
    /// Only grows (totals).
    Counter,
    /// Moves both ways (sizes, rates).
    Gauge,
}

/// One metric's latest value.
#[derive(Clone, Debug, PartialEq)]
pub struct Metric {
    /// Its name, `rlgraph_` first, Prometheus' characters only.
    pub name: String,
    /// What it measures, one line.
    pub help: String,
    /// Counter or gauge.
    pub kind: MetricKind,
    /// The value.
    pub value: f64,
}

impl Metric {
    /// A counter.
    pub fn counter(name: &str, help: &str, value: f64) -> Self {
        Metric {
            name: metric_name(name),
            help: help.into(),
            kind: MetricKind::Counter,
            value,
        }
    }

    /// A gauge.
    pub fn gauge(name: &str, help: &str, value: f64) -> Self {
        Metric {
            name: metric_name(name),
            help: help.into(),
            kind: MetricKind::Gauge,
            value,
        }
    }
}

/// `name` with every character Prometheus does not allow in a metric name made `_`.
fn metric_name(name: &str) -> String {
    name.chars()
        .enumerate()
        .map(|(i, c)| match c {
            'a'..='z' | 'A'..='Z' | '_' | ':' => c,
            '0'..='9' if i > 0 => c,
            _ => '_',
        })
        .collect()
}

/// Reads metrics at each scrape (a shard's counters).
type Source = Arc<dyn Fn() -> Vec<Metric> + Send + Sync>;

/// The metrics a role shows: values its loops set, and sources read at each scrape, under
/// the labels that name the role (`role="replay",index="0"`). Clones share one board.
#[derive(Clone, Default)]
pub struct MetricsBoard {
    values: Arc<Mutex<BTreeMap<String, Metric>>>,
    sources: Arc<Mutex<Vec<Source>>>,
    labels: Arc<Vec<(String, String)>>,
}

impl MetricsBoard {
    /// An empty board whose every sample carries `labels`.
    pub fn new(labels: &[(&str, &str)]) -> Self {
        MetricsBoard {
            labels: Arc::new(labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
            ..MetricsBoard::default()
        }
    }

    /// Sets `metric` (replacing its earlier value).
    pub fn set(&self, metric: Metric) {
        if let Ok(mut values) = self.values.lock() {
            values.insert(metric.name.clone(), metric);
        }
    }

    /// Adds a source read at every scrape.
    pub fn add_source(&self, source: impl Fn() -> Vec<Metric> + Send + Sync + 'static) {
        if let Ok(mut sources) = self.sources.lock() {
            sources.push(Arc::new(source));
        }
    }

    /// Every metric now, by name.
    pub fn metrics(&self) -> Vec<Metric> {
        let mut all: BTreeMap<String, Metric> = self.values.lock().map(|v| v.clone()).unwrap_or_default();
        let sources: Vec<Source> = self.sources.lock().map(|s| s.clone()).unwrap_or_default();
        for source in sources {
            for m in source() {
                all.insert(m.name.clone(), m);
            }
        }
        all.into_values().collect()
    }

    /// Shows a driven run's progress: its frames and episodes so far, the last episode's
    /// return, the loss, and the worker's gauges, each tag as a gauge named
    /// `rlgraph_` + the tag (`distributed/queue_depth` -> `rlgraph_distributed_queue_depth`).
    pub fn show_progress(&self, progress: &crate::RunProgress<'_>) {
        let leg = progress.leg;
        self.set(Metric::counter(
            "rlgraph_frames_total",
            "Environment frames of the run, earlier legs included.",
            progress.step as f64,
        ));
        self.set(Metric::counter(
            "rlgraph_episodes_total",
            "Episodes finished in the run, earlier legs included.",
            progress.episodes as f64,
        ));
        if let Some(last) = leg.episode_rewards.last() {
            self.set(Metric::gauge(
                "rlgraph_episode_return_last",
                "The last episode's return.",
                *last,
            ));
        }
        if let Some(loss) = leg.loss {
            self.set(Metric::gauge("rlgraph_loss", "The last update's loss.", loss));
        }
        for (tag, value) in leg.gauges {
            self.set(Metric::gauge(
                &format!("rlgraph_{tag}"),
                &format!("The worker's {tag} gauge."),
                *value,
            ));
        }
    }

    /// The board in Prometheus' text format.
    pub fn render(&self) -> String {
        let labels = match self.labels.is_empty() {
            true => String::new(),
            false => {
                let pairs: Vec<String> = self
                    .labels
                    .iter()
                    .map(|(k, v)| format!("{}=\"{}\"", metric_name(k), escape_label(v)))
                    .collect();
                format!("{{{}}}", pairs.join(","))
            }
        };
        let mut text = String::new();
        for m in self.metrics() {
            let kind = match m.kind {
                MetricKind::Counter => "counter",
                MetricKind::Gauge => "gauge",
            };
            let help = m.help.replace('\\', "\\\\").replace('\n', "\\n");
            let _ = writeln!(text, "# HELP {} {help}", m.name);
            let _ = writeln!(text, "# TYPE {} {kind}", m.name);
            let _ = writeln!(text, "{}{labels} {}", m.name, sample_value(m.value));
        }
        text
    }
}

/// A label value with `\`, `"` and newlines escaped.
fn escape_label(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// A value as Prometheus writes it (`+Inf`, `-Inf`, `NaN`).
fn sample_value(v: f64) -> String {
    match v {
        f64::INFINITY => "+Inf".into(),
        f64::NEG_INFINITY => "-Inf".into(),
        v if v.is_nan() => "NaN".into(),
        v => v.to_string(),
    }
}

/// Serves `board` on `GET /metrics` from `listener` until `shutdown` completes; other paths
/// are 404.
pub async fn serve_metrics(
    listener: tokio::net::TcpListener,
    board: MetricsBoard,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), DistributedError> {
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // A connection that failed to arrive is the scraper's to retry; a pause, so
                // a lasting fault (no file descriptors left) does not spin.
                Err(_) => {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => return Ok(()),
        };
        let board = board.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let board = board.clone();
                async move { Ok::<_, Infallible>(answer(&board, &request)) }
            });
            // A scraper that hangs up mid-answer costs it that scrape only.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// The answer to one request.
fn answer(board: &MetricsBoard, request: &Request<Incoming>) -> Response<Full<Bytes>> {
    let (status, content_type, body) = match (request.method().as_str(), request.uri().path()) {
        ("GET", "/metrics") => (
            StatusCode::OK,
            "text/plain; version=0.0.4; charset=utf-8",
            board.render(),
        ),
        _ => (
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            "GET /metrics\n".to_string(),
        ),
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    if let Ok(value) = hyper::header::HeaderValue::from_str(content_type) {
        response.headers_mut().insert(hyper::header::CONTENT_TYPE, value);
    }
    response
}

/// A metrics server on its own thread and runtime, for a role whose own loop is not async;
/// it stops when this is dropped.
pub struct MetricsServer {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MetricsServer {
    /// Starts serving `board` at `addr`; an address that cannot be bound is an error here.
    pub fn start(addr: SocketAddr, board: MetricsBoard) -> Result<Self, DistributedError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| DistributedError::Setup(format!("metrics: cannot start a runtime: {e}")))?;
        // Bound here, so a taken port is reported before the role starts its work.
        let listener = std::net::TcpListener::bind(addr)
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .map_err(|e| DistributedError::Setup(format!("metrics: cannot listen on {addr}: {e}")))?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("metrics".into())
            .spawn(move || {
                let served = runtime.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener)
                        .map_err(|e| DistributedError::Setup(format!("metrics on {addr}: {e}")))?;
                    serve_metrics(listener, board, async {
                        let _ = stopped.await;
                    })
                    .await
                });
                if let Err(e) = served {
                    super::log(&e.to_string());
                }
            })
            .map_err(|e| DistributedError::Setup(format!("metrics: cannot start its thread: {e}")))?;
        Ok(MetricsServer {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_format_has_help_type_labels_and_prometheus_spellings() {
        let board = MetricsBoard::new(&[("role", "replay"), ("index", "0")]);
        board.set(Metric::counter(
            "rlgraph_replay_records_inserted_total",
            "Records inserted.",
            6.0,
        ));
        board.set(Metric::gauge(
            "distributed/weight lag",
            "Versions behind.",
            f64::INFINITY,
        ));
        board.add_source(|| vec![Metric::gauge("rlgraph_replay_records", "Records held.", 3.0)]);
        // Written by hand from the exposition format: sorted by name, HELP then TYPE then the
        // sample, labels in the order given, names with `/` and spaces made `_`.
        let expected = "\
# HELP distributed_weight_lag Versions behind.
# TYPE distributed_weight_lag gauge
distributed_weight_lag{role=\"replay\",index=\"0\"} +Inf
# HELP rlgraph_replay_records Records held.
# TYPE rlgraph_replay_records gauge
rlgraph_replay_records{role=\"replay\",index=\"0\"} 3
# HELP rlgraph_replay_records_inserted_total Records inserted.
# TYPE rlgraph_replay_records_inserted_total counter
rlgraph_replay_records_inserted_total{role=\"replay\",index=\"0\"} 6
";
        assert_eq!(board.render(), expected);
        // A label value's quote is escaped; a later value replaces an earlier one.
        let odd = MetricsBoard::new(&[("env", "gym:\"Pong\"")]);
        odd.set(Metric::gauge("x", "h", 1.0));
        odd.set(Metric::gauge("x", "h", 2.5));
        assert_eq!(
            odd.render(),
            "# HELP x h\n# TYPE x gauge\nx{env=\"gym:\\\"Pong\\\"\"} 2.5\n"
        );
    }

    #[test]
    fn a_driven_runs_progress_becomes_frames_episodes_loss_and_its_gauges() {
        let board = MetricsBoard::new(&[]);
        let returns = [10.0, 31.0];
        let leg = crate::Progress {
            timesteps: 500,
            episodes: 2,
            episode_rewards: &returns,
            loss: Some(0.25),
            elapsed: 1.0,
            evaluations: &[],
            gauges: &[("distributed/queue_depth", 3.0), ("distributed/updates", 120.0)],
        };
        board.show_progress(&crate::RunProgress {
            step: 1500,
            episodes: 7,
            leg: &leg,
        });
        let got: Vec<(String, f64)> = board.metrics().into_iter().map(|m| (m.name, m.value)).collect();
        let want = [
            ("rlgraph_distributed_queue_depth", 3.0),
            ("rlgraph_distributed_updates", 120.0),
            ("rlgraph_episode_return_last", 31.0),
            ("rlgraph_episodes_total", 7.0),
            ("rlgraph_frames_total", 1500.0),
            ("rlgraph_loss", 0.25),
        ];
        assert_eq!(got, want.map(|(n, v)| (n.to_string(), v)));
    }
}
